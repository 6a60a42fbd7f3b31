"""Serving speed: POST /act under load, the new server against the old one, in one run.

    python benchmarks/serve_speed.py [--clients 64] [--requests 2000] [--rounds 2] [--agents random,heuristic]
                                     [--out FILE]

Each server runs in its own process, serving one agent; the client (this
process, asyncio, one connection per client, kept alive when the server
allows it) sends ``--requests`` POST /act requests in all from ``--clients``
concurrent clients and times each from its first byte sent to its last byte
read. The bodies are one fixed list of positions drawn from random games of
``--game`` (each with its own seed), the same for both servers, so no
answer repeats and a cache could not help either server.

The old server is the ThreadingHTTPServer that ``kibitz serve`` was before
it moved to Starlette on uvicorn: its source is taken from git
(``git show OLD:agents/serving/serve.py``, OLD = :data:`OLD_COMMIT`) and run as it
was. The machine is shared, so the runs alternate (old, new, old, new, ...
``--rounds`` each) and the table gives medians over the rounds: requests/s,
p50 and p99 latency, failures (connection errors and non-200 answers), and
new/old requests/s. The README's speed row goes to ``--out`` (default
docs/results/speed/serve_speed.json; kibitz.experiments.speed) and the
table, for docs/serving.md, beside it with the suffix ``.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from kibitz.experiments import speed

ROOT = pathlib.Path(__file__).resolve().parent.parent
#: the last commit with the http.server implementation of kibitz serve
OLD_COMMIT = "29fe265"
#: where the old server was at OLD_COMMIT (before agents/ was split into folders)
OLD_PATH = "agents/serve.py"

_RUN_NEW = """
import sys
from kibitz.agents.serving.web_app import Server, make_app
server = Server(make_app([sys.argv[1]]), port=0)
print(server.port, flush=True)
server.run()
"""
_RUN_OLD = """
import sys
sys.path.insert(0, sys.argv[2])
from old_serve import make_server
server = make_server([sys.argv[1]], port=0)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def positions(game_string: str, count: int, seed: int) -> list[bytes]:
    """``count`` /act bodies: decision points of random games, each with a seed."""
    import pyspiel

    import kibitz.games  # noqa: F401  (registers the games)

    game = pyspiel.load_game(game_string)
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        state = game.new_initial_state()
        while not state.is_terminal() and len(out) < count:
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                action = outcomes[rng.integers(len(outcomes))][0]
            else:
                if rng.random() < 0.25:
                    out.append({"game": game_string, "history": list(state.history()),
                                "seed": int(rng.integers(2**31))})
                legal = state.legal_actions()
                action = legal[rng.integers(len(legal))]
            state.apply_action(action)
    return [json.dumps(b).encode() for b in out]


