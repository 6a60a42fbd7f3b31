"""The web table's records: every finished game, kept in SQLite.

:class:`RecordStore` keeps one row per finished game played at a table
(watched games of bots too; replays are not new games), committed as the
game ends, so a server that is stopped or crashes loses at most the games
still in play. Each row holds the game as a record of a tournament's
``games.jsonl`` (:func:`kibitz.agents.matches.tournament.play_one`; the fields of
:data:`kibitz.agents.matches.tournament.RECORD_FIELDS`, checked by
:func:`kibitz.agents.matches.tournament.record_problem` before it is stored), so
:meth:`RecordStore.export` writes a file that ``kibitz replay`` and the
table's own replay read. In a table's record:

* ``index`` is the row's number in the database (from 1);
* ``seats`` names each seat's agent spec, ``human`` for the person's seat,
  and ``person`` is that seat (``null`` in a game of bots);
* ``deal`` is the seed the game was dealt from (``table_seed`` too), and
  ``deal_seed`` is empty: a table mixes a number it never sends into a
  person's deal (:mod:`kibitz.agents.serving.table`), so ``kibitz replay --rerun``
  does not apply; the recorded moves replay exactly;
* ``finished`` is the time the game ended (UTC, ISO 8601).

:meth:`RecordStore.standings` is each bot's record against people, game by
game: the games with a person seated, rated as a tournament is
(:func:`kibitz.agents.matches.tournament.compute_results`: mean payoff with its
95% t interval and an OpenSkill Plackett-Luce rating, updated game by game
in the order played), with the people as one more player (``people``).

The store is thread-safe (one connection, a lock); the path ``:memory:``
keeps the records for the life of the process only.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import sqlite3
import threading

#: the name of the people's row in :meth:`RecordStore.standings`
PEOPLE = "people"
HUMAN = "human"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    finished TEXT NOT NULL,
    game TEXT NOT NULL,
    person INTEGER,
    record TEXT NOT NULL
)
"""


def default_path() -> str:
    """``$XDG_DATA_HOME/kibitz/table-records.sqlite`` (``~/.local/share``
    when XDG_DATA_HOME is not set): where ``kibitz serve`` keeps the
    records without ``--db``."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "kibitz", "table-records.sqlite")


class RecordsDbError(ValueError):
    """A ``--db`` that cannot be opened as the records' database; the message says why."""


class RecordStore:
    """The finished games of a server's tables (see the module docstring)."""

    def __init__(self, path: str = ":memory:"):
        self.path = str(path)
        if self.path != ":memory:":
            folder = os.path.dirname(os.path.abspath(self.path))
            try:
                os.makedirs(folder, exist_ok=True)
            except OSError as e:
                raise RecordsDbError(f"{self.path}: cannot make its folder ({e.strerror or e})") from None
            if os.path.isdir(self.path):
                raise RecordsDbError(f"{self.path}: a folder, not a database file")
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False)
            self._db.execute(_SCHEMA)
            self._db.commit()
        except sqlite3.DatabaseError as e:
            raise RecordsDbError(f"{self.path}: not a kibitz table records database ({e})") from None
        try:
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(games)")}
        except sqlite3.DatabaseError as e:
            raise RecordsDbError(f"{self.path}: not a kibitz table records database ({e})") from None
        if not {"id", "finished", "game", "person", "record"} <= columns:
            raise RecordsDbError(f"{self.path}: a SQLite database whose 'games' table is not kibitz's "
                                 "table records; give another --db")
        self._lock = threading.Lock()
        self._standings = (-1, [])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM games").fetchone()[0]

    def add(self, record: dict) -> int:
        """Stores one finished game (a games.jsonl record without its
        ``index``; ValueError if it is not one) and commits; returns its index."""
        from kibitz.agents.matches.tournament import record_problem

        problem = record_problem({**record, "index": 0})
        if problem:
            raise ValueError(f"not a game record: {problem}")
        finished = record.get("finished") or datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="seconds")
        body = {k: v for k, v in record.items() if k != "index"}
        body["finished"] = finished
        with self._lock:
            with self._db:  # one transaction, committed here
                cursor = self._db.execute(
                    "INSERT INTO games (finished, game, person, record) VALUES (?, ?, ?, ?)",
                    (finished, record["game"], record.get("person"), json.dumps(body)))
            return cursor.lastrowid

    def records(self) -> list[dict]:
        """Every stored game as a games.jsonl record, in the order played."""
        with self._lock:
            rows = self._db.execute("SELECT id, record FROM games ORDER BY id").fetchall()
        return [{"index": i, **json.loads(text)} for i, text in rows]

    def export(self, out) -> int:
        """Writes every record, one JSON line each, to the text stream ``out``
        (a games.jsonl); returns how many."""
        records = self.records()
        for rec in records:
            out.write(json.dumps(rec) + "\n")
        return len(records)

    def standings(self) -> list[dict]:
        """Each bot's record against people, per game string (see the module
        docstring): ``[{"game", "games", "agents": [{"name", "games",
        "mean_payoff", "ci95_low", "ci95_high", "rating", "rating_sigma"}]}]``,
        games by name, people first, then the bots by rating."""
        with self._lock:
            count = self._db.execute("SELECT COUNT(*) FROM games WHERE person IS NOT NULL").fetchone()[0]
            if count == self._standings[0]:
                return self._standings[1]
            rows = self._db.execute("SELECT id, game, record FROM games WHERE person IS NOT NULL "
                                    "ORDER BY id").fetchall()
        from kibitz.agents.matches.tournament import compute_results

        by_game: dict[str, list[dict]] = {}
        for i, game, text in rows:
            by_game.setdefault(game, []).append({"index": i, **json.loads(text)})
        out = []
        for game, records in sorted(by_game.items()):
            names = [PEOPLE, *dict.fromkeys(s for r in records for s in r["seats"] if s != HUMAN)]
            for r in records:
                r["seat_agents"] = [names.index(PEOPLE if s == HUMAN else s) for s in r["seats"]]
            results = compute_results(names, len(records[0]["seats"]), records)
            agents = [{k: _finite(a[k]) for k in ("name", "games", "mean_payoff", "ci95_low", "ci95_high",
                                                  "rating", "rating_sigma")}
                      for a in results["agents"]]
            agents = agents[:1] + sorted(agents[1:], key=lambda a: -(a["rating"] or 0.0))
            out.append({"game": game, "games": len(records), "agents": agents})
        with self._lock:
            self._standings = (count, out)
        return out


def _finite(x):
    return None if isinstance(x, float) and not math.isfinite(x) else x
