"""Doubt and Bet: game information, scenarios from the rules page, solvers, agents
(the checks every game shares: tests/test_conformance.py).

Scenario tests script games move by move; cards are dealt seat by seat from
seat 0 (one chance action per card), so ``deal`` takes each seat's cards in
order. Expected outcomes come from the rules page, docs/rules/doubt_and_bet.md
(the rules and our rulings).
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import ismcts, mcts

from kibitz import games  # noqa: F401  (registers the games)
from kibitz.agents.base import RandomAgent
from kibitz.agents.registry import make_agent
from kibitz.games import doubt_and_bet as db
from kibitz.games._common import IllegalActionError

COLOURS = {"red": 0, "yellow": 1, "green": 2, "blue": 3, "purple": 4}
TINY = "doubt_and_bet(players=2,chips=2,slots=1,colours=1,copies=2,single_bet=true)"


def load(**params):
    return pyspiel.load_game("doubt_and_bet", params)


def colour_index(game, name):
    return game.k1 - 1 if name == "rainbow" else COLOURS[name]


def act(state, name):
    """Applies the legal move called ``name`` (checks the move names too)."""
    player = state.current_player()
    for a in state.legal_actions():
        if state.action_to_string(player, a) == name:
            state.apply_action(a)
            return a
    raise AssertionError(f"{name!r} is not legal; legal: "
                         f"{[state.action_to_string(player, a) for a in state.legal_actions()][:30]}")


def names(state):
    p = state.current_player()
    return [state.action_to_string(p, a) for a in state.legal_actions()]


def deal(state, hands):
    """Deals ``hands`` (a list of colour names per seat still in, seat order)."""
    game = state.get_game()
    for cards in hands:
        for name in cards:
            assert state.is_chance_node() and state.phase == "deal"
            state.apply_action(colour_index(game, name))
    assert state.phase == "claim"


def keep_all(state):
    while state.phase == "exchange":
        state.apply_action(db.KEEP)


def claim_code(game, q, colour, ch, s):
    pair = ch * game.max_slots + s
    return game.claim_base + pair * game.qmax * game.k1 + (q - 1) * game.k1 + colour_index(game, colour)


def assert_illegal(state, action, message=None):
    """``action`` raises (with a message matching ``message``) and changes nothing."""
    before_str, before_hist = str(state), list(state.history())
    before_info = [state.information_state_string(p) for p in range(state.get_game().num_players())]
    with pytest.raises(IllegalActionError, match=message):
        state.apply_action(action)
    assert str(state) == before_str
    assert list(state.history()) == before_hist
    assert [state.information_state_string(p)
            for p in range(state.get_game().num_players())] == before_info


def events(state, kind):
    return [e for e in state.log() if e[0] == kind]


# ----------------------------------------------------------------- claims
def small_two():
    """2 players, 3 chips, 2 slots, red/yellow + rainbow; dealt and ready to claim."""
    game = load(players=2, chips=3, slots=2, colours=2)
    state = game.new_initial_state()
    keep_all(state)
    deal(state, [["red", "rainbow"], ["yellow", "rainbow"]])
    return game, state


def test_rainbow_counts_for_every_colour():
    _, state = small_two()
    act(state, "claim 3 red stake 1+0")  # 1 red + 2 rainbows = 3
    act(state, "doubt")
    act(state, "call 1+0")
    reveal = events(state, "reveal")[0]
    assert reveal[2] == 3
    assert state.chips == (4, 2) and state.slots == (2, 2)  # bettor p0 wins 1


def test_rainbow_claim_counts_only_rainbows():
    _, state = small_two()
    act(state, "claim 3 rainbow stake 1+0")  # only 2 rainbows
    act(state, "doubt")
    act(state, "call 1+0")
    assert events(state, "reveal")[0][2] == 2
    assert state.chips == (2, 4)  # doubter p1 wins 1


def test_claim_quantity_is_capped_at_the_cards_dealt():
    game, state = small_two()
    legal = names(state)
    assert "claim 4 yellow stake 1+0" in legal  # 4 cards dealt
    assert not any(n.startswith("claim 5 ") for n in legal)
    # with a slot sold only 3 cards are dealt: a claim of 4 is illegal
    state = game.new_initial_state()
    act(state, "sell slot")
    act(state, "keep")
    deal(state, [["red"], ["yellow", "rainbow"]])
    assert state.cards_dealt == 3
    legal = names(state)
    assert "claim 3 rainbow stake 4+0" in legal
    assert not any(n.startswith("claim 4 ") for n in legal)
    assert_illegal(state, claim_code(game, 4, "red", 1, 0))


def test_responder_without_a_higher_claim_must_doubt():
    _, state = small_two()
    act(state, "claim 4 red stake 1+0")
    assert state.legal_actions() == [db.DOUBT]
    assert names(state) == ["doubt"]


def test_opener_must_claim_and_a_raise_needs_a_higher_quantity():
    game, state = small_two()
    assert db.DOUBT not in state.legal_actions()
    assert_illegal(state, db.DOUBT)
    act(state, "claim 2 red stake 1+0")
    legal = names(state)
    assert legal[0] == "doubt"
    assert "claim 3 red stake 1+0" in legal and "claim 3 rainbow stake 3+1" in legal
    assert not any(n.startswith("claim 2 ") or n.startswith("claim 1 ") for n in legal)
    assert_illegal(state, claim_code(game, 2, "yellow", 1, 0))   # same quantity, other colour
    assert_illegal(state, claim_code(game, 3, "yellow", 4, 0))   # stake not affordable
    assert_illegal(state, claim_code(game, 3, "yellow", 0, 0))   # stake of 0


# --------------------------------------------------------------- showdown
def test_raise_then_call():
    _, state = small_two()
    act(state, "claim 2 red stake 1+0")  # true: 1 red + 2 rainbows
    act(state, "doubt")
    act(state, "raise 2+0")
    assert set(names(state)) >= {"fold", "call 2+0", "call 1+1", "raise 3+0", "raise 2+1"}
    act(state, "call 2+0")
    assert state.chips == (5, 1)


def test_raise_then_fold_loses_the_most_recent_stake_unrevealed():
    _, state = small_two()
    act(state, "claim 2 red stake 1+0")
    act(state, "doubt")
    act(state, "raise 2+0")
    act(state, "fold")  # the bettor's most recent stake is its claim stake 1+0
    assert state.chips == (2, 4)
    assert not events(state, "reveal")
    for p in range(2):
        assert "reveal" not in state.information_state_string(p)
    assert "yellow" not in state.information_state_string(0)  # p1 holds yellow, rainbow


def test_folding_after_own_raise_loses_that_raise():
    _, state = small_two()
    act(state, "claim 2 red stake 1+0")
    act(state, "doubt")
    act(state, "raise 2+0")
    act(state, "raise 2+1")  # bettor raises to 3
    act(state, "fold")  # doubter's most recent stake is 2+0
    assert state.chips == (5, 1) and state.slots == (2, 2)


def test_doubter_cannot_fold_on_its_first_action():
    _, state = small_two()
    act(state, "claim 2 red stake 1+1")
    act(state, "doubt")
    assert "fold" not in names(state)
    assert_illegal(state, db.FOLD)
    assert names(state)[0] == "call 1+1"


def _two_rounds_to_all_in(second_claim):
    """Round 1: p0 wins 1 chip. Round 2: p1 (the loser) opens, p0 doubts and
    raises 4+2, which p1 (2 chips, 3 slots: 4 at most) cannot call."""
    game = load(players=2, chips=3, slots=3, colours=1, copies=6)
    state = game.new_initial_state()
    keep_all(state)
    deal(state, [["red", "red", "red"], ["red", "rainbow", "rainbow"]])
    act(state, "claim 1 red stake 1+0")
    act(state, "doubt")
    act(state, "call 1+0")
    assert state.chips == (4, 2)
    assert state.current_player() == 1 and state.first_player == 1  # the loser starts
    keep_all(state)
    deal(state, [["red", "red", "red"], ["rainbow", "red", "red"]])
    act(state, second_claim)
    act(state, "doubt")
    act(state, "raise 4+2")
    assert names(state) == ["all in", "fold"]
    act(state, "all in")
    return state


def test_all_in_returns_the_excess_slot_chips_first_and_the_doubter_wins():
    state = _two_rounds_to_all_in("claim 6 rainbow stake 1+0")  # only 1 rainbow: false
    allin = events(state, "allin")[0]
    assert allin[1:] == (1, 2, 2, 4, 0)  # p1 all in 2+2; p0's 4+2 cut back to 4+0
    # p1 loses 2 chips and 2 slots: 0 chips, 1 slot, so p1 is out; p0 gains 4
    assert state.chips == (8, 0) and state.slots == (3, 1)
    assert state.is_terminal() and state.returns() == [1.0, 0.0]
    assert events(state, "out") == [("out", 1)]


def test_all_in_bettor_wins_against_the_reduced_stake():
    state = _two_rounds_to_all_in("claim 6 red stake 1+0")  # 5 red + 1 rainbow: true
    assert state.chips == (0, 6) and state.slots == (3, 3)  # p0 loses 4+0, keeps its slots
    assert not state.is_terminal()
    assert state.first_player == 0


def test_doubter_who_cannot_afford_the_claim_stake_must_go_all_in():
    game = load(players=2, chips=3, slots=2, colours=1)  # 4 red, 4 rainbow
    state = game.new_initial_state()
    keep_all(state)
    deal(state, [["red", "red"], ["red", "red"]])
    act(state, "claim 1 red stake 1+0")
    act(state, "doubt")
    act(state, "call 1+0")  # true: p0 wins 1; chips (4, 2)
    keep_all(state)  # p1, the loser, first
    deal(state, [["red", "red"], ["rainbow", "rainbow"]])
    act(state, "claim 1 red stake 1+0")  # p1 opens
    act(state, "claim 4 red stake 4+1")  # p0 raises with a stake of 5: true (2 red + 2 rainbows)
    act(state, "doubt")  # p1 can wager 2 chips + 1 slot chip = 3 < 5, and may not fold yet
    assert names(state) == ["all in"]
    act(state, "all in")
    # p0's excess of 2 is returned slot chip first: 4+1 -> 3+0
    assert events(state, "allin")[0][1:] == (1, 2, 1, 3, 0)
    assert events(state, "reveal")[0][2] == 4
    # the bettor wins: p1 loses 2 chips and 1 slot (0 chips, 1 slot: out), p0 gains 3
    assert state.chips == (7, 0) and state.slots == (2, 1)
    assert state.is_terminal() and state.returns() == [1.0, 0.0]


# ---------------------------------------------------------------- payouts
def test_lost_slot_chips_shrink_the_next_hand():
    game = load(players=2, chips=3, slots=3, colours=1)
    state = game.new_initial_state()
    keep_all(state)
    deal(state, [["red", "red", "red"], ["rainbow", "rainbow", "rainbow"]])
    act(state, "claim 6 rainbow stake 1+2")  # false: 3 rainbows
    act(state, "doubt")
    act(state, "call 1+2")
    assert state.chips == (2, 6) and state.slots == (1, 3)
    # p0, the loser, starts; it has 1 slot so it may only buy (2 chips)
    assert state.current_player() == 0 and names(state) == ["keep", "buy slot"]
    keep_all(state)
    for _ in range(4):  # 1 card for p0, 3 for p1
        state.apply_action(0)
    assert state.phase == "claim" and sum(state.hand(0)) == 1 and sum(state.hand(1)) == 3
    assert state.cards_dealt == 4


def _three_player_round(loser_out):
    """p0 opens, p1 raises with all its wager, p2 doubts and calls; p1's claim is false."""
    game = load(players=3, chips=1, slots=2, colours=1, payoff="rank", max_rounds=5)
    state = game.new_initial_state()
    keep_all(state)
    deal(state, [["red", "red"], ["red", "red"], ["red", "red"]])
    act(state, "claim 1 red stake 1+0")
    act(state, "claim 2 rainbow stake 1+1" if loser_out else "claim 2 rainbow stake 1+0")
    act(state, "doubt")
    act(state, "call 1+1" if loser_out else "call 1+0")
    return state


