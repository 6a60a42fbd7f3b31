"""What a player is told as a string is what its tensor encodes, in every kibitz game.

Over random positions (chance nodes and the end included) and every player:
two states with the same observation string have the same observation
tensor, and two with the same information-state string the same
information-state tensor; the same holds for the public observers (no
private information). A string that leaves out something the tensor shows
(the showdown at the end of a game, a deck count) fails here.
"""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

from kibitz.games import REGISTRY

#: per game: (configuration, random games played); small configurations,
#: where many positions repeat, and the default, in fewer games (longer ones)
CONFIGS = {
    "underdog": [("underdog(players=3,cards=5,bank=2)", 40),
                 ("underdog(players=3,cards=6,chips=2,bank=3)", 30), ("underdog", 2)],
    "pub": [("pub(players=3,suits=2,ranks=3,removed=0,hand=1)", 40),
            ("pub(players=3,suits=2,ranks=4,removed=1,hand=1)", 40), ("pub(players=3)", 5)],
    "over_under": [("over_under(players=2,copies=1,stacks=1,rounds=1)", 40),
                   ("over_under(players=2,copies=1,stacks=1,rounds=1,variant=cutthroat,jokers=true)", 40),
                   ("over_under(players=2,copies=1,stacks=2,rounds=2,variant=cutthroat,jokers=true)", 40),
                   ("over_under(players=1,copies=1,stacks=3)", 40), ("over_under(players=3,stacks=3)", 20)],
    "doubt_and_bet": [("doubt_and_bet(players=2,chips=3,slots=1,colours=2,copies=2,single_bet=true)", 40),
                      ("doubt_and_bet(players=3,chips=2,slots=2,colours=2,copies=2)", 10),
                      ("doubt_and_bet(players=2,chips=2,slots=2,colours=2,copies=3)", 30),
                      # an upkeep in round 2 and a seating shuffle every round: players
                      # knocked out holding a chip, the shuffle's new first player; and
                      # the end at the round cap (the next first player is not the order's)
                      ("doubt_and_bet(players=3,chips=1,slots=2,colours=2,upkeep_start=2,"
                       "shuffle_every=1,max_rounds=3)", 150),
                      ("doubt_and_bet(players=3,chips=1,slots=2,colours=2,upkeep_start=2,"
                       "shuffle_every=1,max_rounds=2)", 150)],
    "showdown": [("showdown", 40), ("showdown(players=3,cards=4)", 60), ("showdown(players=4,cards=13)", 40)],
}

def test_every_kibitz_game_is_checked():
    assert set(CONFIGS) == set(REGISTRY)


def _views(game):
    """(name, function of (state, player) -> (string, tensor)) for each view."""
    def default(kind):
        if kind == "observation":
            return lambda s, p: (s.observation_string(p), s.observation_tensor(p))
        return lambda s, p: (s.information_state_string(p), s.information_state_tensor(p))

    def public(perfect_recall):
        obs = game.make_py_observer(pyspiel.IIGObservationType(
            public_info=True, perfect_recall=perfect_recall,
            private_info=pyspiel.PrivateInfoType.NONE))

        def view(s, p):
            obs.set_from(s, p)
            return obs.string_from(s, p), obs.tensor
        return view

    return [("observation", default("observation")),
            ("information state", default("information state")),
            ("public observation", public(False)),
            ("public information state", public(True))]


def _random_states(game, rng, num_games):
    """Every state of ``num_games`` random games, chance drawn with its probabilities."""
    for _ in range(num_games):
        state = game.new_initial_state()
        yield state
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                probs = np.array([p for _, p in outcomes])
                action = outcomes[int(rng.choice(len(outcomes), p=probs / probs.sum()))][0]
            else:
                legal = state.legal_actions()
                action = legal[int(rng.integers(len(legal)))]
            state.apply_action(action)
            yield state


@pytest.mark.parametrize("game_string, games, smallest", [
    (g, k, i == 0) for cs in CONFIGS.values() for i, (g, k) in enumerate(cs)])
def test_equal_strings_mean_equal_tensors(game_string, games, smallest):
    game = pyspiel.load_game(game_string)
    n = game.num_players()
    views = _views(game)
    seen = {name: {} for name, _ in views}
    repeats = {name: 0 for name, _ in views}
    terminals = 0
    rng = np.random.default_rng(19)
    for state in _random_states(game, rng, games):
        terminals += state.is_terminal()
        for p in range(n):
            for name, view in views:
                string, tensor = view(state, p)
                tensor = np.asarray(tensor, dtype=np.float32).tobytes()
                first = seen[name].setdefault(string, (tensor, state.history()))
                if first[0] != tensor:
                    raise AssertionError(
                        f"{game_string}: player {p}'s {name} string is the same after the "
                        f"histories {first[1]} and {state.history()}, its tensor is not:\n{string}")
                repeats[name] += first[1] != state.history()
    assert terminals == games
    if smallest:  # the check compared something: strings came up after other histories
        assert repeats["observation"] and repeats["public observation"], repeats
        # (in Over/Under, where everything is public, an information state is one history)
        if not game_string.startswith("over_under"):
            assert repeats["information state"] and repeats["public information state"], repeats
