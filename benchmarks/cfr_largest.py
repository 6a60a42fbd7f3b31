"""The largest configuration of each game that CFR+ solves to NashConv 1e-3 within 30 minutes, and its memory.

    python benchmarks/cfr_largest.py [--games pub,underdog] [--out docs/results/cfr/largest.json]

For each configuration in CONFIGS, ``kibitz solve CONFIG -a cfr+
--target-nashconv 1e-3 --eval-every 5 --time 30m --no-cache`` under
``/usr/bin/time -v``: the tree's nodes, the compile time and the
iterations, seconds and NashConv the command prints, and the peak resident
size that ``time`` reports (the compile's buffers and the policy file's
strings included). Writes the table to ``--out`` with ``.md`` (docs/solvers/
cfr.md holds a marked copy) and the run's command, date and load in the
JSON. Up to 8.5 GB a run (over_under): keep 10 GB free.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from kibitz.experiments import speed

CONFIGS = {
    "pub": "pub(players=3,suits=3,ranks=3,removed=0,hand=1)",
    "underdog": "underdog(players=3,cards=8,bank=2)",
    "over_under": "over_under(players=2,copies=1,stacks=1,rounds=2)",
    "doubt_and_bet": "doubt_and_bet(players=2,chips=3,slots=2,colours=1,copies=2,single_bet=true)",
}


def solve(config: str, folder: Path) -> dict:
    """One solve under /usr/bin/time -v; the figures it printed and its peak memory."""
    kibitz = shutil.which("kibitz", path=str(Path(sys.executable).parent)) or "kibitz"
    cmd = ["/usr/bin/time", "-v", kibitz, "solve", config, "-a", "cfr+", "--target-nashconv", "1e-3",
           "--eval-every", "5", "--time", "30m", "--no-cache", "--out", str(folder / "policy.json.gz"),
           "--no-progress"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    text = run.stdout + run.stderr
    if run.returncode != 0:
        raise RuntimeError(f"{config}: kibitz solve exited {run.returncode}:\n{text[-2000:]}")

    def find(pattern):
        m = re.search(pattern, text)
        if not m:
            raise RuntimeError(f"{config}: no {pattern!r} in the output:\n{text[-2000:]}")
        return m.group(1)

    return {"config": config, "nodes": int(find(r"tree: ([\d,]+) nodes").replace(",", "")),
            "compile_seconds": float(find(r"information-state actions \(([\d.]+) s\)")),
            "iterations": int(find(r"iterations:\s+(\d+)")), "seconds": float(find(r"seconds:\s+([\d.]+)")),
            "nash_conv": float(find(r"NashConv:\s+([\d.e+-]+)")),
            "peak_gb": int(find(r"Maximum resident set size \(kbytes\): (\d+)")) * 1024 / 1e9}


def main() -> None:
    run = speed.Run()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", default=",".join(CONFIGS))
    ap.add_argument("--out", default="docs/results/cfr/largest.json")
    args = ap.parse_args()
    rows = []
    for name in args.games.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            r = solve(CONFIGS[name], Path(tmp))
        print(r, flush=True)
        rows.append({"game": name, **r})
    table = ["| game | configuration | nodes | compile | iterations | NashConv | memory (peak) |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    table += [f"| {r['game']} | `{r['config']}` | {r['nodes']:,} | {r['compile_seconds']:.1f} s | "
              f"{r['iterations']} ({r['seconds']:.1f} s) | {r['nash_conv']:.2e} | {r['peak_gb']:.2f} GB |"
              for r in rows]
    run.write(args.out, "CFR+ on the largest configurations", "; ".join(
        f"{r['game']} {r['nodes']:,} nodes, {r['peak_gb']:.2f} GB" for r in rows), "NashConv 1e-3 within 30 min",
        data=rows, table=table)


if __name__ == "__main__":
    main()