def test_player_at_zero_chips_and_one_slot_is_out_and_the_player_before_starts():
    state = _three_player_round(loser_out=True)
    assert state.chips == (1, 0, 3) and state.slots == (2, 1, 2)
    assert state.alive == (True, False, True)
    assert state.first_player == 0  # the player before p1 in the seating
    assert state.turn_order == (0, 2)
    assert state.current_player() == 0  # exchange from the round's first player
    assert "p1 is out" in state.information_state_string(2)


def test_when_seat_0_loses_and_is_out_the_last_seat_starts():
    game = load(players=3, chips=1, slots=2, colours=1)
    state = game.new_initial_state()
    keep_all(state)
    deal(state, [["red", "red"], ["red", "red"], ["red", "red"]])
    act(state, "claim 6 rainbow stake 1+1")  # false: no rainbows
    act(state, "doubt")
    act(state, "call 1+1")  # p0 loses 1 chip and 1 slot: 0 chips, 1 slot
    assert state.alive == (False, True, True)
    assert state.first_player == 2 and state.turn_order == (2, 1)


def test_loser_starts_the_next_round():
    state = _three_player_round(loser_out=False)
    assert state.chips == (1, 0, 2) and state.slots == (2, 2, 2)
    assert state.alive == (True, True, True)
    assert state.first_player == 1 and state.turn_order == (1, 2, 0)


