"""Agents over HTTP and JSON for other frontends, and the web table (``kibitz serve``).

This module is the request logic: :class:`AgentService` (``/act``,
``/agents``, ``/health``) and the body checks, with no HTTP in it.
:mod:`kibitz.agents.serving.web_app` puts it and the web table
(:mod:`kibitz.agents.serving.table`, the page in ``agents/serving/web/``) behind a Starlette
application run on uvicorn. The API is in docs/serving.md; ``GET
/openapi.json`` describes it (:mod:`kibitz.agents.serving.openapi`).

Endpoints (all answers JSON, errors included):

* ``GET /health``: ``{"status": "ok", ...}``.
* ``GET /agents``: the agent specs served, with their kind and options.
* ``POST /act``: ``{"game": GAME_STRING, "agent": SPEC, "history": [ids]}``
  (every action so far, chance included) or ``"state": SERIALIZED`` instead
  of the history (only the actions in it are read and replayed: for Python
  games the serialization's history line, its pickle never loaded; for
  C++ games the lines of action ids, never ``deserialize_state``);
  optional ``"seed"`` (int, default 0) and ``"player"`` (the seat the caller expects to be acting).
  Returns the seat to act, the chosen action and its name, and the agent's
  probabilities over the legal moves.
* ``/tables...``: the web table's API (:mod:`kibitz.agents.serving.table`).

Every body is checked before it is read: at most :data:`MAX_BODY` bytes,
nested at most :data:`MAX_DEPTH` deep, only the documented fields, each of
its type, a history of at most :data:`MAX_HISTORY` actions. Errors are
``{"error": message, "status": code}``.

An agent never sees another seat's hidden information: before it is asked,
the true state is replaced by ``state.resample_from_infostate(player,
sampler)`` with a sampler seeded from the request's seed, i.e. a state drawn
from what the acting seat knows (for perfect-information games the state
itself). A game that cannot resample is refused with 501 rather than shown
to an agent.
"""

from __future__ import annotations

import collections
import functools
import json
import re
import threading

import numpy as np
import pyspiel

from kibitz.agents.registry import agent_kinds, check_spec, make_agent, parse_spec

#: the largest request body read, in bytes
MAX_BODY = 1 << 20
#: the deepest nesting of arrays and objects a body may have
MAX_DEPTH = 8
#: the most actions a history may hold
MAX_HISTORY = 20_000
#: the longest game string taken
MAX_GAME_STRING = 1_000
#: game strings whose loaded games are kept (least recently used dropped)
GAME_CACHE = 256
#: the fields of a POST /act body
ACT_FIELDS = ("game", "agent", "history", "state", "seed", "player")


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def _norm(spec: str) -> str:
    return "".join(spec.split())


