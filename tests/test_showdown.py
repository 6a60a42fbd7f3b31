"""Showdown, the fifth game (issue 47): one rules module plus its strings,
and every generic part of kibitz plays it without code of its own.

Conformance over a matrix of parameter sets; scenarios from the rules page
(docs/rules/showdown.md); known values: with two players and three cards
it is OpenSpiel's ``kuhn_poker`` node for node (and ``kuhn_poker(players=N)``
with N+1 cards), NashConv 11/12 for the uniform policy, and exact CFR+
reaches Kuhn's game value -1/18; then CFR and CFR+ (``kibitz.solve`` on the
compiled tree), MCCFR (external and outcome sampling), an IS-MCTS agent in
a tournament, and the web table's generic view, which is sent one seat's
view and nothing that seat cannot know.
"""

from __future__ import annotations

import json

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy
from open_spiel.python.algorithms import exploitability

import kibitz
from kibitz.agents.serving.table_views import ADAPTERS, GENERIC, adapter_of, seat_view
from kibitz.games import REGISTRY, search
from kibitz.games._common import IllegalActionError
from kibitz.games.showdown import BET, PASS

MATRIX = ["showdown", "showdown(players=2,cards=13)", "showdown(players=3,cards=4)", "showdown(players=4,cards=5)",
          "showdown(players=4,cards=13)"]


def play(game_string, actions):
    state = pyspiel.load_game(game_string).new_initial_state()
    for a in actions:
        state.apply_action(a)
    return state


def all_states(state):
    yield state
    if state.is_terminal():
        return
    moves = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
    for a in moves:
        yield from all_states(state.child(a))


# ------------------------------------------------------------------ conformance
def test_registered_with_a_small_configuration_and_declared_capabilities():
    spec = REGISTRY["showdown"]
    assert spec.small == "showdown" and spec.search == {search.DIRECT, search.SNAPSHOT, search.COMPILED}
    assert [p.name for p in spec.params] == ["players", "cards"]


@pytest.mark.parametrize("game_string", MATRIX)
def test_random_sim_with_serialization(game_string):
    pyspiel.random_sim_test(pyspiel.load_game(game_string), num_sims=30, serialize=True, verbose=False)


@pytest.mark.parametrize("game_string", MATRIX)
def test_sizes_come_from_the_parameters(game_string):
    game = pyspiel.load_game(game_string)
    params = game.get_parameters()
    n, cards = params["players"], params["cards"]
    assert game.num_players() == n and game.max_chance_outcomes() == cards
    assert game.num_distinct_actions() == 2 and game.max_game_length() == 3 * n - 1
    assert (game.min_utility(), game.max_utility()) == (-2.0, 2.0 * (n - 1))
    # the longest game: all check but the last seat, which bets, and everyone calls
    state = play(game_string, list(range(n)) + [PASS] * (n - 1) + [BET] * n)
    assert state.is_terminal() and len(state.history()) == game.max_game_length()
    assert state.returns() == [-2.0] * (n - 1) + [2.0 * (n - 1)]  # the last seat holds the highest card dealt
    tensor = state.information_state_tensor(0)
    assert len(tensor) == game.information_state_tensor_size() == n + cards + 2 * (2 * n - 1) + n * cards
    assert len(state.observation_tensor(0)) == game.observation_tensor_size() == 5 * n + 1 + cards + n * cards


@pytest.mark.parametrize("params,message", [({"players": 3}, "cards=3 is out of range"),
                                            ({"players": 5, "cards": 6}, "players=5 is out of range"),
                                            ({"cards": 14}, "cards=14 is out of range"),
                                            ({"chips": 2}, "unknown parameter 'chips'")])
def test_bad_parameters_are_refused_with_the_reason(params, message):
    from kibitz.games.showdown import ShowdownGame
    with pytest.raises(ValueError, match=message):
        ShowdownGame(params)


