"""``kibitz serve`` over HTTP: the Starlette application and the uvicorn server.

:func:`make_app` routes ``/health``, ``/agents``, ``/act`` and
``/openapi.json`` to :class:`~kibitz.agents.serving.serve.AgentService`, ``/`` and
``/static/`` to the web table's page (``agents/serving/web/``), ``/tables...`` to
its :class:`~kibitz.agents.serving.table.TableStore` and ``/records...`` to the
finished games it keeps (:class:`~kibitz.agents.serving.table_records.RecordStore`). Every answer is JSON, errors
included (unknown paths and methods, bodies too large or nested too deep,
failures inside an agent). :class:`Server` runs the application on uvicorn
on a socket it binds itself (port 0: a free one), with an idle timeout from
the moment a connection opens. :class:`ServeConfig` is one ``kibitz serve``
(its options, checked), :meth:`ServeConfig.listen` its server.

Why Starlette and uvicorn: a small, maintained ASGI toolkit (routing,
request streaming, static files) and a server that keeps connections alive
and parses HTTP in C (httptools); the OpenAPI description is written out by
hand (:mod:`kibitz.agents.serving.openapi`), so no schema framework is needed.

The web stack is imported only when an application is made: the agent
registry imports every module of this package.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import os
import socket
import threading

from kibitz.agents.serving.serve import MAX_BODY, ApiError, AgentService, parse_body
from kibitz.agents.serving.table_records import RecordsDbError, RecordStore, default_path
from kibitz.solvers.solve import ConfigError

#: path -> the methods it answers (for 404 and 405 messages)
ROUTES = {"/health": ("GET",), "/agents": ("GET",), "/act": ("POST",), "/openapi.json": ("GET",),
          "/": ("GET",), "/tables": ("POST",), "/tables/{id}": ("GET", "DELETE"),
          "/tables/options": ("GET",), "/tables/{id}/move": ("POST",), "/tables/{id}/new": ("POST",),
          "/tables/{id}/skip": ("POST",), "/records": ("GET",), "/records/games.jsonl": ("GET",)}
#: the idle time after which a connection that sends nothing is closed, in seconds
IDLE_TIMEOUT = 5.0
#: requests handled at once; more are answered 503
MAX_CONCURRENT = 256
#: seconds a request body may take to arrive
BODY_TIMEOUT = 10.0
#: seconds a request's line and headers may take to arrive, from the first
#: byte that comes while the connection waits for them
HEADER_TIMEOUT = 10.0


def _paths_text() -> str:
    return ", ".join(f"{m} {p}" for p, ms in ROUTES.items() for m in ms if not p.startswith("/tables/"))


def make_app(specs: list[str], *, bot_delay: float = 1.0, max_tables: int = 64, table_idle: float = 1800.0,
             loopback_only: bool = True, service: AgentService | None = None, db: str = ":memory:",
             policy_dir: str | None = None):
    """The Starlette application of ``kibitz serve`` (specs checked first:
    ValueError with the reason). ``bot_delay``: seconds between the bots'
    moves at a web table; ``max_tables`` tables are kept (the least recently
    used dropped), and a table unused for ``table_idle`` seconds is dropped.
    ``db``: the SQLite file of the tables' finished games (``:memory:``:
    kept while the process runs; a file that is not one raises
    :class:`~kibitz.agents.serving.table_records.RecordsDbError`, a ValueError).
    ``policy_dir``: the folder whose agent files (``policy(FILE)``,
    ``net(FILE)``) a table may seat; None: none but the served specs.
    ``loopback_only``: answer only requests whose Host is this machine's
    loopback name (a guard against DNS rebinding)."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    from kibitz.agents.serving import openapi
    from kibitz.agents.serving.table import WEB_DIR, TableStore

    service = service or AgentService(specs)
    tables = TableStore(service.games, bot_delay=bot_delay, max_tables=max_tables, idle=table_idle,
                        suggested=list(service.specs.values()), records=RecordStore(db), policy_dir=policy_dir)
    document = openapi.document(service.health()["kibitz_version"])
    routes = [*_service_routes(service, document), *_table_routes(tables),
              Mount("/static", StaticFiles(directory=WEB_DIR), name="static")]
    app = Starlette(routes=routes, exception_handlers={HTTPException: _http_error, Exception: _server_error})
    app.state.service = service
    app.state.tables = tables
    return _Guard(app, loopback_only, _error)


def _error(status: int, message: str):
    """The JSON error answer: ``{"error": message, "status": status}``."""
    from starlette.responses import JSONResponse

    return JSONResponse({"error": message, "status": status}, status_code=status)


