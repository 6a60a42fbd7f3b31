"""The web table: games the server holds, each shown to a page one seat at a time.

A table is made from a game string and one agent spec per seat, ``human``
for the person's seat (none: a game of bots to watch), or from a record of a
tournament's games.jsonl (a replay). The server holds the game; a page asks
for its seat's view (:func:`kibitz.agents.serving.table_views.seat_view`) and sends
the person's moves by action id. The bots move on the server, at most one
every ``bot_delay`` seconds so that a person can follow them: a table moves
on when its view is asked for (the page polls), so a table nobody looks at
costs nothing. A bot is shown only its seat's information state, as at
``POST /act`` (:func:`kibitz.agents.serving.serve.private_view`). Chance is drawn from
the table's seed.

A page that plays seat ``h`` gets only seat ``h``'s view; a page watching
bots or a replay may look from any seat, one at a time. At a table with a
person the seed is mixed with a number the server draws for each deal and
never sends: the person chose the seed, and could otherwise replay the
deck's order and the bots' draws from it. A game of bots is reproducible
from its seed alone. :class:`TableStore`
keeps at most ``max_tables`` tables (the least recently used is dropped
first) and drops a table unused for ``idle`` seconds.

A game that ends (not a replay) is handed to the store's
:class:`~kibitz.agents.serving.table_records.RecordStore` as a games.jsonl record.
A person who is out, or a page watching bots or a replay, may skip to the
result: the bots then move without the delay. A seat's agent file
(``policy(FILE)``, ``net(FILE)``) must be in the store's ``policy_dir``
(the served specs excepted); any other file gets one answer.
"""

from __future__ import annotations

import collections
import os
import pathlib
import secrets
import threading
import time

import numpy as np

from kibitz.agents.registry import agent_kinds, make_agent, split_specs
from kibitz.agents.serving.serve import MAX_HISTORY, ApiError, check_fields, is_int, private_view
from kibitz.agents.serving.table_views import adapter_of, cli_game_string, seat_view
from kibitz.games import REGISTRY

#: the page's files (index.html, table.js, table.css), package data
WEB_DIR = pathlib.Path(__file__).resolve().parent / "web"
#: the most seconds one view request spends moving bots before it answers
MOVE_BUDGET = 2.0
#: agent specs the page suggests besides the served ones
SUGGESTED = ("random", "heuristic", "ismcts(sims=200)", "ismcts(sims=1000)", "trained", "policy(FILE)",
             "net(FILE)")
HUMAN = "human"
CREATE_FIELDS = ("game", "seats", "seed", "replay")
#: a table's bots search at most this many simulations a move ...
TABLE_MAX_SIMS = 10_000
#: ... and a timed search at most this many seconds a move
TABLE_MAX_SECONDS = 10.0


