"""Doubt and Bet's compiled ``compact`` encoding is the Python encoder's, bit for bit.

``game.compiled_rules().compact(s, prm, player, out)``
(games/_doubt_and_bet_rules.py) must write ``state.compact_tensor(player)``
(``CompactEncoder``: the viewer's round, not perfect recall) of the state
whose compiled position is ``s``. A differential test: seeded random games
(chance outcomes drawn with their probabilities, moves uniformly from
``legal_actions()``, a numpy Generator seeded per game) step the Python
state and a compiled position in lockstep, and at every position (chance
nodes, decisions, the terminal position) the compiled encoding is compared
with the Python one, byte for byte; ``rules.kind`` must agree with
``current_player()`` on the way (-1 chance, -4 terminal). The output is
filled with NaN before each call, so a value the compiled function leaves
unwritten fails.

Which players are compared: in the first ``FULL`` games of a configuration
every player at every position; in the others the player to move at a
decision, one player in turn (the move number modulo the players) at a
chance node, and every player at the terminal position.

Random games of the default game (4 players, 100 rounds, thousands of
legal claims) run to hundreds of moves, so they are cut after
``DEFAULT_CAP`` = 100 moves (chance outcomes included: about the first
three rounds, with exchanges, deals, claims, showdowns and players out).
The small configuration (a single bet) always ends; the ``rounds``
configuration, small enough to end, adds upkeep (players out at it),
seating shuffles, the end at ``max_rounds`` and positions after players
went out (the viewer out, its row among the last). The encoding's
hypergeometric chances are compared at every own hand the games deal.
"""

import numpy as np
import pyspiel
import pytest

from kibitz import games

#: random games per configuration (measured: about 12 s for the three, one core)
GAMES = 1000
#: games of a configuration in which every player is compared at every position
FULL = 200
#: moves after which a default-size game is cut
DEFAULT_CAP = 100
#: game string and move cap (None: to the end) per configuration
CONFIGS = {
    "default": ("doubt_and_bet", DEFAULT_CAP),
    "small": (games.REGISTRY["doubt_and_bet"].small, None),
    "rounds": ("doubt_and_bet(players=3,chips=2,slots=2,colours=2,copies=2,upkeep_start=2,"
               "upkeep_every=2,shuffle_every=2,max_rounds=6,payoff=rank)", None),
}


def _chance_outcome(state, rng):
    """A chance outcome drawn with its probability."""
    outcomes = state.chance_outcomes()
    cum = np.cumsum([p for _, p in outcomes])
    i = int(np.searchsorted(cum, rng.random() * cum[-1], side="right"))
    return outcomes[min(i, len(outcomes) - 1)][0]


def _assert_same(got, expected, where):
    """``got`` and ``expected`` (float32) are the same bytes; on a mismatch
    ``assert_array_equal`` names the differing values."""
    if got.tobytes() != expected.tobytes():
        np.testing.assert_array_equal(got, expected, err_msg=where)
        raise AssertionError(f"equal values but different bits (a -0.0?): {where}")


def _play_and_compare(game_string, num_games, cap):
    """Plays ``num_games`` seeded random games (cut after ``cap`` moves if
    given), comparing the compiled encoding with the Python one at every
    position; returns (positions, comparisons, games ended, phases seen)."""
    game = pyspiel.load_game(game_string)
    rules = game.compiled_rules()
    assert rules.compact is not None
    prm, n = rules.params, game.num_players()
    out = np.empty(game.compact_tensor_size(), dtype=np.float32)
    positions = compared = ended = 0
    phases = set()
    for seed in range(num_games):
        rng = np.random.default_rng(seed)
        state = game.new_initial_state()
        s = rules.initial.copy()
        history = []
        while True:
            positions += 1
            cur = state.current_player()
            assert rules.kind(s, prm) == cur, (game_string, seed, history)
            if seed < FULL or state.is_terminal():
                players = range(n)
            else:
                players = (cur if cur >= 0 else len(history) % n,)
            for player in players:
                out.fill(np.nan)  # every value must be written
                rules.compact(s, prm, player, out)
                expected = np.asarray(state.compact_tensor(player), dtype=np.float32)
                _assert_same(out, expected, f"{game_string}, seed {seed}, player {player}, "
                                            f"history {history}")
                compared += 1
            phases.add(int(s[0]))
            if state.is_terminal():
                assert cur == pyspiel.PlayerId.TERMINAL == -4
                ended += 1
                break
            if cap is not None and len(history) >= cap:
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
    return positions, compared, ended, phases


@pytest.mark.parametrize("config", list(CONFIGS))
def test_compiled_compact_equals_python_compact_tensor_in_random_games(config):
    game_string, cap = CONFIGS[config]
    positions, compared, ended, phases = _play_and_compare(game_string, GAMES, cap)
    assert compared >= positions > GAMES
    if cap is None:
        assert ended == GAMES  # every game reached its terminal position
    # deal, claim, showdown; exchanges (none in the small game: one slot, the
    # most); the end where games are not cut; shuffles in the rounds game
    seen = {"default": {1, 2, 3, 4}, "small": {2, 3, 4, 5}, "rounds": {0, 1, 2, 3, 4, 5}}[config]
    assert seen <= phases


def test_compiled_compact_size_and_layout():
    """The compiled encoding fills ``compact_tensor_size()`` floats, the
    layout's pieces in order (279 at the default size)."""
    game = pyspiel.load_game("doubt_and_bet")
    assert game.compact_tensor_size() == 279
    assert sum(size for _, size, _ in game.compact_tensor_layout()) == 279
    rules = game.compiled_rules()
    out = np.full(279, np.nan, dtype=np.float32)
    rules.compact(rules.initial, rules.params, 0, out)
    expected = np.asarray(game.new_initial_state().compact_tensor(0), dtype=np.float32)
    _assert_same(out, expected, "the initial position")
