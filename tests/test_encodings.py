"""Input encodings and action factors (games/encoding.py), Doubt and Bet's
``compact`` encoding and factors, and Over/Under's and Pub's ``compact`` encodings:
sizes from the parameters, values that depend only on the viewer's
information, hand-checked positions."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pyspiel
import pytest

from kibitz import games
from kibitz.games import doubt_and_bet as db
from test_doubt_and_bet import act, deal, keep_all, load
from test_observations import CONFIGS, _random_states


def pieces(game, x):
    """The compact tensor ``x`` cut into its named pieces (the layout's shapes)."""
    return {p["name"]: np.asarray(x)[p["offset"]:p["offset"] + p["size"]].reshape(p["shape"])
            for p in games.encoding_layout(game, "compact")}


def test_every_game_offers_both_pyspiel_tensors_and_doubt_and_bet_over_under_and_pub_compact():
    for short in [*games.REGISTRY, "kuhn_poker"]:
        game = games.load_game(short)
        assert games.encodings(game)[:2] == (games.INFORMATION_STATE_TENSOR, games.OBSERVATION_TENSOR)
        assert games.encoding_size(game, "information_state_tensor") == game.information_state_tensor_size()
        assert games.encoding_size(game, "observation_tensor") == game.observation_tensor_size()
        want = ("dense", "factored") if short == "doubt_and_bet" else ("dense",)
        assert games.output_kinds(game) == want
    assert games.encodings(games.load_game("doubt_and_bet")) == ("information_state_tensor", "observation_tensor",
                                                                 "compact")
    assert games.encodings(games.load_game("over_under")) == ("information_state_tensor", "observation_tensor",
                                                              "compact")
    assert games.encodings(games.load_game("pub")) == ("information_state_tensor", "observation_tensor", "compact")
    with pytest.raises(ValueError, match="underdog has no encoding 'compact'; allowed: information_state_tensor, "
                                         "observation_tensor$"):
        games.encoding_size(games.load_game("underdog"), "compact")
    with pytest.raises(ValueError, match="pub offers no action factors; allowed output: dense"):
        games.action_factors(games.load_game("pub"))


@pytest.mark.parametrize("short", sorted(games.REGISTRY))
def test_the_observation_encoding_is_the_tensor_and_its_layout_the_observers(short):
    game = games.load_game(short)
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    for _ in range(40):
        if state.is_terminal():
            break
        if state.is_chance_node():
            outcomes = [a for a, _ in state.chance_outcomes()]
            state.apply_action(outcomes[rng.integers(len(outcomes))])
        else:
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])
    for player in range(game.num_players()):
        x = games.encoding_tensor(state, player, "observation_tensor")
        assert x.dtype == np.float32
        np.testing.assert_array_equal(x, np.asarray(state.observation_tensor(player), np.float32))
    layout = games.encoding_layout(game, "observation_tensor")
    assert layout[0]["offset"] == 0 and len(layout) > 3
    assert sum(p["size"] for p in layout) == game.observation_tensor_size()
    assert all(a["offset"] + a["size"] == b["offset"] for a, b in zip(layout, layout[1:]))


def test_the_information_state_encoding_is_the_tensor_and_its_layout_the_observers():
    game = games.load_game("underdog(players=3,cards=5,bank=2)")
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    x = games.encoding_tensor(state, 1, "information_state_tensor")
    assert x.dtype == np.float32 and np.array_equal(x, np.float32(state.information_state_tensor(1)))
    layout = games.encoding_layout(game, "information_state_tensor")
    assert [p["name"] for p in layout] == ["observer", "rounds"]
    assert sum(p["size"] for p in layout) == game.information_state_tensor_size()


def _compact_size(n, k1, S):
    Q = n * S
    return 4 + 5 + 3 * k1 + 1 + Q * k1 + n * (13 + k1) + (6 + n + Q + k1) + (11 + 2 * n)


@pytest.mark.parametrize("params", [
    {}, dict(players=2, chips=2, slots=1, colours=1, copies=2, single_bet=True),
    dict(players=5, chips=30, slots=8, colours=5), dict(players=3, chips=0, slots=2, colours=2),
    dict(players=2, chips=4, slots=3, colours=3, shuffle_every=0, upkeep_start=0)])
def test_compact_size_follows_the_parameters(params):
    game = load(**params)
    n, k1, S = game.num_seats, game.k1, game.max_slots
    assert game.compact_tensor_size() == _compact_size(n, k1, S)
    layout = games.encoding_layout(game, "compact")
    assert [p["name"] for p in layout] == ["phase", "schedule", "own_hand", "own_support", "dealt", "expected",
                                           "chance", "seats", "claim", "showdown"]
    assert sum(p["size"] for p in layout) == game.compact_tensor_size() == games.encoding_size(game, "compact")
    rng = np.random.default_rng(0)
    for state in itertools.islice(_random_states(game, rng, 1), 200):
        for p in range(n):
            x = games.encoding_tensor(state, p, "compact")
            assert x.dtype == np.float32 and x.shape == (game.compact_tensor_size(),)
            assert np.isfinite(x).all() and x.min() >= 0
    with pytest.raises(ValueError, match="player 9 is not a seat"):
        state.compact_tensor(9)