class Table:
    """One game held by the server (see the module docstring)."""

    def __init__(self, table_id: str, game, seats: list[str], seed: int, record: dict | None = None,
                 agent_specs: list[str] | None = None, on_finish=None):
        self.id = table_id
        self.game = game
        self.game_string = cli_game_string(game)
        self.seats = seats
        # the specs the bots are made from (a file's path in the policy folder)
        self.agent_specs = agent_specs or seats
        self.on_finish = on_finish
        # a replay plays its recorded moves in every seat, "human" included
        self.human = seats.index(HUMAN) if HUMAN in seats and record is None else None
        self.record = record
        self.mode = "replay" if record is not None else "play" if self.human is not None else "watch"
        self.lock = threading.Lock()
        self.used = time.monotonic()
        self.games_played = 0
        self.deal(seed)

    def deal(self, seed: int) -> None:
        """A new game at this table (the same seats), chance and bots seeded
        from ``seed`` (and, with a person seated, a secret: see the module
        docstring)."""
        self.seed = seed
        self._secret = secrets.randbits(64) if self.human is not None else 0
        self.state = self.game.new_initial_state()
        self.rng = np.random.default_rng(np.random.SeedSequence((seed, self._secret, 0x7AB1E)))
        self.agents = [None if spec == HUMAN or self.record is not None else
                       build_agent(spec, self.game, s, seed=self._seed_words(s, 0x5EA7))
                       for s, spec in enumerate(self.agent_specs)]
        self.error = None
        self.last_move = -1e18  # the first bot move is due at once
        self.hurry = False  # skip to the result: the bots move without delay
        self.stored = None  # the game's index in the records, once stored
        self.games_played += 1
        self._views = {}

    @property
    def version(self) -> int:
        return len(self.state.history())

    # ------------------------------------------------------------ moving
    def advance(self, delay: float) -> None:
        """Plays the chance outcomes and the bots' (or the record's) moves that
        are due: every chance outcome at once, a seat's move ``delay`` seconds
        after the one before; stops at the person's turn and the end."""
        start = time.monotonic()
        while not self.state.is_terminal() and self.error is None:
            if time.monotonic() - start > MOVE_BUDGET:
                return
            player = self.state.current_player()
            chance = self.state.is_chance_node()
            if not chance and player == self.human:
                return
            if not chance and not self.hurry and time.monotonic() < self.last_move + delay:
                return
            try:
                action = self._next_action(player, chance)
                self.state.apply_action(action)
            except Exception as e:  # a bot that fails: the page shows why, the table stops
                who = "chance" if chance else f"seat {player} ({self.seats[player]})"
                self.error = f"{who}: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
                return
            if not chance:
                self.last_move = time.monotonic()
        self._finish()

    def _finish(self) -> None:
        """Stores a game that has ended (once; not a replay) through ``on_finish``."""
        if not self.state.is_terminal() or self.stored is not None or self.mode == "replay" \
                or self.on_finish is None:
            return
        self.stored = 0
        try:
            self.stored = self.on_finish(self.game_record())
        except Exception as e:  # the game is over either way: say that its record is lost
            self.error = f"the game's record was not stored: {e}"

    def game_record(self) -> dict:
        """The finished game as a games.jsonl record without its index (see
        :mod:`kibitz.agents.serving.table_records`)."""
        names = list(dict.fromkeys(self.seats))
        return {"game": self.game_string, "deal": self.seed, "deal_seed": [], "arrangement": 0,
                "seats": list(self.seats), "seat_agents": [names.index(s) for s in self.seats],
                "agent_seeds": [0 if spec == HUMAN else self._seed_words(s, 0x5EA7)
                                for s, spec in enumerate(self.seats)],
                "moves": [int(a) for a in self.state.history()],
                "returns": [float(r) for r in self.state.returns()],
                "person": self.human, "table_seed": self.seed}

    @property
    def person_out(self) -> bool:
        """Whether the person is seated but out of the game (moves no more)."""
        if self.human is None or self.state.is_terminal():
            return False
        return bool(adapter_of(self.game).out(self.state, self.human))

    def skip(self) -> None:
        """Plays the rest of the game without the bots' delay (only when nobody
        at the table is still to move: a game of bots, a replay, or a person
        who is out)."""
        if self.mode == "play" and not self.person_out and not self.state.is_terminal():
            raise ApiError(409, "you are still in the game: skipping is for a game you are out of")
        self.hurry = True

    def _next_action(self, player: int, chance: bool) -> int:
        if self.record is not None:
            moves = self.record["moves"]
            return moves[self.version]
        if chance:
            outcomes = self.state.chance_outcomes()
            probs = np.array([p for _, p in outcomes])
            return int(outcomes[self.rng.choice(len(outcomes), p=probs / probs.sum())][0])
        rng = np.random.default_rng(self._seed_words(self.version, 0x5A3E))
        view = private_view(self.game, self.state, player, rng)
        return int(self.agents[player].step(view))

    def _seed_words(self, *key) -> int:
        return int(np.random.SeedSequence((self.seed, self._secret, *key)).generate_state(1)[0])

    def move(self, seat: int, action) -> None:
        if self.mode != "play":
            raise ApiError(409, f"nobody plays at this table: it is a {self.mode}")
        if seat != self.human:
            raise ApiError(403, f"this table's person plays seat {self.human}, not seat {seat}")
        if self.state.is_terminal():
            raise ApiError(409, "the game is over: start a new game")
        if self.state.is_chance_node() or self.state.current_player() != seat:
            who = "chance" if self.state.is_chance_node() else f"seat {self.state.current_player()}"
            raise ApiError(409, f"not your turn: {who} is to move")
        legal = self.state.legal_actions()
        if not is_int(action) or action not in legal:
            moves = ", ".join(f"{a} {self.state.action_to_string(seat, a)}" for a in legal[:20])
            raise ApiError(400, f"action {action!r} is not legal for seat {seat}; legal: {moves}"
                                + (f" and {len(legal) - 20} more" if len(legal) > 20 else ""))
        self.state.apply_action(action)
        self.last_move = time.monotonic()
        self._finish()

    # ------------------------------------------------------------ viewing
    def view(self, seat: int) -> dict:
        key = (seat, self.version, self.error)
        cached = self._views.get(key)
        if cached is None:
            cached = seat_view(self.state, seat)
            self._views = {key: cached}
        out = dict(cached)
        out.update({
            "table": self.id, "mode": self.mode, "game": self.game_string,
            "short_name": self.game.get_type().short_name, "version": self.version,
            "seats": [{"seat": s, "agent": "you" if s == self.human else spec}
                      for s, spec in enumerate(self.seats)],
            "human": self.human, "seed": self.seed, "games_played": self.games_played, "error": self.error,
            "skipping": self.hurry, "record": self.stored or None,
        })
        if self.record is not None:
            out["replay"] = {"index": self.record["index"], "moves": len(self.record["moves"]),
                             "recorded_returns": self.record["returns"]}
        return out