async def _body_of(request, json_only: bool):
    """The request's body as parsed by :func:`parse_body`: at most
    :data:`MAX_BODY` bytes arriving within :data:`BODY_TIMEOUT` seconds,
    as JSON only when ``json_only`` (ApiError 408, 413 or 415 otherwise)."""
    if json_only:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise ApiError(415, "send the body as Content-Type: application/json")
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
        raise ApiError(413, f"the body may have at most {MAX_BODY:,} bytes")
    chunks = []

    async def read():
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_BODY:
                raise ApiError(413, f"the body may have at most {MAX_BODY:,} bytes")
            chunks.append(chunk)

    try:
        await asyncio.wait_for(read(), BODY_TIMEOUT)
    except asyncio.TimeoutError:
        raise ApiError(408, f"the body did not arrive within {BODY_TIMEOUT:g} s") from None
    return parse_body(b"".join(chunks))


def _answer(handler):
    """An endpoint that turns ApiError (and any other failure) into a JSON error."""
    from starlette.responses import JSONResponse

    async def endpoint(request):
        try:
            return JSONResponse(await handler(request))
        except ApiError as e:
            return _error(e.status, e.message)
        except asyncio.CancelledError:  # stopped (Ctrl-C) with this request still in flight
            return _error(503, "the server is stopping: this request was not finished; try again")
        except Exception as e:  # an agent or game failure: report it, keep serving
            return _error(500, f"{type(e).__name__}: {e}")
    return endpoint


def _service_routes(service: AgentService, document: dict) -> list:
    """The agent service's routes: /health, /agents, /act, /openapi.json and the page."""
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import FileResponse
    from starlette.routing import Route

    from kibitz.agents.serving.table import WEB_DIR

    async def health(request):
        return service.health()

    async def agents(request):
        return service.agents()

    async def act(request):
        body = await _body_of(request, json_only=False)
        return await run_in_threadpool(service.act, body)

    async def spec(request):
        return document

    async def page(request):
        return FileResponse(WEB_DIR / "index.html", media_type="text/html")

    return [Route("/health", _answer(health), methods=["GET"]),
            Route("/agents", _answer(agents), methods=["GET"]),
            Route("/act", _answer(act), methods=["POST"]),
            Route("/openapi.json", _answer(spec), methods=["GET"]),
            Route("/", page, methods=["GET"])]


def _table_routes(tables) -> list:
    """The web tables' routes (/tables...) and their records' (/records...)."""
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import Response
    from starlette.routing import Route

    async def create_table(request):
        body = await _body_of(request, json_only=True)
        return await run_in_threadpool(tables.create, body)

    async def view_table(request):
        seat = request.query_params.get("seat")
        return await run_in_threadpool(tables.view, request.path_params["id"], seat)

    def with_body(method):
        async def endpoint(request):
            body = await _body_of(request, json_only=True)
            return await run_in_threadpool(method, request.path_params["id"], body)
        return endpoint

    async def records(request):
        return await run_in_threadpool(tables.standings)

    async def records_file(request):
        import io

        out = io.StringIO()
        await run_in_threadpool(tables.records.export, out)
        return Response(out.getvalue(), media_type="application/x-ndjson",
                        headers={"content-disposition": 'attachment; filename="games.jsonl"'})

    async def delete_table(request):
        return tables.delete(request.path_params["id"])

    async def table_options(request):
        return tables.options()

    return [Route("/tables", _answer(create_table), methods=["POST"]),
            Route("/tables/options", _answer(table_options), methods=["GET"]),
            Route("/tables/{id}", _answer(view_table), methods=["GET"]),
            Route("/tables/{id}", _answer(delete_table), methods=["DELETE"]),
            Route("/tables/{id}/move", _answer(with_body(tables.move)), methods=["POST"]),
            Route("/tables/{id}/new", _answer(with_body(tables.new_game)), methods=["POST"]),
            Route("/tables/{id}/skip", _answer(with_body(tables.skip)), methods=["POST"]),
            Route("/records", _answer(records), methods=["GET"]),
            Route("/records/games.jsonl", records_file, methods=["GET"])]


async def _http_error(request, exc):
    path = request.url.path
    if exc.status_code == 405:
        allowed = [m for p, ms in ROUTES.items() for m in ms if _matches(p, path)]
        return _error(405, f"use {' or '.join(f'{m} {path}' for m in allowed) or 'another method'}")
    if exc.status_code == 404:
        if path.startswith("/static/"):
            return _error(404, f"no such file {path!r}")
        return _error(404, f"no such path {path!r}; paths: {_paths_text()}")
    return _error(exc.status_code, str(exc.detail))