class Client:
    """One connection of a load client: HTTP/1.1 requests one after another,
    reconnecting when the server closes (HTTP/1.0 answers)."""

    def __init__(self, port: int):
        self.port = port
        self.reader = self.writer = None

    async def post(self, body: bytes) -> int:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writer.write(b"POST /act HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                          b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        await self.writer.drain()
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        version, status = lines[0].split(" ")[:2]
        headers = dict(line.lower().split(": ", 1) for line in lines[1:] if ": " in line)
        length = int(headers.get("content-length", "0"))
        await self.reader.readexactly(length)
        if version == "HTTP/1.0" or headers.get("connection") == "close":
            self.close()
        return int(status)

    def close(self):
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def load(port: int, bodies: list[bytes], clients: int) -> dict:
    latencies, failures = [], 0
    queue = iter(bodies)

    async def worker():
        nonlocal failures
        client = Client(port)
        for body in queue:
            t0 = time.perf_counter()
            try:
                status = await client.post(body)
            except (OSError, asyncio.IncompleteReadError, ValueError):
                client.close()
                failures += 1
                continue
            latencies.append(time.perf_counter() - t0)
            if status != 200:
                failures += 1
        client.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    wall = time.perf_counter() - t0
    lat = np.array(latencies) * 1000 if latencies else np.array([float("nan")])
    return {"rps": (len(bodies) - failures) / wall, "p50": float(np.percentile(lat, 50)),
            "p99": float(np.percentile(lat, 99)), "failures": failures}


def start(which: str, agent: str, old_dir: str) -> tuple[subprocess.Popen, int]:
    code = _RUN_NEW if which == "new" else _RUN_OLD
    proc = subprocess.Popen([sys.executable, "-c", code, agent, old_dir], stdout=subprocess.PIPE, text=True,
                            cwd=ROOT)
    port = int(proc.stdout.readline())
    return proc, port


def old_source(directory: str) -> None:
    try:
        text = subprocess.run(["git", "show", f"{OLD_COMMIT}:{OLD_PATH}"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"serve_speed: the old server is read from git ({OLD_COMMIT}:{OLD_PATH}), "
                 f"which failed: {e}; run from a clone with its history")
    pathlib.Path(directory, "old_serve.py").write_text(text)


def main():
    run = speed.Run()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="underdog(players=3)")
    parser.add_argument("--agents", default="random,heuristic")
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--requests", type=int, default=2000, help="requests per run, all clients together")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each server per agent (alternating)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=speed.default_out("serve_speed"),
                        help="the README's speed row (JSON; default: %(default)s)")
    args = parser.parse_args()
    bodies = positions(args.game, args.requests, args.seed)
    print(f"{args.game}: {args.requests} POST /act per run from {args.clients} concurrent clients, "
          f"{args.rounds} runs of each server alternating; load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as old_dir:
        old_source(old_dir)
        rows = []
        for agent in args.agents.split(","):
            runs = {"old": [], "new": []}
            for _ in range(args.rounds):
                for which in ("old", "new"):
                    proc, port = start(which, agent, old_dir)
                    try:
                        asyncio.run(load(port, bodies[:64], min(8, args.clients)))  # warm-up
                        runs[which].append(asyncio.run(load(port, bodies, args.clients)))
                    finally:
                        proc.terminate()
                        proc.wait(10)
                    r = runs[which][-1]
                    print(f"  {agent:10} {which}: {r['rps']:7.0f} req/s  p50 {r['p50']:6.1f} ms  "
                          f"p99 {r['p99']:7.1f} ms  failures {r['failures']}", flush=True)
            med = {w: {k: statistics.median(r[k] for r in runs[w]) for k in ("rps", "p50", "p99")}
                   for w in runs}
            fails = {w: sum(r["failures"] for r in runs[w]) for w in runs}
            rows.append((agent, med, fails))
    print(f"\nmedians over {args.rounds} runs each (load average now {os.getloadavg()[0]:.1f}):")
    print(f"{'agent':10} {'server':6} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'failures':>9}   new/old")
    for agent, med, fails in rows:
        for w in ("old", "new"):
            ratio = f"   {med['new']['rps'] / med['old']['rps']:.2f}x" if w == "new" else ""
            print(f"{agent:10} {w:6} {med[w]['rps']:8.0f} {med[w]['p50']:8.1f} {med[w]['p99']:8.1f} "
                  f"{fails[w]:9d}{ratio}")
    table = [f"| agent | server | requests/s | p50 ms | p99 ms | failures ({args.rounds} runs) |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    for agent, med, fails in rows:
        for w in ("old", "new"):
            table.append(f"| {agent} | {w} | {med[w]['rps']:,.0f} | {med[w]['p50']:,.1f} | {med[w]['p99']:,.0f} | "
                         f"{fails[w]} |")
    ratios = "; ".join(f"{agent} {med['new']['rps']:,.0f} vs {med['old']['rps']:,.0f} req/s "
                       f"({med['new']['rps'] / med['old']['rps']:.1f}x), p50 {med['new']['p50']:,.0f} vs "
                       f"{med['old']['p50']:,.0f} ms, p99 {med['new']['p99']:,.0f} vs {med['old']['p99']:,.0f} ms"
                       for agent, med, _ in rows)
    failures = {w: sum(fails[w] for _, _, fails in rows) for w in ("old", "new")}
    run.write(args.out, "`kibitz serve` POST /act under load, requests/s",
              f"vs the old `http.server` server, {args.clients} clients x {args.requests:,} requests, medians of "
              f"{args.rounds} alternating runs: {ratios}; failures {failures['new']} vs {failures['old']}",
              ">= 5x", data=[{"agent": a, "median": m, "failures": f} for a, m, f in rows], table=table)


if __name__ == "__main__":
    main()
