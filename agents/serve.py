"""Agents over HTTP and JSON for other frontends (``kibitz serve``).

Endpoints (all responses are JSON; the API is documented in docs/serving.md):

* ``GET /health``: ``{"status": "ok", ...}``.
* ``GET /agents``: the agent specs served, with their kind and options.
* ``POST /act``: ``{"game": GAME_STRING, "agent": SPEC, "history": [ids]}``
  (every action so far, chance included) or ``"state": SERIALIZED`` instead
  of the history (for Python games only the serialization's history line is
  read and replayed: its pickle is never loaded); optional ``"seed"`` (int, default 0) and ``"player"`` (the
  seat the caller expects to be acting). Returns the seat to act, the
  chosen action and its name, and the agent's probabilities over the legal
  moves.

Errors are 4xx with ``{"error": message}``: 400 for bad JSON, a bad game
string, an illegal history or a state with no player to act; 404 for an
unknown agent or path; 409 when ``player`` is not the seat to act.

An agent never sees another seat's hidden information: before it is asked,
the true state is replaced by ``state.resample_from_infostate(player,
sampler)`` with a sampler seeded from the request's seed, i.e. a state drawn
from what the acting seat knows (for perfect-information games the state
itself). A game that cannot resample is refused with 501 rather than shown
to an agent.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pyspiel

from kibitz.agents.registry import agent_kinds, make_agent, parse_spec

MAX_BODY = 1 << 20


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def _norm(spec: str) -> str:
    return "".join(spec.split())


class AgentService:
    """The request logic, independent of HTTP (thread-safe)."""

    def __init__(self, specs: list[str]):
        if not specs:
            raise ValueError("serve needs at least one --agent")
        kinds = agent_kinds()
        self.specs: dict[str, str] = {}
        for spec in specs:
            name, options = parse_spec(spec)
            if name not in kinds:
                raise ValueError(f"unknown agent {name!r}; agents are: {', '.join(sorted(kinds))}")
            if name == "human":
                raise ValueError("the human agent cannot be served")
            self.specs[_norm(spec)] = spec.strip()
        self._games: dict[str, pyspiel.Game] = {}
        self._lock = threading.Lock()

    # ---------------------------------------------------------- endpoints
    def health(self) -> dict:
        from importlib.metadata import PackageNotFoundError, version
        try:
            v = version("kibitz")
        except PackageNotFoundError:
            v = "unknown"
        return {"status": "ok", "kibitz_version": v, "agents": len(self.specs)}

    def agents(self) -> dict:
        kinds = agent_kinds()
        out = []
        for spec in self.specs.values():
            name, options = parse_spec(spec)
            kind = kinds[name]
            out.append({"name": spec, "kind": name, "help": kind.help,
                        "options": {k: {"default": d, "help": h} for k, (d, h) in kind.options.items()}})
        return {"agents": out}

    def act(self, req) -> dict:
        if not isinstance(req, dict):
            raise ApiError(400, "the request body must be a JSON object")
        game = self._game(req.get("game"))
        spec = self._spec(req.get("agent"))
        seed = req.get("seed", 0)
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise ApiError(400, "'seed' must be a non-negative integer")
        state = self._state(game, req)
        if state.is_terminal():
            raise ApiError(400, "the game is over: no player is to act")
        if state.is_chance_node():
            raise ApiError(400, "chance is to act: add the chance outcome to the history first")
        player = state.current_player()
        if player < 0:
            raise ApiError(400, "no single player is to act (simultaneous moves are not served)")
        expected = req.get("player")
        if expected is not None and expected != player:
            raise ApiError(409, f"wrong seat: seat {player} is to act, not seat {expected}")
        rng = np.random.default_rng(np.random.SeedSequence((seed, len(state.history()))))
        view = self._private_view(game, state, player, rng)
        try:
            agent = make_agent(spec, game, player, seed=int(rng.integers(2**32)))
            policy, action = agent.step_with_policy(view)
        except ValueError as e:
            raise ApiError(400, f"agent {spec!r}: {e}") from None
        legal = state.legal_actions()
        action = int(action)
        if action not in legal:
            raise ApiError(500, f"agent {spec!r} chose {action}, which is not legal")
        probs = {int(a): float(p) for a, p in policy}
        return {
            "game": str(game),
            "agent": spec,
            "player": player,
            "action": action,
            "move": state.action_to_string(player, action),
            "probabilities": [{"action": int(a), "move": state.action_to_string(player, a),
                               "probability": probs.get(int(a), 0.0)} for a in legal],
        }

    # ---------------------------------------------------------- helpers
    def _game(self, game_string):
        if not isinstance(game_string, str) or not game_string.strip():
            raise ApiError(400, "'game' must be a game string, e.g. \"underdog(players=3)\"")
        with self._lock:
            if game_string not in self._games:
                from kibitz.games import GameStringError, load_game
                try:
                    self._games[game_string] = load_game(game_string)
                except GameStringError as e:
                    raise ApiError(400, f"bad game string: {e}") from None
            return self._games[game_string]

    def _spec(self, agent):
        if agent is None and len(self.specs) == 1:
            return next(iter(self.specs.values()))
        if not isinstance(agent, str) or _norm(agent) not in self.specs:
            raise ApiError(404, f"unknown agent {agent!r}; served agents: {', '.join(self.specs.values())}")
        return self.specs[_norm(agent)]

    @classmethod
    def _state(cls, game, req):
        if "state" in req:
            if "history" in req:
                raise ApiError(400, "give either 'history' or 'state', not both")
            if not isinstance(req["state"], str):
                raise ApiError(400, "'state' must be a string from State.serialize()")
            text = req["state"]
            if type(game).__module__ != "pyspiel" or "__dict__=" in text:
                # A Python game's serialization: its history line, then a
                # pickle. A pickle from the network could run code, so only
                # the history is read and replayed (every action checked).
                first = text.split("\n", 1)[0]
                if not first.startswith("history="):
                    raise ApiError(400, "bad serialized state: expected a first line history=...")
                try:
                    history = [int(pair.split(":")[1]) for pair in first[len("history="):].split(",") if pair]
                except (IndexError, ValueError):
                    raise ApiError(400, "bad serialized state: cannot read its history line") from None
                return cls._replay(game, history)
            try:
                return game.deserialize_state(text)
            except Exception as e:  # pyspiel raises several kinds
                raise ApiError(400, f"bad serialized state: {e}") from None
        return cls._replay(game, req.get("history"))

    @staticmethod
    def _replay(game, history):
        if not isinstance(history, list) or not all(isinstance(a, int) and not isinstance(a, bool)
                                                    for a in history):
            raise ApiError(400, "'history' must be a list of action ids (chance included)")
        state = game.new_initial_state()
        for i, a in enumerate(history):
            if state.is_terminal():
                raise ApiError(400, f"illegal history: the game ends before position {i}")
            legal = state.legal_actions()
            if a not in legal:
                who = "chance" if state.is_chance_node() else f"player {state.current_player()}"
                raise ApiError(400, f"illegal history: action {a} at position {i} is not legal for {who}; "
                                    f"legal: {legal}")
            state.apply_action(a)
        return state

    @staticmethod
    def _private_view(game, state, player, rng):
        if game.get_type().information == pyspiel.GameType.Information.PERFECT_INFORMATION:
            return state.clone()
        try:
            view = state.resample_from_infostate(player, rng.random)
        except Exception as e:
            raise ApiError(501, f"{game.get_type().short_name} cannot resample a state from an "
                                f"information state ({e}); refusing to show the true state to an agent") from None
        if view.information_state_string(player) != state.information_state_string(player):
            raise ApiError(500, "resampled state does not match the player's information state")
        return view


class _Handler(BaseHTTPRequestHandler):
    service: AgentService = None  # set per server class
    quiet = True

    def _send(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status, message):
        self._send(status, {"error": message, "status": status})

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/health":
            self._send(200, self.service.health())
        elif path == "/agents":
            self._send(200, self.service.agents())
        elif path == "/act":
            self._error(405, "use POST /act")
        else:
            self._error(404, f"no such path {path!r}; paths: GET /health, GET /agents, POST /act")

    def do_POST(self):
        path = self.path.split("?", 1)[0]
        if path != "/act":
            self._error(404, f"no such path {path!r}; paths: GET /health, GET /agents, POST /act")
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            self._error(413 if length > MAX_BODY else 400, "bad or too large Content-Length")
            return
        try:
            req = json.loads(self.rfile.read(length) or b"null")
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            self._error(400, f"the body is not JSON: {e}")
            return
        try:
            self._send(200, self.service.act(req))
        except ApiError as e:
            self._error(e.status, e.message)
        except Exception as e:  # an agent or game failure: report it, keep serving
            self._error(500, f"{type(e).__name__}: {e}")

    def log_message(self, format, *args):
        if not self.quiet:
            super().log_message(format, *args)


def make_server(specs: list[str], host: str = "127.0.0.1", port: int = 8000,
                quiet: bool = True) -> ThreadingHTTPServer:
    """A ThreadingHTTPServer serving ``specs``; port 0 picks a free port."""
    service = AgentService(specs)
    handler = type("KibitzHandler", (_Handler,), {"service": service, "quiet": quiet})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server
