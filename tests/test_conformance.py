"""Conformance of every registered game over a matrix of parameter sets.

The same checks for each game in ``kibitz.games.REGISTRY``: OpenSpiel's
``random_sim_test`` with serialization; random play against the declared
game information (players, action and chance-outcome counts, game length,
utilities) and tensor sizes; a serialized state and a clone that show every
player what the original shows, a clone that stays equal to its source
under the same actions and leaves the source alone when it moves on.
Each game's own test file holds its rule scenarios.
"""

import numpy as np
import pyspiel
import pytest

from kibitz import games

# Per game: (configuration, random_sim_test games). Small and default
# configurations, and between them every declared bound of every integer
# parameter and every choice of the others (test_matrix_reaches_every_bound).
MATRIX = {
    "underdog": [(c, 5) for c in [
        "underdog", "underdog(players=3)", "underdog(players=5,cards=15)", "underdog(players=6)",
        "underdog(players=6,cards=15,payoff=chips)", "underdog(players=3,cards=5)", "underdog(players=6,cards=8)",
        "underdog(players=4,bank=2)", "underdog(players=3,cards=5,bank=2,last_round_stake=2)",
        "underdog(players=4,chips=1,bank=6,max_rounds=3)", "underdog(players=4,cards=6,bank=2)",
        "underdog(players=5,cards=7,bank=2,payoff=chips)", "underdog(players=3,cards=5,bank=1,last_round_stake=1)",
        "underdog(players=5,cards=15,bank=3,last_round_stake=3)",
        "underdog(players=3,cards=5,chips=50,bank=50,last_round_stake=10,max_rounds=1)",
        "underdog(players=3,cards=5,chips=1,bank=1,max_rounds=200)", "underdog(players=3,cards=5,bank=2)"]],
    "pub": [(c, 4) for c in ["pub"] + [f"pub(players={n})" for n in (3, 5, 6, 7, 8)] + [
        "pub(players=3,suits=2,ranks=3,removed=0,hand=1)",
        "pub(players=3,suits=2,ranks=3,removed=0,hand=1,payoff=score)",
        "pub(players=4,suits=1,ranks=8,removed=1,hand=1)", "pub(payoff=score)", "pub(players=5,payoff=score)",
        "pub(players=3,suits=2,ranks=3,removed=1,hand=1)"]],
    "over_under": [(c, 3) for c in [
        "over_under", "over_under(players=1)", "over_under(players=1,deck=standard,jokers=true)",
        "over_under(players=2,variant=cutthroat,jokers=true)", "over_under(players=2,deck=standard,payoff=score)",
        "over_under(players=5,deck=standard,variant=cutthroat,rounds=1)",
        "over_under(players=5,copies=1,stacks=3,jokers=true)",
        "over_under(players=8,rounds=2,jokers=true,payoff=score)",
        "over_under(players=8,copies=1,stacks=3,variant=cutthroat)",
        "over_under(players=5,copies=1,stacks=2,variant=cutthroat,jokers=true)",
        "over_under(players=2,copies=1,stacks=2,deck=standard,variant=cutthroat,jokers=true)",
        "over_under(players=1,copies=1,stacks=3)", "over_under(players=2,copies=1,stacks=1,rounds=1)",
        "over_under(players=2,copies=16,stacks=20,rounds=1)", "over_under(players=2,copies=1,stacks=5,rounds=16)"]],
    "doubt_and_bet": [
        ("doubt_and_bet(players=2)", 5), ("doubt_and_bet(players=3)", 5), ("doubt_and_bet", 2),
        ("doubt_and_bet(players=5)", 2), ("doubt_and_bet(players=3,chips=2,slots=2,colours=2,payoff=rank)", 5),
        ("doubt_and_bet(players=2,chips=0,slots=3,colours=1,copies=3)", 5),
        ("doubt_and_bet(players=4,chips=3,slots=1,colours=3,upkeep_start=2,upkeep_every=1,shuffle_every=1)", 5),
        ("doubt_and_bet(players=2,chips=2,slots=1,colours=1,copies=2,single_bet=true)", 5),
        ("doubt_and_bet(players=3,chips=2,slots=2,colours=1,single_bet=true)", 5),
        ("doubt_and_bet(players=2,chips=30,slots=8,colours=1,copies=30,max_rounds=1)", 2),
        ("doubt_and_bet(players=2,chips=1,slots=1,upkeep_start=0,upkeep_every=100,shuffle_every=1000,"
         "max_rounds=1000)", 5),
        ("doubt_and_bet(players=2,chips=1,slots=1,upkeep_start=1000,shuffle_every=0)", 5)],
    "showdown": [("showdown", 30), ("showdown(players=2,cards=13)", 20), ("showdown(players=3,cards=4)", 20),
                 ("showdown(players=4,cards=5)", 20), ("showdown(players=4,cards=13)", 20)],
}
CONFIGS = [(c, sims) for name in MATRIX for c, sims in MATRIX[name]]
# the checks of every view run on each game's small and default configuration (and one more)
VIEWS = [c for name, spec in games.REGISTRY.items() for c in (spec.small, name)] + ["pub(players=5,payoff=score)"]


