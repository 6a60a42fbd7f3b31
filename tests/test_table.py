"""The web table's server side: one seat's view, no leak, and the table API over a real socket."""

import json
import os
import pathlib
import time
import urllib.error
import urllib.request

import numpy as np
import pyspiel
import pytest

from kibitz.agents.base import Agent
from kibitz.agents.registry import AGENTS, agent_kinds, register_agent
from kibitz.agents.serving.table_views import ADAPTERS, seat_view
from kibitz.agents.serving.web_app import Server, make_app
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
    from kibitz.agents.matches.tournament import run_tournament

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
    ({"game": SMALL["underdog"], "seats": ["human", "policy(nofile.json)", "random"]},
     "seat 1 (policy(nofile.json)): the web table seats agent files only from the folder given with kibitz serve "
     "--policy-dir, and none was given"),
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
    from kibitz.agents.matches.tournament import run_tournament

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


def test_a_policy_files_search_fallback_is_held_to_the_tables_cap(tmp_path):
    from click.testing import CliRunner
    from kibitz.commands.solve import solve
    game = SMALL["underdog"]
    for name, fallback in (("big", "ismcts(sims=20000)"), ("ok", "ismcts(sims=50)")):
        result = CliRunner().invoke(solve, [game, "-a", "mccfr-os", "-n", "20", "--fallback", fallback,
                                            "-o", str(tmp_path / f"{name}.json"), "--no-progress"])
        assert result.exit_code == 0, result.output
    srv = Server(make_app(["random"], bot_delay=0.0, policy_dir=str(tmp_path)), port=0).start()
    try:
        status, reply = call(srv.url, "/tables", {"game": game, "seats": ["human", "policy(big.json)", "random"]})
        assert status == 400
        assert reply["error"].startswith("seat 1 (policy(big.json)): a web table's bots search at most 10,000")
        assert "sims=20000" in reply["error"]
        status, reply = call(srv.url, "/tables", {"game": game, "seats": ["human", "policy(ok.json)", "random"]})
        assert status == 200, reply
        # unseen=uniform replaces the file's fallback: nothing to search, so it is seated
        status, reply = call(srv.url, "/tables", {"game": game, "seats": [
            "human", "policy(big.json,unseen=uniform)", "random"]})
        assert status == 200, reply
    finally:
        srv.stop()


# ------------------------------------------------------------------ the page's short rules
ROOT = pathlib.Path(__file__).resolve().parent.parent
RULES_JS = ROOT / "agents" / "serving" / "web" / "rules.js"


def short_rules(markdown: str) -> list[str]:
    """The bullets of a rules page's "## In short" section, as plain text."""
    section = markdown.split("\n## In short\n", 1)[1].split("\n## ", 1)[0]
    items = [" ".join(b.split()) for b in ("\n" + section).split("\n- ")[1:]]
    return [b.replace("**", "") for b in items]


def rules_js() -> str:
    rules = {name: short_rules((ROOT / "docs" / "rules" / f"{name}.md").read_text()) for name in sorted(REGISTRY)}
    lines = [f"  {json.dumps(name)}: {json.dumps(items)}," for name, items in rules.items()]
    return ("// The rules in short, from the \"In short\" section of each docs/rules page (written by\n"
            "// KIBITZ_WRITE_RULES=1 pytest tests/test_table.py -k short_rules; a test keeps them equal).\n"
            "\"use strict\";\nwindow.KIBITZ_RULES = {\n" + "\n".join(lines) + "\n};\n")


def test_the_pages_short_rules_are_the_rules_pages():
    if os.environ.get("KIBITZ_WRITE_RULES") == "1":
        RULES_JS.write_text(rules_js())
    assert RULES_JS.read_text() == rules_js(), "agents/serving/web/rules.js is stale: rerun with KIBITZ_WRITE_RULES=1"
    assert all(len(short_rules((ROOT / "docs" / "rules" / f"{n}.md").read_text())) >= 4 for n in REGISTRY)


# ------------------------------------------------------------------ records
def play_out(url, view, rng):
    """Plays the person's moves (drawn by ``rng``) until the game ends; the last view."""
    while not view["over"]:
        if view["legal"]:
            move = view["legal"][int(rng.integers(len(view["legal"])))]["action"]
            view = call(url, f"/tables/{view['table']}/move", {"action": move, "version": view["version"]})[1]
        else:
            view = call(url, f"/tables/{view['table']}")[1]
    return view


