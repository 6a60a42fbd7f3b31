"""Pub's and Underdog's ``position_of`` (games/_pub_rules.py,
games/_underdog_rules.py) gives a Python state's compiled position, read
from the state's rules core (``state._c``).

A differential test, for each game's default and small configuration:
* seeded random games (chance outcomes drawn with their probabilities,
  moves uniformly from the legal ones) step the Python state
  (``apply_action``) and, in lockstep, a compiled position from
  ``rules.initial`` (``rules.apply``); at every position (chance nodes,
  decisions, the end) ``rules.position_of(state)`` must equal the compiled
  position (``np.array_equal``, int64);
* a search's worlds: at every ``WORLD_EVERY``-th decision of the first
  ``WORLD_GAMES`` games, a world drawn with
  ``state.resample_from_infostate(player, random.Random(...).random,
  internal=True)`` (no pyspiel history) is converted, and from there a
  compiled playout and a Python playout of the world (``_apply_action``)
  are driven by the same choices (the same index among the legal actions
  or chance outcomes, from one seeded generator): at every step the kind,
  the legal actions, the chance outcomes and their probabilities (bit for
  bit) and ``position_of(world)`` must agree, every player's compiled
  observation must be the world's ``observation_tensor`` at the first and
  the last step, and the returns at the end.

Underdog's compiled turn and deal orders keep, past the current round's
seats, what an earlier round with more seats wrote there (``_new_round``
writes only the seats in the round); ``position_of`` rebuilds those places
from the log's "round" events, and the default game's random games, where
seats run out of chips, check them.

Measured on the 2 shared cores (load about 4), 1,000 games per
configuration: Pub's default game 76,971 positions, 788 worlds (23,982
playout steps), its small one 8,027 positions, 200 worlds (590 steps), 9 s
to 11 s; Underdog's default game 140,765 positions, 2,190 worlds (153,852
steps), its small one 10,526 positions, 200 worlds (1,101 steps), 13 s to
15 s.
"""

from __future__ import annotations

import random

import numpy as np
import pyspiel
import pytest

import kibitz.games  # noqa: F401  (registers the games)
from kibitz.games import REGISTRY

GAMES = 1000  #: seeded random games per configuration
WORLD_GAMES = 200  #: games in which worlds are drawn
WORLD_EVERY = 7  #: a world at every 7th decision of those games
CHANCE, TERMINAL = -1, -4  #: ``rules.kind``'s codes
CONFIGS = {"pub-default": "pub", "pub-small": REGISTRY["pub"].small,
           "underdog-default": "underdog", "underdog-small": REGISTRY["underdog"].small}


def _kind(state) -> int:
    """``rules.kind``'s code for a Python state."""
    if state.is_terminal():
        return TERMINAL
    return CHANCE if state.is_chance_node() else state.current_player()


def _random_move(state, rng) -> int:
    """A chance outcome drawn with its probability, or a uniform legal move."""
    if state.is_chance_node():
        outcomes = state.chance_outcomes()
        u, total = rng.random(), 0.0
        for action, prob in outcomes:
            total += prob
            if u < total:
                return action
        return outcomes[-1][0]
    legal = state.legal_actions()
    return legal[rng.integers(len(legal))]


def _assert_equal(got, want, where) -> None:
    """``np.array_equal(got, want)``; a failure names the place (``where()``)
    and the elements that differ."""
    if not np.array_equal(got, want):
        np.testing.assert_array_equal(got, want, err_msg=where())
    assert got.dtype == want.dtype == np.int64


def _check_observations(rules, state, s, where) -> None:
    """Every player's compiled observation at ``s`` is the state's
    ``observation_tensor`` (the fields only ``rules.observation`` reads)."""
    n = len(state.returns())
    out = np.empty(len(state.observation_tensor(0)), dtype=np.float32)
    for player in range(n):
        rules.observation(s, rules.params, player, out)
        want = np.array(state.observation_tensor(player), dtype=np.float32)
        assert out.tobytes() == want.tobytes(), f"{where}, observation of p{player}"


def _check_world(rules, world, rng, where) -> int:
    """Plays the world on in Python (``_apply_action``) and from
    ``position_of(world)`` in compiled code with the same choices, comparing
    every step (and every player's observation at the first and the last);
    returns the steps played."""
    prm = rules.params
    s = rules.position_of(world)
    _check_observations(rules, world, s, where)
    acts = np.empty(rules.max_branch, dtype=np.int64)
    probs = np.empty(rules.max_branch, dtype=np.float64)
    steps = 0
    while True:
        _assert_equal(rules.position_of(world), s, lambda: f"{where}, step {steps}")
        kind = rules.kind(s, prm)
        assert kind == _kind(world), (where, steps)
        if kind == TERMINAL:
            break
        if kind == CHANCE:
            k = rules.outcomes(s, prm, acts, probs)
            outcomes = world.chance_outcomes()
            assert [a for a, _ in outcomes] == acts[:k].tolist(), (where, steps)
            assert [p for _, p in outcomes] == probs[:k].tolist(), (where, steps)  # bit for bit
        else:
            k = rules.legal(s, prm, acts)
            assert world._legal_actions(kind) == acts[:k].tolist(), (where, steps)
        action = int(acts[rng.integers(k)])
        world._apply_action(action)
        rules.apply(s, prm, action)
        steps += 1
    _check_observations(rules, world, s, f"{where}, the end")
    out = np.empty(len(world.returns()), dtype=np.float64)
    rules.returns(s, prm, out)
    assert out.tolist() == world.returns(), where
    return steps


def _play_and_compare(game_string):
    """Plays ``GAMES`` seeded random games; returns (positions compared,
    worlds checked, playout steps of the worlds); some worlds must differ
    from the state they are drawn from (hidden cards re-dealt)."""
    game = pyspiel.load_game(game_string)
    rules = game.compiled_rules()
    assert rules.position_of is not None
    prm = rules.params
    positions = worlds = steps = redrawn = 0
    for g in range(GAMES):
        rng = np.random.default_rng([5150, g])
        state = game.new_initial_state()
        s = rules.initial.copy()
        decisions = 0
        while True:
            _assert_equal(rules.position_of(state), s, lambda: f"game {g}, history {state.history()}")
            positions += 1
            if state.is_terminal():
                break
            player = state.current_player()
            if player >= 0:
                if g < WORLD_GAMES and decisions % WORLD_EVERY == 0:
                    sampler = random.Random(g * 1000 + decisions).random
                    world = state.resample_from_infostate(player, sampler, internal=True)
                    assert world.history() == []  # replayed without pyspiel's history
                    redrawn += not np.array_equal(rules.position_of(world), s)
                    where = f"game {g}, history {state.history()}, world of p{player}"
                    steps += _check_world(rules, world, np.random.default_rng([7, g, decisions]), where)
                    worlds += 1
                decisions += 1
            action = _random_move(state, rng)
            state.apply_action(action)
            rules.apply(s, prm, action)
    assert redrawn > 0
    return positions, worlds, steps


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_position_of_is_the_compiled_position(config):
    positions, worlds, steps = _play_and_compare(CONFIGS[config])
    print(f"{config}: {GAMES} games, {positions} positions, {worlds} worlds ({steps} steps)")
    assert positions > GAMES and worlds >= WORLD_GAMES
