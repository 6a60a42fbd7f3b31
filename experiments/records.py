"""Result files and statistics shared by the experiment kinds.

``write_csv`` writes a finished experiment's records in one go;
``write_markdown`` a report: a heading paragraph and a table.
``AppendCSV`` is the file of a long match: one row per game, appended and
flushed as each game ends, so that a run stopped at any point resumes by
game index (``done`` holds the indices already in the file), and runs that
play disjoint index ranges of one match may append to one file at the same
time (O_APPEND, the header written once under a lock). Do not let git
rewrite a file a match is writing (``git stash``, ``checkout``, ``reset``):
git replaces the file, and the running match goes on writing to the
replaced one, lost when the run ends.

``mean_ci95`` is the mean with the half-width of its 95% confidence
interval in the normal approximation (1.96 standard errors).
"""

from __future__ import annotations

import csv
import fcntl
import math
from pathlib import Path

import numpy as np


def write_markdown(path, head: str, lines: list[str]) -> Path:
    """Writes ``head`` (markdown text ending in a blank line) and the table
    ``lines`` to ``path``, making its folder; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(head + "\n".join(lines) + "\n")
    return path


def write_csv(path: Path, records: list[dict]) -> None:
    """Writes ``records`` (dicts with the same keys) as a CSV; nothing if empty."""
    if not records:
        return
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(records[0]))
        w.writeheader()
        w.writerows(records)


def read_csv(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class OtherRunError(ValueError):
    """The file holds rows of another run than the one appending to it."""


class AppendCSV:
    """Appends rows to the CSV at ``path``, resuming by the ``index`` column.

    ``identity`` names the run: every row holds these column values, and a
    file holding rows with other values is refused (``OtherRunError``).
    A file from before a column was added keeps its columns (the new ones
    are not written to it).
    """

    def __init__(self, path, fields: list[str], identity: dict[str, object]):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fields = list(fields)
        self.done: set[int] = set()
        want = {k: str(v) for k, v in identity.items()}
        if self.path.exists() and self.path.stat().st_size:
            with self.path.open(newline="") as f:
                reader = csv.DictReader(f)
                self.fields = list(reader.fieldnames)
                for row in reader:
                    have = {k: row[k] for k in want}
                    if have != want:
                        raise OtherRunError(f"{self.path} holds another match ({', '.join(have.values())}); "
                                            f"this run is ({', '.join(want.values())})")
                    self.done.add(int(row["index"]))
        self._file = self.path.open("a", newline="")
        self._writer = csv.DictWriter(self._file, fieldnames=self.fields, extrasaction="ignore")
        fcntl.flock(self._file, fcntl.LOCK_EX)
        if self._file.seek(0, 2) == 0:
            self._writer.writeheader()
            self._file.flush()
        fcntl.flock(self._file, fcntl.LOCK_UN)

    def write(self, row: dict) -> None:
        self._writer.writerow(row)
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def mean_ci95(xs) -> tuple[float, float]:
    """(mean, half-width of the 95% interval, 1.96 standard errors); nan where undefined."""
    xs = np.asarray(xs, dtype=float)
    if len(xs) < 2:
        return float(xs.mean()) if len(xs) else float("nan"), float("nan")
    return float(xs.mean()), 1.96 * float(xs.std(ddof=1)) / math.sqrt(len(xs))
