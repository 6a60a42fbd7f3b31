"""CFR+ for a fixed time on each game's small configuration: the README's games table.

For each registered kibitz game, runs exactly the README's command on its
small configuration (``spec.small``)::

    kibitz solve SMALL --time 60s --out DIR/GAME.json.gz

one game at a time, then reads the tree size, the iterations done and the
NashConv of the average policy from the policy file it wrote, and writes
the table (markdown) to ``--out``. The iteration count depends on the
machine and its load; NashConv follows from the count.

    python benchmarks/games_table.py [--seconds 60] [--out docs/results/games/table.md]

then ``python -m kibitz.experiments.tables`` copies the table into the README.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from kibitz import games

#: the README's order
ORDER = ("underdog", "pub", "over_under", "doubt_and_bet")


def solve(game_string: str, seconds: float, out: Path) -> dict:
    """Runs ``kibitz solve`` (CFR+, the default) for ``seconds`` and returns its policy file's header."""
    kibitz = Path(sys.executable).parent / "kibitz"
    subprocess.run([str(kibitz), "solve", game_string, "--time", f"{seconds:g}s", "--out", str(out),
                    "--no-progress"], check=True, stdout=subprocess.DEVNULL)
    with gzip.open(out, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    doc.pop("policy")
    return doc


def table(rows: list[tuple[str, str, dict]], seconds: float) -> list[str]:
    lines = [f"| game | small configuration | nodes | information states | CFR+ iterations in {seconds:g} s "
             "| NashConv |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    for name, small, doc in rows:
        lines.append(f"| `{name}` | `{small}` | {doc['tree']['nodes']:,} | {doc['tree']['infostates']:,} | "
                     f"{doc['iterations']:,} | {doc['nash_conv']:.1e} |")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="the --time of each solve")
    ap.add_argument("--out", default="docs/results/games/table.md", help="the markdown table to write")
    args = ap.parse_args(argv)
    names = sorted(games.REGISTRY, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            small = games.REGISTRY[name].small
            doc = solve(small, args.seconds, Path(tmp) / f"{name}.json.gz")
            print(f"{small}: {doc['iterations']:,} iterations in {doc['seconds']:.1f} s, "
                  f"NashConv {doc['nash_conv']:.3g}", flush=True)
            rows.append((name, small, doc))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(table(rows, args.seconds)) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