def test_compact_at_the_default_size_is_a_few_hundred_floats():
    game = games.load_game("doubt_and_bet")
    assert game.compact_tensor_size() == 279
    assert game.information_state_tensor_size() == 39_904


@pytest.mark.parametrize("game_string, count", [(g, k) for g, k in CONFIGS["doubt_and_bet"]] + [("doubt_and_bet", 2)])
def test_equal_information_states_mean_equal_compact_tensors(game_string, count):
    """Over every state of random games (chance nodes and the end too) and
    every player: the same information-state string, the same compact tensor."""
    _check_equal_information_states_equal_compact(game_string, count)


def _check_equal_information_states_equal_compact(game_string, count, skip=lambda state: False):
    game = pyspiel.load_game(game_string)
    seen, repeats = {}, 0
    for state in _random_states(game, np.random.default_rng(5), count):
        if skip(state):
            continue
        for p in range(game.num_players()):
            x = state.compact_tensor(p).tobytes()
            first = seen.setdefault(state.information_state_string(p), (x, state.history()))
            assert first[0] == x, (game_string, p, first[1], state.history())
            repeats += first[1] != state.history()
    assert repeats > 0


@pytest.mark.parametrize("game_string", ["doubt_and_bet(players=3,chips=2,slots=2,colours=2,copies=2)",
                                         "doubt_and_bet"])
def test_compact_tensors_are_unchanged_when_the_hidden_cards_are_drawn_again(game_string):
    """The resampling check the games run for the information state: the
    others' cards (this round's and, where hidden, earlier rounds') drawn
    again from the player's view leave its compact tensor as it was."""
    game = pyspiel.load_game(game_string)
    rng = np.random.default_rng(2)
    sampler = np.random.default_rng(4)
    checked = changed = 0
    for k, state in enumerate(_random_states(game, rng, 3)):
        if state.is_chance_node() or state.is_terminal() or k % 7:
            continue
        me = state.current_player()
        x = state.compact_tensor(me)
        others = [p for p in range(game.num_players()) if p != me]
        for internal in (False, True):
            other = state.resample_from_infostate(me, lambda: float(sampler.random()), internal=internal)
            np.testing.assert_array_equal(other.compact_tensor(me), x)
            changed += any(other.hand(p) != state.hand(p) for p in others)
        checked += 1
    assert checked > 10 and changed > 0