async def _server_error(request, exc):
    return _error(500, f"{type(exc).__name__}: {exc}")


def _matches(pattern: str, path: str) -> bool:
    a, b = pattern.strip("/").split("/"), path.strip("/").split("/")
    return len(a) == len(b) and all(x == y or x.startswith("{") for x, y in zip(a, b))


class _Guard:
    """ASGI middleware: JSON 503 above :data:`MAX_CONCURRENT` requests at
    once, JSON 400 for a Host that is not loopback (when ``loopback_only``),
    and a Content-Security-Policy that lets the page load nothing but this
    server's own files."""

    LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
    HEADERS = [(b"content-security-policy", b"default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"),
               (b"x-content-type-options", b"nosniff")]

    def __init__(self, app, loopback_only: bool, error):
        self.app = app
        self.state = app.state
        self.loopback_only = loopback_only
        self.error = error
        self.active = 0

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.loopback_only:
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if name not in self.LOOPBACK:
                await self.error(400, f"Host {host!r} is not this machine's loopback address "
                                      "(start kibitz serve with --host to serve other names)")(scope, receive, send)
                return
        if self.active >= MAX_CONCURRENT:
            await self.error(503, f"busy: {MAX_CONCURRENT} requests are being served; try again")(scope, receive,
                                                                                                  send)
            return

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = list(message["headers"]) + self.HEADERS
            await send(message)

        self.active += 1
        try:
            await self.app(scope, receive, send_with_headers)
        finally:
            self.active -= 1


