"""Underdog's compiled observation tensor (games/_underdog_rules.py
``observation``) is the Python observer's, bit for bit.

A differential test: seeded random games are played on the Python state
(``apply_action``) and, in lockstep, on a copy of the compiled position
(``rules.apply``); at every position (chance nodes, decision nodes and the
terminal one) the compiled ``observation`` must equal
``state.observation_tensor(player)`` as float32 arrays, and ``rules.kind``
must agree with ``state.current_player()``.

The default game's games are long (about 140 moves): every player's view
is compared at every position for the first ``ALL_PLAYERS_GAMES`` games;
after them, the player to move's at decision nodes, one player's in turn
at chance nodes and every player's at the terminal position.

Measured on the 2 shared cores (load about 5): the default game, 2,000
games, 282,069 positions, 414,297 observations compared; the small one,
2,000 games, 20,997 positions, 62,991 observations (every player at every
position); the file in 38 s to 47 s (about 20 s of CPU time).
"""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

import kibitz.games  # noqa: F401  (registers the games)
from kibitz.games import REGISTRY

GAMES = 2000  #: seeded random games per configuration
ALL_PLAYERS_GAMES = 300  #: games in which every player's view is compared everywhere
CHANCE, TERMINAL = -1, -4  #: ``rules.kind``'s codes


def _random_move(state, rng):
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


def _play_and_compare(game_string, games=GAMES, all_players_games=ALL_PLAYERS_GAMES):
    """Plays ``games`` seeded random games; returns the positions visited and
    the observations compared.

    A game's observations are gathered as rows (the compiled one written
    straight into its row, over NaN so that every value must be written)
    and compared in one ``assert_array_equal`` per game; a failure names
    the first position and player that differ."""
    game = pyspiel.load_game(game_string)
    rules = game.compiled_rules()
    assert rules.observation is not None
    n, prm = game.num_players(), rules.params
    rows = (game.max_game_length() + 1) * n
    got = np.empty((rows, game.observation_tensor_size()), dtype=np.float32)
    want = np.empty_like(got)
    positions = compared = 0
    for g in range(games):
        rng = np.random.default_rng([20240, g])
        state = game.new_initial_state()
        s = rules.initial.copy()
        seen = []  # (moves played, player) of each row
        got.fill(np.nan)
        while True:
            cur = state.current_player()
            expected_kind = CHANCE if state.is_chance_node() else TERMINAL if state.is_terminal() else cur
            assert rules.kind(s, prm) == expected_kind, state.history()
            if g < all_players_games or state.is_terminal():
                players = range(n)
            elif state.is_chance_node():
                players = (positions % n,)
            else:
                players = (cur,)
            positions += 1
            for p in players:
                k = len(seen)
                rules.observation(s, prm, p, got[k])
                want[k] = state.observation_tensor(p)
                seen.append((len(state.history()), p))
            if state.is_terminal():
                break
            action = _random_move(state, rng)
            state.apply_action(action)
            rules.apply(s, prm, action)
        k = len(seen)
        if not np.array_equal(got[:k].view(np.uint32), want[:k].view(np.uint32)):
            bad = int(np.flatnonzero((got[:k].view(np.uint32) != want[:k].view(np.uint32)).any(axis=1))[0])
            moves, p = seen[bad]
            np.testing.assert_array_equal(got[bad], want[bad], err_msg=(
                f"{game_string} game {g}, player {p} after {state.history()[:moves]}"))
        np.testing.assert_array_equal(got[:k], want[:k])
        compared += k
    return positions, compared


def test_compiled_observation_equals_python_observation_tensor_default_underdog():
    positions, compared = _play_and_compare("underdog")
    assert positions > GAMES * 50 and compared >= positions


def test_compiled_observation_equals_python_observation_tensor_small_underdog():
    positions, compared = _play_and_compare(REGISTRY["underdog"].small, all_players_games=GAMES)
    assert compared == positions * pyspiel.load_game(REGISTRY["underdog"].small).num_players()


@pytest.mark.parametrize("game_string", ["underdog(players=6,cards=15,last_round_stake=3,payoff=chips)",
                                         "underdog(players=4,cards=6,chips=1,bank=5)"])
def test_compiled_observation_equals_python_observation_tensor_other_parameters(game_string):
    """Wider and tighter games: six seats and 15 cards, the chips payoff and
    a stake of 3; one chip each over several rounds (seats drop out of the
    turn order, a lone player takes the bank, the pile runs empty)."""
    _play_and_compare(game_string, games=40, all_players_games=40)
