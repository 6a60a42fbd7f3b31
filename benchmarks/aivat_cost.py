"""AIVAT's cost in a tournament: wall time with ``--aivat VALUE`` over without.

Plays the same tournament (``run_tournament``, 1 worker, games.jsonl
written to a temporary folder, no progress bar) three ways, one after the
other, ``--rounds`` times: plain (no corrections), with the value function's
corrections called at every node (``eager``: how every value function ran
before the state-value network evaluated a whole game at once), and as
``kibitz tournament --aivat VALUE`` runs them now (deferred to each game's
end when the value function can: solvers/aivat.py's ``Corrections``). A
warm-up tournament of a few games first compiles what numba compiles. The
terms of the eager and the current runs are checked equal (to float32
rounding: the network computes in float32). Wall time is the figure; the
process's CPU time beside it is steadier on a busy machine (one worker, no
threads: BLAS is held to one).

    python benchmarks/aivat_cost.py [--game over_under] [--agents trained,heuristic]
                                    [--value 'net(agents/trained/over_under.value.npz)'] [--games 112]
                                    [--rounds 2] [--seed 0]

Issue 43's target: the corrections add at most 30% (ratio <= 1.30).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from kibitz.agents.matches import tournament as tour


class Eager:
    """``value`` without its whole-game evaluation: Corrections calls it at every node."""

    def __init__(self, value):
        self.name, self._value = value.name, value

    def child_values(self, state, actions):
        return self._value.child_values(state, actions)


def timed(args, value: str, folder: Path, eager: bool = False) -> tuple[tuple[float, float], list]:
    """((wall seconds, CPU seconds), the games' records) of one tournament."""
    key = (value, args.game)
    if value != "none":
        real = tour._value(value, args.game)
        tour._VALUES[key] = Eager(real) if eager else real
    out = folder / f"run-{time.perf_counter_ns()}"
    t0, c0 = time.perf_counter(), time.process_time()
    tour.run_tournament(args.game, args.agents.split(","), args.games, seed=args.seed, workers=1,
                        out_dir=str(out), progress=False, value=value)
    seconds = (time.perf_counter() - t0, time.process_time() - c0)
    if value != "none":
        tour._VALUES[key] = real
    with open(out / "games.jsonl") as f:
        records = sorted((json.loads(line) for line in f), key=lambda r: r["index"])
    return seconds, records


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="over_under")
    ap.add_argument("--agents", default="trained,heuristic")
    ap.add_argument("--value", default="net(agents/trained/over_under.value.npz)")
    ap.add_argument("--games", type=int, default=112)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        warm = argparse.Namespace(**{**vars(args), "games": 8})
        for value, eager in (("none", False), (args.value, True), (args.value, False)):
            timed(warm, value, folder, eager)
        print(f"{args.game}, {args.agents}, {args.games} games (rounded up to whole deals), seed {args.seed}, "
              f"--aivat {args.value}, 1 worker, {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f}")
        for r in range(args.rounds):
            plain, base = timed(args, "none", folder)
            eager, old = timed(args, args.value, folder, eager=True)
            now, new = timed(args, args.value, folder)
            assert [a["moves"] for a in base] == [a["moves"] for a in old] == [a["moves"] for a in new]
            gap = max(float(np.max(np.abs(np.subtract(a["aivat"][k], b["aivat"][k]))))
                      for a, b in zip(old, new) for k in ("chance", "action"))
            print(f"round {r + 1}: {len(base)} games: plain {plain[0]:.2f} s; eager corrections {eager[0]:.2f} s "
                  f"({eager[0] / plain[0]:.2f}x); now {now[0]:.2f} s ({now[0] / plain[0]:.2f}x); CPU time: plain "
                  f"{plain[1]:.2f} s, eager {eager[1] / plain[1]:.2f}x, now {now[1] / plain[1]:.2f}x; largest "
                  f"difference of a term, eager vs now: {gap:.1e}")


if __name__ == "__main__":
    main()