# ------------------------------------------------------------------ scenarios (the rules page)
@pytest.mark.parametrize("moves,names,returns", [
    ([PASS, PASS], ["check", "check"], [-1.0, 1.0]),  # showdown: seat 1's 3 beats the 1
    ([PASS, BET, PASS], ["check", "bet", "fold"], [-1.0, 1.0]),
    ([PASS, BET, BET], ["check", "bet", "call"], [-2.0, 2.0]),
    ([BET, PASS], ["bet", "fold"], [1.0, -1.0]),  # seat 0 bluffs with the 1 and takes the antes
    ([BET, BET], ["bet", "call"], [-2.0, 2.0]),
])
def test_two_players_kuhns_betting(moves, names, returns):
    state = play("showdown", [0, 2])  # seat 0 holds the 1, seat 1 the 3
    said = []
    for a in moves:
        said.append(state.action_to_string(state.current_player(), a))
        state.apply_action(a)
    assert said == names and state.is_terminal() and state.returns() == returns


def test_three_players_answer_round_the_table_to_those_who_checked():
    # cards 2, 4, 1 (values); p0 checks, p1 bets, p2 folds, p0 calls: p1's 4 beats p0's 2
    state = play("showdown(players=3,cards=4)", [1, 3, 0, PASS, BET])
    assert state.current_player() == 2 and state.action_to_string(2, PASS) == "fold"
    state.apply_action(PASS)
    assert state.current_player() == 0  # round the table to the seat that checked
    state.apply_action(BET)
    assert state.is_terminal() and state.returns() == [-2.0, 3.0, -1.0]
    assert state.folded == (False, False, True) and state.paid == (2, 2, 1) and state.bettor == 1
    assert [name for _, _, name in state.moves] == ["check", "bet", "fold", "call"]
    # everyone folds to a bet: the bettor takes the antes and shows nothing
    alone = play("showdown(players=3,cards=4)", [0, 1, 2, BET, PASS, PASS])
    assert alone.is_terminal() and alone.returns() == [2.0, -1.0, -1.0]
    assert "showdown" not in alone.information_state_string(1) and "showdown" not in str(alone)


def test_strings_and_tensors():
    state = play("showdown", [2, 0, PASS, BET, BET])
    assert str(state) == ("game over\ncards p0:3 p1:1\nmoves p0 check, p1 bet, p0 call\npot 4\n"
                          "showdown p0 3, p1 1\nreturns 2 -2")
    assert state.information_state_string(0) == "p0\ncard 3\np0 check\np1 bet\np0 call\nshowdown p0 3, p1 1"
    assert state.observation_string(1) == "p1 | card 1 | paid 2 2 | bettor p1 | folded - | over | showdown p0 3, p1 1"
    # observer 2 | own_card 3 | moves 3x2 | shown 2x3
    assert state.information_state_tensor(0) == [1, 0, 0, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1, 1, 0, 0]
    # observer 2 | to_move 3 | own_card 3 | paid 2 | bettor 2 | folded 2 | shown 2x3
    assert state.observation_tensor(1) == [0, 1, 0, 0, 1, 1, 0, 0, 2, 2, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0]
    mid = play("showdown", [2, 0, PASS])
    assert mid.observation_string(0) == "p0 | card 3 | paid 1 1 | bettor - | folded - | to move p1"
    assert mid.action_to_string(pyspiel.PlayerId.CHANCE, 1) == "card 2"
    public = pyspiel.IIGObservationType(perfect_recall=True, private_info=pyspiel.PrivateInfoType.NONE)
    from open_spiel.python.observation import make_observation
    obs = make_observation(mid.get_game(), public)
    assert obs.string_from(mid, 0) == "p0\np0 check"  # no card without private information


@pytest.mark.parametrize("game_string", ["showdown", "showdown(players=3,cards=4)"])
def test_equal_strings_mean_equal_tensors_at_every_node(game_string):
    game = pyspiel.load_game(game_string)
    seen = {}
    for state in all_states(game.new_initial_state()):
        for p in range(game.num_players()):
            for kind, s, t in (("info", state.information_state_string(p), state.information_state_tensor(p)),
                               ("obs", state.observation_string(p), state.observation_tensor(p))):
                assert seen.setdefault((kind, p, s), t) == t, (kind, s)


