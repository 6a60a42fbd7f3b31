"""Pub's compiled ``compact`` encoding is the Python encoder's, bit for bit.

``game.compiled_rules().compact(s, prm, player, out)`` (games/_pub_rules.py)
must write ``state.compact_tensor(player)`` (``CompactEncoder``: the
``compact`` encoding the trained network reads) of the state whose compiled
position is ``s``, every value of ``out``. A differential test: seeded
random games (chance outcomes drawn with their probabilities, moves
uniformly from the legal ones) step the Python state and a compiled position
in lockstep, and at every position (the set-up's chance nodes, the reveals
and draws, the decisions and the terminal position) the compiled encoding,
written into an ``out`` full of NaN, is compared with the Python one: every
player's in the first ``ALL_PLAYERS`` games, afterwards the player to move's
(at chance and terminal positions: a player chosen by the game's generator).
``rules.kind`` must agree with ``current_player()`` on the way.
"""

import numpy as np
import pyspiel
import pytest

from kibitz import games

#: random games per configuration, and the first games compared for every player
GAMES = 1000
ALL_PLAYERS = 200
CONFIGS = {"default": "pub", "small": games.REGISTRY["pub"].small}


def _chance_outcome(state, rng):
    """A chance outcome drawn with its probability."""
    outcomes = state.chance_outcomes()
    actions = [a for a, _ in outcomes]
    cum = np.cumsum([p for _, p in outcomes])
    i = int(np.searchsorted(cum, rng.random() * cum[-1], side="right"))
    return actions[min(i, len(actions) - 1)]


def _first_difference(got, want, who, seed, history):
    """Fails on the first row where ``got`` and ``want`` differ, naming it."""
    for row in range(len(got)):
        pos, player = who[row]
        where = f"seed {seed}, player {player}, history {history[:pos]}"
        np.testing.assert_array_equal(got[row], want[row], err_msg=where)
        assert got[row].tobytes() == want[row].tobytes(), where


def _players(state, rng, n, every):
    """The players compared at this position."""
    if every:
        return range(n)
    cur = state.current_player()
    return (cur,) if cur >= 0 else (int(rng.integers(n)),)


def _play_and_compare(game_string, num_games):
    """Plays ``num_games`` seeded random games, comparing the compact
    encodings; returns (games, positions, comparisons).

    A game's encodings are gathered in two arrays (compiled, Python; a row
    per comparison), compared at its end in one go."""
    game = pyspiel.load_game(game_string)
    rules = game.compiled_rules()
    assert rules.compact is not None
    prm, n, size = rules.params, game.num_players(), game.compact_tensor_size()
    rows = n * (game.max_game_length() + 1)
    got = np.empty((rows, size), dtype=np.float32)
    want = np.empty((rows, size), dtype=np.float32)
    positions = compared = 0
    for seed in range(num_games):
        rng = np.random.default_rng(seed)
        state = game.new_initial_state()
        s = rules.initial.copy()
        history, who = [], []
        got.fill(np.nan)  # every value must be written
        k = 0
        while True:
            positions += 1
            cur = state.current_player()
            assert rules.kind(s, prm) == cur, (seed, history)
            for player in _players(state, rng, n, seed < ALL_PLAYERS):
                rules.compact(s, prm, player, got[k])
                want[k] = np.asarray(state.compact_tensor(player), dtype=np.float32)
                who.append((len(history), player))
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
            _first_difference(got[:k], want[:k], who, seed, history)
        assert not np.isnan(got[:k]).any()
        compared += k
    return num_games, positions, compared


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_compiled_compact_equals_python_compact_tensor(config):
    played, positions, compared = _play_and_compare(CONFIGS[config], GAMES)
    print(f"{config}: {played} games, {positions} positions, {compared} comparisons")
    assert played == GAMES >= 1000
    assert compared > positions
