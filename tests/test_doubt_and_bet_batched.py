"""Doubt and Bet's batched heuristic (agents/heuristics/doubt_and_bet_batched.py)
against the Python heuristic (agents/heuristics/doubt_and_bet.py)."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

import kibitz.games  # noqa: F401  (registers the games)
from kibitz.agents.heuristics import doubt_and_bet as py
from kibitz.agents.heuristics import doubt_and_bet_batched as dbb
from kibitz.agents.matches.batched_match import _Batched, batched_match
from kibitz.agents.registry import make_agent
from kibitz.games import REGISTRY
from kibitz.games import doubt_and_bet as db
from kibitz.games.batched import BatchedEnv

SIZES = ["doubt_and_bet", REGISTRY["doubt_and_bet"].small, "doubt_and_bet(players=3)",
         "doubt_and_bet(players=5,single_bet=true)"]


def _decisions(game, rng, games, heuristic=None):
    """(state, the Python heuristic's move) at every decision of ``games``
    games: chance by its probabilities, every move uniformly random among
    the legal ones, or (with ``heuristic``, at half the decisions) the
    heuristic's, which reaches later rounds and longer showdowns."""
    python = make_agent("heuristic", game, 0, 0)
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                state.apply_action(actions[rng.choice(len(actions), p=probs)])
                continue
            want = python.step(state)
            yield state, want
            legal = state.legal_actions()
            if heuristic is not None and rng.random() < 0.5:
                state.apply_action(want)
            else:
                state.apply_action(legal[rng.integers(len(legal))])


def _kind(game, a):
    if a < db.CALL_BASE:
        return ("keep", "buy", "sell", "doubt", "all in", "fold")[a]
    return "call" if a < game.raise_base else "raise" if a < game.claim_base else "claim"


def test_the_places_it_reads_are_the_rules_places():
    """The places of the position the module finds by their neighbours are
    the compiled rules' (games/_doubt_and_bet_rules.py)."""
    from kibitz.games import _doubt_and_bet_rules as rules

    for name in ("POS", "COLOUR", "B_CHIPS", "B_SLOTS", "D_CHIPS", "D_SLOTS", "FIRST", "QUANTITY", "DOUBTER",
                 "CLAIMANT", "NDEAL", "PHASE", "TURN", "SD_TURN", "BETTOR"):
        assert getattr(dbb, name) == getattr(rules, name), name
    for game_string in SIZES:
        game = pyspiel.load_game(game_string)
        assert game.offsets == rules.offsets(game.num_seats, game.k1)


@pytest.mark.parametrize("game_string", SIZES)
def test_the_tail_table_is_tail_probability(game_string):
    """Every entry of the table a hand can ask is the Python heuristic's
    ``tail_probability``, float for float."""
    game = pyspiel.load_game(game_string)
    t = dbb.tail_table(game)
    S, Q, k1, copies = game.max_slots, game.qmax, game.k1, game.copies
    checked = 0
    for own in range(S + 1):
        for rainbow in range(2):
            for j in range(own + 1):
                good = (1 if rainbow else 2) * copies - j
                if not 0 <= good <= k1 * copies - own:
                    continue
                for drawn in range(Q - own + 1):
                    for need in range(Q + 1):
                        expected = py.tail_probability(need, k1 * copies - own, good, drawn)
                        assert t[own, rainbow, j, drawn, need] == expected, (own, rainbow, j, drawn, need)
                        checked += 1
    assert checked > 20


@pytest.mark.parametrize("game_string", SIZES)
def test_the_batched_heuristic_plays_the_python_heuristics_moves(game_string):
    """At every decision of 40 random games, and of 40 games where half the
    moves are the heuristic's (150 of each at the small size, whose games
    are a few moves), the batched heuristic's move read from the
    state's compiled position is the Python heuristic's ``step``; every kind
    of move the size allows comes up."""
    game = pyspiel.load_game(game_string)
    prm, th, tails = dbb.parameters(game), dbb.thresholds(), dbb.tail_table(game)
    rng = np.random.default_rng(7)
    games = 150 if game_string == REGISTRY["doubt_and_bet"].small else 40
    seen: dict = {}
    for heuristic in (None, True):
        for state, want in _decisions(game, rng, games, heuristic):
            got = dbb.move(state.position(), prm, th, tails)
            assert got == want, (game_string, state.history(), got, want)
            seen[_kind(game, want)] = seen.get(_kind(game, want), 0) + 1
    kinds = {"doubt", "claim", "call", "fold"}
    if game.max_slots > 1:  # with one slot no one is asked to exchange
        kinds |= {"keep", "raise"}
    if not game.single_bet:
        kinds |= {"buy", "sell", "all in"}
    assert kinds <= set(seen), seen
    assert sum(seen.values()) >= 300


def test_the_batched_environment_plays_the_python_heuristics_moves():
    """Games on the batched environment with the batched heuristic in most
    seats (random in the others), replayed through pyspiel: at every
    decision of a heuristic seat the move played is the Python heuristic's."""
    game = pyspiel.load_game("doubt_and_bet")
    heuristic, rand = _Batched("heuristic", game), _Batched("random", game)
    env = BatchedEnv(game, 32, seed=2, observe=False, record=True)
    rng = np.random.default_rng(0)
    seat_is_heuristic = (np.arange(32)[:, None] + np.arange(game.num_players())[None, :]) % 3 != 0
    env.reset()
    games = []
    while len(games) < 40:
        mine = seat_is_heuristic[np.arange(32), env.player]
        actions = np.where(mine, heuristic.choose(env.pos, env.mask, rng), rand.choose(env.obs, env.mask, rng))
        env.step(actions)
        games += [(b, env.final_history[b, :env.final_len[b]].copy()) for b in np.flatnonzero(env.ended)]
    python = make_agent("heuristic", game, 0, 0)
    checked = 0
    for b, history in games[:40]:
        state = game.new_initial_state()
        for a in history:
            p = state.current_player()
            if p >= 0 and seat_is_heuristic[b, p]:
                assert python.step(state) == int(a), (state.history(), int(a))
                checked += 1
            state.apply_action(int(a))
    assert checked > 1000


@pytest.mark.parametrize("game_string,games", [("doubt_and_bet", 400), (REGISTRY["doubt_and_bet"].small, 2000)])
def test_the_batched_heuristic_beats_random(game_string, games):
    """A batched match of the heuristic against random: the heuristic's
    mean payoff is far above random's (intervals apart), the same under a
    seed."""
    game = pyspiel.load_game(game_string)
    a = batched_match(game, ["heuristic", "random"], games, seed=1)
    heuristic, rand = a["agents"]
    assert a["games"] == games
    assert heuristic["ci95"][0] > rand["ci95"][1], a
    if game_string == "doubt_and_bet":  # win shares of 4 seats: far above a fair 1/4
        assert heuristic["mean"] > 0.5 and rand["mean"] < 0.1, a
    assert a == batched_match(game, ["heuristic", "random"], games, seed=1)