def test_an_illegal_move_raises_and_changes_nothing():
    state = play("showdown", [2])
    with pytest.raises(IllegalActionError, match=r"card 3 \(action 2\) is not legal for chance: that card has been dealt"):
        state.apply_action(2)
    state.apply_action(0)
    with pytest.raises(IllegalActionError, match="action 2 is no move of showdown"):
        state.apply_action(2)
    assert state.history() == [2, 0] and state.current_player() == 0


def test_resampling_keeps_the_information_state_and_redraws_only_unseen_cards():
    rng = np.random.default_rng(4)
    state = play("showdown(players=3,cards=5)", [4, 0, 2, PASS, BET, PASS])
    drawn = set()
    for internal in (False, True):
        for _ in range(40):
            other = state.resample_from_infostate(1, rng.random, internal=internal)
            assert other.information_state_string(1) == state.information_state_string(1)
            assert other.cards[1] == 1
            drawn.add(other.cards)
    assert len(drawn) == 12  # the 4 other cards, two of them, in order
    over = play("showdown(players=3,cards=5)", [4, 0, 2, PASS, BET, PASS, BET])  # p0 calls: p0, p1 show
    for _ in range(10):
        other = over.resample_from_infostate(1, rng.random)
        assert other.cards[:2] == (5, 1) and other.cards[2] in (2, 3, 4)


# ------------------------------------------------------------------ known values: Kuhn poker
@pytest.mark.parametrize("n", [2, 3, 4])
def test_kuhn_poker_node_for_node(n):
    ours = pyspiel.load_game(f"showdown(players={n},cards={n + 1})")
    kuhn = pyspiel.load_game(f"kuhn_poker(players={n})")
    nodes = 0

    def walk(a, b):
        nonlocal nodes
        nodes += 1
        assert a.current_player() == b.current_player() and a.is_terminal() == b.is_terminal()
        if a.is_terminal():
            assert a.returns() == pytest.approx(b.returns())
            return
        if a.is_chance_node():
            assert a.chance_outcomes() == b.chance_outcomes()
            moves = [x for x, _ in a.chance_outcomes()]
        else:
            assert a.legal_actions() == b.legal_actions()
            moves = a.legal_actions()
        for x in moves:
            walk(a.child(x), b.child(x))

    walk(ours.new_initial_state(), kuhn.new_initial_state())
    assert nodes == {2: 58, 3: 617, 4: 7886}[n]
    assert exploitability.nash_conv(ours, policy.UniformRandomPolicy(ours)) == pytest.approx(
        exploitability.nash_conv(kuhn, policy.UniformRandomPolicy(kuhn)))


def test_uniform_policy_nash_conv_is_kuhns_11_12():
    game = pyspiel.load_game("showdown")
    assert exploitability.nash_conv(game, policy.UniformRandomPolicy(game)) == pytest.approx(11 / 12)


# ------------------------------------------------------------------ the generic solvers and agents
def test_cfr_and_cfr_plus_drive_nash_conv_down_to_kuhns_value():
    short = kibitz.solve("showdown", algorithm="cfr", iterations=10, use_cache=False)
    long = kibitz.solve("showdown", algorithm="cfr", iterations=300, use_cache=False)
    assert 11 / 12 > short.nash_conv > long.nash_conv and long.nash_conv < 0.01
    plus = kibitz.solve("showdown", algorithm="cfr+", iterations=500, use_cache=False)
    assert plus.nash_conv < 1e-3
    assert plus.expected_returns[0] == pytest.approx(-1 / 18, abs=1e-3)
    assert plus.expected_returns[1] == pytest.approx(1 / 18, abs=1e-3)
    # the same solver on OpenSpiel's own kuhn_poker gives the same run
    kuhn = kibitz.solve("kuhn_poker", algorithm="cfr+", iterations=500, use_cache=False)
    assert plus.nash_conv == pytest.approx(kuhn.nash_conv, rel=1e-6)
    assert plus.expected_returns == pytest.approx(kuhn.expected_returns, abs=1e-9)