def test_every_registered_game_has_a_matrix():
    assert set(MATRIX) == set(games.REGISTRY)


@pytest.mark.parametrize("name", sorted(games.REGISTRY))
def test_matrix_reaches_every_bound(name):
    spec = games.REGISTRY[name]
    configs = [c for c, _ in MATRIX[name]]
    assert spec.small in configs and name in configs
    reached = set()
    for config in configs:
        values = pyspiel.load_game(config).get_parameters()
        for p in spec.params:
            if p.choices:
                reached.add((p.name, values[p.name]))
            else:
                reached |= {(p.name, which) for which in ("low", "high") if values[p.name] == p.bound(which, values)}
    wanted = {(p.name, x) for p in spec.params for x in (p.choices or ("low", "high"))}
    assert wanted <= reached, sorted(wanted - reached, key=str)


@pytest.mark.parametrize("game_string, sims", CONFIGS)
def test_random_sim_with_serialization(game_string, sims):
    pyspiel.random_sim_test(pyspiel.load_game(game_string), num_sims=sims, serialize=True, verbose=False)


def _random_action(state, rng):
    if state.is_chance_node():
        outcomes = state.chance_outcomes()
        return outcomes[int(rng.integers(len(outcomes)))][0]
    legal = state.legal_actions()
    return legal[int(rng.integers(len(legal)))]


@pytest.mark.parametrize("game_string, sims", CONFIGS)
def test_random_play_follows_the_game_information(game_string, sims):
    game = pyspiel.load_game(game_string)
    n = game.num_players()
    assert n == game.get_parameters()["players"]
    gtype = game.get_type()
    rng = np.random.default_rng(len(game_string))
    for _ in range(min(sims, 3)):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                actions = [a for a, _ in outcomes]
                assert actions == sorted(set(actions)) and len(actions) <= game.max_chance_outcomes()
                assert all(p > 0 for _, p in outcomes) and sum(p for _, p in outcomes) == pytest.approx(1.0)
            else:
                legal = state.legal_actions()
                assert legal and legal == sorted(set(legal))
                assert 0 <= legal[0] and legal[-1] < game.num_distinct_actions()
                for p in range(n):
                    assert len(state.information_state_tensor(p)) == game.information_state_tensor_size()
                    assert len(state.observation_tensor(p)) == game.observation_tensor_size()
            state.apply_action(_random_action(state, rng))
        assert len(state.history()) <= game.max_game_length()
        returns = state.returns()
        assert all(game.min_utility() - 1e-9 <= r <= game.max_utility() + 1e-9 for r in returns)
        if gtype.utility in (pyspiel.GameType.Utility.CONSTANT_SUM, pyspiel.GameType.Utility.ZERO_SUM):
            assert sum(returns) == pytest.approx(game.utility_sum())


def _views(state, n):
    """Everything a player or the table can read from ``state``."""
    out = [str(state), state.history(), state.is_terminal(), state.current_player()]
    if state.is_terminal():
        out.append(state.returns())
    elif state.is_chance_node():
        out.append(state.chance_outcomes())
    else:
        out.append(state.legal_actions())
    for p in range(n):
        out += [state.information_state_string(p), state.information_state_tensor(p),
                state.observation_string(p), state.observation_tensor(p)]
    return out


def _states_along_a_game(game, rng):
    """Every state of one random game, as the game goes (the same object, moved on)."""
    state = game.new_initial_state()
    yield state
    while not state.is_terminal():
        state.apply_action(_random_action(state, rng))
        yield state


@pytest.mark.parametrize("game_string", VIEWS)
def test_serialized_state_shows_every_player_the_same(game_string):
    game = pyspiel.load_game(game_string)
    n = game.num_players()
    for k, state in enumerate(_states_along_a_game(game, np.random.default_rng(4))):
        if k % 7 == 0 or state.is_terminal():
            game2, state2 = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
            assert str(game2) == str(game)
            assert _views(state2, n) == _views(state, n)


@pytest.mark.parametrize("game_string", VIEWS)
def test_clone_equals_source(game_string):
    game = pyspiel.load_game(game_string)
    n = game.num_players()
    for k, state in enumerate(_states_along_a_game(game, np.random.default_rng(5))):
        if k % 9 or state.is_terminal():
            continue
        clone = state.clone()
        before = _views(state, n)
        assert _views(clone, n) == before
        # the same actions keep them equal
        twin = state.clone()
        rng_a, rng_b = np.random.default_rng(k), np.random.default_rng(k)
        for _ in range(6):
            if clone.is_terminal():
                break
            a, b = _random_action(clone, rng_a), _random_action(twin, rng_b)
            assert a == b
            clone.apply_action(a)
            twin.apply_action(b)
            assert _views(clone, n) == _views(twin, n)
        # moving the clones on left the source as it was
        assert _views(state, n) == before
