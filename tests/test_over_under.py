"""Over/Under: game information, scenarios from the rules page (docs/rules/over_under.md),
known values, determinism (the checks every game shares: tests/test_conformance.py)."""

import pickle

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import evaluate_bots, get_all_states, ismcts, mcts
from open_spiel.python.observation import make_observation

from kibitz import games  # noqa: F401
from helpers import heuristic_vs_random, random_play_decisions
from kibitz.agents import make_agent
from kibitz.agents.heuristics import over_under as ouh
from kibitz.games import over_under as ou
from kibitz.games._common import IllegalActionError

# Cash deck card kinds (chance outcomes), jokers after the six bills.
D1, D5, D10, D20, D50, D100, JOKER2, PYRAMID, EAGLE = range(9)
CHANCE = pyspiel.PlayerId.CHANCE


def over(s):
    return 2 * s


def under(s):
    return 2 * s + 1


def give(to, stacks):
    return 2 * stacks + to


def play(game_string, actions):
    game = pyspiel.load_game(game_string)
    state = game.new_initial_state()
    for a in actions:
        state.apply_action(a)
    return state


def random_game(game, rng, until=None):
    state = game.new_initial_state()
    while not state.is_terminal() and not (until and until(state)):
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.integers(len(outcomes))][0])
        else:
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])
    return state


# ---------------------------------------------------------------- scenarios
TWO = "over_under(players=2,copies=2,stacks=2,rounds=1)"


def test_fifty_under_ten_is_safe_and_the_flipped_card_goes_on_top():
    state = play(TWO, [D50, D20])
    assert state.current_player() == 0
    state.apply_action(under(0))
    state.apply_action(D10)                      # $50, "under", $10: safe
    assert state.tally == (0, 0)
    assert state.stacks()[0] == (D10, 60, -1)
    assert state.log()[-1] == ("flip", D10, 0, "safe")
    assert state.current_player() == 1
    # The next prediction on stack 0 compares with the $10 now on top:
    # $20 is over $10 (it would have been under the $50).
    state.apply_action(over(0))
    state.apply_action(D20)
    assert state.log()[-1] == ("flip", D20, 0, "safe")
    assert state.top_value(0) == 20 and state.stacks()[0][1] == 80
    # ... and a $50 is over the $20: "under" busts.
    state.apply_action(under(0))
    state.apply_action(D50)
    assert state.log()[-2:] == (("flip", D50, 0, "bust"), ("claim", 0, 0, 130))
    assert state.tally == (130, 0)


def test_twenty_under_hundred_busts_and_the_player_claims_the_stack():
    state = play(TWO, [D50, D20, under(1), D100])
    # The stack with the flipped card: $20 + $100.
    assert state.tally == (120, 0)
    assert state.stacks()[1] == (D100, 120, 0)
    assert state.on_table() == (0,)
    assert state.current_player() == 1
    assert state.legal_actions() == [over(0), under(0)]
    info = state.information_state_string(1).split("\n")
    assert info[-3:] == ["p0: stack 1 under", "card $100 on stack 1: bust",
                         "p0 claims stack 1 ($120)"]


def test_one_over_one_is_safe_in_classic():
    state = play("over_under(players=3,copies=2,stacks=2,rounds=1)",
                 [D1, D5, over(0), D1])
    assert state.log()[-1] == ("flip", D1, 0, "tie")
    assert state.tally == (0, 0, 0)
    assert state.current_player() == 1
    assert state.stacks()[0] == (D1, 2, -1)


def test_one_over_one_in_cutthroat_hands_the_stack_to_another_player():
    g = "over_under(players=3,copies=2,stacks=2,rounds=1,variant=cutthroat)"
    state = play(g, [D1, D5, over(0), D1])
    assert state.current_player() == 0
    assert state.legal_actions() == [give(1, 2), give(2, 2)]
    assert [state.action_to_string(0, a) for a in state.legal_actions()] == [
        "give to 1", "give to 2"]
    state.apply_action(give(2, 2))
    assert state.tally == (0, 0, 2)
    assert state.stacks()[0] == (D1, 2, 2)
    assert state.current_player() == 1          # the turn passes on from p0
    assert state.legal_actions() == [over(1), under(1)]