def test_cfr_plus_solves_three_players():
    result = kibitz.solve("showdown(players=3,cards=4)", algorithm="cfr+", iterations=200, use_cache=False)
    assert result.nash_conv < 0.01 and sum(result.expected_returns) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("algorithm", ["mccfr-es", "mccfr-os"])
def test_mccfr_runs_and_is_the_same_under_a_seed(algorithm):
    runs = [kibitz.solve("showdown", algorithm=algorithm, iterations=3000, seed=7, use_cache=False)
            for _ in range(2)]
    assert runs[0].nash_conv < 0.2 < 11 / 12
    assert runs[0].nash_conv == runs[1].nash_conv  # randomness passed in: the same seed, the same policy


def test_an_ismcts_agent_beats_random_in_a_tournament():
    outcome = kibitz.tournament("showdown", ["ismcts(sims=100)", "random"], games=40, seed=3)
    agents = {a["name"]: a for a in outcome.results["agents"]}
    assert outcome.finished == 40 and agents["ismcts(sims=100)"]["mean_payoff"] > 0
    again = kibitz.tournament("showdown", ["ismcts(sims=100)", "random"], games=40, seed=3)
    assert again.results["agents"] == outcome.results["agents"]


# ------------------------------------------------------------------ the web table's generic view
def random_states(game, rng, games):
    for _ in range(games):
        state = game.new_initial_state()
        while True:
            yield state
            if state.is_terminal():
                break
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                state = state.child(int(rng.choice(actions, p=probs)))
            else:
                legal = state.legal_actions()
                state = state.child(legal[int(rng.integers(len(legal)))])


def test_the_table_renders_showdown_with_the_generic_view():
    assert "showdown" not in ADAPTERS and adapter_of(pyspiel.load_game("showdown")) is GENERIC
    state = play("showdown(players=3,cards=4)", [1, 3, 0, PASS, BET])
    view = seat_view(state, 2)
    assert view["board"] == {"kind": "generic", "observation": state.observation_string(2), "seats": [{}, {}, {}]}
    assert view["log"] == [{"seat": 0, "move": "check"}, {"seat": 1, "move": "bet"}]
    assert [m["move"] for m in view["legal"]] == ["fold", "call"] and view["to_move"] == 2
    assert view["information_state"] == "p2\ncard 1\np0 check\np1 bet"
    assert "card 4" not in json.dumps(view) and "card 2" not in json.dumps(view)  # the others' cards
    state.apply_action(PASS)
    state.apply_action(BET)
    view = seat_view(state, 2)
    assert view["over"] and view["returns"] == [-2.0, 3.0, -1.0] and "showdown p0 2, p1 4" in view["board"]["observation"]


@pytest.mark.parametrize("game_string", ["showdown", "showdown(players=3,cards=5)"])
def test_the_generic_view_is_the_same_json_under_every_resample(game_string):
    game = pyspiel.load_game(game_string)
    rng = np.random.default_rng(11)
    checked = 0
    for state in random_states(game, rng, games=8):
        for seat in range(game.num_players()):
            mine = json.dumps(seat_view(state, seat), sort_keys=True)
            for _ in range(3):
                other = state.resample_from_infostate(seat, rng.random)
                assert json.dumps(seat_view(other, seat), sort_keys=True) == mine, (seat, state.history())
            checked += 1
    assert checked > 40


def test_a_person_plays_showdown_at_the_web_table():
    from helpers import call
    from kibitz.agents.serving.web_app import Server, make_app

    srv = Server(make_app(["random"], bot_delay=0.0, max_tables=2), port=0).start()
    try:
        status, view = call(srv.url, "/tables", {"game": "showdown", "seats": ["human", "random"], "seed": 1})
        assert status == 200 and view["board"]["kind"] == "generic"
        table = view["table"]
        while not view["over"]:
            if view["to_move"] != 0:
                view = call(srv.url, f"/tables/{table}")[1]
                continue
            status, view = call(srv.url, f"/tables/{table}/move", {"action": BET, "version": view["version"]})
            assert status == 200
        assert len(view["returns"]) == 2 and sum(view["returns"]) == 0
        assert any(e.get("move") in ("bet", "call") and e["seat"] == 0 for e in view["log"])
    finally:
        srv.stop()
