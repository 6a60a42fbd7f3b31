"""The web table's server side: one seat's view, no leak, and the table API over a real socket."""

import json
import time
import urllib.error
import urllib.request

import numpy as np
import pyspiel
import pytest

from kibitz.agents.base import Agent
from kibitz.agents.registry import AGENTS, agent_kinds, register_agent
from kibitz.agents.table_views import ADAPTERS, seat_view
from kibitz.agents.web_app import Server, make_app
from kibitz.games import REGISTRY
from helpers import call

SMALL = {name: spec.small for name, spec in REGISTRY.items()}
#: larger games too: more seats, more rounds, more hidden cards
LARGER = ["underdog(players=4,cards=9)", "pub(players=3)", "over_under(players=3,stacks=3)",
          "doubt_and_bet(players=3,chips=3,slots=2)"]


def positions(game, rng, games, every=1):
    """Every ``every``-th state of ``games`` games of random play (chance by its probabilities)."""
    for _ in range(games):
        state = game.new_initial_state()
        i = 0
        while True:
            if i % every == 0:
                yield state
            if state.is_terminal():
                break
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                probs = np.array([p for _, p in outcomes])
                action = outcomes[rng.choice(len(outcomes), p=probs / probs.sum())][0]
            else:
                legal = state.legal_actions()
                action = legal[rng.integers(len(legal))]
            state = state.child(action)
            i += 1


def resample_differences(view, state, seat, rng, draws=4):
    """The views of ``seat`` that differ from ``view(state, seat)`` among
    ``draws`` states resampled from the seat's information state."""
    mine = json.dumps(view(state, seat), sort_keys=True)
    out = []
    for _ in range(draws):
        other = state.resample_from_infostate(seat, rng.random)
        assert other.information_state_string(seat) == state.information_state_string(seat)
        text = json.dumps(view(other, seat), sort_keys=True)
        if text != mine:
            out.append((other.history(), text))
    return out


@pytest.mark.parametrize("game_string,games", [*((g, 6) for g in SMALL.values()), *((g, 2) for g in LARGER)])
def test_the_page_gets_the_same_json_under_every_resample(game_string, games):
    game = pyspiel.load_game(game_string)
    rng = np.random.default_rng(23)
    checked = 0
    for state in positions(game, rng, games=games, every=2):
        for seat in range(game.num_players()):
            assert not resample_differences(seat_view, state, seat, rng), (game_string, seat, state.history())
            checked += 1
    assert checked >= 20


def test_the_resample_check_catches_a_leak():
    # a view that also sends the other seats' cards differs between resamples
    def leaky(state, seat):
        return {**seat_view(state, seat), "hands": list(state.hands)}

    game = pyspiel.load_game(SMALL["underdog"])
    rng = np.random.default_rng(1)
    caught = sum(bool(resample_differences(leaky, state, 0, rng)) for state in positions(game, rng, games=2)
                 if not state.is_terminal() and state.round == 1 and len(state.history()) > 4)
    assert caught > 0


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_the_move_log_names_each_move(name):
    game = pyspiel.load_game(SMALL[name])
    rng = np.random.default_rng(5)
    *_, state = positions(game, rng, games=1)  # a whole game
    for seat in range(game.num_players()):
        view = seat_view(state, seat)
        moves = [e for e in view["log"] if "seat" in e]
        replay = game.new_initial_state()
        expected = []
        for a in state.history():
            p = replay.current_player()
            if p >= 0:
                expected.append((p, replay.action_to_string(p, a)))
            replay.apply_action(a)
        assert [e["seat"] for e in moves] == [p for p, _ in expected]
        for entry, (p, move) in zip(moves, expected):
            if "move" in entry:
                assert entry["move"] == move
            else:  # a private move of another seat: written as that seat sees it
                assert p != seat and name == "underdog" and "lays" in entry["text"]
        assert view["over"] and view["returns"] == state.returns()


# ------------------------------------------------------------------ over HTTP
class Broken(Agent):
    name = "broken_test"

    def action_probabilities(self, state):
        raise ValueError("this bot always fails")


@pytest.fixture(scope="module")
def server():
    agent_kinds()
    register_agent("broken_test", "test only")(lambda game, player_id, seed: Broken(game, player_id, seed))
    srv = Server(make_app(["random"], bot_delay=0.0, max_tables=3), port=0).start()
    yield srv
    srv.stop()
    AGENTS.pop("broken_test")


