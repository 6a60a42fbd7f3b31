"""kibitz serve over a real socket: the API, its errors, its limits, and hidden information."""

import json
import socket
import time
import urllib.error
import urllib.request

import pyspiel
import pytest
from click.testing import CliRunner

from kibitz.agents.base import Agent
from kibitz.agents.registry import AGENTS, agent_kinds, register_agent
from kibitz.agents.serving.serve import MAX_BODY, MAX_HISTORY, GameCache
from kibitz.agents.serving.web_app import Server, make_app
from kibitz.commands.serve import serve
from helpers import call

GAME = "underdog(players=3,cards=5,bank=2)"
SEEN = []


class Spy(Agent):
    """Records the full state it is given (str(state) shows every card)."""

    name = "spy_test"

    def action_probabilities(self, state):
        SEEN.append((str(state), state.history()))
        legal = state.legal_actions()
        return {a: 1.0 / len(legal) for a in legal}


@pytest.fixture(scope="module")
def url():
    agent_kinds()
    register_agent("spy_test", "test only")(lambda game, player_id, seed: Spy(game, player_id, seed))
    server = Server(make_app(["heuristic", "random", "spy_test", "ismcts(sims=30)"]), port=0,
                    idle_timeout=1.0).start()
    yield server.url
    server.stop()
    AGENTS.pop("spy_test")


def test_health_and_agents(url):
    assert call(url, "/health") == (200, {"status": "ok", "kibitz_version": "0.1.0", "agents": 4})
    status, body = call(url, "/agents")
    assert status == 200
    names = [a["name"] for a in body["agents"]]
    assert names == ["heuristic", "random", "spy_test", "ismcts(sims=30)"]
    ismcts = body["agents"][3]
    assert ismcts["kind"] == "ismcts" and ismcts["options"]["sims"]["default"] == 1000


def test_act_returns_move_name_and_probabilities(url):
    # deal 1, 2, 3 to seats 0..2, underdog 4: seat 0 draws first
    status, body = call(url, "/act", {"game": GAME, "agent": "heuristic", "history": [0, 1, 2, 3]})
    assert status == 200
    assert body["player"] == 0 and body["agent"] == "heuristic"
    assert body["move"] in ("swap", "new underdog")
    probs = {p["move"]: p["probability"] for p in body["probabilities"]}
    assert set(probs) == {"swap", "new underdog"} and sum(probs.values()) == pytest.approx(1.0)
    assert body["move"] == {0: "swap", 1: "new underdog"}[body["action"]]


def test_serialized_state_and_seed_are_reproducible(url):
    game = pyspiel.load_game(GAME)
    state = game.new_initial_state()
    for a in [4, 1, 2, 3, 1]:  # seat 0 asks for a new underdog
        state.apply_action(a)
    state.apply_action(0)  # chance: the new underdog is card 1
    by_history = call(url, "/act", {"game": GAME, "agent": "ismcts(sims=30)", "seed": 5,
                                    "history": state.history()})
    by_state = call(url, "/act", {"game": GAME, "agent": "ismcts (sims=30)", "seed": 5,
                                  "state": state.serialize()})
    assert by_history[0] == 200 and by_history == by_state
    # the pile is empty (5 cards: 3 dealt, 2 underdogs), so seats 1 and 2 skip the
    # draw step and seat 0 starts the fight step
    assert by_history[1]["player"] == 0 and by_history[1]["move"] in ("fight", "pass")


