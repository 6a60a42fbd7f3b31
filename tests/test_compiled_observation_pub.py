"""Pub's compiled observation tensor is the Python observer's, bit for bit.

``game.compiled_rules().observation(s, prm, player, out)``
(games/_pub_rules.py) must write ``state.observation_tensor(player)``
(``PubObserver``, not perfect recall) of the state whose compiled position
is ``s``. A differential test: seeded random games (chance outcomes drawn
with their probabilities, moves uniformly from the legal ones) step the
Python state and a compiled position in lockstep, and at every position
(the set-up's chance nodes, the reveals and draws, the decisions and the
terminal position) every player's compiled observation is compared with
the Python one; ``rules.kind`` must agree with ``current_player()`` on the
way (-1 chance, -4 terminal).
"""

import numpy as np
import pyspiel
import pytest

from kibitz import games

#: random games per configuration (measured: 29 s for both, 32 s of CPU; most
#: of it in ``state.observation_tensor``, about 37 us a call at the default size)
GAMES = 2000
CONFIGS = {"default": "pub", "small": games.REGISTRY["pub"].small}


def _chance_outcome(state, rng):
    """A chance outcome drawn with its probability."""
    outcomes = state.chance_outcomes()
    actions = [a for a, _ in outcomes]
    cum = np.cumsum([p for _, p in outcomes])
    i = int(np.searchsorted(cum, rng.random() * cum[-1], side="right"))
    return actions[min(i, len(actions) - 1)]


def _first_difference(got, want, n, seed, history):
    """Fails on the first row where ``got`` and ``want`` differ, naming it
    (row ``k``: the position after ``k // n`` moves, player ``k % n``)."""
    for row in range(len(got)):
        where = f"seed {seed}, player {row % n}, history {history[:row // n]}"
        np.testing.assert_array_equal(got[row], want[row], err_msg=where)
        assert got[row].tobytes() == want[row].tobytes(), where


def _play_and_compare(game_string, num_games):
    """Plays ``num_games`` seeded random games, comparing every player's
    observation at every position; returns (games, positions, comparisons).

    A game's observations are gathered in two arrays (compiled, Python; a
    row per position and player), compared at its end: one comparison of
    arrays per game, not one per player and position."""
    game = pyspiel.load_game(game_string)
    rules = game.compiled_rules()
    assert rules.observation is not None
    prm, n, size = rules.params, game.num_players(), game.observation_tensor_size()
    rows = n * (game.max_game_length() + 1)
    got = np.empty((rows, size), dtype=np.float32)
    want = np.empty((rows, size), dtype=np.float32)
    positions = compared = 0
    for seed in range(num_games):
        rng = np.random.default_rng(seed)
        state = game.new_initial_state()
        s = rules.initial.copy()
        history = []
        got.fill(np.nan)  # every value must be written
        k = 0
        while True:
            positions += 1
            cur = state.current_player()
            assert rules.kind(s, prm) == cur, (seed, history)
            for player in range(n):
                rules.observation(s, prm, player, got[k])
                want[k] = np.fromiter(state.observation_tensor(player), np.float32, size)
                k += 1
            if state.is_terminal():
                assert cur == pyspiel.PlayerId.TERMINAL == -4
                break
            if state.is_chance_node():
                assert cur == pyspiel.PlayerId.CHANCE == -1
                action = _chance_outcome(state, rng)
            else:
                legal = state.legal_actions()
                action = legal[rng.integers(len(legal))]
            history.append(action)
            state.apply_action(action)
            rules.apply(s, prm, action)
        if got[:k].tobytes() != want[:k].tobytes():  # bit for bit
            _first_difference(got[:k], want[:k], n, seed, history)
        np.testing.assert_array_equal(got[:k], want[:k])
        compared += k
    return num_games, positions, compared


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_compiled_observation_equals_python_observation_tensor(config):
    played, positions, compared = _play_and_compare(CONFIGS[config], GAMES)
    assert played == GAMES >= 2000
    assert compared == positions * pyspiel.load_game(CONFIGS[config]).num_players()
