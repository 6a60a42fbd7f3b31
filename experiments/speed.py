"""The README's speed table, built from the rows the benchmark scripts write.

Each script in benchmarks/ that measures kibitz beside a baseline in one
run writes its row with ``--out`` (default ``docs/results/speed/NAME.json``):
a JSON object with the row's cells (``benchmark``, ``figures``, ``target``),
the run's date, the machine's load average (``os.getloadavg()``) at its
start and end, the exact command line, and the measured ``data``. A script
that also prints a table for docs/ writes it beside the row, ``NAME.md``.
:func:`build` writes ``docs/results/speed/table.md`` from every row file,
one line per file, in :data:`ORDER`::

    python -m kibitz.experiments.tables --speed   # build table.md, then refresh the copies

The table holds the latest run of each benchmark, not a history: a rerun
replaces its row file.
"""

from __future__ import annotations

import datetime
import json
import os
import shlex
import sys
from pathlib import Path

#: where the rows and the table are, relative to the repository's root
FOLDER = "docs/results/speed"
#: the row files' stems in the table's order; others follow, sorted
ORDER = ("game_speed", "cfr_speed", "compile_speed", "compile_speed_large", "compile_speed_cfr",
         "cfr_agreement", "ismcts_speed", "mccfr_speed", "net_speed", "tournament_speed",
         "tournament_speed_ray", "mccfr_ray", "serve_speed")
HEADER = ["| benchmark | command | kibitz vs baseline, same run | target | run: date, load |",
          "| --- | --- | --- | --- | --- |"]


def default_out(name: str) -> str:
    """A benchmark's default ``--out``: ``docs/results/speed/NAME.json``."""
    return f"{FOLDER}/{name}.json"


class Run:
    """A benchmark run: the date, the command line and the load at its start
    (made first thing in ``main``), then :meth:`write` at its end."""

    def __init__(self, argv: list[str] | None = None):
        argv = sys.argv if argv is None else argv
        script = Path(argv[0])
        try:
            script = script.resolve().relative_to(Path.cwd().resolve())
        except ValueError:
            pass
        self.command = " ".join(["python", shlex.quote(str(script)), *map(shlex.quote, argv[1:])])
        self.started = datetime.datetime.now(datetime.timezone.utc)
        self.load_start = [round(x, 2) for x in os.getloadavg()]

    def write(self, out: str | Path, benchmark: str, figures: str, target: str, data=None,
              table: list[str] | None = None) -> Path:
        """Writes the row to ``out`` (and ``table``, markdown lines, to
        ``out`` with the suffix ``.md``), each atomically; returns ``out``."""
        out = Path(out)
        row = {"benchmark": benchmark, "figures": figures, "target": target, "command": self.command,
               "started": self.started.isoformat(timespec="seconds"),
               "ended": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "load_start": self.load_start, "load_end": [round(x, 2) for x in os.getloadavg()],
               "cpus": os.cpu_count(), "data": data}
        write_atomic(out, json.dumps(row, indent=1) + "\n")
        if table is not None:
            write_atomic(out.with_suffix(".md"), "\n".join(table) + "\n")
        print(f"wrote {out}" + (f" and {out.with_suffix('.md')}" if table is not None else ""))
        return out


def write_atomic(path: Path, text: str) -> None:
    """Writes ``text`` to a temporary file beside ``path``, then renames it
    over ``path``: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def load_range(row: dict) -> str:
    """The one-minute load averages at the run's start and end: ``5.1-5.8``."""
    a, b = row["load_start"][0], row["load_end"][0]
    return f"{min(a, b):.1f}-{max(a, b):.1f}" if f"{a:.1f}" != f"{b:.1f}" else f"{a:.1f}"


def label(game_string: str) -> str:
    """A kibitz game's name for its default size, the name and ``(small)``
    for its small configuration (``spec.small``), else the game string in a
    code span."""
    from kibitz import games

    name = game_string.split("(")[0]
    spec = games.REGISTRY.get(name)
    if spec is not None and game_string == name:
        return name
    if spec is not None and game_string == spec.small:
        return f"{name} (small)"
    return f"`{game_string}`"


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def table(folder: Path) -> list[str]:
    """The speed table's lines from the row files in ``folder``."""
    paths = sorted(folder.glob("*.json"),
                   key=lambda p: (ORDER.index(p.stem) if p.stem in ORDER else len(ORDER), p.stem))
    if not paths:
        raise ValueError(f"{folder}: no benchmark row files (*.json)")
    lines = list(HEADER)
    for path in paths:
        row = json.loads(path.read_text(encoding="utf-8"))
        command = row["command"].removeprefix("python ")
        lines.append(f"| {cell(row['benchmark'])} | `{cell(command)}` | {cell(row['figures'])} | "
                     f"{cell(row['target'])} | {row['started'][:10]}, load {load_range(row)} |")
    return lines


def build(root: Path) -> Path:
    """Writes ``FOLDER/table.md`` under ``root`` from its row files; returns its path."""
    out = root / FOLDER / "table.md"
    write_atomic(out, "\n".join(table(root / FOLDER)) + "\n")
    return out