def test_a_person_plays_a_whole_game(server):
    url = server.url
    status, view = call(url, "/tables", {"game": SMALL["underdog"], "seats": ["random", "human", "heuristic"],
                                         "seed": 4})
    assert status == 200 and view["mode"] == "play" and view["seat"] == 1 and view["human"] == 1
    table = view["table"]
    assert call(url, f"/tables/{table}?seat=0")[0] == 403  # the page sees its own seat only
    while not view["over"]:
        assert view["to_move"] == 1 and view["legal"]
        wrong = call(url, f"/tables/{table}/move", {"action": 999})
        assert wrong[0] == 400 and "not legal for seat 1" in wrong[1]["error"]
        status, view = call(url, f"/tables/{table}/move", {"action": view["legal"][-1]["action"],
                                                           "version": view["version"]})
        assert status == 200
        if not view["over"] and view["to_move"] != 1:
            view = call(url, f"/tables/{table}")[1]
    store = server.app.state.tables
    state = store._tables[table].state
    replay = pyspiel.load_game(SMALL["underdog"]).new_initial_state()
    for a in state.history():
        replay.apply_action(a)
    assert view["returns"] == replay.returns() and replay.is_terminal()
    assert call(url, f"/tables/{table}/move", {"action": 0})[0] == 409  # over
    status, again = call(url, f"/tables/{table}/new", {})
    assert status == 200 and again["seed"] == 5 and again["games_played"] == 2 and not again["over"]


def test_watch_a_bot_game_from_any_seat(server):
    url = server.url
    status, view = call(url, "/tables", {"game": SMALL["pub"], "seats": "random,heuristic,random", "seed": 2})
    assert status == 200 and view["mode"] == "watch" and view["over"]
    views = [call(url, f"/tables/{view['table']}?seat={s}")[1] for s in range(3)]
    assert [v["seat"] for v in views] == [0, 1, 2] and len({tuple(v["returns"]) for v in views}) == 1
    assert call(url, f"/tables/{view['table']}?seat=7")[0] == 400
    assert call(url, f"/tables/{view['table']}/move", {"action": 0})[0] == 409


def test_replay_a_tournament_game(server, tmp_path):
    from kibitz.agents.tournament import run_tournament

    run_tournament(SMALL["doubt_and_bet"], ["random", "heuristic"], games=2, seed=3, out_dir=str(tmp_path),
                   progress=False)
    record = json.loads((tmp_path / "games.jsonl").read_text().splitlines()[1])
    status, view = call(server.url, "/tables", {"replay": record})
    assert status == 200 and view["mode"] == "replay" and view["over"]
    assert view["returns"] == record["returns"] and view["replay"]["index"] == 1
    assert view["seats"] == [{"seat": s, "agent": spec} for s, spec in enumerate(record["seats"])]
    bad = dict(record, moves=record["moves"][:-1])
    status, reply = call(server.url, "/tables", {"replay": bad})
    assert status == 400 and "end before the game does" in reply["error"]


@pytest.mark.parametrize("body,text", [
    ({"game": SMALL["underdog"], "seats": ["human", "trained", "random"]}, "seat 1 (trained): the trained network for 'underdog' plays underdog("),
    ({"game": SMALL["underdog"], "seats": ["human", "human", "random"]}, "one person per table"),
    ({"game": SMALL["underdog"], "seats": ["human", "random"]}, "has 3 seats; 'seats' names 2"),
    ({"game": "kuhn_poker", "seats": ["human", "random"]}, "plays the kibitz games"),
    ({"game": "underdog(players=2)", "seats": ["human", "random"]}, "players=2 is out of range"),
    ({"game": SMALL["underdog"], "seats": ["human", "policy(nofile.json)", "random"]}, "does not exist"),
    ({"game": SMALL["underdog"], "seats": ["human", "random", "random"], "colour": 1}, "unknown field 'colour'"),
    ({"game": SMALL["underdog"], "seats": ["human", "ismcts(sims=0,seconds=15)", "random"]},
     "seat 1 (ismcts(sims=0,seconds=15)): a web table's bots search at most 10,000 simulations a move, "
     "and at most 10 seconds when timed"),
    ({"game": SMALL["underdog"], "seats": ["human", "random", "ismcts(belief,sims=20000)"]}, "sims=20000"),
])
def test_a_table_that_cannot_be_made_says_why(server, body, text):
    status, reply = call(server.url, "/tables", body)
    assert status == 400 and text in reply["error"] and "\n" not in reply["error"]


def test_move_fields_of_the_wrong_type_are_400s(server):
    status, view = call(server.url, "/tables", {"game": SMALL["over_under"], "seats": ["human", "random"],
                                                "seed": 1})
    assert status == 200
    url = f"/tables/{view['table']}/move"
    legal = view["legal"][0]["action"]
    for body in ({"seat": "0", "action": legal}, {"seat": 0.0, "action": legal}, {"seat": True, "action": legal},
                 {"version": "x", "action": legal}, {"version": 1.5, "action": legal}):
        status, reply = call(server.url, url, body)
        field = next(iter(body))
        assert status == 400 and reply["error"].startswith(f"'{field}' must be an integer"), (body, reply)
    assert call(server.url, url, {"seat": view["seat"], "action": legal, "version": view["version"]})[0] == 200