def test_agent_sees_only_its_information_state(url):
    # Seat 0 holds card 1, underdog 4. Seats 1 and 2 hold 2 and 3, or 3 and 2:
    # seat 0 cannot tell these apart, so neither can its agent.
    views = []
    for hidden in ([1, 2], [2, 1]):
        SEEN.clear()
        status, _ = call(url, "/act", {"game": GAME, "agent": "spy_test", "seed": 11,
                                       "history": [0] + hidden + [3]})
        assert status == 200
        views.append(SEEN[0])
    assert views[0] == views[1]
    seen_cards = set()
    for seed in range(12):
        SEEN.clear()
        call(url, "/act", {"game": GAME, "agent": "spy_test", "seed": seed, "history": [0, 1, 2, 3]})
        text, history = SEEN[0]
        assert history[0] == 0 and history[3] == 3  # its own card and the underdog are true
        seen_cards.add(tuple(history[1:3]))
    # the other seats' cards are drawn from what seat 0 may believe (2, 3 and 5 are unseen)
    assert seen_cards <= {(1, 2), (2, 1), (1, 4), (4, 1), (2, 4), (4, 2)} and len(seen_cards) > 2


@pytest.mark.parametrize("body,status,text", [
    ({"game": "underdog(players=9)", "agent": "random", "history": []}, 400, "players=9 is out of range"),
    ({"game": "nosuchgame", "agent": "random", "history": []}, 400, "unknown game 'nosuchgame'"),
    ({"game": GAME, "agent": "random", "history": [0, 0]}, 400, "action 0 at position 1 is not legal for chance"),
    ({"game": GAME, "agent": "random", "history": [0, 1, 2, 3, 7]}, 400, "not legal for player 0"),
    ({"game": GAME, "agent": "random", "history": [0, 1, 2, 3], "player": 2}, 409,
     "wrong seat: seat 0 is to act, not seat 2"),
    ({"game": GAME, "agent": "alphazero", "history": []}, 404, "unknown agent 'alphazero'"),
    ({"game": GAME, "agent": "random", "history": [0, 1]}, 400, "chance is to act"),
    ({"game": GAME, "agent": "random", "history": "0,1"}, 400, "'history' must be a list"),
    ({"game": GAME, "agent": "random", "state": "garbage"}, 400, "bad serialized state"),
    ({"game": "kuhn_poker", "agent": "random", "state": "garbage"}, 400,
     "bad serialized state: not a kuhn_poker state from State.serialize() as one action id a line (send "
     "'history'"),
    # kuhn_poker's deserialize_state crashes the process on this one; it is replayed and refused instead
    ({"game": "kuhn_poker", "agent": "random", "state": "0\n7\n"}, 400,
     "illegal history: action 7 at position 1 is not legal for chance"),
    ({"game": "go(board_size=1000)", "agent": "random", "history": []}, 400,
     "bad game string: go(board_size=1000): The current Go implementation supports board size up to 19"),
    ({"game": GAME, "agent": "random", "history": [0, 2**63]}, 400,
     "action 9223372036854775808 at position 1 is not an action id (0 .. 2**63-1)"),
    ({"game": "tic_tac_toe", "agent": "random", "history": [-1]}, 400, "action -1 at position 0 is not an action id"),
])
def test_errors_are_4xx_with_a_message(url, body, status, text):
    got, reply = call(url, "/act", body)
    assert got == status and text in reply["error"]


def test_a_cpp_games_serialization_is_replayed_and_checked(url):
    for name in ("tic_tac_toe", "kuhn_poker"):  # its own Python binding; the generic one
        state = pyspiel.load_game(name).new_initial_state()
        for a in (0, 1) if name == "kuhn_poker" else (4,):
            state.apply_action(a)
        status, reply = call(url, "/act", {"game": name, "agent": "random", "state": state.serialize()})
        assert status == 200 and reply["player"] == state.current_player()
        assert {p["action"] for p in reply["probabilities"]} == set(state.legal_actions())


def test_simultaneous_move_games_are_refused_before_they_load(url):
    status, reply = call(url, "/act", {"game": "mfg_crowd_modelling_2d", "agent": "random", "history": []})
    assert status == 400 and reply["error"].startswith("mfg_crowd_modelling_2d is a mean-field game")
    for game in ("blotto(coins=100000)", "turn_based_simultaneous_game(game=blotto(coins=100000))"):
        t0 = time.perf_counter()
        status, reply = call(url, "/act", {"game": game, "agent": "random", "history": []})
        assert status == 400 and reply["error"].startswith("blotto is a simultaneous-move game")
        assert time.perf_counter() - t0 < 5  # loading it would take minutes
    assert call(url, "/health")[0] == 200