# ------------------------------------------------- upkeep, shuffle, exchange
def quick_round(state, rng):
    """Everyone keeps; random deal; the opener claims 1 red, the next doubts and calls."""
    if state.phase == "shuffle":
        state.apply_action(0)
    keep_all(state)
    while state.is_chance_node() and state.phase == "deal":
        outcomes = state.chance_outcomes()
        state.apply_action(outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0])
    legal = names(state)
    act(state, "claim 1 red stake 1+0" if "claim 1 red stake 1+0" in legal else "claim 1 red stake 0+1")
    act(state, "doubt")
    act(state, names(state)[0] if names(state)[0] != "all in" else "all in")


def test_upkeep_happens_at_rounds_15_and_20_only():
    game = load(players=2, chips=20)
    state = game.new_initial_state()
    rng = np.random.default_rng(5)
    while state.round < 21:
        quick_round(state, rng)
    assert not state.is_terminal()
    assert list(_rounds_with(state, "upkeep")) == [15, 20]


def _rounds_with(state, kind):
    rnd = 0
    for e in state.log():
        if e[0] == "round":
            rnd = e[1]
        elif e[0] == kind:
            yield rnd


def test_seating_shuffles_at_rounds_11_and_21():
    game = load(players=3, chips=20)
    state = game.new_initial_state()
    rng = np.random.default_rng(2)
    while state.round < 22:
        if state.phase == "shuffle":
            assert state.round in (11, 21)
            outcomes = state.chance_outcomes()
            assert [o for o, _ in outcomes] == list(range(6))
            assert all(math.isclose(p, 1 / 6) for _, p in outcomes)
            assert state.action_to_string(pyspiel.PlayerId.CHANCE, 0) == "seating 0 1 2"
            assert state.action_to_string(pyspiel.PlayerId.CHANCE, 5) == "seating 2 1 0"
            first = state.first_player
            state.apply_action(3)  # seating 1 2 0
            assert state.seating == (1, 2, 0)
            assert state.turn_order[0] == first  # the last loser still starts
            continue
        quick_round(state, rng)
    assert sorted(set(_rounds_with(state, "seating"))) == [11, 21]


def test_upkeep_effects():
    # upkeep every round from round 2: chips 2+ pay a chip, 0 or 1 chip lose a slot,
    # 1 slot with 0 or 1 chip is eliminated
    game = load(players=3, chips=2, slots=2, colours=1, upkeep_start=2, upkeep_every=1)
    state = game.new_initial_state()
    keep_all(state)
    deal(state, [["red", "red"], ["red", "red"], ["red", "red"]])
    act(state, "claim 5 rainbow stake 1+1")  # p0 claims falsely
    act(state, "doubt")
    act(state, "call 1+1")  # p1 wins 2: chips (1, 4, 2), slots (1, 2, 2)
    # round 2 upkeep: p0 (1 chip, 1 slot) is eliminated; p1 pays a chip; p2 pays a chip
    assert state.round == 2
    assert events(state, "upkeep")[0] == ("upkeep", ((0, db.UP_OUT), (1, db.UP_CHIP), (2, db.UP_CHIP)))
    assert state.alive == (False, True, True)
    assert state.chips[1:] == (3, 1)
    assert state.first_player == 2  # p0 (the loser) is out: the player before it, p2
    keep_all(state)
    deal(state, [["red", "red"], ["red", "red"]])
    act(state, "claim 1 red stake 1+0")  # p2 opens
    act(state, "doubt")
    act(state, "call 1+0")  # true: p2 wins 1 -> chips p1 2, p2 2
    # round 3 upkeep: both have 2 chips: each pays one
    assert events(state, "upkeep")[1] == ("upkeep", ((1, db.UP_CHIP), (2, db.UP_CHIP)))
    assert state.chips[1:] == (1, 1)
    keep_all(state)
    deal(state, [["red", "red"], ["red", "red"]])
    act(state, "claim 1 red stake 1+0")  # p1 (the loser) opens
    act(state, "doubt")
    act(state, "call 1+0")  # p1 wins: p1 2 chips, p2 0 chips 2 slots
    # round 4 upkeep: p1 pays a chip; p2 (0 chips) loses a slot and is then out
    assert events(state, "upkeep")[2] == ("upkeep", ((1, db.UP_CHIP), (2, db.UP_SLOT_OUT)))
    assert state.is_terminal() and state.returns() == [0.0, 1.0, 0.0]