def test_rounds_end_when_every_stack_is_claimed_and_the_deal_passes_left():
    g = "over_under(players=3,copies=1,stacks=1)"     # rounds = players = 3
    state = play(g, [])
    assert (state.round, state.dealer) == (1, 2)
    for a in (D20, under(0), D100):                   # p0 starts; busts $120
        state.apply_action(a)
    assert state.round == 2 and state.dealer == 0 and state.is_chance_node()
    assert ("end", 1, "claimed", 0, (120, 0, 0)) in state.log()
    state.apply_action(D1)
    assert state.current_player() == 1               # left of dealer p0
    for a in (under(0), D5):                          # p1 busts $6
        state.apply_action(a)
    assert (state.round, state.dealer) == (3, 1)
    state.apply_action(D100)
    assert state.current_player() == 2
    for a in (over(0), D50):                          # p2 busts $150
        state.apply_action(a)
    assert state.is_terminal()
    assert state.tally == (120, 6, 150)
    assert state.returns() == [0.0, 1.0, 0.0]
    scored = play(g.replace(")", ",payoff=score)"), state.history())
    assert scored.returns() == pytest.approx([92 - 120, 92 - 6, 92 - 150])


def test_empty_deck_ends_the_round_and_unclaimed_stacks_are_not_scored():
    state = play("over_under(players=2,copies=1,stacks=2,rounds=1)",
                 [D1, D100,
                  over(0), D5,       # p0 safe: stack 0 $6, top $5
                  under(1), D10,     # p1 safe: stack 1 $110, top $10
                  under(0), D20,     # p0 bust: claims $26
                  over(1), D50])     # p1 safe: the deck is empty
    assert state.is_terminal()
    assert ("end", 1, "empty", 160, (26, 0)) in state.log()
    assert state.tally == (26, 0)
    assert state.returns() == [0.0, 1.0]


def test_equal_tallies_share_the_win():
    state = play("over_under(players=2,copies=1,stacks=2,rounds=1)",
                 [D1, D100, over(0), D5, under(1), D10, over(0), D20, over(1), D50])
    assert state.tally == (0, 0) and state.returns() == [0.5, 0.5]


def test_two_dollar_joker_is_always_safe_and_resets_the_top():
    g = "over_under(players=2,copies=1,stacks=2,rounds=1,jokers=true)"
    state = play(g, [])
    # The jokers are not dealt into the grid (our ruling).
    assert state.chance_outcomes() == [(k, 1 / 6) for k in range(6)]
    for a in (D100, D1):
        state.apply_action(a)
    state.apply_action(over(0))
    outcomes = state.chance_outcomes()
    assert [k for k, _ in outcomes] == [D5, D10, D20, D50, JOKER2, PYRAMID, EAGLE]
    assert all(p == pytest.approx(1 / 7) for _, p in outcomes)
    state.apply_action(JOKER2)               # "over" $100, the $2 joker: safe
    assert state.log()[-1] == ("flip", JOKER2, 0, "safe")
    assert state.top_value(0) == 2 and state.stacks()[0][1] == 102
    state.apply_action(over(0))
    state.apply_action(D5)                   # $5 is over the $2 now on top
    assert state.log()[-1] == ("flip", D5, 0, "safe")
    assert state.tally == (0, 0)


def test_two_dollar_joker_is_safe_in_cutthroat_too():
    # "always safe": on a $1 top, the $2 joker is neither a tie nor a bust.
    g = "over_under(players=2,copies=1,stacks=2,rounds=1,jokers=true,variant=cutthroat)"
    state = play(g, [D1, D100, under(0), JOKER2])
    assert state.log()[-1] == ("flip", JOKER2, 0, "safe")
    assert state.tally == (0, 0) and state.current_player() == 1
    assert state.stacks()[0] == (JOKER2, 3, -1)