def _raw_json_error(status: int, reason: str, message: str) -> bytes:
    """A whole HTTP/1.1 answer with the JSON error body, closing the connection."""
    import json

    body = json.dumps({"error": message, "status": status}).encode()
    return (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode() + body


def _protocol_class():
    """uvicorn's HTTP protocol on httptools (a dependency; h11 only if it is
    missing, and then without the header timeout) with an idle timeout from
    the moment a connection opens (uvicorn's own keep-alive timeout starts
    only after a first request), a timeout of :data:`HEADER_TIMEOUT` on a
    request's line and headers (from the first byte that comes while the
    connection waits for them: uvicorn waits forever), and JSON for the
    errors uvicorn answers itself (a request that is not HTTP)."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as Base
    except ImportError:  # httptools is optional for uvicorn
        from uvicorn.protocols.http.h11_impl import H11Protocol as Base

    class IdleTimeoutProtocol(Base):
        _header_task = None
        #: whether the connection waits for a request's line and headers
        #: (from its start, and again after each answer with none queued)
        _awaiting_headers = True

        def connection_made(self, transport):
            super().connection_made(transport)
            self.timeout_keep_alive_task = self.loop.call_later(self.timeout_keep_alive,
                                                                self.timeout_keep_alive_handler)

        def data_received(self, data):
            # uvicorn cancels its idle timer on any byte, even bytes that
            # start no request (a bare CRLF): from the first byte the
            # headers have HEADER_TIMEOUT to arrive
            super().data_received(data)
            if self._awaiting_headers and self._header_task is None and not self.transport.is_closing():
                self._header_task = self.loop.call_later(HEADER_TIMEOUT, self._headers_too_slow)

        def on_headers_complete(self):
            self._awaiting_headers = False
            self._cancel_header_timer()
            super().on_headers_complete()

        def on_response_complete(self):
            queued = bool(self.pipeline)  # a queued request's headers have arrived already
            super().on_response_complete()
            if not queued:
                self._awaiting_headers = True

        def connection_lost(self, exc):
            self._cancel_header_timer()
            super().connection_lost(exc)

        def _cancel_header_timer(self):
            if self._header_task is not None:
                self._header_task.cancel()
                self._header_task = None

        def _headers_too_slow(self):
            self._header_task = None
            if self.transport.is_closing() or not self._awaiting_headers:
                return
            if self.cycle is not None and not self.cycle.response_complete:
                return  # an answer is still being sent: the idle timer after it closes a silent connection
            self.transport.write(_raw_json_error(
                408, "Request Timeout", f"the request's headers did not arrive within {HEADER_TIMEOUT:g} s"))
            self.transport.close()

        def send_400_response(self, msg: str):
            self.transport.write(_raw_json_error(400, "Bad Request", f"not an HTTP request: {msg}"))
            self.transport.close()

    return IdleTimeoutProtocol


class Server:
    """``app`` on uvicorn, listening on ``host:port`` (port 0: a free one) as
    soon as it is made (OSError if it cannot). :meth:`run` serves until
    stopped (Ctrl-C); :meth:`start` serves from a background thread (tests,
    embedding) and :meth:`stop` ends it."""

    def __init__(self, app, host: str = "127.0.0.1", port: int = 8000, quiet: bool = True,
                 idle_timeout: float = IDLE_TIMEOUT):
        import copy

        import uvicorn
        from uvicorn.config import LOGGING_CONFIG

        # uvicorn logs requests to stdout; kibitz keeps stdout for its own
        # lines (the banner, "stopped") and logs to stderr
        logging_config = copy.deepcopy(LOGGING_CONFIG)
        logging_config["handlers"]["access"]["stream"] = "ext://sys.stderr"
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.socket.bind((host, port))
            self.socket.listen(2048)
        except OSError:
            self.socket.close()
            raise
        self.host, self.port = self.socket.getsockname()[:2]
        self.app = app
        config = uvicorn.Config(app, log_level="warning" if quiet else "info", access_log=not quiet,
                                http=_protocol_class(), lifespan="off", timeout_keep_alive=idle_timeout,
                                limit_concurrency=4 * MAX_CONCURRENT, server_header=False,
                                timeout_graceful_shutdown=2, log_config=logging_config)
        self.server = uvicorn.Server(config)
        self._thread = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def run(self) -> None:
        """Serves until Ctrl-C (or :meth:`stop` from another thread)."""
        try:
            self.server.run(sockets=[self.socket])
        finally:
            self.socket.close()

    def start(self) -> "Server":
        # uvicorn installs its signal handlers only in the main thread
        self._thread = threading.Thread(target=self.run, daemon=True, name="kibitz-serve")
        self._thread.start()
        while not self.server.started and self._thread.is_alive():
            self._thread.join(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)


#: the agents ``kibitz serve`` serves when it is given none
DEFAULT_AGENTS = ("heuristic", "random")
#: the host names that reach only this machine: a server on one answers only requests that name it
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclasses.dataclass(frozen=True)
class ServeConfig:
    """One ``kibitz serve``: every field is an option of the command
    (``agents``: the ``--agent`` specs, a sequence or one spec;
    ``bot_delay`` and ``table_idle`` in seconds; ``db`` None: the file of
    :func:`~kibitz.agents.serving.table_records.default_path`; ``log``:
    every request logged to stderr), checked when it is made
    (:class:`kibitz.solvers.solve.ConfigError` naming the option). The
    agent specs are checked when :meth:`listen` makes the server."""

    agents: tuple = DEFAULT_AGENTS
    host: str = "127.0.0.1"
    port: int = 8000
    bot_delay: float = 1.0
    max_tables: int = 64
    table_idle: float = 1800.0
    db: str | None = None
    policy_dir: str | None = None
    log: bool = False

    def __post_init__(self):
        agents = (self.agents,) if isinstance(self.agents, str) else tuple(self.agents)
        if not agents:
            raise ConfigError("serve needs at least one --agent", "--agent")
        object.__setattr__(self, "agents", agents)
        for name, value, low, high in (("--port", self.port, 0, 65535), ("--bot-delay", self.bot_delay, 0, 60),
                                       ("--max-tables", self.max_tables, 1, 10_000),
                                       ("--table-idle", self.table_idle, 1, math.inf)):
            if not low <= value <= high:
                raise ConfigError(f"{value}: allowed: {low} to {high:,}" if high < math.inf
                                  else f"{value}: at least {low}", name)
        if self.policy_dir is not None and not os.path.isdir(self.policy_dir):
            raise ConfigError(f"{self.policy_dir}: not a folder", "--policy-dir")

    def listen(self) -> Server:
        """The server: the agents checked and the application made
        (ConfigError naming ``--agent``, or ``--db`` for a records file that
        cannot be opened), listening on ``host:port`` (OSError if it cannot)
        but not yet answering: :meth:`Server.run` or :meth:`Server.start`."""
        try:
            app = make_app(list(self.agents), bot_delay=self.bot_delay, max_tables=self.max_tables,
                           table_idle=self.table_idle, loopback_only=self.host in LOOPBACK_HOSTS,
                           db=default_path() if self.db is None else self.db, policy_dir=self.policy_dir)
        except RecordsDbError as e:
            raise ConfigError(str(e), "--db") from None
        except ValueError as e:
            raise ConfigError(str(e), "--agent") from None
        return Server(app, self.host, self.port, quiet=not self.log)