def test_the_record_store_keeps_games_across_a_reopen_and_exports_what_replay_reads(tmp_path):
    from click.testing import CliRunner
    from kibitz.agents.serving.table_records import RecordStore
    from kibitz.agents.matches.tournament import read_records, replay_record
    from kibitz.commands.replay import replay

    game = pyspiel.load_game(SMALL["pub"])
    rng = np.random.default_rng(4)
    played = []
    for _ in range(3):
        *_, state = positions(game, rng, games=1)
        played.append(state)
    db = tmp_path / "records.sqlite"
    store = RecordStore(str(db))
    for i, state in enumerate(played):
        seats = ["human", "random", "heuristic"] if i < 2 else ["random"] * 3
        index = store.add({"game": str(game), "deal": i, "deal_seed": [], "arrangement": 0, "seats": seats,
                           "seat_agents": [0, 1, 2], "agent_seeds": [0, 0, 0], "moves": state.history(),
                           "returns": list(state.returns()), "person": 0 if i < 2 else None})
        assert index == i + 1
    with pytest.raises(ValueError, match="not a game record"):
        store.add({"game": str(game), "moves": []})
    store.close()
    again = RecordStore(str(db))  # a restart
    records = again.records()
    assert [r["index"] for r in records] == [1, 2, 3] and [r["moves"] for r in records] == [s.history() for s in played]
    out = tmp_path / "games.jsonl"
    with open(out, "w") as f:
        assert again.export(f) == 3
    assert read_records(str(out)) == records
    for rec in records:
        assert list(replay_record(rec).returns()) == rec["returns"]
    result = CliRunner().invoke(replay, [str(out), "--game", "2"])
    assert result.exit_code == 0 and "returns: " in result.output, result.output
    # the people's record: the two games with a person, rated as a tournament is
    (standing,) = again.standings()
    assert standing["games"] == 2 and [a["name"] for a in standing["agents"]][0] == "people"
    people = standing["agents"][0]
    assert people["games"] == 2 and people["mean_payoff"] == pytest.approx(np.mean([s.returns()[0] for s in played[:2]]))


def test_a_db_that_is_not_the_records_is_refused(tmp_path):
    from kibitz.agents.serving.table_records import RecordStore, RecordsDbError

    text = tmp_path / "notes.txt"
    text.write_text("my notes\n" * 100)
    with pytest.raises(RecordsDbError, match="not a kibitz table records database"):
        RecordStore(str(text))
    assert text.read_text() == "my notes\n" * 100
    with pytest.raises(RecordsDbError, match="a folder"):
        RecordStore(str(tmp_path))


def test_every_finished_game_is_committed_as_it_ends_and_survives_a_restart(tmp_path):
    import sqlite3

    db = str(tmp_path / "table.sqlite")
    srv = Server(make_app(["random"], bot_delay=0.0, db=db), port=0).start()
    rng = np.random.default_rng(3)
    try:
        status, view = call(srv.url, "/tables", {"game": SMALL["over_under"], "seats": ["human", "random"]})
        view = play_out(srv.url, view, rng)
        assert view["record"] == 1
        status, watched = call(srv.url, "/tables", {"game": SMALL["pub"], "seats": ["random"] * 3})
        assert watched["over"] and watched["record"] == 2
        # a game still in play is not stored; the finished ones are committed already
        status, open_table = call(srv.url, "/tables", {"game": SMALL["underdog"], "seats": ["human", "random", "random"]})
        assert not open_table["over"]
        with sqlite3.connect(db) as other:
            assert other.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 2
        status, standings = call(srv.url, "/records")
        assert standings["games_stored"] == 2 and [g["games"] for g in standings["games"]] == [1]
        assert standings["games"][0]["game"] == view["game"]
    finally:
        srv.stop()
    srv = Server(make_app(["random"], bot_delay=0.0, db=db), port=0).start()  # a restart
    try:
        status, again = call(srv.url, "/records")
        assert again == standings
        with urllib.request.urlopen(srv.url + "/records/games.jsonl", timeout=30) as r:
            lines = r.read().decode().splitlines()
        records = [json.loads(line) for line in lines]
        assert [r["index"] for r in records] == [1, 2] and records[0]["seats"] == ["human", "random"]
        assert records[0]["person"] == 0 and records[1]["person"] is None
        assert records[0]["returns"] == view["returns"] and records[1]["returns"] == watched["returns"]
        # the table's own replay plays a stored game
        status, replayed = call(srv.url, "/tables", {"replay": records[0]})
        assert status == 200 and replayed["over"] and replayed["returns"] == view["returns"]
    finally:
        srv.stop()