def test_numbers_python_cannot_convert_are_a_400(url):
    raw = b'{"game": "kuhn_poker", "agent": "random", "history": [], "seed": ' + b"9" * 5000 + b"}"
    status, reply = call(url, "/act", raw=raw)
    assert status == 400 and "the body is not JSON that can be read" in reply["error"]


def test_bad_json_terminal_and_paths(url):
    got, reply = call(url, "/act", raw=b"{not json")
    assert got == 400 and "not JSON" in reply["error"]
    game = pyspiel.load_game("kuhn_poker")
    status, reply = call(url, "/act", {"game": "kuhn_poker", "agent": "random", "history": [0, 1, 0, 0]})
    assert status == 400 and "game is over" in reply["error"]
    assert call(url, "/nothing")[0] == 404
    assert call(url, "/act")[0] == 405


def test_cli_rejects_unknown_agent():
    r = CliRunner().invoke(serve, ["--agent", "nosuch", "--port", "0"])
    assert r.exit_code == 2 and "unknown agent 'nosuch'" in r.output


def test_serialized_python_state_is_never_unpickled(url, tmp_path):
    import base64
    import pickle

    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    payload = base64.b64encode(pickle.dumps({"_c": Evil()})).decode()
    text = f"history=-1:0,-1:1,-1:2,-1:3\nmove_number=4\n__dict__={payload}"
    status, body = call(url, "/act", {"game": GAME, "agent": "random", "state": text})
    assert status == 200 and body["player"] == 0  # the history line was replayed
    assert not marker.exists()
    status, body = call(url, "/act", {"game": GAME, "agent": "random", "state": "__dict__=" + payload})
    assert status == 400 and not marker.exists()


@pytest.mark.parametrize("method,path,status,text", [
    ("PUT", "/act", 405, "use POST /act"),
    ("DELETE", "/act", 405, "use POST /act"),
    ("PUT", "/health", 405, "use GET /health"),
    ("POST", "/agents", 405, "use GET /agents"),
    ("DELETE", "/nothing", 404, "no such path '/nothing'"),
    ("PATCH", "/", 405, "use GET /"),
    ("GET", "/static/nothing.js", 404, "no such file"),
])
def test_every_method_and_path_answers_json(url, method, path, status, text):
    got, reply = call(url, path, raw=b"{}" if method != "GET" else None, method=method)
    assert got == status and text in reply["error"] and reply["status"] == status


@pytest.mark.parametrize("raw,status,text", [
    (b"[" * 100_000 + b"]" * 100_000, 400, "nested too deep"),
    (b'{"game": [[[[[[[[[[1]]]]]]]]]]}', 400, "nested 11 levels deep; at most 8"),
    (json.dumps({"game": GAME, "agent": "random", "history": [0] * (MAX_HISTORY + 1)}).encode(), 400,
     f"at most {MAX_HISTORY:,}"),
    (json.dumps({"game": GAME, "agent": "random", "history": [0, 1, 2, 3], "player": "0"}).encode(), 400,
     "'player' must be a seat number (an integer), not '0'"),
    (json.dumps({"game": GAME, "history": [0, 1, 2, 3]}).encode(), 400,
     "'agent' is missing: 4 agents are served (heuristic, random, spy_test, ismcts(sims=30))"),
    (json.dumps({"game": GAME, "agent": "random", "history": [0, 1, 2, 3], "hisotry": []}).encode(), 400,
     "unknown field 'hisotry'"),
    (json.dumps({"game": GAME, "agent": "random"}).encode(), 400, "give 'history'"),
    (json.dumps({"game": GAME, "agent": 7, "history": []}).encode(), 400, "'agent' must be an agent spec"),
    (json.dumps({"game": GAME, "agent": "random", "history": [0, 1, 2, 3], "seed": -1}).encode(), 400,
     "'seed' must be an integer"),
])
def test_bodies_are_checked_before_they_are_read(url, raw, status, text):
    got, reply = call(url, "/act", raw=raw)
    assert got == status and text in reply["error"]
    assert call(url, "/health")[0] == 200  # and the server goes on


