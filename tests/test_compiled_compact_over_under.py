"""Over/Under's compiled ``compact`` encoding (games/_over_under_rules.py,
``CompiledRules.compact``) against ``state.compact_tensor(player)``
(``CompactEncoder``), bit for bit.

A differential test: seeded random games (chance outcomes drawn with their
probabilities, player moves uniformly from the legal ones, one numpy
Generator per game) are played on the Python state and, in lockstep, on a
copy of the compiled position; at every position, chance nodes and the
terminal one included, the compiled encoding (``out`` pre-filled with NaN,
so every value must be written) must equal ``state.compact_tensor(player)``
as float32 arrays, and ``kind`` must agree with ``current_player()``.

The encoding has pieces for the jokers (the $2 joker as a stack's top, the
jokers' deck counts, a Pyramid or Eagle in the odds) and its odds and seats
depend on the cut-throat variant only through the give phase and the solo
version (a lone Pyramid or Eagle busts), so besides the default game and
the small configuration two more configurations play those: cut-throat with
jokers on the standard deck, and the solo version with jokers.
"""

import numpy as np
import pyspiel
import pytest

import kibitz.games
from kibitz.games import _over_under_rules

GAMES = 1000
#: games whose every position is checked for every player; after them, for
#: the player to move (at chance and terminal positions: one seat in turn)
ALL_PLAYERS_GAMES = 200


def _play_and_compare(game_string: str, games: int = GAMES,
                      all_players_games: int = ALL_PLAYERS_GAMES, seed: int = 0):
    """Plays ``games`` random games of ``game_string`` on the Python state and
    the compiled position together, comparing the compact encodings at every
    position; returns (positions visited, encodings compared, the phases
    seen, whether the $2 joker was ever a stack's top)."""
    game = pyspiel.load_game(game_string)
    rules = game.compiled_rules()
    assert rules.compact is not None
    prm = rules.params
    n = game.num_players()
    out = np.full(game.compact_tensor_size(), np.nan, dtype=np.float32)
    positions = compared = 0
    phases = set()
    joker_top = False
    top_at = prm[_over_under_rules.TOP_AT]
    tops = slice(top_at, top_at + prm[_over_under_rules.S])
    joker = prm[_over_under_rules.K]  # the $2 joker's card kind

    def check(state, s, player):
        out.fill(np.nan)  # every value must be written
        rules.compact(s, prm, player, out)
        expected = np.asarray(state.compact_tensor(player), dtype=np.float32)
        # bit for bit; assert_array_equal only to report a difference
        if out.tobytes() != expected.tobytes():
            np.testing.assert_array_equal(out, expected, err_msg=f"{game_string}, player "
                                          f"{player}, history {state.history()}")
            pytest.fail(f"{game_string}, player {player}: equal but not bit for bit: "
                        f"{out} {expected} (history {state.history()})")

    for g in range(games):
        rng = np.random.default_rng([seed, g])
        state = game.new_initial_state()
        s = rules.initial.copy()
        every = g < all_players_games
        while True:
            cur = state.current_player()
            kind = rules.kind(s, prm)
            assert kind == cur, (game_string, state.history(), kind, cur)
            phases.add(state.phase)
            joker_top = joker_top or bool((s[tops] == joker).any())
            positions += 1
            if every:
                for p in range(n):
                    check(state, s, p)
                compared += n
            else:
                check(state, s, cur if cur >= 0 else positions % n)
                compared += 1
            if state.is_terminal():
                break
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                u, acc = rng.random(), 0.0
                action = outcomes[-1][0]
                for a, prob in outcomes:
                    acc += prob
                    if u < acc:
                        action = a
                        break
            else:
                legal = state.legal_actions()
                action = legal[int(rng.random() * len(legal))]
            state.apply_action(action)
            rules.apply(s, prm, action)
    return positions, compared, phases, joker_top


def test_compiled_compact_equals_python_compact_default_game():
    """1,000 games at the defaults (about 200 positions each): every player
    for the first 200, then the player to move."""
    positions, compared, phases, joker_top = _play_and_compare("over_under")
    assert phases == {"deal", "predict", "flip", "over"}  # classic: no give
    assert compared > positions > 150_000


def test_compiled_compact_equals_python_compact_small_game():
    """1,000 games of the small configuration, every player at every position."""
    positions, compared, phases, joker_top = _play_and_compare(
        kibitz.games.REGISTRY["over_under"].small, all_players_games=GAMES)
    assert phases == {"deal", "predict", "flip", "over"}
    assert compared == 2 * positions


@pytest.mark.parametrize("game_string", [
    "over_under(players=3,deck=standard,copies=1,stacks=3,rounds=2,variant=cutthroat,"
    "jokers=true,payoff=score)",
    "over_under(players=1,copies=1,stacks=2,jokers=true)",
])
def test_compiled_compact_equals_python_compact_with_gives_and_jokers(game_string):
    """What the two above never reach: gives (a cut-throat tie, a Pyramid or
    Eagle), the $2 joker on a stack's top and the solo version's lone Pyramid
    or Eagle; every player at every position."""
    positions, compared, phases, joker_top = _play_and_compare(game_string,
                                                               all_players_games=GAMES)
    assert joker_top
    if "cutthroat" in game_string:
        assert "give" in phases
