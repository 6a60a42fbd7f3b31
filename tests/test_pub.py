"""Tests of the pub game (A Little Pub Card Game).

Scenario tests are scripted move by move from the rules page
(docs/rules/pub.md: the rules and our rulings); every move is given by its exact name (``card 8H``, ``draw``,
``keep drawn``), so the names are tested too.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import exploitability, ismcts, mcts

from kibitz import games  # noqa: F401  (registers the games)
from kibitz.agents.base import RandomAgent
from kibitz.agents.heuristics import HEURISTICS
from kibitz.agents.registry import make_agent
from kibitz.games import pub
from kibitz.games._common import IllegalActionError

TINY = "pub(players=3,suits=2,ranks=3,removed=0,hand=1)"
# 3 players, one card each, nothing set aside: the whole deck is scripted.
OPEN = "pub(players=3,removed=0,hand=1)"


def do(state, *moves):
    """Applies moves given by name; each must be legal where it is played."""
    for name in moves:
        player = state.current_player()
        if state.is_chance_node():
            options = [a for a, _ in state.chance_outcomes()]
        else:
            options = state.legal_actions()
        named = {state.action_to_string(player, a): a for a in options}
        assert name in named, f"{name!r} is not legal here; legal: {sorted(named)}"
        state.apply_action(named[name])
    return state


def names(game, cards):
    return [game.card_names[c] for c in cards]


def random_playout(state, rng):
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            action = outcomes[int(rng.integers(len(outcomes)))][0]
        else:
            legal = state.legal_actions()
            action = legal[int(rng.integers(len(legal)))]
        state.apply_action(action)
    return state


# ------------------------------------------------------------ the text's examples
def test_example_eight_of_hearts_then_a_jack_takes_both():
    game = pyspiel.load_game(OPEN)
    state = do(game.new_initial_state(), "card 2C", "card 3C", "card 4C", "card 8H")
    assert state.current_player() == 0 and state.legal_actions() == [pub.TAKE, pub.DRAW]
    do(state, "draw", "card JD")  # higher rank: no choice, both cards are taken
    assert names(game, state.collections[0]) == ["8H", "JD"]
    assert state.face_up == -1
    assert state.is_chance_node()  # the next player's turn starts with a reveal
    assert "p0 must take both 8H JD" in state.information_state_string(1).split("\n")


def test_example_jack_of_spades_then_ace_of_spades_takes_both():
    game = pyspiel.load_game(OPEN)
    state = do(game.new_initial_state(), "card 2C", "card 3C", "card 4C", "card JS")
    do(state, "draw", "card AS")  # lower, but the same suit
    assert names(game, state.collections[0]) == ["JS", "AS"]
    assert state.is_chance_node()


def test_example_four_of_hearts_taken_directly():
    game = pyspiel.load_game(OPEN)
    state = do(game.new_initial_state(), "card 2C", "card 3C", "card 4C", "card 4H", "take")
    assert names(game, state.collections[0]) == ["4H"]
    assert state.face_up == -1 and state.is_chance_node()
    do(state, "card 9S")
    assert state.current_player() == 1 and state.face_up == game.card_names.index("9S")


def test_equal_rank_other_suit_must_take_both():
    game = pyspiel.load_game(OPEN)
    state = do(game.new_initial_state(), "card 2C", "card 3C", "card 4C", "card 8H",
               "draw", "card 8S")
    assert names(game, state.collections[0]) == ["8H", "8S"]
    assert state.is_chance_node()


def test_lower_card_of_other_suit_keep_drawn_leaves_face_up_for_next_player():
    game = pyspiel.load_game(OPEN)
    state = do(game.new_initial_state(), "card 2C", "card 3C", "card 4C", "card 8H",
               "draw", "card 3S")
    assert state.current_player() == 0
    assert state.legal_actions() == [pub.KEEP_DRAWN, pub.TAKE_BOTH]
    do(state, "keep drawn")
    assert names(game, state.collections[0]) == ["3S"]
    assert state.current_player() == 1  # no reveal: the 8H is still face up
    assert game.card_names[state.face_up] == "8H"
    assert state.legal_actions() == [pub.TAKE, pub.DRAW]
    do(state, "take")
    assert names(game, state.collections[1]) == ["8H"]


def test_lower_card_of_other_suit_take_both():
    game = pyspiel.load_game(OPEN)
    state = do(game.new_initial_state(), "card 2C", "card 3C", "card 4C", "card 8H",
               "draw", "card 3S", "take both")
    assert names(game, state.collections[0]) == ["8H", "3S"]
    assert state.face_up == -1 and state.is_chance_node()


# ------------------------------------------------------------------- the end
SMALL = "pub(players=3,suits=2,ranks=4,removed=0,hand=1)"  # AS..4S AH..4H


def test_end_last_card_drawn_face_up_card_discarded():
    game = pyspiel.load_game(SMALL)
    state = do(game.new_initial_state(), "card 4S", "card AH", "card 2S",
               "card 4H", "take",            # p0; deck AS 3S 2H 3H
               "card 3H", "take",            # p1; deck AS 3S 2H
               "card 3S", "draw", "card 2H",  # p2: lower, other suit; deck AS
               "keep drawn",                 # 3S stays face up
               "draw", "card AS")            # p0 draws the last card: same suit
    assert state.is_terminal()
    assert names(game, state.collections[0]) == ["4H", "3S", "AS"]
    assert "deck empty" in state.information_state_string(0).split("\n")
    # p0 4S (hand) 4H 3S AS: spades majority, 4H counts; p1 AH (hand) 3H:
    # hearts majority; p2 2S (hand) 2H: 2 + 2. The single lowest wins alone.
    assert state.scores == (4, 0, 4)
    assert state.returns() == [0.0, 1.0, 0.0]
    # the last card drawn with a choice: keeping it discards the face-up card
    state = do(game.new_initial_state(), "card 4S", "card AH", "card 2S",
               "card 4H", "take", "card 2H", "take", "card 3S", "take",
               "card 3H", "draw", "card AS")  # p0, deck empty after this draw
    assert not state.is_terminal() and state.legal_actions() == [pub.KEEP_DRAWN, pub.TAKE_BOTH]
    do(state, "keep drawn")
    assert state.is_terminal()
    everything = [c for coll in state.collections for c in coll] + [c for h in state.hands for c in h]
    assert game.card_names.index("3H") not in everything
    lines = state.information_state_string(1).split("\n")
    assert "deck empty: face up 3H discarded" in lines


def test_end_reveal_of_last_card_discards_it_unseen():
    game = pyspiel.load_game(SMALL)
    state = do(game.new_initial_state(), "card 4S", "card AH", "card 2S",
               "card 4H", "take", "card 3H", "take", "card 3S", "draw", "card AS")
    # p2 took both with 2H still in the deck: a reveal would take the last card
    assert state.is_terminal()
    seen = {c for coll in state.collections for c in coll} | {c for h in state.hands for c in h}
    assert game.card_names.index("2H") not in seen
    # the deck is empty: the property, the state, the observation string and tensor say 0
    assert state.deck_size == 0 and "deck 0" in str(state)
    obs = game.make_py_observer(pyspiel.IIGObservationType(perfect_recall=False))
    for p in range(3):
        text = state.information_state_string(p)
        assert "deck empty: last card discarded unseen" in text.split("\n")
        assert "2H" not in text
        assert "| deck 0 |" in state.observation_string(p) and "2H" not in state.observation_string(p)
        obs.set_from(state, p)
        assert obs.dict["deck"][0] == 0
        assert np.array_equal(obs.tensor, state.observation_tensor(p))


def test_full_small_game_scores_and_both_payoffs():
    script = ("card 4S", "card AH", "card 2S", "card 3H", "take", "card 4H", "take",
              "card AS", "draw", "card 3S")
    game = pyspiel.load_game(SMALL)
    state = do(game.new_initial_state(), *script)
    assert state.is_terminal()  # 2H left: discarded unseen
    # p0 4S 3H; p1 AH 4H (hearts majority); p2 2S AS 3S (spades majority)
    assert state.scores == (7, 0, 0)
    assert state.returns() == [0.0, 0.5, 0.5]
    score_game = pyspiel.load_game(SMALL.replace(")", ",payoff=score)"))
    state = do(score_game.new_initial_state(), *script)
    assert state.returns() == pytest.approx([7 / 3 - 7, 7 / 3, 7 / 3])
    assert sum(state.returns()) == pytest.approx(0)


def test_hands_join_collections_at_the_end():
    game = pyspiel.load_game(SMALL)
    state = do(game.new_initial_state(), "card 4H", "card AS", "card 3H",
               "card 2H", "take", "card 4S", "take", "card 3S", "take", "card AH", "take")
    assert state.is_terminal()  # 2S left: a reveal would take the last card
    # p0: 4H (hand) + 2H AH; p1: AS (hand) + 4S; p2: 3H (hand) + 3S
    # spades: p1 has 2 -> 0; hearts: p0 has 3 -> 0; p2 scores 3H + 3S
    assert state.scores == (0, 0, 6)
    shown = [line for line in state.information_state_string(2).split("\n") if "shows" in line]
    assert shown == ["p0 shows 4H", "p1 shows AS", "p2 shows 3H"]


# -------------------------------------------------------------------- scoring
def test_scoring_face_cards_and_majorities():
    g = pyspiel.load_game("pub")
    idx = g.card_names.index
    by_seat = [[idx("JS"), idx("QH"), idx("2C"), idx("3C")],
               [idx("KS"), idx("2S"), idx("2H"), idx("3H")],
               [idx("KC"), idx("AD")]]
    # spades, hearts: p1 has most; clubs: p0; diamonds: p2 alone. J=11, Q=12, K=13.
    assert pub.scores_of(by_seat, 4, 13) == [11 + 12, 0, 13]


def test_scoring_ties_all_face_down_and_a_suit_nobody_holds():
    g = pyspiel.load_game("pub")
    idx = g.card_names.index
    by_seat = [[idx("5S"), idx("9H")], [idx("6S"), idx("9D")], [idx("KS"), idx("QH")]]
    # spades tie 1-1-1: all face down; hearts tie p0/p2; diamonds p1; clubs nobody
    assert pub.scores_of(by_seat, 4, 13) == [0, 0, 0]
    by_seat = [[idx("5S"), idx("7S"), idx("9H")], [idx("6S"), idx("8S")], [idx("KH")]]
    # spades tie 2-2 between p0 and p1; hearts tie p0/p2
    assert pub.scores_of(by_seat, 4, 13) == [0, 0, 0]
    by_seat = [[idx("5S"), idx("7S"), idx("9S")], [idx("6S"), idx("8S")], [idx("KH"), idx("AH")]]
    assert pub.scores_of(by_seat, 4, 13) == [0, 14, 0]


def test_lowest_total_wins_and_ties_share():
    from kibitz.games._common import win_shares
    assert win_shares([7, 3, 3, 9], higher_is_better=False) == [0.0, 0.5, 0.5, 0.0]
    assert win_shares([2, 3, 4], higher_is_better=False) == [1.0, 0.0, 0.0]


# ----------------------------------------------------------------- hand sizes
@pytest.mark.parametrize("players,hand", [(3, 3), (4, 3), (5, 2), (6, 2), (7, 1), (8, 1)])
def test_hand_size_by_player_count(players, hand):
    game = pyspiel.load_game(f"pub(players={players})")
    assert game.hand_size == hand
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    assert [len(h) for h in state.hands] == [hand] * players
    assert len(state.removed_cards) == 10
    assert state.deck_size == 52 - 10 - players * hand - 1  # one card face up


def test_hand_override():
    game = pyspiel.load_game("pub(players=7,hand=4)")
    assert game.hand_size == 4
    state = game.new_initial_state()
    for _ in range(10 + 7 * 4):
        assert state.is_chance_node()
        state.apply_action(state.chance_outcomes()[-1][0])
    assert [len(h) for h in state.hands] == [4] * 7
    lines = state.information_state_string(3).split("\n")
    assert sum(line.startswith("you are dealt") for line in lines) == 4


def test_deal_order_removed_first_then_seat_by_seat():
    game = pyspiel.load_game("pub(players=3,removed=2,hand=2)")
    state = do(game.new_initial_state(), "card KS", "card KH", "card AS", "card 2S",
               "card AH", "card 2H", "card AD", "card 2D", "card 5C")
    assert names(game, state.removed_cards) == ["KS", "KH"]
    assert [names(game, h) for h in state.hands] == [["AS", "2S"], ["AH", "2H"], ["AD", "2D"]]
    assert state.current_player() == 0 and game.card_names[state.face_up] == "5C"


# ------------------------------------------- game information and views
def test_chance_outcomes_exact_and_ascending():
    game = pyspiel.load_game("pub(players=3)")
    state = game.new_initial_state()
    rng = np.random.default_rng(1)
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            actions = [a for a, _ in outcomes]
            assert actions == sorted(actions) and len(set(actions)) == len(actions)
            assert sum(p for _, p in outcomes) == pytest.approx(1.0)
            assert len({p for _, p in outcomes}) == 1
            state.apply_action(actions[int(rng.integers(len(actions)))])
        else:
            legal = state.legal_actions()
            assert legal == sorted(legal)
            state.apply_action(legal[int(rng.integers(len(legal)))])


def test_action_names():
    game = pyspiel.load_game("pub")
    state = game.new_initial_state()
    chance = pyspiel.PlayerId.CHANCE
    named = [state.action_to_string(chance, a) for a in range(52)]
    assert named[:13] == ["card " + r + "S" for r in
                          ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]]
    assert named[13 + 11] == "card QH" and named[26] == "card AD" and named[51] == "card KC"
    assert [state.action_to_string(0, a) for a in range(4)] == [
        "take", "draw", "keep drawn", "take both"]
    small = pyspiel.load_game("pub(players=3,suits=2,ranks=3,removed=0,hand=1)")
    assert [small.new_initial_state().action_to_string(chance, a) for a in range(6)] == [
        "card AS", "card 2S", "card 3S", "card AH", "card 2H", "card 3H"]


@pytest.mark.parametrize("params", [
    dict(players=3), dict(players=5), dict(players=8), dict(players=4, payoff="score"),
    dict(players=3, suits=2, ranks=3, removed=0, hand=1),
    dict(players=6, suits=3, ranks=7, removed=2, hand=2, payoff="score"),
])
def test_game_info_follows_parameters(params):
    game = pyspiel.load_game("pub", params)
    n = params["players"]
    suits, ranks = params.get("suits", 4), params.get("ranks", 13)
    removed = params.get("removed", 10)
    hand = params.get("hand") or pub.hand_by_players(n)
    assert game.num_players() == n
    assert game.num_distinct_actions() == 4
    assert game.max_chance_outcomes() == suits * ranks
    deck = suits * ranks - removed - n * hand
    assert game.max_game_length() == removed + n * hand + 3 * deck - 2
    if params.get("payoff", "win") == "win":
        assert game.get_type().utility == pyspiel.GameType.Utility.CONSTANT_SUM
        assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (0.0, 1.0, 1.0)
    else:
        total = suits * ranks * (ranks + 1) // 2
        assert game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
        assert game.utility_sum() == 0.0
        assert game.min_utility() == pytest.approx(-total * (n - 1) / n)
        assert game.max_utility() == pytest.approx(total / n)
    rng = np.random.default_rng(7)
    for _ in range(5):
        state = random_playout(game.new_initial_state(), rng)
        assert len(state.history()) <= game.max_game_length()
        returns = state.returns()
        assert sum(returns) == pytest.approx(game.utility_sum())
        assert all(game.min_utility() <= r <= game.max_utility() for r in returns)


def test_longest_game_reaches_max_game_length():
    # the face-up 3H stays while both draws are lower cards of another suit
    game = pyspiel.load_game(TINY)
    state = do(game.new_initial_state(), "card AH", "card 2H", "card 3S", "card 3H",
               "draw", "card AS", "keep drawn", "draw", "card 2S", "keep drawn")
    assert state.is_terminal()
    assert len(state.history()) == game.max_game_length() == 3 + 3 * 3 - 2
    assert "deck empty: face up 3H discarded" in state.information_state_string(0).split("\n")


# ----------------------------------------------------------------- solvers
def test_cfr_and_nash_conv_on_tiny_configuration():
    game = pyspiel.load_game(TINY)
    # OpenSpiel's C++ NashConv and its Python one agree on the uniform policy
    uniform = policy_lib.TabularPolicy(game)
    uniform_conv = pyspiel.nash_conv(game, policy_lib.python_policy_to_pyspiel_policy(uniform))
    assert uniform_conv == pytest.approx(exploitability.nash_conv(game, uniform))
    assert uniform_conv > 0.0
    solver = pyspiel.CFRSolver(game)
    for _ in range(2):
        solver.evaluate_and_update_policy()
    policy = solver.average_policy()
    conv = pyspiel.nash_conv(game, policy)
    assert 0.0 <= conv < uniform_conv  # two CFR iterations already improve on uniform
    # the averaged policy is a distribution over the two legal moves
    state = do(game.new_initial_state(), "card AS", "card 2S", "card 3S", "card AH")
    probs = dict(policy.get_state_policy(state))
    assert set(probs) == {pub.TAKE, pub.DRAW} and sum(probs.values()) == pytest.approx(1)


@pytest.mark.parametrize("game_string,sims", [
    (TINY, 20), ("pub(players=3,suits=2,ranks=6,removed=2,hand=1)", 15), ("pub", 4)])
def test_ismcts_bot_plays_complete_games(game_string, sims):
    game = pyspiel.load_game(game_string)
    rng = np.random.default_rng(3)
    n = game.num_players()
    bots = [ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, np.random.RandomState(5 + i)), 2.0, sims,
                             random_state=np.random.RandomState(11 + i))
            for i in range(n)]
    state = game.new_initial_state()
    moves = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
        else:
            action = bots[state.current_player()].step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
            moves += 1
    assert moves > 0
    assert sum(state.returns()) == pytest.approx(1.0)


# ----------------------------------------------------------------- bad input
@pytest.mark.parametrize("game_string,words", [
    ("pub(players=2)", ["players", "3..8"]),
    ("pub(players=9)", ["players", "3..8"]),
    ("pub(suits=5)", ["suits", "1..4"]),
    ("pub(ranks=14)", ["ranks", "1..13"]),
    ("pub(players=3,suits=2,ranks=2)", ["ranks", "suits*ranks >= players+2"]),
    ("pub(removed=51)", ["removed", "0..suits*ranks-players-2"]),
    ("pub(hand=20)", ["hand", "1..(suits*ranks-removed-2)/players"]),
    ("pub(players=3,suits=2,ranks=3,removed=0)", ["hand=0", "3 cards for 3 players", "hand 1..1"]),
    ("pub(payoff=chips)", ["payoff", "win, score"]),
])
def test_bad_parameters_name_the_parameter(game_string, words):
    with pytest.raises(ValueError) as err:
        pyspiel.load_game(game_string)
    for w in words:
        assert w in str(err.value)


def test_bad_parameters_direct_construction():
    with pytest.raises(ValueError, match="unknown parameter 'cards'"):
        pub.PubGame({"cards": 10})
    with pytest.raises(ValueError, match="players"):
        pub.PubGame({"players": "four"})


def test_illegal_actions_raise_and_leave_state_unchanged():
    game = pyspiel.load_game(OPEN)
    state = do(game.new_initial_state(), "card 2C", "card 3C", "card 4C", "card 8H")
    turn = r"legal: take \(0\), draw \(1\)$"
    # a player node: keep drawn / take both / out of range are not legal
    cases = [(state, pub.KEEP_DRAWN, r"^keep drawn \(action 2\) is not legal for player 0: a turn begins; " + turn),
             (state, pub.TAKE_BOTH, r"^take both \(action 3\) is not legal for player 0: a turn begins; " + turn),
             (state, 4, r"^action 4 is no move of pub \(ids 0\.\.3\); legal for player 0: take \(0\), draw \(1\)$"),
             (state, -7, r"^action -7 is no move of pub \(ids 0\.\.3\); legal for player 0: take"),
             (state, 10**9, r"^action 1000000000 is no move of pub")]
    drawn = do(state.clone(), "draw")
    cases += [(drawn, game.card_names.index("8H"),
               r"^card 8H \(action 20\) is not legal for chance: that card is not in the deck; "
               r"legal: card AS \(0\), .*, card KC \(51\)$"),
              (drawn, game.card_names.index("2C"), r"^card 2C \(action 40\) is not legal for chance"),
              (drawn, 52, r"^action 52 is no chance outcome of pub \(ids 0\.\.51\); legal for chance: card AS"),
              (drawn, pub.DRAW - 3, r"^action -2 is no chance outcome of pub")]
    choose = do(state.clone(), "draw", "card 3S")
    after = "after drawing a lower card of another suit; legal: keep drawn \\(2\\), take both \\(3\\)$"
    cases += [(choose, pub.TAKE, r"^take \(action 0\) is not legal for player 0: " + after),
              (choose, pub.DRAW, r"^draw \(action 1\) is not legal for player 0: " + after)]
    over = do(pyspiel.load_game(SMALL).new_initial_state(), "card 4S", "card AH", "card 2S",
              "card 4H", "take", "card 3H", "take", "card 3S", "draw", "card AS")
    cases += [(over, pub.TAKE, r"^take \(action 0\) is not legal for anyone: the game is over$"),
              (over, 9, r"^action 9 is no move of pub \(ids 0\.\.3\); the game is over$")]
    for st, action, message in cases:
        before, hist = str(st), st.history()
        infos = [st.information_state_string(p) for p in range(3)]
        with pytest.raises(IllegalActionError, match=message):
            st.apply_action(action)
        assert str(st) == before and st.history() == hist
        assert [st.information_state_string(p) for p in range(3)] == infos


# ------------------------------------------------------------ information
def test_information_state_string_lines():
    game = pyspiel.load_game(SMALL)
    state = do(game.new_initial_state(), "card 4S", "card AH", "card 2S",
               "card 4H", "take", "card 3S", "draw", "card 2H", "keep drawn")
    assert state.information_state_string(1).split("\n") == [
        "p1", "you are dealt AH", "face up 4H", "p0 takes 4H", "face up 3S",
        "p1 draws", "p1 drew 2H", "p1 keeps drawn 2H, 3S stays face up"]
    assert state.information_state_string(0).split("\n")[1] == "you are dealt 4S"
    assert state.observation_string(2) == (
        "p2 | hand 2S | face up 3S | deck 2 | collections p0:4H p1:2H p2:- | to move p2")


def test_the_end_observation_shows_the_hands():
    # p0 sees the same table in both games; the hands shown at the end differ
    end = ("card 4H", "take", "card 3H", "take", "card 3S", "draw", "card AS")
    a = do(pyspiel.load_game(SMALL).new_initial_state(), "card 4S", "card AH", "card 2S", *end)
    b = do(pyspiel.load_game(SMALL).new_initial_state(), "card 4S", "card 2S", "card AH", *end)
    assert a.is_terminal() and b.is_terminal()
    assert a.observation_tensor(0) != b.observation_tensor(0)
    assert a.observation_string(0).split(" | ")[-2:] == ["hands p0:4S p1:AH p2:2S", "scores 8 0 0"]
    assert b.observation_string(0).split(" | ")[-2] == "hands p0:4S p1:2S p2:AH"


def test_perfect_recall_tensor_hides_only_what_is_hidden():
    game = pyspiel.load_game(SMALL)
    a = do(game.new_initial_state(), "card 4S", "card AH", "card 2S", "card 4H", "take")
    b = do(game.new_initial_state(), "card 4S", "card 2S", "card AH", "card 4H", "take")
    # p0 sees the same in both games; p1 and p2 hold different cards
    assert a.information_state_string(0) == b.information_state_string(0)
    assert np.array_equal(a.information_state_tensor(0), b.information_state_tensor(0))
    assert np.array_equal(a.observation_tensor(0), b.observation_tensor(0))
    assert a.information_state_string(1) != b.information_state_string(1)
    assert not np.array_equal(a.information_state_tensor(1), b.information_state_tensor(1))
    # public events in order: the same cards in another order differ
    c = do(game.new_initial_state(), "card 4S", "card AH", "card 2S", "card 3H", "take",
           "card 4H", "take")
    d = do(game.new_initial_state(), "card 4S", "card AH", "card 2S", "card 4H", "take",
           "card 3H", "take")
    assert not np.array_equal(c.information_state_tensor(0), d.information_state_tensor(0))
    assert np.array_equal(c.observation_tensor(2)[:3], d.observation_tensor(2)[:3])


def _walk(state, visit):
    visit(state)
    if state.is_terminal():
        return
    if state.is_chance_node():
        actions = [a for a, _ in state.chance_outcomes()]
    else:
        actions = state.legal_actions()
    for a in actions:
        _walk(state.child(a), visit)


@pytest.mark.parametrize("game_string", [
    TINY.replace(")", ",payoff=score)"), "pub(players=3,suits=2,ranks=3,removed=1,hand=1)"])
def test_whole_tree_information_states_exact_and_game_info_bounds(game_string):
    """Every history of a tiny game: after the deal, a player's information
    state (string and tensor) groups histories exactly by what the rules let
    that player know: their own dealt cards, every move after the deal (all
    public) and, at the end, the hands shown. Nothing leaks, nothing is
    forgotten; the longest game and the returns stay within GameInfo."""
    game = pyspiel.load_game(game_string)
    n, setup, removed, hand = 3, game.setup_length, game.num_removed, game.hand_size
    by_string = [{} for _ in range(n)]
    by_tensor = [{} for _ in range(n)]
    longest = [0]
    lows, highs = [], []

    def known(state, p):
        h = state.history()
        own = tuple(a for i, a in enumerate(h[:setup])
                    if i >= removed and (i - removed) // hand == p)
        shown = state.hands if state.is_terminal() else None
        return own, tuple(h[setup:]), shown

    def visit(state):
        if state.is_terminal():
            longest[0] = max(longest[0], len(state.history()))
            returns = state.returns()
            assert sum(returns) == pytest.approx(game.utility_sum())
            lows.append(min(returns))
            highs.append(max(returns))
        if len(state.history()) < setup:
            return  # nobody acts during the deal
        for p in range(n):
            k = known(state, p)
            by_string[p].setdefault(state.information_state_string(p), set()).add(k)
            by_tensor[p].setdefault(tuple(state.information_state_tensor(p)), set()).add(k)

    _walk(game.new_initial_state(), visit)
    for p in range(n):
        for groups in (by_string[p], by_tensor[p]):
            assert all(len(keys) == 1 for keys in groups.values())  # nothing forgotten
            keys = [k for ks in groups.values() for k in ks]
            assert len(keys) == len(set(keys))  # nothing hidden leaks
    assert longest[0] == game.max_game_length()
    assert game.min_utility() <= min(lows) and max(highs) <= game.max_utility()


def test_tensor_sizes_and_views():
    game = pyspiel.load_game("pub(players=5)")
    n, N, L = 5, 52, 3 * (52 - 10 - 10) - 2
    assert game.information_state_tensor_size() == n + N + L * (6 + n + N) + 3 + n * N
    assert game.observation_tensor_size() == n + (n + 1) + 3 * N + n * N + 1 + n * N + 6
    obs = game.make_py_observer(pyspiel.IIGObservationType(perfect_recall=False))
    state = random_playout(game.new_initial_state(), np.random.default_rng(2))
    obs.set_from(state, 3)
    assert obs.dict["observer"][3] == 1 and obs.dict["shown"].sum() == 10
    assert obs.dict["collections"].sum() == sum(len(c) for c in state.collections)
    assert obs.dict["phase"][pub.OVER] == 1 and obs.dict["to_move"][n] == 1
    assert np.shares_memory(obs.dict["collections"], obs.tensor)


# ------------------------------------------------------------- resampling
def test_resample_from_infostate_keeps_view_and_varies_hidden_cards():
    game = pyspiel.load_game("pub(players=4)")
    rng = np.random.default_rng(5)
    state = game.new_initial_state()
    while state.is_chance_node() or len(state.history()) < 70:
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
        else:
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])
        assert not state.is_terminal()
    me = state.current_player()
    sampler_rng = np.random.default_rng(6)
    hidden = set()
    for _ in range(10):
        s = state.resample_from_infostate(me, sampler_rng.random)
        assert s.information_state_string(me) == state.information_state_string(me)
        assert np.array_equal(s.information_state_tensor(me), state.information_state_tensor(me))
        assert s.hands[me] == state.hands[me] and s.collections == state.collections
        assert s.legal_actions() == state.legal_actions()
        hidden.add((s.removed_cards, tuple(h for i, h in enumerate(s.hands) if i != me)))
    assert len(hidden) > 1


def test_resample_draws_hidden_cards_with_chance_probabilities():
    game = pyspiel.load_game("pub(players=3,suits=2,ranks=4,removed=2,hand=1)")
    idx = game.card_names.index
    state = do(game.new_initial_state(), "card 4S", "card 4H", "card AS", "card AH",
               "card 2S", "card 3H")
    # p0 holds AS and sees 3H: the six other cards are equally likely in each
    # hidden place (the two removed cards, p1's and p2's hands)
    unseen = {idx(x) for x in ("2S", "3S", "4S", "AH", "2H", "4H")}
    rng = np.random.default_rng(21)
    counts = Counter()
    samples = 3000
    for _ in range(samples):
        s = state.resample_from_infostate(0, rng.random)
        assert s.information_state_string(0) == state.information_state_string(0)
        places = s.removed_cards + (s.hands[1][0], s.hands[2][0])
        assert s.hands[0] == state.hands[0] and set(places) <= unseen
        counts.update(enumerate(places))
    for place in range(4):
        for card in unseen:  # expected 500 each; 100 is about five standard deviations
            assert abs(counts[place, card] - samples / 6) < 100, (place, card, counts[place, card])
    # at the end the hands are shown: only the removed cards and the last,
    # undrawn card are unknown, and each of the three is removed with chance 2/3
    do(state, "take", "card 3S", "take")
    assert state.is_terminal() and state.deck_size == 0
    left = {idx("4S"), idx("4H"), idx("2H")}
    removed = Counter()
    for _ in range(1500):
        s = state.resample_from_infostate(1, rng.random)
        assert s.hands == state.hands and s.history()[2:] == state.history()[2:]
        assert set(s.removed_cards) < left
        removed.update(s.removed_cards)
    assert all(abs(removed[c] - 1000) < 90 for c in left), removed


def test_resample_after_the_end_keeps_shown_hands():
    game = pyspiel.load_game(SMALL)
    state = do(game.new_initial_state(), "card 4S", "card AH", "card 2S",
               "card 3H", "take", "card 4H", "take", "card AS", "draw", "card 3S")
    sampler_rng = np.random.default_rng(8)
    for _ in range(5):
        s = state.resample_from_infostate(0, sampler_rng.random)
        assert s.hands == state.hands and s.returns() == state.returns()


# --------------------------------------------------------------- agents
def _play(game, agents, seed):
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
        else:
            state.apply_action(agents[state.current_player()].step(state))
    return state


def test_heuristic_registered_and_reads_its_view():
    assert "pub" in HEURISTICS
    state = do(pyspiel.load_game(OPEN).new_initial_state(), "card 2C", "card 3C", "card 4C",
               "card AS")
    agent = make_agent("heuristic", pyspiel.load_game(OPEN), 0, seed=1)
    assert agent.step(state) == pub.TAKE  # an ace face up: take it
    state = do(pyspiel.load_game(OPEN).new_initial_state(), "card 2C", "card 3C", "card 4C",
               "card KS")
    assert agent.step(state) == pub.DRAW  # a king face up: risk a draw
    do(state, "draw", "card 9H")
    assert agent.step(state) == pub.KEEP_DRAWN  # keep the 9 rather than take 9 + K


def test_heuristic_beats_random_with_rotated_seats():
    game = pyspiel.load_game("pub(payoff=score)")
    win_game = pyspiel.load_game("pub")
    n = 4
    score_total, wins = 0.0, 0.0
    games_played = 120
    for i in range(games_played):
        seat = i % n
        for g in (game, win_game):
            agents = [make_agent("heuristic", g, s, seed=100 * i + s) if s == seat
                      else RandomAgent(g, s, seed=100 * i + s) for s in range(n)]
            returns = _play(g, agents, seed=i).returns()
            if g is game:
                score_total += returns[seat]
            else:
                wins += returns[seat]
    assert score_total / games_played > 2.0  # points better than the table's mean
    assert wins / games_played > 1.2 / n  # clearly above the fair share


def test_determinism_under_a_seed():
    game = pyspiel.load_game("pub(players=5)")

    def run(seed):
        agents = [make_agent("heuristic" if s % 2 else "random", game, s, seed=seed * 10 + s)
                  for s in range(5)]
        return _play(game, agents, seed)

    a, b, c = run(12), run(12), run(13)
    assert a.history() == b.history() and str(a) == str(b)
    assert a.history() != c.history()
    mid = game.new_initial_state()
    for action in a.history()[:60]:
        mid.apply_action(action)
    me = mid.current_player() if mid.current_player() >= 0 else 0
    r1 = mid.resample_from_infostate(me, np.random.default_rng(3).random)
    r2 = mid.resample_from_infostate(me, np.random.default_rng(3).random)
    assert r1.history() == r2.history()


def test_listed_and_playable_through_kibitz():
    from kibitz.games import REGISTRY
    from kibitz.commands.play import build_seats, play_game
    assert REGISTRY["pub"].small == TINY
    game = pyspiel.load_game("pub(players=5)")
    lines = []
    agents = build_seats(game, ["heuristic", "random", "heuristic", "random", "random"], seed=9)
    state = play_game(game, agents, seed=9, write=lines.append)
    assert state.is_terminal()
    assert lines[0].startswith("chance: card ")
    assert any(line.startswith("p0 (heuristic): ") for line in lines)
    assert lines[-1].startswith("returns: p0 ")