def test_upkeep_one_chip_and_two_slots_loses_a_slot():
    game = load(players=3, chips=2, slots=2, colours=1, upkeep_start=2, upkeep_every=1)
    state = game.new_initial_state()
    keep_all(state)
    deal(state, [["red", "red"], ["red", "red"], ["red", "red"]])
    act(state, "claim 5 rainbow stake 1+0")  # false: p0 loses 1 chip
    act(state, "doubt")
    act(state, "call 1+0")
    assert events(state, "upkeep")[0] == ("upkeep", ((0, db.UP_SLOT), (1, db.UP_CHIP), (2, db.UP_CHIP)))
    assert state.chips == (1, 2, 1) and state.slots == (1, 2, 2)
    assert state.alive == (True, True, True) and state.first_player == 0


def test_exchange_buy_and_sell_limits():
    game = load(players=2, chips=1, slots=2, colours=1)
    state = game.new_initial_state()
    # 2 slots = the maximum: no buying
    assert names(state) == ["keep", "sell slot"]
    act(state, "sell slot")  # p0: 2 chips, 1 slot
    assert state.chips == (2, 1) and state.slots == (1, 2)
    act(state, "keep")
    deal(state, [["red"], ["red", "red"]])
    act(state, "claim 3 rainbow stake 1+0")  # false
    act(state, "doubt")
    act(state, "call 1+0")
    assert state.chips == (1, 2)
    # p0 has 1 slot: it may buy (1 chip) but never sell below 1 slot
    assert state.current_player() == 0 and names(state) == ["keep", "buy slot"]
    assert_illegal(state, db.SELL)
    act(state, "buy slot")
    assert state.chips == (0, 2) and state.slots == (2, 2)
    # p1: 2 chips, 2 slots (the maximum): keep or sell
    assert names(state) == ["keep", "sell slot"]
    assert_illegal(state, db.BUY)


def test_nobody_is_asked_when_keep_is_the_only_choice():
    state = load(players=2, chips=3, slots=1, colours=1).new_initial_state()
    assert state.phase == "deal" and state.is_chance_node()


# ------------------------------------------------------ end and payoffs
def test_max_rounds_cap_and_win_shared_by_most_chips_and_slots():
    game = load(players=3, chips=2, slots=2, colours=1, max_rounds=1)
    state = game.new_initial_state()
    keep_all(state)
    deal(state, [["red", "red"], ["red", "red"], ["red", "red"]])
    act(state, "claim 1 red stake 1+0")
    act(state, "doubt")
    act(state, "call 1+0")  # true: p0 wins 1 from p1
    assert state.is_terminal()
    assert state.returns() == [1.0, 0.0, 0.0]
    assert state.log()[-1] == ("end", "max_rounds")


def test_rank_payoff_is_zero_sum_elimination_order():
    state = _three_player_round(loser_out=True)  # p1 out first
    rng = np.random.default_rng(0)
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0])
        else:
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])
    r = state.returns()
    assert math.isclose(sum(r), 0.0, abs_tol=1e-9)
    # p1 went out first: it outlasted nobody; the others 1 and 2 (or 1 and 1 if tied)
    assert r[1] == pytest.approx(-1.0) or r[1] == pytest.approx(-2 / 3)
    assert r[1] < min(r[0], r[2])


def test_rank_payoff_at_the_cap_ranks_survivors_by_chips_and_slots():
    game = load(players=3, chips=2, slots=2, colours=1, max_rounds=1, payoff="rank")
    state = game.new_initial_state()
    keep_all(state)
    deal(state, [["red", "red"], ["red", "red"], ["red", "red"]])
    act(state, "claim 1 red stake 1+0")
    act(state, "doubt")
    act(state, "call 1+0")  # p0 5, p1 3, p2 4 chips+slots
    assert state.returns() == pytest.approx([1.0, -1.0, 0.0])


def test_single_bet_pays_chips_won_or_lost():
    game = load(players=3, chips=2, slots=2, colours=1, single_bet=True)
    assert game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    state = game.new_initial_state()
    keep_all(state)
    deal(state, [["red", "red"], ["red", "red"], ["red", "red"]])
    act(state, "claim 2 red stake 1+0")
    act(state, "doubt")
    act(state, "raise 2+1")
    act(state, "call 2+1")  # true: bettor p0 wins 3
    assert state.is_terminal()
    assert state.returns() == [3.0, -3.0, 0.0]


# ------------------------------------------- game information and views
def _expected_info(players=4, chips=7, slots=5, colours=5, copies=0, upkeep_start=15,
                   upkeep_every=5, shuffle_every=10, max_rounds=100, single_bet=False,
                   payoff="win"):
    n, k1 = players, colours + 1
    pairs = (n * (chips + slots) + 1) * slots
    distinct = 6 + 2 * pairs + n * slots * k1 * pairs
    rounds = 1 if single_bet else max_rounds
    shuffles = shuffle_every > 0 and rounds > shuffle_every
    chance = max(k1, math.factorial(n) if shuffles else 0)
    if single_bet:
        u = (-(chips + slots - 1), chips + slots - 1, 0.0)
    elif payoff == "win":
        u = (0.0, 1.0, 1.0)
    else:
        u = (-(n - 1) / 2, (n - 1) ** 2 / n, 0.0)
    return n, distinct, chance, u


@pytest.mark.parametrize("params", [
    {}, {"players": 2}, {"players": 5}, {"players": 3, "payoff": "rank"},
    {"players": 2, "chips": 2, "slots": 1, "colours": 1, "copies": 2, "single_bet": True},
    {"players": 3, "chips": 4, "slots": 3, "colours": 2, "shuffle_every": 0},
    {"players": 4, "max_rounds": 10},
    {"players": 5, "colours": 1, "copies": 13, "slots": 5},
])
def test_game_info_follows_the_parameters(params):
    game = load(**params)
    n, distinct, chance, (lo, hi, total) = _expected_info(**params)
    assert game.num_players() == n
    assert game.num_distinct_actions() == distinct
    assert game.max_chance_outcomes() == chance
    assert game.min_utility() == pytest.approx(lo) and game.max_utility() == pytest.approx(hi)
    assert game.utility_sum() == pytest.approx(total)
    want = pyspiel.GameType.Utility.CONSTANT_SUM if total == 1.0 else pyspiel.GameType.Utility.ZERO_SUM
    assert game.get_type().utility == want
    rng = np.random.default_rng(1)
    for _ in range(3):
        state = game.new_initial_state()
        length = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                assert len(outcomes) <= chance
                assert math.isclose(sum(p for _, p in outcomes), 1.0)
                action = outcomes[rng.integers(len(outcomes))][0]
            else:
                legal = state.legal_actions()
                assert legal == sorted(legal) and 0 <= legal[0] and legal[-1] < distinct
                action = legal[rng.integers(len(legal))]
            state.apply_action(action)
            length += 1
        assert length <= game.max_game_length()
        assert lo - 1e-9 <= min(state.returns()) and max(state.returns()) <= hi + 1e-9