def test_a_replay_with_a_human_seat_plays_its_recorded_moves(server, tmp_path):
    from kibitz.agents.tournament import run_tournament

    run_tournament(SMALL["pub"], ["random", "heuristic"], games=1, seed=2, out_dir=str(tmp_path),
                   progress=False)
    record = json.loads((tmp_path / "games.jsonl").read_text().splitlines()[0])
    record["seats"][1] = "human"  # e.g. a game played at a table, recorded
    status, view = call(server.url, "/tables", {"replay": record})
    assert status == 200 and view["mode"] == "replay" and view["human"] is None
    assert view["over"] and view["returns"] == record["returns"]


def test_a_failing_bot_stops_the_table_with_its_reason(server):
    status, view = call(server.url, "/tables", {"game": SMALL["pub"], "seats": ["broken_test", "human", "random"]})
    assert status == 200 and view["error"] == "seat 0 (broken_test): this bot always fails"


def test_tables_are_bounded_and_expire(server):
    store = server.app.state.tables
    made = [call(server.url, "/tables", {"game": SMALL["over_under"], "seats": ["human", "random"]})[1]["table"]
            for _ in range(4)]
    assert len(store) == 3 and call(server.url, f"/tables/{made[0]}")[0] == 404  # the oldest was dropped
    assert call(server.url, f"/tables/{made[3]}")[0] == 200
    store.idle, idle = 0.05, store.idle
    try:
        time.sleep(0.1)
        status, reply = call(server.url, f"/tables/{made[3]}")
        assert status == 404 and "expired" in reply["error"] and len(store) == 0
    finally:
        store.idle = idle
    assert call(server.url, "/tables/nothing", method="DELETE")[0] == 404


def test_table_bodies_must_be_json(server):
    req = urllib.request.Request(server.url + "/tables", data=b"game=underdog", method="POST",
                                 headers={"Content-Type": "application/x-www-form-urlencoded"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=30)
    assert e.value.code == 415 and "application/json" in json.loads(e.value.read())["error"]


def test_bots_move_at_a_human_pace():
    srv = Server(make_app(["random"], bot_delay=0.3), port=0).start()
    try:
        status, view = call(srv.url, "/tables", {"game": SMALL["over_under"], "seats": ["random", "random"]})
        moves = [len([e for e in view["log"] if "seat" in e])]
        start = time.monotonic()
        while not view["over"] and time.monotonic() - start < 1.4:
            time.sleep(0.05)
            view = call(srv.url, f"/tables/{view['table']}")[1]
            moves.append(len([e for e in view["log"] if "seat" in e]))
        elapsed = time.monotonic() - start
        assert moves[0] == 1  # the first bot move is due at once, the next one 0.3 s later
        assert max(b - a for a, b in zip(moves, moves[1:])) <= 1  # one at a time
        assert moves[-1] <= 2 + elapsed / 0.3
    finally:
        srv.stop()


def test_a_person_cannot_work_out_the_deal_from_the_seed(server):
    # the same seed twice: a game of bots deals the same, a table with a person not
    body = {"game": SMALL["pub"], "seed": 9}
    watched = [call(server.url, "/tables", {**body, "seats": ["random"] * 3})[1] for _ in range(2)]
    assert watched[0]["log"] == watched[1]["log"]
    store = server.app.state.tables
    deals = set()
    for _ in range(6):
        view = call(server.url, "/tables", {**body, "seats": ["human", "random", "random"]})[1]
        deals.add(tuple(store._tables[view["table"]].state.history()[:4]))
    assert len(deals) > 1


def test_a_policy_files_search_fallback_is_held_to_the_tables_cap(server, tmp_path):
    from click.testing import CliRunner
    from kibitz.commands.solve import solve
    game = SMALL["underdog"]
    paths = {}
    for name, fallback in (("big", "ismcts(sims=20000)"), ("ok", "ismcts(sims=50)")):
        paths[name] = tmp_path / f"{name}.json"
        result = CliRunner().invoke(solve, [game, "-a", "mccfr-os", "-n", "20", "--fallback", fallback,
                                            "-o", str(paths[name]), "--no-progress"])
        assert result.exit_code == 0, result.output
    status, reply = call(server.url, "/tables", {"game": game, "seats": ["human", f"policy({paths['big']})",
                                                                          "random"]})
    assert status == 400
    assert reply["error"].startswith(f"seat 1 (policy({paths['big']})): a web table's bots search at most 10,000")
    assert "sims=20000" in reply["error"]
    status, reply = call(server.url, "/tables", {"game": game, "seats": ["human", f"policy({paths['ok']})",
                                                                          "random"]})
    assert status == 200, reply
    # unseen=uniform replaces the file's fallback: nothing to search, so it is seated
    status, reply = call(server.url, "/tables", {"game": game, "seats": [
        "human", f"policy({paths['big']},unseen=uniform)", "random"]})
    assert status == 200, reply
