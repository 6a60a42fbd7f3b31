"""Strength of kibitz's IS-MCTS against random, heuristic and OpenSpiel's ISMCTSBot.

One match = ``--games`` games of GAME with IS-MCTS in one seat and the
opponent kind in every other seat; IS-MCTS's seat rotates (game ``i`` puts it
in seat ``i mod n``). Chance and every agent are seeded from ``--seed`` and
the game index, so a match is reproducible and can be split across runs
(``--start``).

    python experiments/ismcts_strength.py --game underdog --opponent random \\
        --sims 1000 --games 1000 --out results/strength_underdog_random.csv

Opponents: ``random``, ``heuristic`` (the game's rule-based agent) and
``openspiel`` (OpenSpiel's Python ``ISMCTSBot`` with the same simulations,
the same UCT constant and one random rollout per leaf).

``python experiments/ismcts_strength.py summarize FILE.csv ...`` prints the
summary of match files, also of matches stopped early.

The CSV has one row per game (seat of IS-MCTS, every seat's return, seconds);
the summary printed at the end gives, for IS-MCTS and for the mean opponent
seat, the mean return with its 95% confidence interval, and the mean of the
per-game difference with its 95% interval (normal approximation,
1.96 standard errors). With ``payoff=win`` an even seat gets ``1/n``.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from pathlib import Path

import numpy as np
import pyspiel

import games  # noqa: F401  (registers the kibitz games)
from agents.registry import make_agent


def openspiel_bot(game, player, seed, sims, uct_c):
    from open_spiel.python.algorithms import ismcts, mcts
    rs = np.random.RandomState(seed % 2**32)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rs)
    return ismcts.ISMCTSBot(game, evaluator, uct_c, sims, random_state=rs)


def play_game(game, bots, rng: np.random.Generator):
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            u = rng.random()
            acc = 0.0
            action = outcomes[-1][0]
            for a, p in outcomes:
                acc += p
                if u < acc:
                    action = a
                    break
            state.apply_action(action)
        else:
            state.apply_action(int(bots[state.current_player()].step(state)))
    return state.returns()


def mean_ci(xs):
    xs = np.asarray(xs, dtype=float)
    if len(xs) < 2:
        return float(xs.mean()) if len(xs) else float("nan"), float("nan")
    return float(xs.mean()), 1.96 * float(xs.std(ddof=1)) / math.sqrt(len(xs))


def summarize(path) -> None:
    """Prints the summary of a match CSV (also of a match stopped early)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        print(f"{path}: no games")
        return
    n = sum(1 for k in rows[0] if k.startswith("return_"))
    mine, theirs = [], []
    for r in rows:
        seat = int(r["ismcts_seat"])
        ret = [float(r[f"return_{p}"]) for p in range(n)]
        mine.append(ret[seat])
        theirs.append((sum(ret) - ret[seat]) / (n - 1))
    report(rows[0]["game"], rows[0]["opponent"], rows[0]["sims"], mine, theirs,
           f"{sum(float(r['seconds']) for r in rows) / len(rows):.1f} s per game")


def report(game, opponent, sims, mine, theirs, note=""):
    m1, h1 = mean_ci(mine)
    m2, h2 = mean_ci(theirs)
    md, hd = mean_ci(np.subtract(mine, theirs))
    print(f"{game} vs {opponent}, sims={sims}, games={len(mine)}{', ' + note if note else ''}:")
    print(f"  ismcts mean return    {m1:.4f} +- {h1:.4f}")
    print(f"  opponent mean return  {m2:.4f} +- {h2:.4f}")
    print(f"  difference            {md:+.4f} +- {hd:.4f}")


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "summarize":
        for path in argv[1:]:
            summarize(path)
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", required=True, help="game string, e.g. underdog or pub(players=5)")
    ap.add_argument("--opponent", required=True, choices=["random", "heuristic", "openspiel"])
    ap.add_argument("--sims", type=int, default=1000, help="simulations per move (both searchers)")
    ap.add_argument("--uct-c", type=float, default=0.7, help="UCT constant (both searchers)")
    ap.add_argument("--games", type=int, default=1000, help="games in the match")
    ap.add_argument("--start", type=int, default=0, help="index of the first game (to split a match)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True, help="CSV file (rows are appended)")
    args = ap.parse_args(argv)

    game = pyspiel.load_game(args.game)
    n = game.num_players()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    new = not out.exists()
    f = out.open("a", newline="")
    w = csv.writer(f)
    if new:
        w.writerow(["game", "opponent", "sims", "index", "seed", "ismcts_seat", "seconds"]
                   + [f"return_{p}" for p in range(n)])
    mine, theirs, diffs = [], [], []
    t0 = time.perf_counter()
    for i in range(args.start, args.start + args.games):
        seeds = np.random.SeedSequence([args.seed, i]).generate_state(n + 1)
        seat = i % n
        bots = []
        for p in range(n):
            if p == seat:
                bots.append(make_agent(f"ismcts(sims={args.sims},uct_c={args.uct_c})", game, p, int(seeds[p])))
            elif args.opponent == "openspiel":
                bots.append(openspiel_bot(game, p, int(seeds[p]), args.sims, args.uct_c))
            else:
                bots.append(make_agent(args.opponent, game, p, int(seeds[p])))
        g0 = time.perf_counter()
        returns = play_game(game, bots, np.random.default_rng(int(seeds[n])))
        secs = time.perf_counter() - g0
        w.writerow([args.game, args.opponent, args.sims, i, args.seed, seat, f"{secs:.3f}"]
                   + [f"{r:.6g}" for r in returns])
        f.flush()
        others = [returns[p] for p in range(n) if p != seat]
        mine.append(returns[seat])
        theirs.append(sum(others) / len(others))
        diffs.append(mine[-1] - theirs[-1])
        done = len(mine)
        el = time.perf_counter() - t0
        m, h = mean_ci(diffs)
        print(f"\r{done}/{args.games} games  {done / el:.3f} games/s  "
              f"ismcts-minus-opponent {m:+.3f} +- {h:.3f}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    f.close()
    report(args.game, args.opponent, args.sims, mine, theirs,
           f"index {args.start}..{args.start + len(mine) - 1}, seed {args.seed}")


if __name__ == "__main__":
    main()