def test_python_legal_actions_match_pyspiel():
    game = load(players=3, chips=3, slots=2, colours=2)
    rng = np.random.default_rng(3)
    state = game.new_initial_state()
    while not state.is_terminal():
        for p in range(3):
            assert state.legal_actions(p) == pyspiel.State.legal_actions(state, p)
        if not state.is_chance_node():
            mask = state.legal_actions_mask()
            assert [a for a, m in enumerate(mask) if m] == state.legal_actions()
        assert state.legal_actions() == pyspiel.State.legal_actions(state)
        legal = state.legal_actions()
        state.apply_action(legal[rng.integers(len(legal))])
    assert state.legal_actions() == [] == pyspiel.State.legal_actions(state)


# ------------------------------------------------------------ bad input
@pytest.mark.parametrize("params, words", [
    ({"players": 6}, ["players", "2..5"]),
    ({"players": 1}, ["players", "2..5"]),
    ({"colours": 0}, ["colours", "1..5"]),
    ({"colours": 6}, ["colours", "1..5"]),
    ({"slots": 0}, ["slots", "1..8"]),
    ({"chips": 0, "slots": 1}, ["slots", "chips=0"]),
    ({"players": 5, "colours": 1, "copies": 5}, ["copies", "players*slots"]),
    ({"copies": 1}, ["copies", "players*slots", "copies >= 4"]),
    ({"colours": 1}, ["copies=0", "players*slots"]),  # 2*players*2 = 16 < 20 cards
    ({"copies": 31}, ["copies", "1..30"]),
    ({"max_rounds": 0}, ["max_rounds", "1..1000"]),
    ({"upkeep_every": 0}, ["upkeep_every", "1..100"]),
    ({"payoff": "chips"}, ["payoff", "win, rank"]),
    ({"single_bet": True, "payoff": "rank"}, ["payoff", "single_bet"]),
])
def test_bad_parameters_name_the_parameter_and_allowed_values(params, words):
    with pytest.raises(ValueError) as err:
        db.DoubtAndBetGame(params)
    for w in words:
        assert w in str(err.value)


def test_bad_parameters_through_load_game():
    with pytest.raises(ValueError, match="players=7 is out of range; allowed: 2..5"):
        pyspiel.load_game("doubt_and_bet(players=7)")
    with pytest.raises(pyspiel.SpielError, match="chipz"):
        pyspiel.load_game("doubt_and_bet(chipz=3)")
    with pytest.raises(pyspiel.SpielError, match="single_bet"):
        pyspiel.load_game("doubt_and_bet(single_bet=3)")


def test_illegal_actions_raise_and_leave_the_state_unchanged():
    game = load(players=2, chips=3, slots=2, colours=2)
    state = game.new_initial_state()
    exchange = r"is not legal for player 0: it is the exchange step; legal: keep \(0\), sell slot \(2\)$"
    assert_illegal(state, db.BUY, r"^buy slot \(action 1\) " + exchange)  # at the maximum of slots
    assert_illegal(state, db.DOUBT, r"^doubt \(action 3\) " + exchange)
    assert_illegal(state, game.claim_base, r"^claim 1 red stake 0\+0 \(action 50\) " + exchange)
    for bad in (-3, game.num_distinct_actions()):
        assert_illegal(state, bad, rf"^action {bad} is no move of doubt_and_bet \(ids 0\.\.313\); "
                                   r"legal for player 0: keep \(0\), sell slot \(2\)$")
    keep_all(state)
    colours = r"legal for chance: card red \(0\), card yellow \(1\), card rainbow \(2\)$"
    for bad in (game.k1, -3, 99):  # not a colour
        assert_illegal(state, bad, rf"^action {bad} is no chance outcome of doubt_and_bet \(ids 0\.\.2\); " + colours)
    for _ in range(4):  # 2*players = 4 rainbows
        state.apply_action(2)
    assert state.chance_outcomes() == []  # all four cards dealt: claims now
    game = load(players=2, chips=3, slots=2, colours=2, copies=3)
    state = game.new_initial_state()
    keep_all(state)
    for _ in range(3):
        state.apply_action(2)
    assert [o for o, _ in state.chance_outcomes()] == [0, 1]
    assert_illegal(state, 2, r"^card rainbow \(action 2\) is not legal for chance: no card of that colour "
                             r"is left in the deck; legal: card red \(0\), card yellow \(1\)$")
    state.apply_action(0)
    # the opener must claim: 84 claims, summed up
    claims = r"84 legal(| for player 0), from claim 1 red stake 0\+1 \(62\) to claim 4 rainbow stake 3\+1 \(145\)$"
    assert_illegal(state, db.FOLD, r"^fold \(action 5\) is not legal for player 0: the opener must claim; " + claims)
    assert_illegal(state, -6, r"^action -6 is no move of doubt_and_bet \(ids 0\.\.313\); " + claims)
    act(state, "claim 1 red stake 1+0")
    act(state, "doubt")
    assert state.action_to_string(1, game.raise_base + game.max_slots) == "raise 1+0"
    showdown = r"; legal: call 0\+1 \(7\), call 1\+0 \(8\), raise 1\+1 \(31\), .*, raise 3\+1 \(35\)$"
    assert_illegal(state, game.raise_base + game.max_slots,  # does not exceed the stake of 1
                   r"^raise 1\+0 \(action 30\) is not legal for player 1: a raise must exceed the "
                   r"opponent's stake of 1" + showdown)
    assert_illegal(state, db.CALL_BASE, r"^call 0\+0 \(action 6\) is not legal for player 1: a call matches "
                                        r"the opponent's stake of 1" + showdown)
    assert_illegal(state, db.KEEP, r"^keep \(action 0\) is not legal for player 1: not a showdown move" + showdown)
    state = pyspiel.load_game(TINY).new_initial_state()
    keep_all(state)
    deal(state, [["red"], ["red"]])
    for move in ("claim 2 red stake 1+0", "doubt", "call 1+0"):
        act(state, move)
    assert_illegal(state, db.KEEP, r"^keep \(action 0\) is not legal for anyone: the game is over$")
    for bad in (-2, 10**5):
        assert_illegal(state, bad, rf"^action {bad} is no move of doubt_and_bet \(ids 0\.\.47\); the game is over$")


