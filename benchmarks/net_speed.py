"""Milliseconds per move: a network agent (``net(FILE)``) beside ``ismcts(sims=1000)``.

For each game at its default size: a network with random weights of the
shipped shape (hidden (128, 128), the information-state tensor in, one logit
per distinct action out) is exported to an agent file and played as
``net(FILE)`` through onnxruntime, the way ``trained`` plays a shipped one;
both agents choose a move on the same positions (decision points of seeded
random games, as benchmarks/ismcts_speed.py draws them), in one run. The
time per move includes reading the information-state tensor and building
the legal mask. Random weights cost exactly what trained ones do. With
``--encoding compact`` a game that offers that encoding (doubt_and_bet) gets
a network on it (factored where the game has action factors) instead.
With ``--trained`` the network is the one that ships for each game
(``trained``, agents/trained/GAME.json.gz), whatever its encoding.
With ``--guided SPEC`` (e.g. ``'ismcts(prior=trained,sims=500)'``, the
search on the network of issue 44) SPEC is timed too, on the same positions,
and its row (SPEC's ms per move beside ``ismcts(sims=N)``'s) is written to
docs/results/speed/guided_search_speed.json.

    python benchmarks/net_speed.py [--games g1,g2] [--positions P] [--sims N] [--hidden 128,128]
                                   [--encoding information_state_tensor|observation_tensor|compact]
                                   [--trained] [--guided SPEC] [--out FILE]

With ``--trained`` the ratios are the README's speed row, written to
``--out`` (default docs/results/speed/net_speed.json;
kibitz.experiments.speed); without it, only where ``--out`` says.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from kibitz import games
from kibitz.experiments import speed
from kibitz.agents.formats.export import export_agent
from kibitz.agents.registry import make_agent
from kibitz.solvers import network

from ismcts_speed import positions

GAMES = ("underdog", "pub", "over_under", "doubt_and_bet")


def ms_per_move(spec, game, states, seed=0):
    """Mean milliseconds of one ``step`` of the agent ``spec`` over ``states``."""
    agents = [make_agent(spec, game, p, seed) for p in range(game.num_players())]
    agents[states[0].current_player()].step(states[0])  # warm up (the session, caches)
    start = time.perf_counter()
    for state in states:
        agents[state.current_player()].step(state)
    return 1000 * (time.perf_counter() - start) / len(states)


def main():
    run = speed.Run()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default=",".join(GAMES))
    parser.add_argument("--positions", type=int, default=10)
    parser.add_argument("--sims", type=int, default=1000)
    parser.add_argument("--hidden", default="128,128")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--encoding", default="information_state_tensor",
                        help="the input of the games that offer it (compact: doubt_and_bet, over_under, pub)")
    parser.add_argument("--trained", action="store_true", help="time the shipped networks (trained)")
    parser.add_argument("--guided", default=None, help="also time this search spec on the same positions")
    parser.add_argument("--guided-out", default=speed.default_out("guided_search_speed"),
                        help="with --guided: its speed row (JSON; default docs/results/speed/guided_search_speed.json)")
    parser.add_argument("--out", default=None, help="the README's speed row (JSON; default with --trained: "
                        f"{speed.default_out('net_speed')}; without it none)")
    args = parser.parse_args()
    if args.trained and args.out is None:
        args.out = speed.default_out("net_speed")
    times = {}
    hidden = tuple(int(h) for h in args.hidden.split(","))
    print(f"{'game':14} {'net ms/move':>12} {f'ismcts({args.sims}) ms/move':>22} {'ratio':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for short in args.games.split(","):
            game = games.load_game(short)
            if args.trained:
                agent = "trained"
            else:
                encoding = args.encoding if args.encoding in games.encodings(game) else games.INFORMATION_STATE_TENSOR
                output = "factored" if encoding != games.INFORMATION_STATE_TENSOR and \
                    "factored" in games.output_kinds(game) else "dense"
                spec = network.NetworkSpec.for_game(game, hidden, encoding, output)
                npz, path = Path(tmp) / f"{short}.npz", Path(tmp) / f"{short}.json.gz"
                network.save(npz, spec, network.init_params(spec, np.random.default_rng(args.seed)))
                export_agent(npz, path)
                agent = f"net({path})"
            states = positions(game, np.random.default_rng(args.seed), args.positions)
            net = ms_per_move(agent, game, states, args.seed)
            search = ms_per_move(f"ismcts(sims={args.sims})", game, states, args.seed)
            print(f"{short:14} {net:12.3f} {search:22.1f} {search / net:8.0f}x", flush=True)
            times[short] = {"net_ms": net, "ismcts_ms": search, "ratio": search / net}
            if args.guided:
                times[short]["guided_ms"] = guided = ms_per_move(args.guided, game, states, args.seed)
                print(f"{'':14} {args.guided}: {guided:.1f} ms/move, {guided / search:.2f}x ismcts's", flush=True)
    if args.out:
        what = "the shipped networks (`trained`" if args.trained else f"random {args.encoding} networks (`net`"
        ratios = ", ".join(f"{speed.label(g)} {t['net_ms']:.3f} vs {t['ismcts_ms']:,.1f} ms ({t['ratio']:,.0f}x)"
                           for g, t in times.items())
        run.write(args.out, f"network agent ms per move vs `ismcts(sims={args.sims})`, same positions",
                  f"{what}, onnxruntime, one thread), {args.positions} positions each: {ratios}", ">= 100x",
                  data=times)
    if args.guided:
        ratios = ", ".join(f"{speed.label(g)} {t['guided_ms']:,.1f} vs {t['ismcts_ms']:,.1f} ms "
                           f"({t['guided_ms'] / t['ismcts_ms']:.2f}x)" for g, t in times.items())
        run.write(args.guided_out, f"`{args.guided}` ms per move vs "
                  f"`ismcts(sims={args.sims})`, same positions", f"{args.positions} positions each: {ratios}",
                  "<= 1x", data=times)


if __name__ == "__main__":
    main()
