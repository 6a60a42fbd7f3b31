"""Underdog: game information, scenarios from the rule text, known values, determinism
(the checks every game shares: tests/test_conformance.py)."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import ismcts, mcts

from kibitz import games  # noqa: F401
from helpers import heuristic_vs_random
from kibitz.agents import make_agent
from kibitz.games import underdog as ud
from kibitz.games._common import IllegalActionError

SWAP, NEW, FIGHT, PASS = ud.SWAP, ud.NEW_UNDERDOG, ud.FIGHT, ud.PASS


def card(v):
    return v - 1


def keep(v):
    return ud.KEEP_BASE + v - 1


def play(game_string, actions):
    game = pyspiel.load_game(game_string)
    state = game.new_initial_state()
    for a in actions:
        state.apply_action(a)
    return state


# ---------------------------------------------------------------- scenarios
def test_worked_example_anna_ben_carla_dan():
    # Anna 9, Ben 3, Carla J, Dan 6; underdog 4.
    state = play("underdog", [card(9), card(3), card(11), card(6), card(4)])
    assert state.current_player() == 0 and state.underdog == 4
    state.apply_action(SWAP)
    state.apply_action(card(2))          # Anna draws the 2
    assert state.legal_actions() == [keep(2), keep(9)]
    state.apply_action(keep(9))          # ... keeps the 9, lays the 2
    state.apply_action(NEW)
    state.apply_action(card(10))         # Ben turns the 10: new underdog
    state.apply_action(SWAP)
    state.apply_action(card(12))         # Carla draws the Q
    state.apply_action(keep(12))
    state.apply_action(SWAP)
    state.apply_action(card(5))          # Dan draws the 5
    state.apply_action(keep(6))
    assert state.face_up == (2, 0, 11, 5) and state.underdog == 10
    for a in (FIGHT, FIGHT, FIGHT, PASS):
        state.apply_action(a)
    # Ben: 3 + 10 = 13 beats Carla's 12 and Anna's 9; he takes the 3 chips
    # bet and 1 from the bank, and starts the next round.
    assert state.chips == (3, 4 - 1 + 3 + 1, 3, 4)
    assert state.bank == 7
    assert state.round == 2 and state.start_player == 1
    assert ("show", ((0, 9), (1, 3), (2, 12))) in state.log()
    assert ("won", 1, 4) in state.log()
    assert state.information_state_string(3).split("\n")[-4:] == [
        "p3 passes", "showdown p0:9 p1:3 p2:12", "p1 wins 4",
        "[round 2 start p1 bank 7 chips 3 7 3 4]"]
    assert state.is_chance_node()  # the next deal


def test_lone_fighter_wins_without_showing():
    state = play("underdog(players=3)", [card(7), card(2), card(12), card(5),
                                          SWAP, card(1), keep(7), SWAP, card(3), keep(3),
                                          SWAP, card(4), keep(12), PASS, FIGHT, PASS])
    assert state.chips == (4, 4 - 1 + 1 + 1, 4)
    assert state.start_player == 1
    assert not any(e[0] == "show" for e in state.log())
    # p1 kept the 3: the others see only that p1 swapped, laid the 2 and won.
    seen_by_all = ["[round 1 start p0 bank 8 chips 4 4 4]"]
    after_draw = ["p0 passes", "p1 fights (1)", "p2 passes", "p1 wins 2",
                  "[round 2 start p1 bank 7 chips 4 5 4]"]
    assert state.information_state_string(0).split("\n") == (
        ["p0"] + seen_by_all + ["you are dealt 7", "underdog 5", "p0 swaps", "you draw 1",
                                "you keep 7, lay 1", "p1 swaps", "p1 lays 2", "p2 swaps",
                                "p2 lays 4"] + after_draw)
    assert state.information_state_string(2).split("\n") == (
        ["p2"] + seen_by_all + ["you are dealt 12", "underdog 5", "p0 swaps", "p0 lays 1",
                                "p1 swaps", "p1 lays 2", "p2 swaps", "you draw 4",
                                "you keep 12, lay 4"] + after_draw)
    # The same game with p1 keeping a different hidden card (the 13 instead
    # of the 3) looks the same to p0 and p2, string and tensor.
    other = play("underdog(players=3)", [card(7), card(2), card(12), card(5),
                                          SWAP, card(1), keep(7), SWAP, card(13), keep(13),
                                          SWAP, card(4), keep(12), PASS, FIGHT, PASS])
    for seat in (0, 2):
        assert other.information_state_string(seat) == state.information_state_string(seat)
        assert other.information_state_tensor(seat) == state.information_state_tensor(seat)
    assert other.information_state_string(1) != state.information_state_string(1)


def test_nobody_fights_keeps_bank_and_start_player():
    state = play("underdog(players=3)", [card(7), card(2), card(12), card(5),
                                          NEW, card(9), NEW, card(10), NEW, card(11),
                                          PASS, PASS, PASS])
    assert state.bank == 8 and state.chips == (4, 4, 4)
    assert state.start_player == 0 and state.round == 2
    assert ("nobody",) in state.log()


def test_tie_goes_to_first_in_turn_order_from_start_player():
    # Round 1: p1 fights alone and wins, so p1 starts round 2 (order 1, 2, 0).
    r1 = [card(7), card(2), card(12), card(5), NEW, card(1), NEW, card(3), NEW, card(4),
          PASS, FIGHT, PASS]
    state = play("underdog(players=3)", r1)
    assert state.start_player == 1
    # Round 2: p0 holds 3, p1 holds 10, p2 holds 13; underdog 7: 3 + 7 = 10 ties 10.
    state = play("underdog(players=3)", r1 + [card(3), card(10), card(13), card(7)])
    assert state.current_player() == 1
    for a in [SWAP, card(1), keep(10), SWAP, card(2), keep(13), SWAP, card(4), keep(3)]:
        state.apply_action(a)
    assert state.underdog == 7
    for a in (FIGHT, PASS, FIGHT):      # p1 fights with 10, p2 passes, p0 fights with 3
        state.apply_action(a)
    # Totals 10 (p1) and 3 + 7 = 10 (p0): p1 comes first from start player 1.
    assert ("won", 1, 3) in state.log()
    assert "showdown p1:10 p0:3\np1 wins 3" in state.information_state_string(2)
    assert state.chips == (4 - 1, 5 - 1 + 3, 4) and state.bank == 6
    assert state.start_player == 1


def test_last_round_stake_and_bank():
    # bank=3: round 1 is normal (bank -> 2), round 2 is the last round.
    r1 = [card(9), card(2), card(5), card(1), NEW, card(3), NEW, card(4), NEW, card(6),
          FIGHT, FIGHT, PASS]                # p0 9 vs p1 2 + 6 = 8: p0 wins
    state = play("underdog(players=3,chips=2,bank=3)", r1)
    assert state.chips == (4, 1, 2) and state.bank == 2
    assert state.is_last_round and state.start_player == 0
    r2 = [card(2), card(9), card(5), card(1), NEW, card(3), NEW, card(4), NEW, card(6)]
    for a in r2:
        state.apply_action(a)
    for a in (FIGHT, FIGHT, FIGHT):
        state.apply_action(a)
    log = state.log()
    # Stakes: 2, 1 (all p1 has), 2.
    assert ("fight", 0, 2) in log and ("fight", 1, 1) in log and ("fight", 2, 2) in log
    # p0 2 + 6 = 8, p1 9, p2 5: p1 wins 2 + 1 + 2 bet and both bank chips.
    assert state.chips == (2, 0 + 5 + 2, 0)
    assert state.bank == 0
    assert state.is_terminal()
    assert state.returns() == [0.0, 1.0, 0.0]


def test_game_ends_after_the_last_round_even_if_nobody_fights():
    # bank=2: round 1 is the last round; nobody fights, the bank keeps its chips.
    state = play("underdog(players=3,bank=2)", [card(9), card(2), card(5), card(1),
                                                 NEW, card(3), NEW, card(4), NEW, card(6),
                                                 PASS, PASS, PASS])
    assert state.is_terminal()
    assert state.bank == 2 and state.chips == (4, 4, 4)
    assert state.returns() == pytest.approx([1 / 3] * 3)


def test_player_without_chips_is_out():
    # chips=1: p1 loses its only chip in round 1 and is dealt nothing after.
    r1 = [card(9), card(2), card(5), card(1), NEW, card(3), NEW, card(4), NEW, card(6),
          FIGHT, FIGHT, PASS]
    state = play("underdog(players=3,chips=1,bank=5)", r1)
    assert state.chips == (3, 0, 1)
    # Round 2 deals only to seats 0 and 2, then the underdog card.
    for a in [card(4), card(8), card(1)]:
        state.apply_action(a)
    assert state.hands == (4, 0, 8)
    seen = []
    while not state.is_chance_node():
        seen.append(state.current_player())
        state.apply_action(NEW if state.legal_actions() == [SWAP, NEW] else PASS)
        if state.is_chance_node():
            state.apply_action(state.chance_outcomes()[0][0])
    assert 1 not in seen and seen[:2] == [0, 2]


def test_last_player_with_chips_takes_the_bank():
    r1 = [card(9), card(2), card(5), card(1), NEW, card(3), NEW, card(4), NEW, card(6),
          FIGHT, FIGHT, FIGHT]               # p0 9, p1 2+6=8, p2 5: p0 wins
    state = play("underdog(players=3,chips=1,bank=5)", r1)
    assert state.is_terminal()
    assert state.chips == (0 + 3 + 1 + 4, 0, 0) and state.bank == 0
    assert ("alone", 0, 4) in state.log()
    assert state.returns() == [1.0, 0.0, 0.0]


def test_small_deck_players_still_to_draw_skip():
    # 5 cards, 3 players: 3 dealt + underdog leave one card in the pile.
    state = play("underdog(players=3,cards=5,bank=2)", [card(1), card(2), card(3), card(4)])
    state.apply_action(SWAP)
    state.apply_action(card(5))
    state.apply_action(keep(5))
    assert state.legal_actions() == [FIGHT, PASS] and state.current_player() == 0
    assert ("skip", 1) in state.log() and ("skip", 2) in state.log()


def test_max_rounds_cap_and_both_payoffs():
    r1 = [card(9), card(2), card(5), card(1), NEW, card(3), NEW, card(4), NEW, card(6),
          FIGHT, PASS, PASS]
    for payoff, expected in (("win", [1.0, 0.0, 0.0]), ("chips", [5 - 13 / 3, 4 - 13 / 3, 4 - 13 / 3])):
        state = play(f"underdog(players=3,max_rounds=1,payoff={payoff})", r1)
        assert state.is_terminal() and state.chips == (5, 4, 4)
        assert state.returns() == pytest.approx(expected)
        assert sum(state.returns()) == pytest.approx(1.0 if payoff == "win" else 0.0)


def test_win_ties_share():
    r1 = [card(9), card(2), card(5), card(1), NEW, card(3), NEW, card(4), NEW, card(6),
          PASS, PASS, PASS]
    state = play("underdog(players=3,max_rounds=1)", r1)
    assert state.returns() == pytest.approx([1 / 3] * 3)


# ------------------------------------------- game information and views
@pytest.mark.parametrize("players,cards,chips,bank,rounds", [
    (3, 5, 1, 1, 1), (4, 13, 4, 8, 30), (6, 15, 7, 9, 12), (5, 7, 2, 3, 2)])
def test_game_info_follows_parameters(players, cards, chips, bank, rounds):
    for payoff in ("win", "chips"):
        game = pyspiel.load_game(f"underdog(players={players},cards={cards},chips={chips},"
                                 f"bank={bank},max_rounds={rounds},payoff={payoff})")
        assert game.num_players() == players
        assert game.num_distinct_actions() == 4 + cards
        assert game.max_chance_outcomes() == cards
        assert game.max_game_length() == rounds * (5 * players + 1)
        if payoff == "win":
            assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (0, 1, 1)
        else:
            total = players * chips + bank
            assert game.min_utility() == pytest.approx(-total / players)
            assert game.utility_sum() == 0
        lengths = []
        rng = np.random.default_rng(players)
        for _ in range(20):
            state = game.new_initial_state()
            n = 0
            while not state.is_terminal():
                outcomes = state.chance_outcomes() if state.is_chance_node() else None
                if outcomes:
                    assert abs(sum(p for _, p in outcomes) - 1) < 1e-12
                    assert [o for o, _ in outcomes] == sorted(o for o, _ in outcomes)
                    a = outcomes[rng.integers(len(outcomes))][0]
                else:
                    legal = state.legal_actions()
                    assert all(0 <= x < game.num_distinct_actions() for x in legal)
                    a = legal[rng.integers(len(legal))]
                state.apply_action(a)
                n += 1
            lengths.append(n)
            r = state.returns()
            assert game.min_utility() - 1e-9 <= min(r) and max(r) <= game.max_utility() + 1e-9
        assert max(lengths) <= game.max_game_length()


def test_tensors_have_declared_sizes_and_differ_by_player():
    game = pyspiel.load_game("underdog(players=3)")
    state = play("underdog(players=3)", [card(7), card(2), card(12), card(5)])
    t0, t1 = state.information_state_tensor(0), state.information_state_tensor(1)
    assert len(t0) == game.information_state_tensor_size()
    assert t0 != t1
    assert len(state.observation_tensor(0)) == game.observation_tensor_size()
    assert "card 7" in state.observation_string(0) and "card 2" in state.observation_string(1)


def test_action_names():
    state = play("underdog(players=3)", [])
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, card(9)) == "card 9"
    names = [state.action_to_string(0, a) for a in (SWAP, NEW, FIGHT, PASS, keep(9))]
    assert names == ["swap", "new underdog", "fight", "pass", "keep 9"]


# ------------------------------------------------------------ bad input
@pytest.mark.parametrize("game_string,words", [
    ("underdog(players=7)", ["players", "3..6"]),
    ("underdog(players=2)", ["players", "3..6"]),
    ("underdog(players=5,cards=6)", ["cards", "players+2"]),
    ("underdog(cards=16)", ["cards", "15"]),
    ("underdog(payoff=score)", ["payoff", "win, chips"]),
    ("underdog(chips=0)", ["chips"]),
    ("underdog(bank=0)", ["bank", "1..50"]),
    ("underdog(last_round_stake=11)", ["last_round_stake", "1..10"]),
    ("underdog(max_rounds=0)", ["max_rounds", "1..200"]),
])
def test_bad_parameters_name_the_problem(game_string, words):
    with pytest.raises(ValueError) as err:
        pyspiel.load_game(game_string)
    for w in words:
        assert w in str(err.value)


@pytest.mark.parametrize("game_string,words", [
    ("underdog(players=three)", ["players", "kInt"]),
    ("underdog(cards=13.5)", ["cards", "kInt"]),
    ("underdog(payoff=1)", ["payoff", "kString"]),
])
def test_wrong_parameter_type_rejected(game_string, words):
    with pytest.raises(pyspiel.SpielError) as err:
        pyspiel.load_game(game_string)
    for w in words:
        assert w in str(err.value)


def test_unknown_parameter_rejected():
    with pytest.raises(pyspiel.SpielError, match="cardz"):
        pyspiel.load_game("underdog(cardz=9)")


DEALT = [card(1), card(2), card(3), card(4), card(5)]  # four hands and the underdog card
FIGHTING = DEALT + [NEW, card(6), NEW, card(7), NEW, card(8), NEW, card(9)]


@pytest.mark.parametrize("prefix,bad,message", [
    ([], 13, r"action 13 is no chance outcome of underdog \(ids 0\.\.12\); legal for chance: "
             r"card 1 \(0\), card 2 \(1\), .*, card 13 \(12\)$"),
    ([], -2, r"action -2 is no chance outcome of underdog \(ids 0\.\.12\); legal for chance: card 1 \(0\)"),
    ([card(5)], card(5), r"^card 5 \(action 4\) is not legal for chance: that card is not in the "
                         r"draw pile; legal: card 1 \(0\), card 2 \(1\), card 3 \(2\), card 4 \(3\), card 6 \(5\)"),
    (DEALT, FIGHT, r"^fight \(action 2\) is not legal for player 0: it is the draw step; "
                   r"legal: swap \(0\), new underdog \(1\)$"),
    (DEALT, 17, r"^action 17 is no move of underdog \(ids 0\.\.16\); legal for player 0: swap \(0\), "
                r"new underdog \(1\)$"),
    (DEALT, -5, r"^action -5 is no move of underdog \(ids 0\.\.16\); legal for player 0: swap"),
    (DEALT + [SWAP, card(6)], keep(7), r"^keep 7 \(action 10\) is not legal for player 0: after a swap, "
                                       r"keep one of the two cards held; legal: keep 1 \(4\), keep 6 \(9\)$"),
    (FIGHTING, keep(1), r"^keep 1 \(action 4\) is not legal for player 0: it is the fight step; "
                        r"legal: fight \(2\), pass \(3\)$"),
    (FIGHTING, SWAP, r"^swap \(action 0\) is not legal for player 0: it is the fight step"),
])
def test_illegal_action_is_named_and_leaves_state_unchanged(prefix, bad, message):
    state = play("underdog", prefix)
    before, history = str(state), state.history()
    info = state.information_state_string(0)
    with pytest.raises(IllegalActionError, match=message):
        state.apply_action(bad)
    assert str(state) == before and state.history() == history
    assert state.information_state_string(0) == info


def test_action_minus_one_is_refused_by_pyspiel():
    # -1 is OpenSpiel's kInvalidAction: pyspiel refuses it before the game sees it
    state = play("underdog", DEALT)
    with pytest.raises(pyspiel.SpielError, match="kInvalidAction"):
        state.apply_action(-1)
    assert state.history() == DEALT


def test_action_on_a_finished_game_is_a_clear_error():
    state = play("underdog(players=3,max_rounds=1)", [card(9), card(2), card(5), card(1),
                                                       NEW, card(3), NEW, card(4), NEW, card(6),
                                                       PASS, PASS, PASS])
    assert state.is_terminal()
    before, history = str(state), state.history()
    for bad, message in ((PASS, "pass (action 3) is not legal for anyone: the game is over"),
                         (card(7), "keep 3 (action 6) is not legal for anyone: the game is over"),
                         (99, "action 99 is no move of underdog (ids 0..16); the game is over")):
        with pytest.raises(IllegalActionError) as raised:
            state.apply_action(bad)
        assert str(raised.value) == message
    assert str(state) == before and state.history() == history


def test_observation_tensor_shows_the_drawn_card_to_the_swapper_only():
    a = play("underdog(players=3)", [card(9), card(2), card(5), card(1), SWAP, card(6)])
    b = play("underdog(players=3)", [card(9), card(2), card(5), card(1), SWAP, card(7)])
    assert a.legal_actions() == [keep(6), keep(9)] and b.legal_actions() == [keep(7), keep(9)]
    # The swapper's observation (string and tensor) names the drawn card ...
    assert "drawn 6" in a.observation_string(0) and "drawn 7" in b.observation_string(0)
    assert a.observation_tensor(0) != b.observation_tensor(0)
    # ... the others' observations do not.
    for seat in (1, 2):
        assert a.observation_string(seat) == b.observation_string(seat)
        assert a.observation_tensor(seat) == b.observation_tensor(seat)


def _play_by_name(game_string, names):
    """Plays moves given by name (``state.action_to_string``), chance included."""
    state = pyspiel.load_game(game_string).new_initial_state()
    for name in names:
        player = state.current_player()
        legal = ([a for a, _ in state.chance_outcomes()] if state.is_chance_node()
                 else state.legal_actions())
        by_name = {state.action_to_string(player, a): a for a in legal}
        assert name in by_name, f"{name!r} is not legal here; legal: {sorted(by_name)}"
        state.apply_action(by_name[name])
    return state


def test_the_end_observation_shows_the_showdown():
    # p1's card differs (2 or 3) and is shown at the end: p0's observation
    # string must differ between the two games, as its tensor and its
    # information state do
    rest = ["card 7", "card 4", "new underdog", "card 6", "new underdog", "card 8",
            "new underdog", "card 10", "pass", "fight", "fight"]
    a = _play_by_name("underdog(players=3,bank=2)", ["card 1", "card 2"] + rest)
    b = _play_by_name("underdog(players=3,bank=2)", ["card 1", "card 3"] + rest)
    assert a.is_terminal() and b.is_terminal()
    assert a.observation_tensor(0) != b.observation_tensor(0)
    assert a.observation_string(0) != b.observation_string(0)
    assert "showdown p1:2 p2:7" in a.observation_string(0).split(" | ")
    assert "showdown p1:3 p2:7" in b.observation_string(0).split(" | ")
    assert "showdown p1:2 p2:7" in a.information_state_string(0).split("\n")
    fields = a.observation_string(0).split(" | ")
    assert "passing p0" in fields and "fighting p1 p2" in fields and fields[-1] == "game over"


def test_observation_string_says_who_is_to_move_and_the_pile():
    state = play("underdog(players=3)", [card(9), card(2)])
    assert state.observation_string(0).endswith("| pile 11 | to move chance (deal)")
    state = play("underdog(players=3)", [card(9), card(2), card(5), card(1)])
    assert state.observation_string(2).endswith("| pile 9 | to move p0 (draw step)")
    state.apply_action(SWAP)
    assert state.observation_string(1).endswith("| to move chance (card drawn)")


# ----------------------------------------------- OpenSpiel's own algorithms
def test_openspiel_cfr_and_nash_conv_on_small_configuration():
    game = pyspiel.load_game("underdog(players=3,cards=5,bank=2)")
    solver = pyspiel.CFRSolver(game)
    uniform_nc = pyspiel.nash_conv(game, solver.average_policy())
    for _ in range(2):
        solver.evaluate_and_update_policy()
    nc = pyspiel.nash_conv(game, solver.average_policy())
    assert 0 <= nc < uniform_nc


def test_openspiel_ismcts_bot_plays_complete_games():
    game = pyspiel.load_game("underdog(players=3,cards=7,bank=3)")
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(1))
    bots = [ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=20,
                             random_state=np.random.RandomState(i)) for i in range(3)]
    rng = np.random.default_rng(7)
    for _ in range(2):  # ISMCTSBot has no restart_at, so evaluate_bots cannot drive it
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
            else:
                action = bots[state.current_player()].step(state)
                assert action in state.legal_actions()
                state.apply_action(action)
        assert sum(state.returns()) == pytest.approx(1.0)


# ------------------------------------------------------ information states
def _visible_cards(state, me):
    """The card values ``me`` has seen this round, read from the full log."""
    log = state.log()
    start = max(i for i, e in enumerate(log) if e[0] == "round")
    seen = set()
    for e in log[start:]:
        if e[0] in ("underdog", "flip"):
            seen.add(e[-1])
        elif e[0] in ("deal", "draw") and e[1] == me:
            seen.add(e[2])
        elif e[0] == "keep":
            seen.add(e[3])           # the laid card is face up
        elif e[0] == "show":
            seen.update(v for _, v in e[1])
    return seen


def _relabelled(game, history, me, perm):
    """Replays ``history`` with the cards hidden from ``me`` renamed by ``perm``."""
    state = game.new_initial_state()
    for a in history:
        if state.is_chance_node():
            a = card(perm.get(a + 1, a + 1))
        elif state.current_player() != me and a >= ud.KEEP_BASE:
            a = keep(perm.get(a - ud.KEEP_BASE + 1, a - ud.KEEP_BASE + 1))
        state.apply_action(a)
    return state


def test_information_states_over_the_whole_tiny_tree():
    """On every node of underdog(players=3,cards=5,bank=2), a one-round game
    (max_rounds=1 only shortens the tensor), for every player:
    the string and the tensor define the same partition; an information state
    fixes the player's own moves and the public moves (perfect recall); and
    renaming the cards the player has not seen changes neither (no leak)."""
    game = pyspiel.load_game("underdog(players=3,cards=5,bank=2,max_rounds=1)")
    rng = np.random.default_rng(11)
    by_string, by_tensor, recall = {}, {}, {}
    stack = [(game.new_initial_state(), ())]   # (state, moves by whom so far)
    decision_nodes = 0
    while stack:
        state, moves_so_far = stack.pop()
        history = state.history()
        for me in range(3):
            info = state.information_state_string(me)
            tensor = tuple(state.information_state_tensor(me))
            assert by_string.setdefault((me, info), tensor) == tensor
            assert by_tensor.setdefault((me, tensor), info) == info
            # own moves exactly, others' moves by type (a keep names a hidden card)
            moves = tuple((who, a if who == me or a < ud.KEEP_BASE else "keep")
                          for who, a in moves_so_far)
            assert recall.setdefault((me, info), moves) == moves
            if not state.is_chance_node():
                hidden = sorted(set(range(1, 6)) - _visible_cards(state, me))
                perm = dict(zip(hidden, rng.permutation(hidden).tolist()))
                other = _relabelled(game, history, me, perm)
                assert other.information_state_string(me) == info
                assert tuple(other.information_state_tensor(me)) == tensor
                assert other.returns() == state.returns()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            stack.extend((state.child(a), moves_so_far) for a, _ in state.chance_outcomes())
        else:
            decision_nodes += 1
            who = state.current_player()
            stack.extend((state.child(a), moves_so_far + ((who, a),))
                         for a in state.legal_actions())
    assert decision_nodes > 2000
    # Different deals are different information states for the dealt player.
    assert len({info for (me, info) in by_string if me == 0}) > 100


def test_string_and_tensor_partitions_agree_over_several_rounds():
    game = pyspiel.load_game("underdog(players=3,cards=6,chips=2,bank=5)")
    rng = np.random.default_rng(5)
    by_string, by_tensor = {}, {}
    for _ in range(150):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
            else:
                me = state.current_player()
                info = state.information_state_string(me)
                tensor = tuple(state.information_state_tensor(me))
                assert by_string.setdefault((me, info), tensor) == tensor
                assert by_tensor.setdefault((me, tensor), info) == info
                legal = state.legal_actions()
                state.apply_action(legal[rng.integers(len(legal))])
    assert max(s.count("[round") for _, s in by_string) >= 3


# ------------------------------------------------------------ resampling
def test_resample_keeps_the_information_state_and_varies_hidden_cards():
    game = pyspiel.load_game("underdog")
    rng = np.random.default_rng(3)
    state = game.new_initial_state()
    # Play into the fight step of the second round with random moves.
    while state.round < 2 or state.legal_actions() != [FIGHT, PASS]:
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.integers(len(outcomes))][0])
        else:
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])
        assert not state.is_terminal()
    me = state.current_player()
    info = state.information_state_string(me)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    others = set()
    for _ in range(30):
        sample = state.resample_from_infostate(me, sampler)
        assert sample.information_state_string(me) == info
        assert sample.information_state_tensor(me) == state.information_state_tensor(me)
        assert sample.hands[me] == state.hands[me]
        others.add(tuple(h for s, h in enumerate(sample.hands) if s != me))
    assert len(others) > 1


def test_resample_draws_hidden_cards_with_the_chance_probabilities():
    # Worked-example deal; p2 and p3 swap, p1 turns a new underdog. At p0's
    # fight decision p0 has seen 9 and 2 (own), 4 and 10 (underdogs), 11 and 5
    # (laid): the others' cards are a uniform draw without replacement from
    # {1, 3, 6, 7, 8, 12, 13}, and for a swapper the laid card was the dealt
    # one or the drawn one with probability 1/2 each.
    state = play("underdog", [card(9), card(3), card(11), card(6), card(4),
                              SWAP, card(2), keep(9), NEW, card(10),
                              SWAP, card(12), keep(12), SWAP, card(5), keep(6)])
    assert state.current_player() == 0 and state.legal_actions() == [FIGHT, PASS]
    info = state.information_state_string(0)
    pool = [1, 3, 6, 7, 8, 12, 13]
    rng = np.random.default_rng(2024)
    n = 2100
    counts = {seat: {v: 0 for v in pool} for seat in (1, 2, 3)}
    laid_was_dealt = 0
    for _ in range(n):
        sample = state.resample_from_infostate(0, lambda: float(rng.random()))
        assert sample.information_state_string(0) == info
        hands = sample.hands
        assert hands[0] == 9 and sample.face_up == (2, 0, 11, 5) and sample.underdog == 10
        assert len({hands[1], hands[2], hands[3]}) == 3
        for seat in (1, 2, 3):
            counts[seat][hands[seat]] += 1
        laid_was_dealt += ("deal", 2, 11) in sample.log()
    sd = (n * (1 / 7) * (6 / 7)) ** 0.5
    for seat in (1, 2, 3):
        for v in pool:
            assert abs(counts[seat][v] - n / 7) < 5 * sd, (seat, v, counts[seat])
    assert abs(laid_was_dealt / n - 0.5) < 0.05


# ------------------------------------------------------------ agents, seeds
def test_heuristic_reads_only_its_own_information_state():
    """Given the same seed, the heuristic chooses the same on every state that
    its seat cannot tell apart (resampled from its information state)."""
    game = pyspiel.load_game("underdog")
    rng = np.random.default_rng(8)
    checked = 0
    for g in range(6):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
                continue
            me = state.current_player()
            legal = state.legal_actions()
            if len(state.log()) % 3 == 0:
                want = make_agent("heuristic", game, me, seed=g).action_probabilities(state)
                for _ in range(3):
                    sample = state.resample_from_infostate(me, lambda: float(rng.random()))
                    agent = make_agent("heuristic", game, me, seed=g)
                    assert agent.action_probabilities(sample) == want
                checked += 1
            state.apply_action(legal[rng.integers(len(legal))])
    assert checked > 20



def test_heuristic_beats_random_with_rotated_seats():
    game = pyspiel.load_game("underdog")
    heuristic, rand = heuristic_vs_random(game, 60)
    assert np.mean(heuristic) > np.mean(rand) + 0.2


def test_same_seed_same_game():
    from kibitz.commands.play import build_seats, play_game
    game = pyspiel.load_game("underdog(players=3)")

    def run(seed):
        lines = []
        agents = build_seats(game, ["heuristic", "random", "heuristic"], seed, write=lines.append)
        state = play_game(game, agents, seed, write=lines.append)
        return state.history(), lines
    assert run(5) == run(5)
    assert run(5)[0] != run(6)[0]