@pytest.mark.parametrize("joker", [PYRAMID, EAGLE])
def test_pyramid_or_eagle_hands_the_stack_to_another_player(joker):
    g = "over_under(players=3,copies=1,stacks=2,rounds=1,jokers=true)"
    state = play(g, [D100, D20, under(1), joker])
    assert state.current_player() == 0
    assert state.legal_actions() == [give(1, 2), give(2, 2)]
    state.apply_action(give(1, 2))
    assert state.tally == (0, 20, 0)          # the joker counts 0
    assert state.current_player() == 1


@pytest.mark.parametrize("joker", [PYRAMID, EAGLE])
def test_pyramid_or_eagle_alone_the_player_claims_the_stack(joker):
    state = play("over_under(players=1,copies=1,stacks=2,jokers=true)",
                 [D100, D20, under(1), joker])
    assert state.tally == (20,)
    assert state.current_player() == 0 and state.legal_actions() == [over(0), under(0)]


def test_solo_donor_payoff_is_the_money_left_when_the_deck_runs_out():
    state = play("over_under(players=1,copies=1,stacks=2)",
                 [D1, D100, over(0), D5, over(0), D10, under(1), D20, over(0), D50])
    assert state.is_terminal()
    assert state.returns() == [186.0]
    assert state.donated == 186
    assert "donated $186: Big Donor" in str(state)
    assert state.information_state_string(0).endswith("donated $186: Big Donor")


def test_solo_donor_payoff_is_zero_when_every_stack_is_claimed():
    state = play("over_under(players=1,copies=1,stacks=2)",
                 [D50, D1, under(0), D100, under(1), D5])
    assert state.is_terminal()
    assert state.returns() == [0.0]
    assert "every stack claimed: nothing donated" in str(state)


def test_donor_ranks():
    assert [ou.donor_rank(x) for x in (0, 1, 99, 100, 499, 500, 999, 1000, 1120)] == [
        "no donation", "Lucky Donor", "Lucky Donor", "Big Donor", "Big Donor",
        "Wealthy Donor", "Wealthy Donor", "Mega Donor", "Mega Donor"]


def test_kibitz_play_names_the_donor_rank():
    from kibitz.agents.human import HumanAgent
    from kibitz.commands.play import build_seats, play_game
    game = pyspiel.load_game("over_under(players=1,copies=2,stacks=3)")
    lines = []
    state = play_game(game, build_seats(game, ["heuristic"], 4, write=lines.append), 4,
                      write=lines.append)
    amount = int(state.returns()[0])
    expected = (f"donated ${amount}: {ou.donor_rank(amount)}" if amount
                else "every stack claimed: nothing donated")
    assert any(expected in line for line in lines)
    # A person in the seat sees it as the last line of their view.
    seen = []
    human = HumanAgent(game, 0, read=lambda prompt: "1", write=seen.append)
    state = play_game(game, [human], 4, write=seen.append)
    amount = int(state.returns()[0])
    rank = ou.donor_rank(amount) if amount else "nothing donated"
    assert any(rank in line for line in seen)


def test_chance_outcomes_group_card_values():
    state = play("over_under", [])
    assert state.chance_outcomes() == [(k, 8 / 48) for k in range(6)]
    state.apply_action(D20)
    outcomes = dict(state.chance_outcomes())
    assert outcomes[D20] == pytest.approx(7 / 47) and outcomes[D1] == pytest.approx(8 / 47)
    state = play("over_under(deck=standard)", [])
    assert state.chance_outcomes() == [(k, 4 / 52) for k in range(13)]