def raw_answer(url, request: bytes, then=None):
    """(head, body) of the server's answer to ``request`` sent as it is on one
    connection; ``then()``, if given, is called once it is sent."""
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request)
        if then is not None:
            then()
        answer = b""
        while b'"status"' not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    head, _, body = answer.decode().partition("\r\n\r\n")
    return head, body


def test_a_body_too_large_is_refused_before_it_is_read(url):
    head, body = raw_answer(url, b"POST /act HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n"
                                 % (MAX_BODY + 1))
    assert head.startswith("HTTP/1.1 413") and json.loads(body)["error"] == f"the body may have at most {MAX_BODY:,} bytes"


def test_a_body_that_never_arrives_times_out(url, monkeypatch):
    from kibitz.agents.serving import web_app

    monkeypatch.setattr(web_app, "BODY_TIMEOUT", 0.3)
    head, body = raw_answer(url, b"POST /act HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
    assert head.startswith("HTTP/1.1 408") and json.loads(body)["error"] == "the body did not arrive within 0.3 s"


def test_headers_that_never_end_time_out_with_json(url, monkeypatch):
    from kibitz.agents.serving import web_app

    monkeypatch.setattr(web_app, "HEADER_TIMEOUT", 0.3)
    for start in (b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", b"\r\n"):  # a CRLF starts no request
        head, body = raw_answer(url, start)
        assert head.startswith("HTTP/1.1 408")
        assert json.loads(body) == {"error": "the request's headers did not arrive within 0.3 s", "status": 408}


def test_a_request_that_is_not_http_gets_a_json_400(url):
    head, body = raw_answer(url, b"HELLO THERE\r\n\r\n")
    assert head.startswith("HTTP/1.1 400") and "application/json" in head
    assert json.loads(body)["error"].startswith("not an HTTP request: ")


def test_openapi_describes_the_api(url):
    import jsonschema

    status, doc = call(url, "/openapi.json")
    assert status == 200 and doc["openapi"].startswith("3.1")
    from kibitz.agents.serving.web_app import ROUTES
    served = {p: ms for p, ms in ROUTES.items() if p not in ("/", "/openapi.json")}  # the page and itself aside
    assert set(served) <= set(doc["paths"])
    for path, methods in served.items():
        assert {m.lower() for m in methods} <= set(doc["paths"][path]), path
    # every status the server answers is described
    described = set(doc["paths"]["/act"]["post"]["responses"])
    assert {"200", "400", "403", "404", "408", "409", "413", "415", "500", "501", "503"} <= described
    schemas = doc["components"]["schemas"]
    for schema in schemas.values():
        jsonschema.Draft202012Validator.check_schema(schema)
    example = {"game": "underdog(players=3)", "agent": "heuristic", "history": [0, 4, 9, 12]}
    jsonschema.validate(example, schemas["ActRequest"])
    reply = call(url, "/act", example)[1]
    jsonschema.validate(reply, schemas["ActResponse"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**example, "hisotry": []}, schemas["ActRequest"])


def test_a_foreign_host_name_is_refused(url):
    got, reply = call(url, "/health", headers={"Host": "attacker.example:80"})
    assert got == 400 and "not this machine's loopback" in reply["error"]
    assert call(url, "/health", headers={"Host": "localhost"})[0] == 200


def test_idle_connections_are_closed(url):
    port = int(url.rsplit(":", 1)[1])
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(300)]
    try:
        assert call(url, "/health")[0] == 200  # 300 idle sockets do not stop the server
        time.sleep(1.6)  # the idle timeout is 1 s here
        for sock in idle[:20]:
            sock.settimeout(2)
            assert sock.recv(1) == b""  # closed by the server
    finally:
        for sock in idle:
            sock.close()


def test_concurrent_clients_all_get_answers(url):
    from concurrent.futures import ThreadPoolExecutor

    body = {"game": GAME, "agent": "heuristic", "history": [0, 1, 2, 3]}
    with ThreadPoolExecutor(64) as pool:
        statuses = list(pool.map(lambda i: call(url, "/act", {**body, "seed": i})[0], range(640)))
    assert statuses == [200] * 640


def test_the_game_cache_is_bounded():
    cache = GameCache(size=3)
    for cards in range(5, 10):
        cache.get(f"underdog(players=3,cards={cards})")
    assert len(cache) == 3
    assert str(cache.get("underdog(players=3,cards=9)")).startswith("underdog(")


def test_a_simultaneous_move_game_is_refused_with_the_wrapper_named():
    from kibitz.agents.serving.serve import ApiError

    with pytest.raises(ApiError) as e:
        GameCache(size=3).get("matrix_rps")
    assert e.value.status == 400
    assert "simultaneous-move game" in str(e.value) and "turn_based_simultaneous_game(game=matrix_rps())" in str(e.value)


@pytest.mark.parametrize("spec,text", [
    ("policy(nofile.json)", "policy file 'nofile.json' does not exist"),
    ("ismcts(sims=-5)", "sims must be 0..1,000,000,000; got -5"),
    ("ismcts(simz=5)", "has no option 'simz'"),
    ("net(nofile.json.gz)", "nofile.json.gz"),
    ("human", "cannot be served"),
])
def test_cli_checks_every_agent_at_start(spec, text):
    started = time.monotonic()
    r = CliRunner().invoke(serve, ["--agent", "random", "--agent", spec, "--port", "0"])
    assert r.exit_code == 2 and text in r.output
    assert time.monotonic() - started < 30


def test_ctrl_c_with_a_request_in_flight_answers_it_503_and_logs_to_stderr():
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "from kibitz.cli import main; main()", "serve", "--port", "0",
                             "--db", ":memory:", "--agent", "ismcts(sims=0,seconds=8)", "--agent", "ismcts(sims=0, seconds=8)",
                             "--log"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        # the same spec twice is served (and named) once
        assert line.startswith("kibitz serve: ismcts(sims=0,seconds=8) on http://127.0.0.1:"), line
        base = line.split(" on ", 1)[1].split(" ", 1)[0]
        body = json.dumps({"game": "kuhn_poker", "history": [0, 1]}).encode()

        def interrupt():
            time.sleep(2.0)  # the request is in the server's hands (its search takes 8 s)
            proc.send_signal(signal.SIGINT)

        head, reply = raw_answer(base, b"POST /act HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n%s"
                                 % (len(body), body), then=interrupt)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0 and out.splitlines() == ["stopped"]
        assert head.startswith("HTTP/1.1 503"), head
        assert json.loads(reply) == {"error": "the server is stopping: this request was not finished; try again",
                                     "status": 503}
        assert "Traceback" not in err and '"POST /act HTTP/1.1" 503' in err  # the request log is on stderr
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_command_serves_until_interrupted():
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "from kibitz.cli import main; main()", "serve", "--port", "0",
                             "--db", ":memory:", "--agent", "random"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("kibitz serve: random on http://127.0.0.1:") and "the web table is" in line
        base = line.split(" on ", 1)[1].split(" ", 1)[0]
        assert call(base, "/health")[1]["agents"] == 1
        with urllib.request.urlopen(base + "/", timeout=30) as r:
            assert r.headers["Content-Type"].startswith("text/html") and b"kibitz web table" in r.read()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0 and "stopped" in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
