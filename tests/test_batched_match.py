"""Matches on the batched environment (agents/matches/batched_match.py)."""

from __future__ import annotations

import pyspiel
import pytest

import kibitz.games  # noqa: F401  (registers the games)
from kibitz.agents.matches.batched_match import batched_match
from kibitz.agents.matches.tournament import run_tournament
from kibitz.games import REGISTRY


def test_a_seed_gives_the_same_match_and_every_game_is_credited():
    game = pyspiel.load_game(REGISTRY["underdog"].small)
    a = batched_match(game, ["random", "random"], 300, seed=4)
    assert a == batched_match(game, ["random", "random"], 300, seed=4)
    assert a["games"] == 300 and all(x["games"] <= 300 for x in a["agents"])
    assert all(0 <= x["mean"] <= 1 for x in a["agents"])  # win shares
    assert a != batched_match(game, ["random", "random"], 300, seed=5)


def test_it_agrees_with_a_tournament_of_the_same_agents():
    """Underdog at its default size, the shipped network against random:
    the batched match's mean per agent lies within the two intervals'
    reach of the tournament's (different deals, the same game)."""
    game = pyspiel.load_game("underdog")
    fast = batched_match(game, ["trained", "random"], 1000, seed=0)
    slow = run_tournament("underdog", ["trained", "random"], 96, seed=0, workers=1, progress=False).results
    for f, s in zip(fast["agents"], slow["agents"]):
        half = (f["ci95"][1] - f["ci95"][0]) / 2 + 1.96 * s["se"]
        assert abs(f["mean"] - s["mean_payoff"]) <= half, (f, s)
    assert fast["agents"][0]["mean"] > fast["agents"][1]["mean"]  # the network beats random


def test_bad_input_names_what_is_allowed():
    game = pyspiel.load_game("underdog")
    with pytest.raises(ValueError, match=r"'heuristic' has no batched form; allowed: random, trained, "
                                         r"net\(FILE\), heuristic \(pub, over_under\)"):
        batched_match(game, ["heuristic", "random"], 10)
    with pytest.raises(ValueError, match="games=0; allowed: a whole number >= 1"):
        batched_match(game, ["random"], 0)
    with pytest.raises(ValueError, match="specs: give at least one agent spec"):
        batched_match(game, [], 10)


@pytest.mark.parametrize("game_string", ["pub", REGISTRY["pub"].small, "pub(players=5)",
                                         "over_under", REGISTRY["over_under"].small,
                                         "over_under(variant=cutthroat,jokers=true,deck=standard)"])
def test_a_batched_heuristic_plays_the_python_heuristics_moves(game_string):
    """Games with the batched heuristic in some seats (random in the others),
    replayed through pyspiel: at every decision of a heuristic seat the move
    played is the one agents/heuristics/pub.py (over_under.py) chooses.
    Over/Under's cut-throat ties and jokers make its players give stacks away."""
    import numpy as np

    from kibitz.agents.matches.batched_match import _Batched
    from kibitz.agents.registry import make_agent
    from kibitz.games.batched import BatchedEnv

    game = pyspiel.load_game(game_string)
    heuristic, rand = _Batched("heuristic", game), _Batched("random", game)
    env = BatchedEnv(game, 64, seed=2, encoding=heuristic.encoding, record=True)
    rng = np.random.default_rng(0)
    seat_is_heuristic = (np.arange(64)[:, None] + np.arange(game.num_players())[None, :]) % 3 != 0
    env.reset()
    games, checked = [], 0
    while len(games) < 150:
        mine = seat_is_heuristic[np.arange(64), env.player]
        actions = np.where(mine, heuristic.choose(env.obs, env.mask, rng), rand.choose(env.obs, env.mask, rng))
        env.step(actions)
        games += [(b, env.final_history[b, :env.final_len[b]].copy()) for b in np.flatnonzero(env.ended)]
    agents = [make_agent("heuristic", game, p, 0) for p in range(game.num_players())]
    for b, history in games[:150]:
        state = game.new_initial_state()
        for a in history:
            p = state.current_player()
            if p >= 0 and seat_is_heuristic[b, p]:
                probs = agents[p].action_probabilities(state)
                assert probs[int(a)] == 1.0, (game_string, state.history(), probs, int(a))
                checked += 1
            state.apply_action(int(a))
    assert checked > 100