def test_action_names():
    cash = play("over_under(jokers=true)", [])
    assert [cash.action_to_string(CHANCE, k) for k in (D20, JOKER2, PYRAMID, EAGLE)] == [
        "card $20", "card $2 joker", "card pyramid", "card eagle"]
    std = play("over_under(deck=standard)", [])
    assert [std.action_to_string(CHANCE, k) for k in (0, 9, 11, 12)] == [
        "card A", "card 10", "card Q", "card K"]
    assert [cash.action_to_string(0, a) for a in (over(3), under(3), give(2, 9))] == [
        "stack 3 over", "stack 3 under", "give to 2"]


def test_human_readable_state():
    state = play(TWO, [D50, D20, under(1), D100])
    text = str(state)
    assert "stack 0: top $50, $50 in it" in text
    assert "stack 1: claimed by p0 ($120)" in text
    assert "tally p0 $120 p1 $0" in text


# ------------------------------------------- game information and views
@pytest.mark.parametrize("players,deck,copies,stacks,rounds,jokers", [
    (1, "cash", 1, 2, 0, False), (2, "standard", 2, 5, 3, True), (4, "cash", 0, 9, 0, False),
    (5, "standard", 0, 9, 1, False), (8, "cash", 3, 4, 2, True)])
def test_game_info_follows_parameters(players, deck, copies, stacks, rounds, jokers):
    kinds = 6 if deck == "cash" else 13
    per = copies or (8 if deck == "cash" else 4)
    cards = kinds * per + (3 if jokers else 0)
    money = per * (sum(ou.CASH_VALUES) if deck == "cash" else 91) + (2 if jokers else 0)
    played = rounds or players
    for payoff in ("win", "score"):
        game = pyspiel.load_game(
            f"over_under(players={players},deck={deck},copies={copies},stacks={stacks},"
            f"rounds={rounds},jokers={str(jokers).lower()},payoff={payoff})")
        assert game.num_players() == players
        assert game.num_distinct_actions() == 2 * stacks + players
        assert game.max_chance_outcomes() == kinds + (3 if jokers else 0)
        assert game.max_game_length() == played * 2 * cards
        utility = game.get_type().utility
        if players == 1:
            assert utility == pyspiel.GameType.Utility.GENERAL_SUM
            assert (game.min_utility(), game.max_utility()) == (0, money)
        elif payoff == "win":
            assert utility == pyspiel.GameType.Utility.CONSTANT_SUM
            assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (0, 1, 1)
        else:
            assert utility == pyspiel.GameType.Utility.ZERO_SUM
            assert game.utility_sum() == 0
            assert game.max_utility() == pytest.approx(played * money / players)
        rng = np.random.default_rng(players)
        lengths = []
        for _ in range(3):
            state = game.new_initial_state()
            n = 0
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()
                    assert abs(sum(p for _, p in outcomes) - 1) < 1e-12
                    assert [o for o, _ in outcomes] == sorted(o for o, _ in outcomes)
                    a = outcomes[rng.integers(len(outcomes))][0]
                else:
                    legal = state.legal_actions()
                    assert legal == sorted(legal)
                    assert all(0 <= x < game.num_distinct_actions() for x in legal)
                    a = legal[rng.integers(len(legal))]
                state.apply_action(a)
                n += 1
            lengths.append(n)
            r = state.returns()
            assert game.min_utility() - 1e-9 <= min(r) and max(r) <= game.max_utility() + 1e-9
            assert state.round == played
        assert max(lengths) <= game.max_game_length()


def test_information_state_tensor_is_perfect_recall():
    game = pyspiel.load_game("over_under(players=2,copies=2,stacks=2,rounds=2,jokers=true,"
                             "variant=cutthroat)")
    rng = np.random.default_rng(11)
    keys = {}
    for _ in range(30):
        state = game.new_initial_state()
        while not state.is_terminal():
            if not state.is_chance_node():
                p = state.current_player()
                t = tuple(state.information_state_tensor(p))
                assert len(t) == game.information_state_tensor_size()
                s = state.information_state_string(p)
                # the same public history gives the same key for both players
                assert s.split("\n", 1)[1:] == state.information_state_string(1 - p).split(
                    "\n", 1)[1:]
                key = t[2:]                       # without the observer one-hot
                assert keys.setdefault(key, s.split("\n", 1)[1]) == s.split("\n", 1)[1]
                legal = state.legal_actions()
                state.apply_action(legal[rng.integers(len(legal))])
            else:
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
    assert len(keys) > 100