def test_a_hand_checked_claim_and_showdown():
    # 2 players, 3 chips, 2 slots, red/yellow + rainbow (4 copies each): T = 5, Q = 4
    game = load(players=2, chips=3, slots=2, colours=2)
    state = game.new_initial_state()
    keep_all(state)
    deal(state, [["red", "rainbow"], ["yellow", "rainbow"]])
    act(state, "claim 2 yellow stake 1+1")
    v = pieces(game, state.compact_tensor(1))
    np.testing.assert_array_equal(v["phase"], [0, 1, 0, 0])
    np.testing.assert_allclose(v["schedule"], [1 / 100, 1, 0, 1, 0])  # upkeep at 15, shuffle at 11: far
    np.testing.assert_allclose(v["own_hand"], [0, 0.5, 0.5])
    np.testing.assert_allclose(v["own_support"], [0.5, 1, 0.5])
    np.testing.assert_allclose(v["dealt"], [1])
    # p0's two cards come from the 10 p1 does not hold: 7 count for red, 6 for yellow, 3 are rainbows
    c2 = math.comb(10, 2)
    np.testing.assert_allclose(v["chance"], np.array([
        [1, 1, 1],
        [1 - math.comb(3, 2) / c2, 1, 1 - math.comb(7, 2) / c2],
        [math.comb(7, 2) / c2, 1 - math.comb(4, 2) / c2, math.comb(3, 2) / c2],
        [0, math.comb(6, 2) / c2, 0]]), rtol=1e-6)
    np.testing.assert_allclose(v["expected"], [(1 + 2 * 0.7) / 4, (2 + 2 * 0.6) / 4, (1 + 2 * 0.3) / 4],
                               rtol=1e-6)
    #                out chips slots wager first keep buy sell claims | present q/Q  colour   chips slot
    me_row = [0, 0.6, 1, 0.8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    p0_row = [0, 0.6, 1, 0.8, 1, 1, 0, 0, 0.5, 1, 0.5, 0, 1, 0, 0.2, 0.5]
    np.testing.assert_allclose(v["seats"], [me_row, p0_row])
    #                       present claimant  quantity    colour    chips slot value chance claims
    np.testing.assert_allclose(v["claim"], [1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0.2, 0.5, 0.4, 1, 0.25])
    assert not v["showdown"].any()
    act(state, "doubt")
    act(state, "raise 2+1")  # the doubter raises: the bettor (p0) to act
    v = pieces(game, state.compact_tensor(0))
    np.testing.assert_array_equal(v["phase"], [0, 0, 1, 0])
    #  active bettor doubter | bettor pos | doubter pos | bettor's stake | doubter's stake  | bettor to act
    np.testing.assert_allclose(v["showdown"], [1, 1, 0, 1, 0, 0, 1, 0.2, 0.5, 0.4, 1, 0.4, 0.5, 0.6, 1])
    np.testing.assert_allclose(v["own_hand"], [0.5, 0, 0.5])
    assert v["claim"][1] == 1  # p0 made the claim: position 0 from its own view


def test_seats_in_the_viewers_order_and_players_out_last():
    game = load(players=3, chips=1, slots=1, colours=1, copies=3, max_rounds=5, shuffle_every=0)
    state = game.new_initial_state()
    keep_all(state)
    deal(state, [["red"], ["red"], ["red"]])
    act(state, "claim 1 red stake 1+0")
    act(state, "doubt")  # p1 doubts p0
    act(state, "call 1+0")  # true: p1 loses its chip and, with 1 slot, is out
    assert not state.alive[1]
    keep_all(state)
    deal(state, [["rainbow"], ["red"]])  # seats 0 and 2
    v = pieces(game, state.compact_tensor(2))
    # p2's order: itself, p0 (the next remaining), then p1 (out)
    np.testing.assert_allclose(v["seats"][:, :5], [[0, 0.5, 1, 0.5, 0], [0, 1, 1, 1, 1], [1, 0, 1, 0, 0]])
    np.testing.assert_allclose(v["dealt"], [2 / 3])


def test_the_schedule_counts_rounds_to_the_next_upkeep_and_shuffle():
    """The compact encoding's schedule piece (the compiled
    ``_compact_schedule``), round by round: the rounds to the next upkeep
    (3, 5; none after 6) and shuffle (5; 9 is past the cap), each capped at
    its period and over it, and a flag when there is none."""
    from kibitz.games import _doubt_and_bet_rules as dbr

    game = load(players=2, chips=9, slots=1, colours=1, copies=2, upkeep_start=3, upkeep_every=2,
                shuffle_every=4, max_rounds=6)
    rules = game.compiled_rules()
    for r, up, sh in zip(range(1, 7), [3, 3, 5, 5, None, None], [5, 5, 5, 5, None, None]):
        s = rules.initial.copy()
        s[dbr.ROUND] = r
        out = np.zeros(9)
        dbr._compact_schedule(s, rules.params, out)
        assert out[4] == r / 6
        assert out[5:7].tolist() == ([min(up - r, 2) / 2, 0.0] if up else [1.0, 1.0]), r
        assert out[7:9].tolist() == ([min(sh - r, 4) / 4, 0.0] if sh else [1.0, 1.0]), r


def _factors_from_name(game, name, offsets, B):
    """The factor ids of the action called ``name``, from the rules page's table."""
    words = name.split()
    simple = ["keep", "buy slot", "sell slot", "doubt", "all in", "fold"]
    if name in simple:
        return [simple.index(name)]
    ch, s = map(int, words[-1].split("+"))
    if words[0] == "call":
        return [offsets["call_slot"] + s]
    if words[0] == "raise":
        return [offsets["raise_value"] + ch + s, offsets["raise_slot"] + s]
    q, k = int(words[1]), [*db.COLOUR_NAMES[:game.colours], "rainbow"].index(words[2])
    return [offsets["claim_qk"] + (q - 1) * game.k1 + k, offsets["claim_value"] + ch + s,
            offsets["claim_slot"] + s, offsets["claim_qv"] + (q - 1) * B + db.value_bucket(ch + s)]


@pytest.mark.parametrize("params", [dict(players=2, chips=2, slots=1, colours=1, copies=2, single_bet=True),
                                    dict(players=3, chips=2, slots=2, colours=2)])
def test_each_action_sums_the_factors_its_name_gives(params):
    game = load(**params)
    index, F = games.action_factors(game)
    S, V, Q, B = game.max_slots, game.cmax + game.max_slots, game.qmax, len(db.VALUE_BUCKETS)
    sizes = [("simple", 6), ("call_slot", S), ("raise_value", V), ("raise_slot", S), ("claim_qk", Q * game.k1),
             ("claim_value", V), ("claim_slot", S), ("claim_qv", Q * B)]
    offsets = dict(zip([n for n, _ in sizes], np.cumsum([0] + [s for _, s in sizes])[:-1].tolist()))
    assert F == sum(s for _, s in sizes)
    assert index.shape == (game.num_distinct_actions(), 4) and index.dtype == np.int32
    assert index.min() >= 0 and index.max() == F
    state = game.new_initial_state()
    for a in range(game.num_distinct_actions()):
        want = _factors_from_name(game, state.action_to_string(0, a), offsets, B)
        assert index[a].tolist() == want + [F] * (4 - len(want)), state.action_to_string(0, a)


def test_default_size_factors_are_a_few_hundred():
    game = games.load_game("doubt_and_bet")
    index, F = games.action_factors(game)
    assert F == 367 and index.shape == (29_896, 4)
    assert games.action_factors(game)[0] is index  # made once per game
    assert [db.value_bucket(v) for v in range(1, 12)] == [0, 1, 2, 3, 3, 4, 4, 4, 5, 5, 5]


def test_the_rules_page_gives_the_default_offsets_and_sizes():
    import pathlib

    text = (pathlib.Path(__file__).resolve().parent.parent / "docs" / "rules" / "doubt_and_bet.md").read_text()
    game = games.load_game("doubt_and_bet")
    parts = []
    for p in games.encoding_layout(game, "compact"):
        a, b = p["offset"], p["offset"] + p["size"] - 1
        span = f"{a}" if a == b else f"{a}–{b}"
        extra = f" ({p['shape'][1]} each)" if p["name"] == "seats" else ""
        parts.append(f"{p['name'].replace('_', ' ')} {span}{extra}")
    assert " ".join(", ".join(parts).split()) in " ".join(text.split())
    assert "`compact_tensor_size()` floats, 279 at the defaults" in " ".join(text.split())
    assert "and `F`, 367 at the defaults" in " ".join(text.split())


# ------------------------------------------------------- Over/Under's compact
from kibitz.agents.heuristics import over_under as ouh  # noqa: E402
from kibitz.games import over_under as ou  # noqa: E402

OU_CONFIGS = ["over_under", "over_under(players=1,copies=1,stacks=3)",
              "over_under(players=3,deck=standard,copies=2,stacks=4,rounds=2,variant=cutthroat,jokers=true)",
              "over_under(players=8,copies=16,stacks=20,rounds=1,jokers=true)"]


def _ou_size(game):
    r = game.rules
    return 5 + 3 + r.S * 11 + r.KC + 1 + r.n * 5


@pytest.mark.parametrize("game_string", OU_CONFIGS)
def test_over_under_compact_size_follows_the_parameters(game_string):
    game = games.load_game(game_string)
    assert game.compact_tensor_size() == _ou_size(game) == games.encoding_size(game, "compact")
    layout = games.encoding_layout(game, "compact")
    assert [p["name"] for p in layout] == ["phase", "schedule", "stacks", "deck", "seats"]
    assert [p["shape"] for p in layout] == [[5], [3], [game.rules.S, 11], [game.rules.KC + 1],
                                            [game.rules.n, 5]]
    assert sum(p["size"] for p in layout) == game.compact_tensor_size()
    for state in itertools.islice(_random_states(game, np.random.default_rng(0), 2), 300):
        for p in range(game.num_players()):
            x = games.encoding_tensor(state, p, "compact")
            assert x.dtype == np.float32 and x.shape == (game.compact_tensor_size(),)
            assert np.isfinite(x).all() and x.min() >= 0
            v = pieces(game, x)
            assert v["phase"].sum() == 1 and v["stacks"][:, 7:9].max() <= 1 + 1e-6
    with pytest.raises(ValueError, match="player 9 is not a seat"):
        state.compact_tensor(9)


def test_over_under_compact_at_the_default_size_is_a_hundred_odd_floats():
    game = games.load_game("over_under")
    assert game.compact_tensor_size() == 134
    assert game.observation_tensor_size() == 160


@pytest.mark.parametrize("game_string", [g for g, _ in CONFIGS["over_under"]])
def test_over_under_compact_is_a_function_of_the_observation(game_string):
    """The same observation string (the current public table: every card is
    face up), the same compact tensor, for every player; the information
    state determines it a fortiori."""
    game = pyspiel.load_game(game_string)
    seen, repeats = {}, 0
    for state in _random_states(game, np.random.default_rng(5), 200):
        for p in range(game.num_players()):
            x = state.compact_tensor(p).tobytes()
            first = seen.setdefault(state.observation_string(p), (x, state.history()))
            assert first[0] == x, (game_string, p, first[1], state.history())
            repeats += first[1] != state.history()
    assert repeats > 0


def _brute_force_odds(state, s):
    """For each direction, (P(the predictor does not claim stack s), expected
    money it claims) by playing the prediction and every card left in the
    deck, one card at a time (a give goes to another seat)."""
    me = state.current_player()
    deck = [k for k, m in enumerate(state.deck_counts) for _ in range(m)]
    out = []
    for action in (2 * s, 2 * s + 1):
        safe = cost = 0.0
        for k in deck:
            child = state.child(action).child(k)
            if not child.is_terminal() and child.phase == "give":
                child = child.child(child.legal_actions()[0])
            claimed = child.tally[me] - state.tally[me]
            cost += claimed / len(deck)
            safe += (claimed == 0 and child.stacks()[s][2] != me or
                     state.get_game().rules.n > 1 and child.stacks()[s][2] not in (-1, me)) / len(deck)
        out.append((safe, cost))
    return out


@pytest.mark.parametrize("game_string", OU_CONFIGS[:3])
def test_over_under_safe_chances_are_a_count_over_the_deck_and_the_heuristics(game_string):
    game = pyspiel.load_game(game_string)
    M = game.rules.total_money
    checked = 0
    for k, state in enumerate(_random_states(game, np.random.default_rng(3), 8)):
        if state.is_chance_node() or state.is_terminal() or state.phase != "predict" or k % 3:
            continue
        rows = pieces(game, state.compact_tensor(state.current_player()))["stacks"]
        for s in state.on_table():
            (so, co), (su, cu) = _brute_force_odds(state, s)
            np.testing.assert_allclose(rows[s, 7:11], [so, su, co / M, cu / M], rtol=1e-5, atol=1e-7)
            assert ouh.prediction_value(state, s, True) == pytest.approx((so, co))
            assert ouh.prediction_value(state, s, False) == pytest.approx((su, cu))
            checked += 1
    assert checked > 10


def test_over_under_seats_in_the_viewers_order():
    # 3 players, 1 stack: p0 busts on $50 under $5 -> $55, p1 busts on $1 over $10 -> $11
    game = games.load_game("over_under(players=3,copies=2,stacks=1,rounds=2)")
    state = game.new_initial_state()
    for a in [ou.CASH_VALUES.index(5), 1, ou.CASH_VALUES.index(50)]:  # deal $5; p0 under; $50
        state.apply_action(a)
    assert state.tally == (55, 0, 0) and state.round == 2 and state.dealer == 0  # round 2: p1 starts
    for a in [ou.CASH_VALUES.index(10), 0, ou.CASH_VALUES.index(1)]:  # deal $10; p1 over; $1
        state.apply_action(a)
    assert state.tally == (55, 11, 0) and state.phase == "over"
    M = game.rules.total_money
    for me, order in [(0, [0, 1, 2]), (1, [1, 2, 0]), (2, [2, 0, 1])]:
        seats = pieces(game, state.compact_tensor(me))["seats"]
        tally = {0: 55, 1: 11, 2: 0}
        rank = {0: 1, 1: 0.5, 2: 0}
        want = [[tally[p] / M, rank[p], tally[p] / M, p == 0, 0] for p in order]
        np.testing.assert_allclose(seats, want, rtol=1e-6)


def test_over_under_a_hand_checked_prediction_and_bust():
    # one of each bill ($186 in all), one stack, 2 players, one round: p1 deals, p0 predicts
    game = games.load_game("over_under(players=2,copies=1,stacks=1,rounds=1)")
    M = 186
    state = game.new_initial_state()
    state.apply_action(ou.CASH_VALUES.index(20))  # stack 0: $20; left $1 $5 $10 $50 $100
    v = pieces(game, state.compact_tensor(1))
    np.testing.assert_array_equal(v["phase"], [0, 1, 0, 0, 0])
    np.testing.assert_allclose(v["schedule"], [1, 0, 1])
    # over: safe on $50 $100; busts on $1 $5 $10 claim $21 $25 $30. Under: safe on 3, busts claim $70 $120
    np.testing.assert_allclose(v["stacks"], [[1, 0, 0.2, 0, 20 / M, 0, 0, 2 / 5, 3 / 5, 76 / 5 / M, 190 / 5 / M]],
                               rtol=1e-6)
    np.testing.assert_allclose(v["deck"], [1, 1, 1, 0, 1, 1, 5 / 6])
    #                           tally rank gap dealer turn: the viewer p1 first (it dealt), then p0 (to predict)
    np.testing.assert_allclose(v["seats"], [[0, 0, 0, 1, 0], [0, 0, 0, 0, 1]])
    state.apply_action(0)  # p0: stack 0 over
    v = pieces(game, state.compact_tensor(0))
    np.testing.assert_array_equal(v["phase"], [0, 0, 1, 0, 0])
    np.testing.assert_allclose(v["stacks"][0, 5:9], [1, 0, 2 / 5, 3 / 5])
    state.apply_action(ou.CASH_VALUES.index(5))  # $5: bust, p0 claims $25 and the game ends
    v = pieces(game, state.compact_tensor(0))
    np.testing.assert_array_equal(v["phase"], [0, 0, 0, 0, 1])
    np.testing.assert_allclose(v["stacks"], [[0, 1, 0, 0, 25 / M, 0, 0, 0, 0, 0, 0]], rtol=1e-6)
    np.testing.assert_allclose(v["deck"], [1, 0, 1, 0, 1, 1, 4 / 6], rtol=1e-6)
    np.testing.assert_allclose(v["seats"], [[25 / M, 1, 25 / M, 0, 0], [0, 0, 0, 1, 0]], rtol=1e-6)


def test_over_under_jokers_in_the_compact_encoding():
    # the $2 joker on top: value 2/100 and its flag; a Pyramid pending a give keeps the top
    game = games.load_game("over_under(players=2,copies=1,stacks=1,rounds=1,jokers=true)")
    state = game.new_initial_state()
    state.apply_action(ou.CASH_VALUES.index(50))
    state.apply_action(0)  # p0: stack 0 over
    state.apply_action(game.rules.K)  # the $2 joker: safe, top $2
    v = pieces(game, state.compact_tensor(1))
    np.testing.assert_allclose(v["stacks"][0, :5], [1, 0, 0.02, 1, 52 / 188], rtol=1e-6)
    np.testing.assert_allclose(v["deck"], [1, 1, 1, 1, 0, 1, 0, 1, 1, 7 / 9], rtol=1e-6)
    # 7 cards left: over $2 is safe on $5 $10 $20 $100, the Pyramid and the Eagle; busts on $1 (claims $53)
    np.testing.assert_allclose(v["stacks"][0, 7:11], [6 / 7, 3 / 7, 53 / 7 / 188,
                                                      (57 + 62 + 72 + 152) / 7 / 188], rtol=1e-6)
    state.apply_action(1)  # p1: stack 0 under
    state.apply_action(game.rules.K + 1)  # Pyramid: p1 gives the stack away
    v = pieces(game, state.compact_tensor(0))
    np.testing.assert_array_equal(v["phase"], [0, 0, 0, 1, 0])
    np.testing.assert_allclose(v["stacks"][0, :7], [1, 0, 0.02, 1, 52 / 188, 0, 1], rtol=1e-6)
    np.testing.assert_allclose(v["seats"][:, 4], [0, 1])  # p1 (position 1 from p0) gives


@pytest.mark.parametrize("short, grouped, size", [("over_under", ("stacks", "seats"), 134),
                                                   ("pub", ("suits", "seats"), 185)])
def test_the_rules_page_gives_the_default_compact_offsets(short, grouped, size):
    import pathlib

    text = (pathlib.Path(__file__).resolve().parent.parent / "docs" / "rules" / f"{short}.md").read_text()
    game = games.load_game(short)
    parts = []
    for p in games.encoding_layout(game, "compact"):
        a, b = p["offset"], p["offset"] + p["size"] - 1
        extra = f" ({p['shape'][1]} each)" if p["name"] in grouped else ""
        parts.append(f"{p['name']} {a}–{b}{extra}")
    assert " ".join(", ".join(parts).split()) in " ".join(text.split())
    assert game.compact_tensor_size() == size
    assert f"`compact_tensor_size()` floats, {size} at the defaults" in " ".join(text.split())


def test_over_under_compact_trains_exports_and_plays(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from kibitz.agents.registry import make_agent
    from kibitz.cli import main
    from kibitz.solvers import network

    monkeypatch.chdir(tmp_path)
    small = "over_under(players=2,copies=2,stacks=2,rounds=1,jokers=true)"
    runner = CliRunner()
    r = runner.invoke(main, ["train", small, "--encoding", "compact", "--steps", "3", "--hidden", "8",
                             "--batch", "2", "--no-progress", "--out", "x.npz"])
    assert r.exit_code == 0, r.output
    assert "encoding:    compact input, dense output" in r.output
    spec, _ = network.load("x.npz")
    game = games.load_game(small)
    assert (spec.encoding, spec.output, spec.input_size) == ("compact", "dense", game.compact_tensor_size())
    r = runner.invoke(main, ["export", "x.npz", "--out", "x.json.gz"])
    assert r.exit_code == 0, r.output
    agents = [make_agent(f"net({tmp_path / 'x.json.gz'})", game, p, seed=p) for p in range(2)]
    rng = np.random.default_rng(1)
    for _ in range(3):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(outcomes[rng.choice(len(outcomes), p=np.array(probs) / sum(probs))])
            else:
                action = agents[state.current_player()].step(state)
                assert action in state.legal_actions()
                state.apply_action(action)


# ------------------------------------------------------------- pub's compact

from kibitz.agents.heuristics import pub as pubh  # noqa: E402
from kibitz.games import pub  # noqa: E402

PUB_CONFIGS = ["pub", "pub(players=3,suits=2,ranks=4,removed=0,hand=1)",
               "pub(players=6,suits=3,ranks=9,removed=2,payoff=score)", "pub(players=8,suits=1,ranks=13,removed=0)"]


def _pub_size(game):
    n, S, N = game.num_seats, game.num_suits, game.num_cards
    return 6 + 3 + S * (n + 7) + 2 * (S + 1 + N) + 6 + n * 3


@pytest.mark.parametrize("game_string", PUB_CONFIGS)
def test_pub_compact_size_follows_the_parameters_and_values_are_in_range(game_string):
    game = games.load_game(game_string)
    n, S, R, N = game.num_seats, game.num_suits, game.num_ranks, game.num_cards
    assert game.compact_tensor_size() == _pub_size(game) == games.encoding_size(game, "compact")
    layout = games.encoding_layout(game, "compact")
    assert [p["name"] for p in layout] == ["phase", "deck", "suits", "face_up", "drawn", "costs", "seats"]
    assert [p["shape"] for p in layout] == [[6], [3], [S, n + 7], [S + 1 + N], [S + 1 + N], [6], [n, 3]]
    for state in itertools.islice(_random_states(game, np.random.default_rng(0), 3), 400):
        for p in range(n):
            x = games.encoding_tensor(state, p, "compact")
            assert x.dtype == np.float32 and x.shape == (game.compact_tensor_size(),)
            v = pieces(game, x)
            assert v["phase"].sum() == 1 and np.isfinite(x).all()
            lead = v["suits"][:, n + 2]
            assert lead.min() >= -1 and lead.max() <= 1
            rest = np.delete(x, [layout[2]["offset"] + s * (n + 7) + n + 2 for s in range(S)]
                             + list(range(layout[5]["offset"], layout[5]["offset"] + 6)))
            assert rest.min() >= 0 and rest.max() <= 1 + 1e-6
            # a cost is a difference of two estimates in 0..(every rank) = S*R(R+1)/2, over R
            assert np.abs(v["costs"]).max() <= S * (R + 1) / 2
            for name in ("face_up", "drawn"):
                assert v[name][:S].sum() == (v[name][S + 1:].sum()) <= 1
    with pytest.raises(ValueError, match="player 9 is not a seat"):
        state.compact_tensor(9)


@pytest.mark.parametrize("game_string, count", CONFIGS["pub"][:2])
def test_pub_equal_information_states_mean_equal_compact_tensors(game_string, count):
    """After the deal (whose progress, in phase ``setup``, the string does
    not show), at chance nodes and the end too: the same information-state
    string, the same compact tensor."""
    _check_equal_information_states_equal_compact(game_string, count, skip=lambda state: state.phase == "setup")


@pytest.mark.parametrize("game_string", PUB_CONFIGS[:3])
def test_pub_compact_is_unchanged_when_the_hidden_cards_are_drawn_again(game_string):
    """Other seats' hands and the removed cards drawn again from the viewer's
    unseen cards (the state differs, the viewer's information does not)."""
    game = games.load_game(game_string)
    rng = np.random.default_rng(2)
    changed = 0
    for k, state in enumerate(_random_states(game, np.random.default_rng(4), 4)):
        if k % 5 or state.is_chance_node() and state.phase == "setup":
            continue
        for p in range(game.num_players()):
            other = state.resample_from_infostate(p, rng.random)
            changed += other.hands != state.hands
            np.testing.assert_array_equal(other.compact_tensor(p), state.compact_tensor(p))
    assert changed > 10


@pytest.mark.parametrize("game_string", PUB_CONFIGS[:3])
def test_pub_compact_costs_are_the_heuristics_numbers(game_string):
    """The heuristic takes when the take cost is at most the draw cost, and
    takes both when that costs less than keeping: the signs of the two
    differences in the tensor give its move."""
    game = games.load_game(game_string)
    checked = set()
    for state in _random_states(game, np.random.default_rng(7), 30):
        if state.is_chance_node() or state.is_terminal():
            continue
        me = state.current_player()
        costs = pieces(game, state.compact_tensor(me))["costs"]
        move = pubh.PubHeuristic(game, me).step(state)
        if state.phase == "turn":
            assert np.all(costs[3:] == 0) and (move == pub.TAKE) == (costs[2] <= 0)
        else:
            assert np.all(costs[:3] == 0) and (move == pub.TAKE_BOTH) == (costs[5] < 0)
        checked.add(move)
    assert checked == {pub.TAKE, pub.DRAW, pub.KEEP_DRAWN, pub.TAKE_BOTH}


def test_pub_a_hand_checked_game_in_the_compact_encoding():
    # 2 suits of A-4 (AS=0 .. 4S=3, AH=4 .. 4H=7), 3 players, one card each, 5 cards left after the deal
    game = games.load_game("pub(players=3,suits=2,ranks=4,removed=0,hand=1)")
    state = game.new_initial_state()
    for a in [1, 4, 6, 3]:  # p0 2S, p1 AH, p2 3H; 4S face up
        state.apply_action(a)
    v = pieces(game, state.compact_tensor(0))
    np.testing.assert_array_equal(v["phase"], [0, 0, 1, 0, 0, 0])
    np.testing.assert_allclose(v["deck"], [4 / 5, 0, 6 / 8])  # p0 has seen 2S and 4S
    # p0's rivals: no collections, a hidden hand worth 1/2 card of each suit. Spades: lead 1 - 1/2,
    # majority chance 0.8 + 0.5 * 0.15 = 0.875, estimate 2 * 0.125. Hearts: chance(-1/2) = 0.55
    #            own  sum   p1 p2 best lead  unseen sum  chance  estimate/T
    np.testing.assert_allclose(v["suits"], [[1 / 4, 2 / 10, 0, 0, 0, 1 / 4, 2 / 4, 4 / 10, 0.875, 0.025],
                                            [0, 0, 0, 0, 0, 0, 1, 1, 0.55, 0]], rtol=1e-6)
    np.testing.assert_allclose(v["face_up"], [1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0])
    assert not v["drawn"].any()
    # take 4S: 2 spades at chance 0.975, 6 * 0.025 - 0.25 = -0.1. Draw: AS, 3S come with 4S (-0.25 each);
    # AH, 2H, 3H are lower of another suit (cheaper of both / keep: 0.025, 0.15, 0.275); 4H comes with it (0.4)
    draw = (-0.25 - 0.25 + 0.025 + 0.15 + 0.275 + 0.4) / 6
    np.testing.assert_allclose(v["costs"], [-0.1 / 4, draw / 4, (-0.1 - draw) / 4, 0, 0, 0], rtol=1e-5)
    np.testing.assert_allclose(v["seats"], [[0, 0, 1], [0, 0, 0], [0, 0, 0]])  # 2S alone: a spade majority
    for a in [pub.TAKE, 2, pub.DRAW, 5]:  # p0 takes 4S; 3S face up; p1 draws 2H: lower, another suit
        state.apply_action(a)
    assert state.phase == "choose"
    v = pieces(game, state.compact_tensor(1))
    np.testing.assert_array_equal(v["phase"], [0, 0, 0, 0, 1, 0])
    np.testing.assert_allclose(v["deck"], [2 / 5, 0, 4 / 8])
    # p1 holds AH; its order is p1, p2, p0; p0's rival spades 1 + 1/2: chance(-1.5) = 0.175
    np.testing.assert_allclose(v["suits"], [[0, 0, 0, 1 / 4, 1 / 4, -1 / 4, 2 / 4, 3 / 10, 0.175, 0],
                                            [1 / 4, 1 / 10, 0, 0, 0, 1 / 4, 2 / 4, 7 / 10, 0.875, 0.0125]],
                               rtol=1e-6)
    np.testing.assert_allclose(v["face_up"], [1, 0, 3 / 4, 0, 0, 1, 0, 0, 0, 0, 0])
    np.testing.assert_allclose(v["drawn"], [0, 1, 2 / 4, 0, 0, 0, 0, 0, 1, 0, 0])
    # keep 2H: 3 * 0.025 - 0.125 = -0.05; both: + 3S at chance 0.55 (3 * 0.45) -> 1.3
    np.testing.assert_allclose(v["costs"], [0, 0, 0, -0.05 / 4, 1.3 / 4, 1.35 / 4], rtol=1e-5)
    np.testing.assert_allclose(v["seats"], [[0, 0, 1], [0, 0, 0], [1 / 5, 0, 0]])
    assert pubh.PubHeuristic(game, 1).step(state) == pub.KEEP_DRAWN
    # p1 keeps 2H; p2 takes 3S; 4H face up; p0 draws AS and takes both: the deck is empty
    for a in [pub.KEEP_DRAWN, pub.TAKE, 7, pub.DRAW, 0, pub.TAKE_BOTH]:
        state.apply_action(a)
    assert state.is_terminal() and state.scores == (4, 0, 6)
    v = pieces(game, state.compact_tensor(2))
    np.testing.assert_array_equal(v["phase"], [0, 0, 0, 0, 0, 1])
    assert v["deck"][0] == 0 and not v["costs"].any()
    # p2's view: p2 3S + 3H (3 for the spades p0 holds more of), p0 4S 4H AS, p1 2H; hearts tie at 1
    np.testing.assert_allclose(v["seats"], [[1 / 5, 3 / 20, 0], [3 / 5, 0, 0], [1 / 5, 0, 0]])
