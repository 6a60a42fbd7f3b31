"""The docs' tables of figures, copied from the files the measuring commands write.

A table of figures in the README or under docs/ is never typed by hand: the
command that measures it (an experiment run, a benchmark script) writes it
to a file, and the markdown holds a copy of that file between two marker
lines, the path relative to the repository's root::

    <!-- generated: docs/results/strength/table.md -->
    | game | agent | ... |
    ...
    <!-- end generated -->

:func:`refresh` rewrites every marked copy from its file; :func:`stale` names
the copies that differ from it and :func:`unmarked_tables` the tables of
figures outside any marker (tests/test_generated_tables.py fails on either).
After a run that rewrote a table::

    python -m kibitz.experiments.tables          # refresh the copies
    python -m kibitz.experiments.tables --check  # list stale copies, exit 1 if any

:func:`pair_table` is the table of several two-agent tournaments (``kibitz
tournament --out FOLDER``, one game each), written from their
``results.json`` by ``--pairs``; ``make trained-strength`` runs it::

    python -m kibitz.experiments.tables --pairs docs/results/trained/table.md FOLDER...

``--matches`` writes the table of IS-MCTS match CSVs (kind ``ismcts_match``,
also of matches stopped early, as the pilots in
docs/results/ismcts_strength/pilots) with
:func:`kibitz.experiments.ismcts_strength.table_lines`::

    python -m kibitz.experiments.tables --matches docs/results/ismcts_strength/pilots/table.md \
        docs/results/ismcts_strength/pilots/*.csv

``--speed`` writes the speed table, ``docs/results/speed/table.md``, from the
rows the benchmark scripts wrote (kibitz.experiments.speed), then refreshes
the copies (the results index, docs/results/README.md, holds it)::

    python -m kibitz.experiments.tables --speed
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from kibitz.experiments import speed

#: the markdown files that may hold copies, relative to the root
DOCS = ("README.md", "docs/**/*.md")
#: where the commands write their tables: the sources, not copies
RESULTS = "docs/results"
#: the index of the results (the README's tables moved there): under RESULTS, yet a file of copies
RESULTS_INDEX = "docs/results/README.md"

BEGIN = re.compile(r"^<!-- generated: (\S+) -->$")
END = "<!-- end generated -->"

#: a figure: a number with a decimal point or a thousands separator
FIGURE = re.compile(r"\d\.\d|\d,\d{3}")
CODE_SPAN = re.compile(r"`[^`]*`")
LINK_TARGET = re.compile(r"\]\([^)]*\)")


class MarkerError(ValueError):
    """A marker without its end, an end without its marker, or a missing source file."""


def _holds_copies(name: str) -> bool:
    return name == RESULTS_INDEX or not name.startswith(RESULTS + "/")


def doc_files(root: Path) -> list[Path]:
    """The markdown files under ``root`` that may hold marked copies (not
    those under :data:`RESULTS`, apart from :data:`RESULTS_INDEX`)."""
    files = []
    for pattern in DOCS:
        files.extend(sorted(p for p in root.glob(pattern)
                            if p.is_file() and _holds_copies(p.relative_to(root).as_posix())))
    return files


def copies(text: str, where: str = "") -> list[tuple[str, int, int]]:
    """The marked copies of ``text``: ``(source, first, end)`` with the copy
    in ``lines[first:end]`` of ``text.split("\\n")``."""
    lines = text.split("\n")
    found, open_at, source = [], None, None
    for i, line in enumerate(lines):
        m = BEGIN.match(line.strip())
        if m:
            if open_at is not None:
                raise MarkerError(f"{where}:{i + 1}: a generated marker inside the copy opened at line {open_at}")
            open_at, source = i + 1, m.group(1)
        elif line.strip() == END:
            if open_at is None:
                raise MarkerError(f"{where}:{i + 1}: '{END}' without its '<!-- generated: FILE -->'")
            found.append((source, open_at, i))
            open_at = None
    if open_at is not None:
        raise MarkerError(f"{where}:{open_at}: the generated copy of {source} has no '{END}'")
    return found


def _source_lines(root: Path, source: str, where: str) -> list[str]:
    path = root / source
    if not path.is_file():
        raise MarkerError(f"{where}: the generated copy's source {source} does not exist")
    return path.read_text(encoding="utf-8").rstrip("\n").split("\n")


def stale(root: Path) -> list[str]:
    """One line for each marked copy under ``root`` that differs from its source."""
    out = []
    for path in doc_files(root):
        name = str(path.relative_to(root))
        lines = path.read_text(encoding="utf-8").split("\n")
        for source, first, end in copies("\n".join(lines), name):
            if lines[first:end] != _source_lines(root, source, f"{name}:{first}"):
                out.append(f"{name}:{first + 1}: the copy of {source} differs from it")
    return out


def refresh(root: Path) -> list[str]:
    """Rewrites every marked copy under ``root`` from its source; returns the
    files that changed."""
    changed = []
    for path in doc_files(root):
        name = str(path.relative_to(root))
        text = path.read_text(encoding="utf-8")
        lines = text.split("\n")
        for source, first, end in reversed(copies(text, name)):  # from the end: earlier indices stay valid
            lines[first:end] = _source_lines(root, source, f"{name}:{first}")
        new = "\n".join(lines)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(name)
    return changed


def is_figures(table: list[str]) -> bool:
    """Whether a markdown table (its lines) holds figures: a body cell,
    outside code spans and link targets, with a decimal or a thousands
    separator."""
    for row in table[2:]:
        plain = LINK_TARGET.sub("]", CODE_SPAN.sub("", row))
        if FIGURE.search(plain):
            return True
    return False


def tables(text: str) -> list[tuple[int, list[str]]]:
    """The markdown tables of ``text`` outside fenced blocks: ``(first line
    index, lines)``."""
    found, current, start, fenced = [], [], 0, False
    for i, line in enumerate(text.split("\n") + [""]):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("|"):
            if not current:
                start = i
            current.append(line)
            continue
        if current:
            found.append((start, current))
            current = []
    return found


def unmarked_tables(text: str, where: str = "") -> list[str]:
    """One line for each table of figures in ``text`` outside a marked copy."""
    inside = set()
    for _, first, end in copies(text, where):
        inside.update(range(first, end))
    return [f"{where}:{start + 1}: a table of figures outside a generated copy: {table[0][:80]}"
            for start, table in tables(text) if start not in inside and is_figures(table)]


def pair_table(folders) -> list[str]:
    """One row per tournament folder of two agents: the game, then each
    agent's mean payoff with its 95% CI, in bold when its interval lies
    wholly above the other's; where the tournaments have AIVAT estimates
    (``--aivat``), each agent's AIVAT mean and interval too."""
    found, names = [], None
    for folder in map(Path, folders):
        game = json.loads((folder / "tournament.json").read_text(encoding="utf-8"))["game"]
        agents = json.loads((folder / "results.json").read_text(encoding="utf-8"))["agents"]
        if len(agents) != 2 or (names is not None and [a["name"] for a in agents] != names):
            raise ValueError(f"{folder}: the tournaments of one table are of the same two agents")
        names = [a["name"] for a in agents]
        found.append((game, agents))
    if names is None:
        raise ValueError("no tournament folder given")

    def cells(agents, key, low, high):
        out = []
        for me, other in (agents, agents[::-1]):
            cell = f"{me[key]:.3f} [{me[low]:.3f}, {me[high]:.3f}]"
            out.append(f"**{cell}**" if me[low] > other[high] else cell)
        return out

    aivat = any("aivat_mean" in a for _, agents in found for a in agents)
    head = [f"| game | {names[0]} | {names[1]} |" + (f" {names[0]}, AIVAT | {names[1]}, AIVAT |" if aivat else ""),
            "| --- | --- | --- |" + (" --- | --- |" if aivat else "")]
    rows = []
    for game, agents in found:
        row = cells(agents, "mean_payoff", "ci95_low", "ci95_high")
        if aivat:
            row += (cells(agents, "aivat_mean", "aivat_ci95_low", "aivat_ci95_high")
                    if all("aivat_mean" in a for a in agents) else ["-", "-"])
        rows.append(f"| `{game}` | " + " | ".join(row) + " |")
    return head + rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=".", help="the repository's root (default: the current folder)")
    ap.add_argument("--check", action="store_true", help="only list the stale copies (exit 1 if any)")
    ap.add_argument("--pairs", nargs="+", metavar=("OUT", "FOLDER"),
                    help="write the table of the two-agent tournaments in FOLDER... to OUT (then refresh)")
    ap.add_argument("--matches", nargs="+", metavar=("OUT", "CSV"),
                    help="write the table of the IS-MCTS match files CSV... to OUT (then refresh)")
    ap.add_argument("--speed", action="store_true",
                    help=f"write {speed.FOLDER}/table.md from the benchmarks' row files (then refresh)")
    args = ap.parse_args(argv)
    root = Path(args.root)
    try:
        if args.matches:
            from kibitz.experiments.ismcts_strength import table_lines

            out, *paths = args.matches
            speed.write_atomic(Path(out), "\n".join(table_lines(paths)) + "\n")
            print(f"wrote {out}")
        if args.speed:
            print(f"wrote {speed.build(root)}")
        if args.pairs:
            out, *folders = args.pairs
            Path(out).write_text("\n".join(pair_table(folders)) + "\n", encoding="utf-8")
            print(f"wrote {out}")
        if args.check:
            lines = stale(root)
            print("\n".join(lines) if lines else "every generated copy equals its source")
            return 1 if lines else 0
        changed = refresh(root)
    except (MarkerError, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print("refreshed: " + ", ".join(changed) if changed else "every generated copy was up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