def test_the_view_spells_parameters_as_the_command_line_does(server):
    status, view = call(server.url, "/tables", {"game": SMALL["doubt_and_bet"], "seats": ["human", "random"]})
    assert "single_bet=true" in view["game"] and "True" not in view["game"]
    assert pyspiel.load_game(view["game"]).get_parameters()["single_bet"] is True


def test_every_legal_move_says_what_it_will_do():
    # every move but Doubt and Bet's claims (the page's claim builder says what a claim does)
    for name in sorted(ADAPTERS):
        game = pyspiel.load_game(name)
        rng = np.random.default_rng(5)
        names = set()
        for state in positions(game, rng, games=2, every=3):
            if state.is_terminal() or state.is_chance_node():
                continue
            for m in seat_view(state, state.current_player())["legal"]:
                names.add(m["move"].split(" ")[0])
                assert m.get("help") or m["move"].startswith("claim "), (name, m)
        assert names


# ------------------------------------------------------------------ a person who is out
def test_a_person_who_is_out_is_told_so_and_can_skip_to_the_result():
    srv = Server(make_app(["random"], bot_delay=30.0), port=0).start()  # bots this slow never end a game here
    game = "doubt_and_bet(players=3,chips=0,slots=2,colours=1)"
    rng = np.random.default_rng(1)
    try:
        for attempt in range(40):
            status, view = call(srv.url, "/tables", {"game": game, "seats": ["human", "random", "random"],
                                                     "seed": attempt})
            table = srv.app.state.tables._tables[view["table"]]
            table.last_move = -1e18
            while not view["over"] and not view["out"]:
                if view["legal"]:
                    assert call(srv.url, f"/tables/{view['table']}/skip", {})[0] == 409  # still in the game
                    move = view["legal"][int(rng.integers(len(view["legal"])))]["action"]
                    view = call(srv.url, f"/tables/{view['table']}/move", {"action": move})[1]
                else:
                    table.last_move = -1e18  # the next bot move is due now
                    view = call(srv.url, f"/tables/{view['table']}")[1]
            if view["out"]:
                break
        assert view["out"] and not view["over"] and not view["legal"], "seat 0 was never knocked out"
        status, view = call(srv.url, f"/tables/{view['table']}/skip", {})
        assert status == 200 and view["skipping"]
        start = time.monotonic()
        while not view["over"] and time.monotonic() - start < 20:
            view = call(srv.url, f"/tables/{view['table']}")[1]
        assert view["over"] and not view["out"]
    finally:
        srv.stop()


# ------------------------------------------------------------------ agent files: the policy folder only
def test_agent_files_come_from_the_policy_folder_and_any_other_file_gets_one_answer(tmp_path):
    from click.testing import CliRunner
    from kibitz.commands.solve import solve
    game = SMALL["over_under"]
    folder = tmp_path / "policies"
    folder.mkdir()
    result = CliRunner().invoke(solve, [game, "-a", "cfr", "-n", "5", "-o", str(folder / "p.json"), "--no-progress"])
    assert result.exit_code == 0, result.output
    (folder / "notes.json").write_text("not json at all")
    (tmp_path / "outside.json").write_text("{}")
    srv = Server(make_app(["random"], bot_delay=0.0, policy_dir=str(folder)), port=0).start()
    try:
        status, view = call(srv.url, "/tables", {"game": game, "seats": ["human", "policy(p.json)"]})
        assert status == 200, view
        answers = []
        for path in ("missing.json", "notes.json", "../outside.json", str(tmp_path / "outside.json"), "/etc/passwd",
                     "/nonexistent/file.json"):
            status, reply = call(srv.url, "/tables", {"game": game, "seats": ["human", f"policy({path})"]})
            assert status == 400
            answers.append(reply["error"].replace(path, "FILE"))
        assert len(set(answers)) == 1, answers
        assert answers[0] == (f"seat 1 (policy(FILE)): 'FILE' is not an agent file for "
                              f"{pyspiel.load_game(game)} in the table's policy folder")
        status, reply = call(srv.url, "/tables", {"game": game, "seats": ["human", "net(/etc/passwd)"]})
        assert status == 400 and "not an agent file" in reply["error"]
    finally:
        srv.stop()
