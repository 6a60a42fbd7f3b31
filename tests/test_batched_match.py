"""Matches on the batched environment (agents/batched_match.py)."""

from __future__ import annotations

import pyspiel
import pytest

import kibitz.games  # noqa: F401  (registers the games)
from kibitz.agents.batched_match import batched_match
from kibitz.agents.tournament import run_tournament
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
    with pytest.raises(ValueError, match="'heuristic' has no batched form; allowed: random, trained, net"):
        batched_match(game, ["heuristic", "random"], 10)
    with pytest.raises(ValueError, match="games=0; allowed: a whole number >= 1"):
        batched_match(game, ["random"], 0)
    with pytest.raises(ValueError, match="specs: give at least one agent spec"):
        batched_match(game, [], 10)
