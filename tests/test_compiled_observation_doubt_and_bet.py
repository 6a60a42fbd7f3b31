"""Doubt and Bet's compiled observation tensor is the Python observer's, bit for bit.

``game.compiled_rules().observation(s, prm, player, out)``
(games/_doubt_and_bet_rules.py) must write ``state.observation_tensor(player)``
(``DoubtAndBetObserver``, not perfect recall) of the state whose compiled
position is ``s``. A differential test: seeded random games (chance
outcomes drawn with their probabilities, moves uniformly from
``legal_actions()``, a numpy Generator seeded per game) step the Python
state and a compiled position in lockstep, and at every position (chance
nodes, decisions, the terminal position) the compiled observation is
compared with the Python one, byte for byte; ``rules.kind`` must agree with
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
three rounds, with exchanges, deals, claims, showdowns and players out; a
few games end before). The Python side costs most of the time:
``observation_tensor`` about 80 us a call, ``legal_actions`` at a claim
decision (thousands of claims) about 300 us. The small configuration (a single bet) always
ends; the ``rounds`` configuration, small enough to end, adds what the cut
default games do not reach: upkeep (players out at it), seating shuffles,
the end at ``max_rounds`` and a last bet settled by a reveal.
"""

import numpy as np
import pyspiel
import pytest

from kibitz import games

#: random games per configuration (measured: about 45 s for the three, one core)
GAMES = 2000
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
    given), comparing the compiled observation with the Python one at every
    position; returns (games, positions, comparisons, games ended)."""
    game = pyspiel.load_game(game_string)
    rules = game.compiled_rules()
    assert rules.observation is not None
    prm, n = rules.params, game.num_players()
    out = np.empty(game.observation_tensor_size(), dtype=np.float32)
    positions = compared = ended = 0
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
                rules.observation(s, prm, player, out)
                expected = np.asarray(state.observation_tensor(player), dtype=np.float32)
                _assert_same(out, expected, f"{game_string}, seed {seed}, player {player}, "
                                            f"history {history}")
                compared += 1
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
    return num_games, positions, compared, ended


@pytest.mark.parametrize("config", list(CONFIGS))
def test_compiled_observation_equals_python_observation_tensor_in_random_games(config):
    game_string, cap = CONFIGS[config]
    played, positions, compared, ended = _play_and_compare(game_string, GAMES, cap)
    assert played == GAMES >= 2000
    assert compared >= positions
    if cap is None:
        assert ended == GAMES  # every game reached its terminal position


def test_compiled_observation_shows_the_hands_revealed_at_the_last_bet():
    """A single bet settled by a call ends the game with every hand revealed
    (the observation's ``revealed``); settled by a fold, nothing is."""
    game = pyspiel.load_game(games.REGISTRY["doubt_and_bet"].small)
    rules = game.compiled_rules()
    prm = rules.params
    out = np.empty(game.observation_tensor_size(), dtype=np.float32)
    seen = set()
    for seed in range(200):
        rng = np.random.default_rng(seed)
        state = game.new_initial_state()
        s = rules.initial.copy()
        while not state.is_terminal():
            if state.is_chance_node():
                action = _chance_outcome(state, rng)
            else:
                legal = state.legal_actions()
                action = legal[rng.integers(len(legal))]
            state.apply_action(action)
            rules.apply(s, prm, action)
        revealed = any(e.kind == "reveal" for e in state.log())
        for player in range(game.num_players()):
            rules.observation(s, prm, player, out)
            expected = np.asarray(state.observation_tensor(player), dtype=np.float32)
            _assert_same(out, expected, f"seed {seed}, player {player}")
            hands = out[-game.num_players() * game.k1:]
            assert hands.any() == revealed
        seen.add(revealed)
    assert seen == {True, False}  # both endings were met