# ------------------------------------------------------ tensors, strings
def test_information_state_is_perfect_recall_on_the_tiny_game():
    game = pyspiel.load_game(TINY)
    by_string, by_tensor = {}, {}
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            stack.extend(state.child(a) for a, _ in state.chance_outcomes())
            continue
        p = state.current_player()
        s = state.information_state_string(p)
        t = tuple(state.information_state_tensor(p))
        assert by_string.setdefault(s, t) == t
        assert by_tensor.setdefault(t, s) == s
        assert s.split("\n")[0] == f"p{p}"
        stack.extend(state.child(a) for a in state.legal_actions())
    assert len(by_string) == 122


def test_string_and_tensor_agree_on_the_order_own_cards_were_dealt():
    # the string shows each own card as it is dealt, so two deal orders are two
    # information states; the tensor must tell them apart too
    game = load(players=2, chips=2, slots=2, colours=1)
    views = []
    for p1_cards in (["red", "rainbow"], ["rainbow", "red"]):
        state = game.new_initial_state()
        keep_all(state)
        deal(state, [["red", "red"], p1_cards])
        act(state, "claim 1 red stake 1+0")
        views.append((state.information_state_string(1), tuple(state.information_state_tensor(1)),
                      state.information_state_string(0), tuple(state.information_state_tensor(0))))
    (s_a, t_a, o_a, ot_a), (s_b, t_b, o_b, ot_b) = views
    assert s_a != s_b and t_a != t_b
    assert o_a == o_b and ot_a == ot_b  # p0 sees nothing of p1's cards


def test_string_and_tensor_define_the_same_information_states():
    game = load(players=2, chips=2, slots=2, colours=1, max_rounds=4)
    rng = np.random.default_rng(0)
    by_string, by_tensor = {}, {}
    for _ in range(60):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0])
                continue
            for p in range(2):
                s, t = state.information_state_string(p), tuple(state.information_state_tensor(p))
                assert by_string.setdefault(s, t) == t
                assert by_tensor.setdefault(t, s) == s
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])
    assert len(by_string) > 500


def test_the_end_observation_shows_the_revealed_hands():
    # p0 holds red in both games and sees the same moves; p1's card, revealed
    # by the call that ends the single bet, differs
    ends = []
    for p1_card in ("red", "rainbow"):
        state = pyspiel.load_game(TINY).new_initial_state()
        keep_all(state)
        deal(state, [["red"], [p1_card]])
        assert state.observation_string(0).endswith("| to move p0")
        for move in ("claim 2 red stake 1+0", "doubt", "call 1+0"):
            act(state, move)
        assert state.is_terminal()
        ends.append(state)
    a, b = ends
    assert a.observation_tensor(0) != b.observation_tensor(0)
    assert a.observation_string(0).endswith("| revealed p0:red p1:red")
    assert b.observation_string(0).endswith("| revealed p0:red p1:rainbow")


def _string_from_scratch(state, player, private=True):
    """The perfect-recall string read off the whole log, without the cache."""
    k1 = state.get_game().k1
    who = player if private else -1
    texts = (db.event_text(e, who, k1) for e in state.log())
    return "\n".join([f"p{player}"] + [t for t in texts if t is not None])


def test_information_state_strings_kept_on_the_state_match_the_whole_log():
    # the string is extended from the last one asked of the same state or
    # the state it was cloned from; clones that part, resampled worlds
    # (whose earlier rounds' logs are rewritten) and a public observer must
    # all still read exactly their own log
    game = load(players=3, chips=3, slots=2, colours=2, max_rounds=6)
    public = game.make_py_observer(pyspiel.IIGObservationType(
        perfect_recall=True, private_info=pyspiel.PrivateInfoType.NONE))
    rng = np.random.default_rng(3)
    sampler = lambda: float(rng.random())  # noqa: E731
    checked = 0
    for _ in range(8):
        state = game.new_initial_state()
        others = []
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0])
                continue
            p = state.current_player()
            if rng.random() < 0.3:
                others.append(state.clone())
                others.append(state.resample_from_infostate(p, sampler))
                others.append(state.resample_from_infostate(p, sampler, internal=True, memo={}))
            for s in [state] + others[-6:]:
                if s.is_terminal() or s.is_chance_node():
                    continue
                for q in range(3):
                    assert s.information_state_string(q) == _string_from_scratch(s, q)
                    assert public.string_from(s, q) == _string_from_scratch(s, q, private=False)
                    checked += 1
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])
            for o in others[-6:]:  # the clones go their own ways
                if not o.is_terminal() and not o.is_chance_node():
                    legal = o.legal_actions()
                    o._apply_action(legal[rng.integers(len(legal))])
    assert checked > 1000


