"""AIVAT at the default sizes: `trained` against `heuristic`, variance and cost.

    python -m kibitz.experiments.aivat_default [--games 1008] [--timed 112] [--seed 0] [--workers 2]
                                               [--root docs/results/trained] [--out docs/results/aivat/default.md]

For each game at its default size, the tournament ``kibitz tournament GAME
--agents trained,heuristic --games 1008 --seed 0 --aivat net`` into
``ROOT/GAME_vs_heuristic`` (the folders of the README's table of the
shipped networks: ``python -m kibitz.experiments.tables --pairs``), then
the table: each agent's plain and AIVAT mean with their 95% intervals, the
ratio of the standard errors (AIVAT over plain; the issue asks for at most
0.5) and of the variances (how many times fewer games AIVAT needs).

Cost: the first ``--timed`` games of the plan are played again in this
process, each twice in a row, without and with the corrections (the same
moves), alternating, so that both see the same load; the overhead is the
extra time of the corrected plays over the plain ones.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from kibitz.agents.matches.tournament import Plan, play_one, run_tournament, variance_ratio
from kibitz.experiments.records import write_markdown
from kibitz.games import REGISTRY, load_game

AGENTS = ("trained", "heuristic")
VALUE = "net"


def cost(game: str, games: int, seed: int) -> tuple[float, float]:
    """Seconds of ``games`` games of the plan played plain and with AIVAT, alternating."""
    n = load_game(game).num_players()
    plain_plan = Plan(game, AGENTS, seed, n)
    aivat_plan = Plan(game, AGENTS, seed, n, VALUE)
    play_one(aivat_plan, 0)  # load the networks and the value function before the clock starts
    plain = corrected = 0.0
    for i in range(games):
        t0 = time.perf_counter()
        a = play_one(plain_plan, i)
        t1 = time.perf_counter()
        b = play_one(aivat_plan, i)
        t2 = time.perf_counter()
        if a["moves"] != b["moves"]:
            raise AssertionError(f"{game}, game {i}: the corrections changed the moves")
        plain += t1 - t0
        corrected += t2 - t1
    return plain, corrected


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=1008)
    ap.add_argument("--timed", type=int, default=112)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--games-list", default=",".join(REGISTRY),
                    help="the games to run (the other games' rows of --out are kept)")
    ap.add_argument("--root", default="docs/results/trained")
    ap.add_argument("--out", default="docs/results/aivat/default.md")
    args = ap.parse_args(argv)
    lines = ["| game | agent | games | plain mean [95% CI] | AIVAT mean [95% CI] | SE ratio | variance ratio "
             "| time with AIVAT |",
             "| --- | --- | ---: | --- | --- | ---: | ---: | ---: |"]
    chosen = args.games_list.split(",")
    if Path(args.out).is_file():  # the rows of the games not run again stay
        lines += [line for line in Path(args.out).read_text().splitlines()
                  if line.startswith("| `") and line.split("`")[1] not in chosen]
    for game in chosen:
        folder = Path(args.root) / f"{game}_vs_heuristic"
        if folder.exists():
            shutil.rmtree(folder)  # the same games again, now with their corrections
        t0 = time.perf_counter()
        out = run_tournament(game, list(AGENTS), args.games, seed=args.seed, workers=args.workers,
                             out_dir=str(folder), progress=False, value=VALUE)
        seconds = time.perf_counter() - t0
        plain, corrected = cost(game, args.timed, args.seed)
        overhead = f"{corrected / plain:.2f}x"
        for agent in out.results["agents"]:
            line = (f"| `{game}` | {agent['name']} | {agent['games']:,} | {agent['mean_payoff']:.4f} "
                    f"[{agent['ci95_low']:.4f}, {agent['ci95_high']:.4f}] | {agent['aivat_mean']:.4f} "
                    f"[{agent['aivat_ci95_low']:.4f}, {agent['aivat_ci95_high']:.4f}] | "
                    f"{agent['aivat_se'] / agent['se']:.2f} | {variance_ratio(agent):.2f} | {overhead} |")
            print(line, flush=True)
            lines.append(line)
        print(f"{game}: tournament {seconds:.0f} s ({args.workers} workers); timed {args.timed} games: plain "
              f"{plain:.1f} s, with AIVAT {corrected:.1f} s", flush=True)
    head = (f"# AIVAT at the default sizes: `trained` against `heuristic`\n\n"
            f"Written by `python -m kibitz.experiments.aivat_default --games {args.games} --timed {args.timed} "
            f"--seed {args.seed}`: each game's tournament of {args.games:,} games with `--aivat {VALUE}` (the "
            f"shipped value network, agents/trained/GAME.value.npz: agents/trained/README.md says which kind each "
            f"game's is), the same games as without it. SE ratio: "
            f"AIVAT's standard error over the plain one (at most 0.5 means a quarter of the games for the same "
            f"interval); variance ratio: its inverse squared. Time with AIVAT: the first {args.timed} games "
            f"played with the corrections over the same games played plain, alternating in one process.\n\n")
    lines[2:] = sorted(lines[2:], key=lambda line: line.split("`")[1])  # by game, each game's agents in order
    write_markdown(args.out, head, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
