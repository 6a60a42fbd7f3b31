"""IS-MCTS simulations per second: kibitz's SO-ISMCTS beside OpenSpiel's Python ISMCTSBot.

Both search the same positions (decision points drawn from seeded games
of random players, or of the game's heuristic with ``--play heuristic``)
with the same budget of simulations, the same UCT constant and
single random rollouts, alternating in rounds in one run so that machine
noise hits both alike; the ratio is what to quote.

    python benchmarks/ismcts_speed.py [--games g1,g2] [--sims N] [--positions P] [--rounds R]
                                      [--play random|heuristic] [--baseline openspiel|python] [--out FILE]

With ``--baseline python`` the comparison is kibitz's search against itself
with its rollouts on the games' Python rules (``playouts=python``), both
with ``engine=python``: what the compiled rollouts gain at equal options.
Against OpenSpiel, kibitz's search runs as by default (``engine=compiled``:
the simulations in compiled code).

The ratios are the README's speed row, written to ``--out``
(kibitz.experiments.speed).

OpenSpiel's C++ ``pyspiel.ISMCTSBot`` is not used: it cannot search a game
written in Python (see docs/solvers/ismcts.md).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts as os_ismcts
from open_spiel.python.algorithms import mcts as os_mcts

from kibitz import games
from kibitz.experiments import speed
from kibitz.agents.registry import make_agent
from kibitz.solvers.ismcts import ISMCTS

from game_speed import decision_points


def positions(game, rng: np.random.Generator, count: int, play: str = "random"):
    """Decision points with two or more legal moves, one from each of
    ``count`` games played by ``play`` agents (random or heuristic) in
    every seat (``game_speed.decision_points``)."""
    seats = None
    if play != "random":
        def seats():
            return [make_agent(play, game, p, int(rng.integers(2**31))) for p in range(game.num_players())]
    return decision_points(game, rng, count, seats)


def time_ours(game, states, sims, uct_c, seed, playouts="compiled", engine="compiled"):
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    total = 0
    for s in states:
        search = ISMCTS(game, s.current_player(), rng, sims=sims, uct_c=uct_c, playouts=playouts, engine=engine)
        search.search(s)
        total += search.last_simulations
    return total, time.perf_counter() - t0


def time_openspiel(game, states, sims, uct_c, seed):
    rs = np.random.RandomState(seed)
    evaluator = os_mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rs)
    bot = os_ismcts.ISMCTSBot(game, evaluator, uct_c, sims, random_state=rs)
    t0 = time.perf_counter()
    for s in states:
        bot.run_search(s)
    return sims * len(states), time.perf_counter() - t0


def main(argv=None):
    run = speed.Run()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", default=",".join(sorted(games.REGISTRY)),
                    help="comma-separated game strings (default: every kibitz game at default size)")
    ap.add_argument("--sims", type=int, default=100, help="simulations per search (both bots)")
    ap.add_argument("--positions", type=int, default=4, help="positions per game")
    ap.add_argument("--rounds", type=int, default=2, help="alternating measurement rounds")
    ap.add_argument("--uct-c", type=float, default=2.0, help="UCT constant (both bots)")
    ap.add_argument("--play", default="random", choices=["random", "heuristic"],
                    help="agents that play the games the positions are drawn from (heuristic games "
                         "last longer: Doubt and Bet's run to 40-70 rounds)")
    ap.add_argument("--baseline", default="openspiel", choices=["openspiel", "python"],
                    help="what kibitz's search (rollouts on the compiled rules) is compared with: OpenSpiel's "
                         "ISMCTSBot, or kibitz's search with the same options and its rollouts on the games' "
                         "Python rules (playouts=python: the search before compiled rollouts)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None,
                    help="the README's speed row (JSON; default: docs/results/speed/ismcts_speed.json, "
                         "or ismcts_compiled_speed.json with --baseline python)")
    args = ap.parse_args(argv)
    out = args.out or speed.default_out("ismcts_speed" if args.baseline == "openspiel" else "ismcts_compiled_speed")
    rates = {}
    other = "openspiel" if args.baseline == "openspiel" else "python"
    print(f"{'game':<28} {'kibitz sims/s':>14} {other + ' sims/s':>17} {'ratio':>7}")
    for name in args.games.split(","):
        game = pyspiel.load_game(name)
        states = positions(game, np.random.default_rng(args.seed), args.positions, args.play)
        # against OpenSpiel: the search as it runs by default (engine=compiled); against itself: both in
        # Python, so that only where the rollouts run differs
        engine = "compiled" if args.baseline == "openspiel" else "python"
        # untimed: loads or compiles what the search uses (the compiled chance steps below a root, too)
        time_ours(game, states, 20, args.uct_c, args.seed, engine=engine)
        if args.baseline == "python":
            time_ours(game, states, 20, args.uct_c, args.seed, playouts="python", engine="python")
        ours = [0, 0.0]
        theirs = [0, 0.0]
        for r in range(args.rounds):
            n, t = time_ours(game, states, args.sims, args.uct_c, args.seed + r, engine=engine)
            ours[0] += n
            ours[1] += t
            if args.baseline == "openspiel":
                n, t = time_openspiel(game, states, args.sims, args.uct_c, args.seed + r)
            else:
                n, t = time_ours(game, states, args.sims, args.uct_c, args.seed + r, playouts="python",
                                 engine="python")
            theirs[0] += n
            theirs[1] += t
        a, b = ours[0] / ours[1], theirs[0] / theirs[1]
        print(f"{name:<28} {a:>14.0f} {b:>17.0f} {a / b:>7.2f}", flush=True)
        rates[name] = {"kibitz_sims_per_s": a, "openspiel_sims_per_s": b, "ratio": a / b}
    ratios = ", ".join(f"{speed.label(name)} {r['ratio']:.2f}x" for name, r in rates.items())
    if args.baseline == "openspiel":
        run.write(out, "IS-MCTS simulations/s, same budget and positions",
                  f"vs OpenSpiel's Python `ISMCTSBot`, {args.sims} simulations: {ratios}", ">= 3x", data=rates)
    else:
        run.write(out, "IS-MCTS simulations/s, rollouts on the compiled rules",
                  f"vs the same search with rollouts on the Python rules (`playouts=python`), "
                  f"{args.sims} simulations: {ratios}", ">= 3x", data=rates)


if __name__ == "__main__":
    main()