def is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def depth_of(value) -> int:
    """How deep arrays and objects nest in a parsed JSON value (a scalar: 0)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            v = v.values()
        elif not isinstance(v, list):
            continue
        deepest = max(deepest, d)
        stack.extend((x, d + 1) for x in v if isinstance(x, (list, dict)))
    return deepest


def parse_body(raw: bytes):
    """A request body as JSON, checked for size and nesting (ApiError otherwise)."""
    if len(raw) > MAX_BODY:
        raise ApiError(413, f"the body has {len(raw):,} bytes; at most {MAX_BODY:,}")
    try:
        value = json.loads(raw or b"null")
    except RecursionError:
        raise ApiError(400, f"the body is nested too deep; at most {MAX_DEPTH} levels") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ApiError(400, f"the body is not JSON: {e}") from None
    except ValueError as e:  # e.g. an integer of more digits than Python converts
        raise ApiError(400, f"the body is not JSON that can be read: {e}") from None
    depth = depth_of(value)
    if depth > MAX_DEPTH:
        raise ApiError(400, f"the body is nested {depth} levels deep; at most {MAX_DEPTH}")
    return value


def check_fields(body, allowed, what: str) -> dict:
    if not isinstance(body, dict):
        raise ApiError(400, f"the {what} body must be a JSON object")
    unknown = [k for k in body if k not in allowed]
    if unknown:
        raise ApiError(400, f"unknown field {unknown[0]!r} in the {what} body; its fields: {', '.join(allowed)}")
    return body


class GameCache:
    """Loaded games by game string, the :data:`GAME_CACHE` most recently used
    kept (thread-safe); a bad string is ApiError 400."""

    def __init__(self, size: int = GAME_CACHE):
        self.size = size
        self._games: collections.OrderedDict[str, pyspiel.Game] = collections.OrderedDict()
        self._lock = threading.Lock()

    def __len__(self):
        return len(self._games)

    def get(self, game_string) -> pyspiel.Game:
        if not isinstance(game_string, str) or not game_string.strip():
            raise ApiError(400, "'game' must be a game string, e.g. \"underdog(players=3)\"")
        if len(game_string) > MAX_GAME_STRING:
            raise ApiError(400, f"'game' has {len(game_string)} characters; at most {MAX_GAME_STRING}")
        with self._lock:
            game = self._games.get(game_string)
            if game is not None:
                self._games.move_to_end(game_string)
                return game
        from kibitz.agents.base import check_turn_based
        from kibitz.games import GameStringError, load_game
        from kibitz.games.loading import check_game_string
        try:
            check_game_string(game_string)
        except GameStringError as e:
            raise ApiError(400, f"bad game string: {e}") from None
        # simultaneous-move games, wrapped or not, are refused by their
        # registered type before anything is loaded: loading one can take
        # minutes with the GIL held (blotto(coins=100000))
        for short in _GAME_NAME.findall(game_string):
            dynamics = _not_sequential().get(short)
            if dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
                whole = game_string if "(" in game_string else f"{game_string}()"
                wrap = (f" (kibitz play and tournaments take it wrapped: turn_based_simultaneous_game(game={whole}))"
                        if game_string.lstrip().startswith(short) else "")
                raise ApiError(400, f"{short} is a simultaneous-move game; kibitz serve plays games of one move "
                                    f"at a time, and no wrapped simultaneous-move game either{wrap}")
            if dynamics is not None:
                raise ApiError(400, f"{short} is a {str(dynamics).rsplit('.', 1)[-1].lower().replace('_', '-')} "
                                    "game; kibitz serve plays games of one move at a time")
        try:
            game = load_game(game_string)
            check_turn_based(game)
            game.new_initial_state()  # some games check their parameters only here
        except GameStringError as e:
            raise ApiError(400, f"bad game string: {e}") from None
        except (ValueError, pyspiel.SpielError) as e:
            raise ApiError(400, f"bad game string: {game_string}: {str(e).strip().splitlines()[0]}") from None
        with self._lock:
            self._games[game_string] = game
            while len(self._games) > self.size:
                self._games.popitem(last=False)
        return game


#: a game's name in a game string: at the start, or the value of a parameter
_GAME_NAME = re.compile(r"(?:^|[(,]\s*\w+\s*=)\s*([A-Za-z_]\w*)")


@functools.cache
def _not_sequential() -> dict:
    """The registered games not played one move at a time: name -> dynamics."""
    return {t.short_name: t.dynamics for t in pyspiel.registered_games()
            if t.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL}


def replay(game, history) -> pyspiel.State:
    """The state after ``history`` (every action checked); ApiError 400 otherwise."""
    if not isinstance(history, list) or not all(is_int(a) for a in history):
        raise ApiError(400, "'history' must be a list of action ids (chance included)")
    if len(history) > MAX_HISTORY:
        raise ApiError(400, f"'history' has {len(history):,} actions; at most {MAX_HISTORY:,}")
    out_of_range = next((i for i, a in enumerate(history) if not 0 <= a < 2**63), None)
    if out_of_range is not None:
        raise ApiError(400, f"illegal history: action {history[out_of_range]} at position {out_of_range} is not "
                            f"an action id (0 .. 2**63-1)")
    from kibitz.games import REGISTRY
    # kibitz games refuse an illegal action themselves (with the reason), so
    # the legal actions are listed only for the message; other games are
    # checked first
    checks = game.get_type().short_name not in REGISTRY
    state = game.new_initial_state()
    for i, a in enumerate(history):
        if state.is_terminal():
            raise ApiError(400, f"illegal history: the game ends before position {i}")
        if checks and a not in state.legal_actions():
            _illegal(state, i, a)
        try:
            state.apply_action(a)
        except (ValueError, pyspiel.SpielError):
            _illegal(state, i, a)
    return state


def _illegal(state, i, a):
    who = "chance" if state.is_chance_node() else f"player {state.current_player()}"
    raise ApiError(400, f"illegal history: action {a} at position {i} is not legal for {who}; "
                        f"legal: {state.legal_actions()}")


def private_view(game, state, player, rng):
    """The state an agent of ``player`` is shown: drawn from that seat's
    information state (the state itself for perfect information)."""
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


class AgentService:
    """The request logic, independent of HTTP (thread-safe).

    Every spec is checked when the service is made
    (:func:`~kibitz.agents.registry.check_spec`): a bad one is a ValueError
    with the reason, before anything is served.
    """

    def __init__(self, specs: list[str], games: GameCache | None = None):
        if not specs:
            raise ValueError("serve needs at least one --agent")
        kinds = agent_kinds()
        self.specs: dict[str, str] = {}
        for spec in specs:
            name, _ = parse_spec(spec)
            if name not in kinds:
                raise ValueError(f"unknown agent {name!r}; agents are: {', '.join(sorted(kinds))}")
            if name == "human":
                raise ValueError("the human agent cannot be served")
            check_spec(spec)
            self.specs.setdefault(_norm(spec), spec.strip())  # the first spelling of a spec given twice
        self.games = games or GameCache()

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
        check_fields(req, ACT_FIELDS, "/act")
        game = self.games.get(req.get("game"))
        spec = self._spec(req)
        seed = req.get("seed", 0)
        if not is_int(seed) or not 0 <= seed < 2**64:
            raise ApiError(400, "'seed' must be an integer 0 .. 2**64-1")
        expected = req.get("player")
        if expected is not None and not is_int(expected):
            raise ApiError(400, f"'player' must be a seat number (an integer), not {expected!r}")
        state = self._state(game, req)
        if state.is_terminal():
            raise ApiError(400, "the game is over: no player is to act")
        if state.is_chance_node():
            raise ApiError(400, "chance is to act: add the chance outcome to the history first")
        player = state.current_player()
        if player < 0:
            raise ApiError(400, "no single player is to act (simultaneous moves are not served)")
        if expected is not None and expected != player:
            raise ApiError(409, f"wrong seat: seat {player} is to act, not seat {expected}")
        rng = np.random.default_rng(np.random.SeedSequence((seed, len(state.history()))))
        view = private_view(game, state, player, rng)
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
    def _spec(self, req):
        served = ", ".join(self.specs.values())
        if "agent" not in req:
            if len(self.specs) == 1:
                return next(iter(self.specs.values()))
            raise ApiError(400, f"'agent' is missing: {len(self.specs)} agents are served ({served})")
        agent = req["agent"]
        if not isinstance(agent, str):
            raise ApiError(400, f"'agent' must be an agent spec (a string); served agents: {served}")
        if _norm(agent) not in self.specs:
            raise ApiError(404, f"unknown agent {agent!r}; served agents: {served}")
        return self.specs[_norm(agent)]

    @staticmethod
    def _state(game, req):
        if "state" in req:
            if "history" in req:
                raise ApiError(400, "give either 'history' or 'state', not both")
            if not isinstance(req["state"], str):
                raise ApiError(400, "'state' must be a string from State.serialize()")
            text = req["state"]
            if type(game).__module__.split(".")[0] != "pyspiel" or "__dict__=" in text:
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
                return replay(game, history)
            # An OpenSpiel C++ game's serialization is, unless the game
            # overrides it, one action id a line. It is read as that and
            # replayed (every action checked), never handed to
            # deserialize_state: C++ games trust its text and can crash on
            # a bad one. A game with another serialization is refused.
            bad = ApiError(400, f"bad serialized state: not a {game.get_type().short_name} state from "
                                "State.serialize() as one action id a line (send 'history', the list of "
                                "action ids, instead)")
            try:
                history = [int(line) for line in text.split("\n") if line.strip()]
            except ValueError:
                raise bad from None
            state = replay(game, history)
            if state.serialize().strip() != text.strip():
                raise bad
            return state
        if "history" not in req:
            raise ApiError(400, "give 'history' (every action id so far) or 'state'")
        return replay(game, req["history"])