class TableStore:
    """The tables of one server (thread-safe; see the module docstring)."""

    def __init__(self, games, bot_delay: float = 1.0, max_tables: int = 64, idle: float = 1800.0,
                 suggested: list[str] | None = None, records=None, policy_dir: str | None = None):
        from kibitz.agents.serving.table_records import RecordStore

        self.games = games
        self.bot_delay = float(bot_delay)
        self.max_tables = int(max_tables)
        self.idle = float(idle)
        #: the served specs: seated as they are (the operator named them at start)
        self.served = set(suggested or [])
        self.suggested = list(dict.fromkeys([*(suggested or []), *SUGGESTED]))
        self.records = records if records is not None else RecordStore(":memory:")
        self.policy_dir = os.path.realpath(policy_dir) if policy_dir else None
        self._tables: collections.OrderedDict[str, Table] = collections.OrderedDict()
        self._lock = threading.Lock()

    def __len__(self):
        return len(self._tables)

    def options(self) -> dict:
        """What the page's forms offer: the games, agent kinds and suggested specs."""
        games = [{"name": name, "long_name": spec.long_name, "summary": spec.summary, "small": spec.small,
                  "params": [{"name": p.name, "default": p.default, "allowed": p.allowed, "help": p.help}
                             for p in spec.params]}
                 for name, spec in sorted(REGISTRY.items())]
        kinds = [{"name": k.name, "help": k.help} for k in agent_kinds().values() if k.name != HUMAN]
        return {"games": games, "agent_kinds": kinds, "suggested": self.suggested, "bot_delay": self.bot_delay,
                "max_tables": self.max_tables, "policy_dir": self.policy_dir is not None}

    # ------------------------------------------------------------ endpoints
    def create(self, body) -> dict:
        check_fields(body, CREATE_FIELDS, "/tables")
        seed = body.get("seed", 0)
        if not is_int(seed) or not 0 <= seed < 2**63:
            raise ApiError(400, "'seed' must be an integer 0 .. 2**63-1")
        if "replay" in body:
            if "game" in body or "seats" in body:
                raise ApiError(400, "a replay takes its game and seats from the record: give 'replay' alone")
            game, seats, record = self._record(body["replay"])
        else:
            game = self.games.get(body.get("game"))
            short = game.get_type().short_name
            if short not in REGISTRY:
                raise ApiError(400, f"the web table plays the kibitz games ({', '.join(sorted(REGISTRY))}), "
                                    f"not {short}")
            seats, specs = self._seats(body.get("seats"), game)
            record = None
        if record is not None:
            specs = seats
        table_id = secrets.token_urlsafe(12)
        try:
            table = Table(table_id, game, seats, seed, record, agent_specs=specs, on_finish=self.records.add)
        except (ValueError, OSError) as e:  # an agent that cannot be made for this game
            raise ApiError(400, _agent_error(seats, specs, game, e)) from None
        with self._lock:
            self._sweep()
            while len(self._tables) >= self.max_tables:
                self._tables.popitem(last=False)
            self._tables[table_id] = table
        return self._view(table, None)

    def view(self, table_id: str, seat) -> dict:
        table = self._get(table_id)
        return self._view(table, seat)

    def move(self, table_id: str, body) -> dict:
        check_fields(body, ("seat", "action", "version"), "move")
        for field in ("seat", "version"):
            if field in body and not is_int(body[field]):
                raise ApiError(400, f"'{field}' must be an integer, not {body[field]!r}")
        table = self._get(table_id)
        with table.lock:
            version = body.get("version")
            if version is not None and version != table.version:
                raise ApiError(409, f"the table has moved on (version {table.version}, not {version}): "
                                    "look again before moving")
            table.move(body.get("seat", table.human), body.get("action"))
        return self._view(table, table.human)

    def new_game(self, table_id: str, body) -> dict:
        check_fields(body, ("seed",), "new game")
        table = self._get(table_id)
        seed = body.get("seed", table.seed + 1)
        if not is_int(seed) or not 0 <= seed < 2**63:
            raise ApiError(400, "'seed' must be an integer 0 .. 2**63-1")
        with table.lock:
            table.deal(seed)
        return self._view(table, None)

    def skip(self, table_id: str, body) -> dict:
        check_fields(body, (), "skip")
        table = self._get(table_id)
        with table.lock:
            table.skip()
        return self._view(table, None if table.mode == "play" else 0)

    def standings(self) -> dict:
        """Each bot's record against people (:meth:`RecordStore.standings`)."""
        return {"games_stored": len(self.records), "games": self.records.standings()}

    def delete(self, table_id: str) -> dict:
        with self._lock:
            if self._tables.pop(table_id, None) is None:
                raise ApiError(404, f"no table {table_id!r} (it may have been closed or expired)")
        return {"deleted": table_id}

    # ------------------------------------------------------------ helpers
    def _get(self, table_id: str) -> Table:
        with self._lock:
            self._sweep()
            table = self._tables.get(table_id)
            if table is None:
                raise ApiError(404, f"no table {table_id!r} (it may have been closed or expired: "
                                    f"tables unused for {self.idle:g} s are dropped, and the oldest when "
                                    f"{self.max_tables} are open)")
            self._tables.move_to_end(table_id)
            table.used = time.monotonic()
            return table

    def _sweep(self) -> None:
        now = time.monotonic()
        for table_id in [t for t, table in self._tables.items() if now - table.used > self.idle]:
            del self._tables[table_id]

    def _view(self, table: Table, seat) -> dict:
        n = table.game.num_players()
        if table.mode == "play":
            if seat not in (None, "", str(table.human), table.human):
                raise ApiError(403, f"this table's page sees seat {table.human} only")
            seat = table.human
        elif seat in (None, ""):
            seat = 0
        else:
            try:
                seat = int(seat)
            except (TypeError, ValueError):
                raise ApiError(400, f"'seat' must be a seat number 0..{n - 1}, not {seat!r}") from None
            if not 0 <= seat < n:
                raise ApiError(400, f"'seat' must be a seat number 0..{n - 1}, not {seat}")
        with table.lock:
            table.advance(self.bot_delay)
            out = table.view(seat)
        out["bot_delay"] = self.bot_delay
        return out

    def _seats(self, seats, game) -> list[str]:
        n = game.num_players()
        if isinstance(seats, str):
            try:
                seats = split_specs(seats)
            except ValueError as e:
                raise ApiError(400, f"'seats': {e}") from None
        if not isinstance(seats, list) or not all(isinstance(s, str) and s.strip() for s in seats):
            raise ApiError(400, f"'seats' must be a list of {n} agent specs, 'human' for your seat")
        if len(seats) != n:
            raise ApiError(400, f"{game} has {n} seats; 'seats' names {len(seats)}")
        seats = [s.strip() for s in seats]
        if seats.count(HUMAN) > 1:
            raise ApiError(400, "one person per table: 'human' may be given for one seat only")
        specs = [self._agent_file(s, spec, game) for s, spec in enumerate(seats)]
        for s, spec in enumerate(seats):
            problem = _over_budget(spec, game, specs[s] if isinstance(specs[s], tuple) else None)
            if problem:
                raise ApiError(400, f"seat {s} ({spec}): {problem}")
        return seats, specs

    def _agent_file(self, seat: int, spec: str, game):
        """``spec`` (a served spec or one without a file), or the kind and
        options of an agent that reads a file (``policy(FILE)``,
        ``net(FILE)``) with its path in the policy folder. Any other file
        is refused with one answer, whether it is outside the folder, does
        not exist or is not an agent file for ``game``: a page learns
        nothing about the server's other files."""
        from kibitz.agents.registry import resolve_spec
        if spec == HUMAN or spec in self.served:
            return spec
        try:
            kind, options = resolve_spec(spec)
        except ValueError:
            return spec  # the agent's own checks say what is wrong
        path = options.get("path")
        if "path" not in kind.options or not path:
            return spec
        if self.policy_dir is None:
            raise ApiError(400, f"seat {seat} ({spec}): the web table seats agent files only from the folder "
                                "given with kibitz serve --policy-dir, and none was given")
        refused = ApiError(400, f"seat {seat} ({spec}): {str(path)!r} is not an agent file for {game} in the "
                                "table's policy folder")
        real = os.path.realpath(os.path.join(self.policy_dir, str(path)))
        if os.path.commonpath([real, self.policy_dir]) != self.policy_dir or not os.path.isfile(real):
            raise refused
        resolved = (kind, {**options, "path": real})
        try:
            build_agent(resolved, game, seat, seed=0)
        except (ValueError, OSError):
            raise refused from None
        return resolved

    def _record(self, record):
        from kibitz.agents.matches.tournament import record_problem, replay_record
        problem = record_problem(record)
        if problem:
            raise ApiError(400, f"'replay': {problem}")
        if len(record["moves"]) > MAX_HISTORY:
            raise ApiError(400, f"'replay' has {len(record['moves']):,} moves; at most {MAX_HISTORY:,}")
        game = self.games.get(record["game"])
        if game.get_type().short_name not in REGISTRY:
            raise ApiError(400, f"the web table replays the kibitz games ({', '.join(sorted(REGISTRY))})")
        if len(record["seats"]) != game.num_players():
            raise ApiError(400, f"'replay': {game} has {game.num_players()} seats, the record "
                                f"{len(record['seats'])}")
        try:
            replay_record(record)
        except ValueError as e:
            raise ApiError(400, f"'replay': {e}") from None
        return game, list(record["seats"]), record