def test_strings_tensors_and_serialization_round_trip():
    game = load(players=3, chips=3, slots=2, colours=2)
    state = game.new_initial_state()
    keep_all(state)
    deal(state, [["red", "yellow"], ["rainbow", "red"], ["yellow", "yellow"]])
    act(state, "claim 2 yellow stake 1+1")
    info = state.information_state_string(1)
    assert info.split("\n") == [
        "p1", "round 1", "p0 starts, order 0 1 2, chips 3 3 3, slots 2 2 2",
        "p0 keep", "p1 keep", "p2 keep",
        "you are dealt rainbow", "you are dealt red", "p0 claim 2 yellow stake 1+1"]
    obs = state.observation_string(1)
    assert "hand red rainbow" in obs and "claim p0 2 yellow stake 1+1" in obs
    assert "yellow" not in state.observation_string(1).split("claim")[0]
    assert len(state.information_state_tensor(1)) == game.information_state_tensor_size()
    assert len(state.observation_tensor(1)) == game.observation_tensor_size()
    text = pyspiel.serialize_game_and_state(game, state)
    game2, state2 = pyspiel.deserialize_game_and_state(text)
    assert str(state2) == str(state)
    assert state2.history() == state.history()
    assert state2.information_state_string(2) == state.information_state_string(2)
    assert pickle.loads(pickle.dumps(state._c)).s.tolist() == state._c.s.tolist()


# ---------------------------------------------------------------- solvers
def test_cfr_and_nash_conv_on_the_tiny_game():
    game = pyspiel.load_game(TINY)
    uniform = pyspiel.nash_conv(game, pyspiel.UniformRandomPolicy(game))
    solver = pyspiel.CFRSolver(game)
    for _ in range(15):
        solver.evaluate_and_update_policy()
    conv = pyspiel.nash_conv(game, solver.average_policy())
    assert 0 <= conv < uniform / 3


def test_ismcts_plays_complete_games():
    for game_string, seed in [(TINY, 0), ("doubt_and_bet(players=2,chips=2,slots=2,colours=1,max_rounds=3)", 1)]:
        game = pyspiel.load_game(game_string)
        rs = np.random.RandomState(seed)
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rs)
        bot = ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=15, random_state=rs,
                               allow_inconsistent_action_sets=False)
        other = RandomAgent(game, 1, seed=seed)
        rng = np.random.default_rng(seed)
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0])
            elif state.current_player() == 0:
                state.apply_action(bot.step(state))
            else:
                state.apply_action(other.step(state))
        assert sum(state.returns()) == pytest.approx(game.utility_sum())


def test_resample_keeps_the_information_state_and_redraws_hidden_cards():
    game = load(players=3, chips=3, slots=2, colours=2, max_rounds=5)
    state = game.new_initial_state()
    rng = np.random.default_rng(7)
    # play a folded round (hands stay hidden) and stop in the next claim phase
    keep_all(state)
    deal(state, [["red", "yellow"], ["rainbow", "red"], ["yellow", "yellow"]])
    act(state, "claim 2 yellow stake 1+0")
    act(state, "doubt")
    act(state, "raise 2+0")
    act(state, "fold")
    keep_all(state)
    while state.is_chance_node():
        outcomes = state.chance_outcomes()
        state.apply_action(outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0])
    me = state.current_player()
    info = state.information_state_string(me)
    seen = set()
    sampler_rng = np.random.default_rng(11)
    for _ in range(30):
        other = state.resample_from_infostate(me, lambda: float(sampler_rng.random()))
        assert other.information_state_string(me) == info
        assert other.hand(me) == state.hand(me)
        assert other.legal_actions() == state.legal_actions()
        seen.add((other.hand((me + 1) % 3), other.hand((me + 2) % 3),
                  tuple(e for e in other.log() if e[0] == "deal")))
    assert len(seen) > 5
    assert any(h[0] != state.hand((me + 1) % 3) for h in seen)


def test_resample_draws_hidden_cards_with_the_deal_probabilities():
    # 3 players, 2 cards each from 4 red + 4 rainbow; p0 holds two of the rainbows, so
    # the others' cards come from 4 red + 2 rainbow: p1 gets 2 red with chance
    # 4/6 * 3/5, 1 red 1 rainbow 2 * 4/6 * 2/5, 2 rainbows 2/6 * 1/5
    game = load(players=3, chips=2, slots=2, colours=1, copies=4)
    state = game.new_initial_state()
    keep_all(state)
    deal(state, [["rainbow", "rainbow"], ["red", "red"], ["red", "rainbow"]])
    sampler_rng = np.random.default_rng(5)
    draws = 3000
    counts = {}
    for _ in range(draws):
        other = state.resample_from_infostate(0, lambda: float(sampler_rng.random()))
        counts[other.hand(1)] = counts.get(other.hand(1), 0) + 1
        assert other.hand(0) == (0, 2)
        assert sum(other.hand(1)) == sum(other.hand(2)) == 2
    exact = {(2, 0): 0.4, (1, 1): 16 / 30, (0, 2): 2 / 30}
    assert set(counts) == set(exact)
    for hand, p in exact.items():
        assert abs(counts[hand] / draws - p) < 0.035, (hand, counts[hand] / draws, p)


@pytest.mark.parametrize("internal", [False, True])
def test_resample_keeps_revealed_hands(internal):
    """Also the search's own resample (``internal``), which writes the
    earlier rounds' cards into a copy of the round's snapshot."""
    game = load(players=2, chips=3, slots=2, colours=2)
    state = game.new_initial_state()
    keep_all(state)
    deal(state, [["red", "yellow"], ["rainbow", "red"]])
    act(state, "claim 2 yellow stake 1+0")
    act(state, "doubt")
    act(state, "call 1+0")  # revealed: p1 holds rainbow and red
    keep_all(state)
    deal(state, [["red", "red"], ["yellow", "yellow"]])
    sampler_rng = np.random.default_rng(3)
    orders, hands = set(), set()
    for _ in range(20):
        other = state.resample_from_infostate(0, lambda: float(sampler_rng.random()), internal=internal)
        assert other.information_state_string(0) == state.information_state_string(0)
        deals = [e for e in other.log() if e[0] == "deal" and e[1] == 1]
        assert sorted(k for _, _, k in deals[:2]) == [0, 2]  # round 1: red, rainbow
        orders.add(tuple(k for _, _, k in deals[:2]))
        hands.add(other.hand(1))
    assert orders == {(0, 2), (2, 0)}
    assert len(hands) > 2