def test_observation_views_match_the_table():
    game = pyspiel.load_game("over_under(players=3,copies=2,stacks=2,rounds=1)")
    state = play("over_under(players=3,copies=2,stacks=2,rounds=1)",
                 [D50, D20, under(1), D100, over(0)])
    obs = make_observation(game, pyspiel.IIGObservationType(perfect_recall=False))
    obs.set_from(state, 2)
    d = obs.dict
    assert list(d["observer"]) == [0, 0, 1]
    assert list(d["tally"]) == [120, 0, 0]
    assert list(d["deck"]) == list(state.deck_counts) == [2, 2, 2, 1, 1, 1]
    assert list(d["on_table"]) == [1, 0] and list(d["claimed_by"][1]) == [1, 0, 0]
    assert d["top"][0, D50] == 1 and list(d["money"]) == [50, 120]
    assert list(d["pending"]) == [1, 0] and list(d["direction"]) == [1, 0]
    assert list(d["to_move"]) == [0, 0, 0, 1]              # chance to flip
    assert len(state.observation_tensor(2)) == game.observation_tensor_size()
    assert state.observation_string(2) == (
        "p2 | round 1 of 1 | dealer p2 | tally 120 0 0 | stacks 0:$50/$50 1:p0/$120 | "
        "deck $1x2 $5x2 $10x2 $20x1 $50x1 $100x1 | p1: stack 0 over")


def test_observation_string_shows_what_its_tensor_shows():
    # a claimed stack's money is in the tensor: two tables whose claimed
    # stacks hold other sums (same tally) read differently
    a = play("over_under(players=2,copies=2,stacks=2,rounds=1)", [D50, D20, under(0), D100])
    b = play("over_under(players=2,copies=2,stacks=2,rounds=1)", [D50, D20, under(1), D100])
    assert "0:p0/$150" in a.observation_string(0) and "1:p0/$120" in b.observation_string(0)
    # a give after a cut-throat tie: the prediction made is in the tensor
    game = "over_under(players=2,copies=2,stacks=1,rounds=1,variant=cutthroat)"
    for direction, word in ((over, "over"), (under, "under")):
        state = play(game, [D20, direction(0), D20])
        assert state.observation_string(0).endswith(f"| p0 gives stack 0 (said {word})")


def test_serialization_round_trip():
    game = pyspiel.load_game("over_under(players=3,jokers=true,variant=cutthroat)")
    state = random_game(game, np.random.default_rng(5), until=lambda s: len(s.history()) > 60)
    text = pyspiel.serialize_game_and_state(game, state)
    game2, state2 = pyspiel.deserialize_game_and_state(text)
    assert str(state2) == str(state) and state2.history() == state.history()
    assert state2.information_state_string(1) == state.information_state_string(1)
    assert pickle.loads(pickle.dumps(state._c)).log() == state._c.log()


# ------------------------------------------------------------ bad input
@pytest.mark.parametrize("game_string,words", [
    ("over_under(players=9)", ["players", "1..8"]),
    ("over_under(players=0)", ["players", "1..8"]),
    ("over_under(players=1,variant=cutthroat)", ["variant", "players >= 2"]),
    ("over_under(copies=1,stacks=6)", ["stacks", "fewer than the cards"]),
    ("over_under(stacks=21)", ["stacks", "1..20"]),
    ("over_under(deck=tarot)", ["deck", "cash, standard"]),
    ("over_under(deck=standard,copies=5)", ["copies", "1..4 (standard)"]),
    ("over_under(variant=cruel)", ["variant", "classic, cutthroat"]),
    ("over_under(players=1,rounds=2)", ["rounds", "0 or 1 with players=1"]),
    ("over_under(rounds=17)", ["rounds", "0..16"]),
    ("over_under(payoff=money)", ["payoff", "win, score"]),
])
def test_bad_parameters_name_the_problem(game_string, words):
    with pytest.raises(ValueError) as err:
        pyspiel.load_game(game_string)
    for w in words:
        assert w in str(err.value)