def build_agent(spec, game, seat: int, seed: int):
    """The agent an agent spec names, or a resolved (kind, options) pair."""
    if isinstance(spec, tuple):
        kind, options = spec
        return kind.factory(game, seat, seed, **options)
    return make_agent(spec, game, seat, seed=seed)


def _over_budget(spec: str, game, resolved=None) -> str | None:
    """Why a table may not seat the bot ``spec`` (its moves could cost more
    than :data:`TABLE_MAX_SIMS` simulations, or a timed search more than
    :data:`TABLE_MAX_SECONDS` seconds; the time of 10,000 simulations
    depends on the game and its size), or None. A ``policy(FILE)`` is
    judged by the agent that plays the states its file lacks. A spec or a
    file that does not load is left to the agent's own checks.
    ``resolved``: the kind and options of a spec whose file is in the
    policy folder."""
    from kibitz.agents.policy_agent import fallback_agent_spec, load_cached
    from kibitz.agents.registry import resolve_spec
    from kibitz.solvers.ismcts import make_config
    try:
        kind, options = resolved if resolved is not None else resolve_spec(spec)
        options = dict(options)
        if kind.name == "policy":
            fallback = fallback_agent_spec(load_cached(options.get("path", ""), game).document,
                                           options.get("unseen", "file"))
            return _over_budget(fallback, game) if fallback and fallback != spec else None
        if kind.name != "ismcts":
            return None
        config = make_config(options.pop("preset", None), **options)
    except (ValueError, OSError):
        return None
    limit = (f"a web table's bots search at most {TABLE_MAX_SIMS:,} simulations a move, and at most "
             f"{TABLE_MAX_SECONDS:g} seconds when timed")
    if config.sims > TABLE_MAX_SIMS or config.seconds > TABLE_MAX_SECONDS:
        return f"{limit}; this one: sims={config.sims}, seconds={config.seconds:g}"
    return None  # (sims=0 with seconds=0 is refused by the agent itself: no budget)


def _agent_error(seats, specs, game, e) -> str:
    """One line: the first seat whose agent cannot be made, and why."""
    for s, (spec, made) in enumerate(zip(seats, specs)):
        if spec == HUMAN:
            continue
        try:
            build_agent(made, game, s, seed=0)
        except (ValueError, OSError) as err:
            return f"seat {s} ({spec}): {err.strerror if isinstance(err, OSError) and err.strerror else err}"
    return str(e)