# ----------------------------------------------------------------- agents
def play(game, specs, seed):
    rng = np.random.default_rng(seed)
    agents = [make_agent(spec, game, i, seed=seed * 100 + i) for i, spec in enumerate(specs)]
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            action = outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0]
        else:
            action = agents[state.current_player()].step(state)
        state.apply_action(action)
    return state


def test_heuristic_beats_random_with_rotated_seats():
    game = load(players=2, chips=4, slots=3, max_rounds=40)
    total, games_played = 0.0, 0
    for seed in range(8):
        for seat in range(2):
            specs = ["random", "random"]
            specs[seat] = "heuristic"
            total += play(game, specs, seed).returns()[seat]
            games_played += 1
    assert total / games_played >= 0.75


def test_heuristic_plays_legal_moves_at_the_defaults():
    state = play(load(players=3), ["heuristic", "heuristic", "random"], 4)
    assert state.is_terminal()
    assert sum(state.returns()) == pytest.approx(1.0)


def test_heuristic_odds_and_shortlist_match_their_definitions():
    """Through heuristic games at the defaults: every claim's probability
    as the heuristic reads it equals scipy's hypergeometric tail over the
    unseen cards, and the shortlist (bisection on the ascending legal moves)
    equals its candidates filtered by a set of the legal moves."""
    from scipy.stats import hypergeom

    from kibitz.agents.heuristics import doubt_and_bet as dh

    game = load()
    k1, copies = game.k1, game.copies
    rng = np.random.default_rng(5)
    state, seen = game.new_initial_state(), 0
    while not state.is_terminal() and seen < 40:
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0])
            continue
        me, legal = state.current_player(), state.legal_actions()
        if state.phase == "claim":
            seen += 1
            hand, dealt = state.hand(me), state.cards_dealt
            unseen, drawn = k1 * copies - sum(hand), dealt - sum(hand)
            for k in range(k1):
                counts = hand[k] if k == k1 - 1 else hand[k] + hand[k1 - 1]
                good = copies if k == k1 - 1 else 2 * copies
                for q in range(1, dealt + 1):
                    want = hypergeom(unseen, good - counts, drawn).sf(q - counts - 1) if q > counts else 1.0
                    assert dh.claim_probability(state, me, q, k) == pytest.approx(want, abs=1e-12)
            short = dh.shortlist(state, legal)
            every = list(range(game.num_distinct_actions()))  # every move legal: every candidate kept
            assert short == [a for a in dh.shortlist(state, every) if a in set(legal)]
            assert dh.choose(state, legal) in short and len(short) < len(legal)
        state.apply_action(dh.choose(state, legal))
    assert seen == 40


def test_determinism_under_a_seed():
    game = load(players=3, chips=3, slots=3)
    a = play(game, ["heuristic", "random", "heuristic"], 9)
    b = play(game, ["heuristic", "random", "heuristic"], 9)
    c = play(game, ["heuristic", "random", "heuristic"], 10)
    assert a.history() == b.history() and a.returns() == b.returns()
    assert a.history() != c.history()


def test_information_state_strings_are_the_event_texts_whatever_the_text_cache_holds():
    """The information-state string caches each event's text per viewer;
    through random games (upkeeps, eliminations, seating shuffles, reveals)
    it must equal the texts built afresh, with the cache warm or cleared."""
    from helpers import random_play_decisions

    game = pyspiel.load_game("doubt_and_bet(players=3,chips=2,slots=2,shuffle_every=2,"
                             "upkeep_start=3,upkeep_every=1,max_rounds=20)")
    k1 = game.k1
    checked = set()
    for i, state in enumerate(random_play_decisions(game, np.random.default_rng(8), 12)):
        if i % 5 == 0:
            db._EVENT_TEXTS.clear()
        for p in range(3):
            texts = [db.event_text(e, p, k1) for e in state.log()]
            want = "\n".join([f"p{p}"] + [t for t in texts if t is not None])
            assert state.information_state_string(p) == want
            checked.update(e[0] for e in state.log())
    assert {"upkeep", "seating", "reveal", "out", "deal", "claim"} <= checked


@pytest.mark.parametrize("config", [
    "players=3", "players=4,chips=0,slots=3", "players=2,chips=1,slots=1",
    "players=5,colours=1,copies=6,slots=2", "players=3,chips=30,slots=8,colours=2,copies=8"])
def test_heuristic_rollout_hook_is_the_agents_move_without_listing_claims(config):
    """The rollout hook skips listing the legal claims, trusting that the
    heuristic's claim is legal: at every decision of random games in small
    and extreme configurations it is the agent's move, and legal."""
    from helpers import random_play_decisions

    from kibitz.agents.heuristics import doubt_and_bet as dh

    game = pyspiel.load_game(f"doubt_and_bet({config})")
    claims = 0
    for state in random_play_decisions(game, np.random.default_rng(1), 20):
        if state.is_terminal():
            continue
        legal = state.legal_actions()
        move = dh.rollout_action(state, None)
        assert move == dh.choose(state, legal) and move in legal
        claims += state.phase == "claim"
    assert claims > 20


@pytest.mark.parametrize("config", ["players=3", "players=4,chips=0,slots=3", "players=2,chips=1,slots=1",
                                    "players=5,colours=1,copies=6,slots=2"])
def test_random_action_is_the_listed_moves_pick_without_the_list(config):
    """IS-MCTS's random rollouts pick ``legal[int(u * len(legal))]``; the game
    finds that move without listing thousands of claims. The same move for
    every ``u`` at every decision of random games, ends of [0, 1) included."""
    from helpers import random_play_decisions

    game = pyspiel.load_game(f"doubt_and_bet({config})")
    rng = np.random.default_rng(3)
    checked = set()
    for state in random_play_decisions(game, np.random.default_rng(2), 10):
        if state.is_terminal():
            continue
        p = state.current_player()
        legal = state._legal_actions(p)
        for u in [0.0, 1.0 - 1e-12, *rng.random(5)]:
            assert state.random_action(p, u) == legal[int(u * len(legal))]
        checked.add((state.phase, state.claim is None))
    assert {("claim", True), ("claim", False), ("showdown", False)} <= checked