def test_unknown_parameter_rejected():
    with pytest.raises(pyspiel.SpielError, match="stakcs"):
        pyspiel.load_game("over_under(stakcs=3)")


CUT = "over_under(players=3,copies=1,stacks=3,rounds=1,variant=cutthroat,jokers=true)"


PREDICTS = r"stack 0 over \(0\), stack 0 under \(1\), stack 1 over \(2\), .*, stack 2 under \(5\)$"
GIVES = r"give the stack to another player; legal: give to 1 \(7\), give to 2 \(8\)$"


@pytest.mark.parametrize("prefix,bad,message", [
    # jokers are not dealt; no $100 left; no such card; a negative id
    ([], JOKER2, r"^card \$2 joker \(action 6\) is not legal for chance: no such card left in the deck; "
                 r"legal: card \$1 \(0\), .*, card \$100 \(5\)$"),
    ([D100], D100, r"^card \$100 \(action 5\) is not legal for chance: no such card left"),
    ([], 9, r"^action 9 is no chance outcome of over_under \(ids 0\.\.8\); legal for chance: card \$1 \(0\)"),
    ([], -4, r"^action -4 is no chance outcome of over_under \(ids 0\.\.8\)"),
    ([D100, D1, D5, over(0), D20], over(0),                # stack 0 is claimed
     r"^stack 0 over \(action 0\) is not legal for player 1: name a stack still on the table, over "
     r"or under; legal: stack 1 over \(2\), stack 1 under \(3\), stack 2 over \(4\), stack 2 under \(5\)$"),
    ([D100, D1, D5], give(1, 3),                           # a give while predicting
     r"^give to 1 \(action 7\) is not legal for player 0: name a stack still on the table, over or under; legal: "
     + PREDICTS),
    ([D100, D1, D5], 2 * 3 + 3, r"^action 9 is no move of over_under \(ids 0\.\.8\); legal for player 0: "
     + PREDICTS),                                          # out of range
    ([D100, D1, D5], -2, r"^action -2 is no move of over_under \(ids 0\.\.8\); legal for player 0: stack 0"),
    ([D100, D1, D5, under(0), PYRAMID], give(0, 3),        # giving to oneself
     r"^give to 0 \(action 6\) is not legal for player 0: " + GIVES),
    ([D100, D1, D5, under(0), PYRAMID], over(1),           # predicting while giving
     r"^stack 1 over \(action 2\) is not legal for player 0: " + GIVES),
])
def test_illegal_action_is_named_and_leaves_state_unchanged(prefix, bad, message):
    state = play(CUT, prefix)
    before, history = str(state), state.history()
    info = state.information_state_string(0)
    with pytest.raises(IllegalActionError, match=message):
        state.apply_action(bad)
    assert str(state) == before and state.history() == history
    assert state.information_state_string(0) == info


def test_action_after_the_end_raises_and_leaves_state_unchanged():
    state = play("over_under(players=1,copies=1,stacks=2)",
                 [D50, D1, under(0), D100, under(1), D5])
    assert state.is_terminal()
    before, history = str(state), state.history()
    with pytest.raises(ValueError, match="game is over"):
        state.apply_action(over(0))
    assert str(state) == before and state.history() == history and state.returns() == [0.0]


# ----------------------------------------------- OpenSpiel's own algorithms
def test_openspiel_cfr_and_nash_conv_on_small_configuration():
    game = pyspiel.load_game(ou.SPEC.small)
    solver = pyspiel.CFRSolver(game)
    uniform_nc = pyspiel.nash_conv(game, solver.average_policy())
    for _ in range(3):
        solver.evaluate_and_update_policy()
    nc = pyspiel.nash_conv(game, solver.average_policy())
    assert 0 <= nc < uniform_nc


def test_declared_imperfect_yet_every_information_state_is_one_history():
    # the declaration OpenSpiel's IS-MCTS needs (docs/rules/over_under.md) ...
    game = pyspiel.load_game("over_under(players=2,copies=1,stacks=1,rounds=1,variant=cutthroat)")
    assert game.get_type().information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    # ... costs nothing: no two histories share an information state, and a
    # resample is the state itself
    histories = {}
    decisions = get_all_states.get_all_states(game, include_terminals=False,
                                              to_string=lambda s: s.history_str())
    for state in decisions.values():
        p = state.current_player()
        key = state.information_state_string(p)
        assert histories.setdefault(key, state.history()) == state.history()
        assert state.resample_from_infostate(p, None).history() == state.history()
    assert len(histories) == len(decisions) > 1000


def test_openspiel_ismcts_bot_plays_complete_games():
    game = pyspiel.load_game("over_under(players=2,copies=1,stacks=2,rounds=2,jokers=true)")
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(1))
    bots = [ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=20,
                             random_state=np.random.RandomState(i)) for i in range(2)]
    rng = np.random.default_rng(7)
    for _ in range(2):
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


# ------------------------------------------------------------ resampling
def test_resample_keeps_the_information_state_and_the_public_history():
    game = pyspiel.load_game("over_under(players=3,jokers=true,variant=cutthroat)")
    state = random_game(game, np.random.default_rng(3),
                        until=lambda s: s.round == 2 and s.phase == "predict")
    me = state.current_player()
    info = state.information_state_string(me)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    for _ in range(10):
        sample = state.resample_from_infostate(me, sampler)
        assert sample.information_state_string(me) == info
        assert sample.information_state_tensor(me) == state.information_state_tensor(me)
        # Every card is face up and each flip is a card value, so no hidden
        # card can differ: the only consistent state is the same history,
        # with the same cards left in the deck (the deck order is chance).
        assert sample.history() == state.history()
        assert sample.deck_counts == state.deck_counts
        sample.apply_action(sample.legal_actions()[0])   # an independent copy
        assert state.information_state_string(me) == info


# ------------------------------------------------------------ agents, seeds
def test_heuristic_beats_random_with_rotated_seats():
    game = pyspiel.load_game("over_under(players=3,rounds=1,variant=cutthroat,jokers=true)")
    heuristic, rand = heuristic_vs_random(game, 24)
    assert np.mean(heuristic) > np.mean(rand) + 0.3


def test_heuristic_donates_more_than_random_alone():
    game = pyspiel.load_game("over_under(players=1)")
    rng = np.random.default_rng(1)
    h = [evaluate_bots.evaluate_bots(game.new_initial_state(),
                                     [make_agent("heuristic", game, 0, seed=i)], rng)[0]
         for i in range(15)]
    r = [evaluate_bots.evaluate_bots(game.new_initial_state(),
                                     [make_agent("random", game, 0, seed=i)], rng)[0]
         for i in range(15)]
    assert np.mean(h) > np.mean(r) + 100


def test_heuristic_picks_the_safest_prediction_and_gives_to_the_leader():
    # $1 and $100 on the table: "over" the $1 and "under" the $100 are the
    # only predictions a $5..$50 flip cannot bust.
    state = play("over_under(players=2,copies=2,stacks=2,rounds=1)", [D1, D100])
    safe, cost = ouh.prediction_value(state, 0, True)
    assert safe == pytest.approx(1.0) and cost == 0
    safe, cost = ouh.prediction_value(state, 1, True)       # over $100: only a $100 ties
    assert safe == pytest.approx(1 / 10)
    assert ouh.choose(state) in (over(0), under(1))
    # Cut-throat tie: p0 hands the stack to the player with the lowest tally.
    g = "over_under(players=3,copies=2,stacks=3,rounds=1,variant=cutthroat)"
    state = play(g, [D20, D5, D50, under(0), D100,    # p0 claims $120
                     over(1), D5])                   # p1 ties: gives it away
    assert state.current_player() == 1
    assert ouh.choose(state) == give(2, 3)           # p2 has $0, p0 has $120
    state = play(g, [D20, D5, D50, under(0), D100, over(1), D1,    # p1 claims $6
                     over(2), D50])                                # p2 ties
    assert ouh.choose(state) == give(1, 3)           # p1 $6 is lower than p0 $120


@pytest.mark.parametrize("config", ["over_under", "over_under(players=3,jokers=true,variant=cutthroat)",
                                    "over_under(players=1,copies=2,stacks=4)",
                                    "over_under(players=2,deck=standard,jokers=true)"])
def test_heuristic_choice_is_the_prediction_value_ranking(config):
    """The one-pass choose() (also the IS-MCTS rollout policy) ranks exactly
    like prediction_value: most likely safe, least expected money, lowest id."""
    game = pyspiel.load_game(config)
    checked = 0
    for state in random_play_decisions(game, np.random.default_rng(4), 6):
        if state.is_terminal():
            continue
        legal = state.legal_actions()
        if legal[0] < game.rules.give_base:
            ranked = min(legal, key=lambda a: (-ouh.prediction_value(state, a >> 1, not a & 1)[0],
                                               ouh.prediction_value(state, a >> 1, not a & 1)[1], a))
            assert ouh.choose(state) == ranked
            checked += 1
    assert checked > 30


def test_same_seed_same_game():
    from kibitz.commands.play import build_seats, play_game
    game = pyspiel.load_game("over_under(players=3,rounds=1,jokers=true,variant=cutthroat)")

    def run(seed):
        lines = []
        agents = build_seats(game, ["heuristic", "random", "heuristic"], seed, write=lines.append)
        state = play_game(game, agents, seed, write=lines.append)
        return state.history(), lines
    assert run(5) == run(5)
    assert run(5)[0] != run(6)[0]


# ------------------------------------------------------------ rules page
RULES_PAGE = __import__("pathlib").Path(__file__).resolve().parent.parent / "docs/rules/over_under.md"


def ruling_passages():
    """Each passage of the rules page that starts with **Our ruling**, up to
    the end of its paragraph or list item."""
    import re
    text = RULES_PAGE.read_text()
    out = []
    for m in re.finditer(r"\*\*Our ruling", text):
        end = re.search(r"\n\s*\n|\n\s*(?:- |\d+\. |\| )", text[m.end():])
        out.append(" ".join(text[m.start():m.end() + (end.start() if end else len(text))].split()))
    return out


@pytest.mark.parametrize("topic,words", [
    ("cash deck count", ["8 of each", "copies=0"]),
    ("standard deck", ["standard", "52"]),
    ("default players", ["default player count is 4"]),
    ("caps", ["rounds", "16", "stacks", "20"]),
    ("a card left to flip", ["stacks", "one bill"]),
    ("cut-throat players", ["cutthroat", "2 or more players"]),
    ("first dealer and start", ["last seat", "seat 0 starts", "passes left"]),
    ("fresh deck each round", ["full deck"]),
    ("jokers not in the grid", ["dealt from the bills"]),
    ("dealer predicts", ["dealer predicts too"]),
    ("give turn order", ["after a give"]),
    ("joker money", ["$2 joker", "counts $2", "counts $0"]),
    ("Pyramid/Eagle to another player", ["any player", "another player"]),
    ("Pyramid/Eagle alone", ["players=1", "claims it"]),
    ("payoffs", ["payoff=win", "payoff=score"]),
    ("solo one round", ["one round", "rounds"]),
    ("solo payoff", ["both payoff modes"]),
    ("donor ranges", ["$99", "$500"]),
])
def test_rules_page_marks_each_of_our_rulings(topic, words):
    passages = ruling_passages()
    assert any(all(w in p for w in words) for p in passages), (topic, passages)
