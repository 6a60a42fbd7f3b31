"""The demo (``kibitz demo``): the main job on a small default.

Solves a small configuration of Doubt and Bet with CFR+ (showing NashConv as
it falls), exports the average policy as an agent file, and plays a short
tournament of that agent against IS-MCTS, the heuristic and random.

Run again, the demo replaces its own earlier output: it lists the files it
writes in its output folder in ``kibitz-demo.txt`` and, on the next run,
removes exactly those (and refuses to start if the folder holds a file of
the same name it did not write: :class:`DemoError`). Nothing else in the
folder is touched.
"""

from __future__ import annotations

import os
import time
from typing import Callable

from kibitz.solvers.solve import quiet

DEMO_GAME = "doubt_and_bet(players=2,chips=3,slots=1,colours=2,copies=2,single_bet=true)"
#: the iterations after which the convergence table shows NashConv (and after the last)
CHECKPOINTS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000)
#: the files the demo writes in its output folder, and the list it keeps of them
OUTPUT_FILES = ("policy.json.gz", "agent.json.gz", "tournament/tournament.json",
                "tournament/games.jsonl", "tournament/results.json", "tournament/results.csv")
MARKER = "kibitz-demo.txt"


class DemoError(ValueError):
    """An output folder the demo cannot use: it holds a file of the demo's
    names that no earlier demo wrote, or it cannot be written; the message
    names the folder (as ``--out``) and what to do."""


def take_over(out_dir) -> None:
    """Makes ``out_dir`` ready for a fresh demo: removes the files an
    earlier demo wrote there (those its marker lists), refuses files of the
    same names it did not write, and writes the marker."""
    marker = os.path.join(out_dir, MARKER)
    try:
        ours = set()
        if os.path.isfile(marker):
            with open(marker) as f:
                ours = {line.strip() for line in f if line.strip() in OUTPUT_FILES}
        present = [name for name in OUTPUT_FILES if os.path.lexists(os.path.join(out_dir, name))]
        foreign = [name for name in present if name not in ours]
        if foreign:
            raise DemoError(f"--out {out_dir} holds {', '.join(foreign)}, which kibitz demo did not write "
                            f"(no {MARKER} lists it); move it away or give another --out")
        for name in present:
            os.remove(os.path.join(out_dir, name))
        # made only now: a refused folder is left as it was
        os.makedirs(os.path.join(out_dir, "tournament"), exist_ok=True)
        with open(marker, "w") as f:
            f.write("# written by kibitz demo; the next kibitz demo with this --out replaces:\n")
            f.write("".join(name + "\n" for name in OUTPUT_FILES))
    except OSError as e:
        raise DemoError(f"--out {out_dir}: {e.strerror or e}") from None


def solve_with_table(game_string: str, iterations: int, out_dir, echo: Callable[[str], None]) -> str:
    """CFR+ on the compiled tree; says a convergence table through ``echo``;
    returns the policy file it writes in ``out_dir``."""
    from tqdm import tqdm

    from kibitz.games import load_game
    from kibitz.solvers import compile_tree, expected_returns, make_config, nash_conv
    from kibitz.solvers.cfr import CFRSolver
    from kibitz.solvers.policy_file import policy_document, write_policy_file

    t0 = time.perf_counter()
    tree = compile_tree(load_game(game_string))
    echo(f"compiled: {tree.num_nodes:,} nodes, {tree.num_infosets:,} information states "
         f"({time.perf_counter() - t0:.1f} s)\n")
    config = make_config("cfr+")
    solver = CFRSolver(tree, config)
    marks = [c for c in CHECKPOINTS if c < iterations] + [iterations]
    rows = []
    t0 = time.perf_counter()
    with tqdm(total=iterations, desc="CFR+", unit="it", leave=False, disable=None) as bar:
        done = 0
        for mark in marks:
            while done < mark:
                solver.iterate()
                done += 1
            bar.update(mark - bar.n)
            nc = nash_conv(tree, solver.average_policy())
            rows.append((mark, nc, time.perf_counter() - t0))
            bar.set_postfix(nashconv=f"{nc:.2e}")
    echo(f"{'iterations':>10}  {'NashConv':>10}  {'seconds':>8}")
    for it, nc, sec in rows:
        echo(f"{it:>10,}  {nc:>10.3e}  {sec:>8.2f}")
    policy = solver.average_policy()
    returns = expected_returns(tree, policy)
    echo("expected returns of the average policy: " + "  ".join(f"p{i} {r:+.4f}" for i, r in enumerate(returns)))
    path = os.path.join(out_dir, "policy.json.gz")
    doc = policy_document(tree, policy, algorithm="cfr+", settings=config.as_dict(),
                          iterations=iterations, seconds=rows[-1][2], nash_conv=rows[-1][1],
                          expected_returns=returns)
    write_policy_file(path, doc)
    return path


def run_demo(out_dir, *, iterations: int, games: int, workers: int, seed: int,
             echo: Callable[[str], None] = quiet, log: Callable[[str], None] = quiet) -> dict:
    """Solves, exports and plays the tournament in ``out_dir`` (see the
    module's docstring); ``echo`` receives the report line by line, ``log``
    the tournament's progress. Returns the paths of the policy file, the
    agent file and the tournament's folder, and the tournament's outcome."""
    from kibitz.agents.formats.export import export_agent
    from kibitz.agents.matches.tournament import format_table, run_tournament

    take_over(out_dir)
    echo(f"kibitz demo\n\n1. Solve {DEMO_GAME} with CFR+")
    policy_path = solve_with_table(DEMO_GAME, iterations, out_dir, echo)
    echo(f"wrote {policy_path}\n")

    agent_path = os.path.join(out_dir, "agent.json.gz")
    doc = export_agent(policy_path, agent_path)
    unseen = doc.get("unseen")
    unseen = unseen.get("behaviour", unseen) if isinstance(unseen, dict) else unseen
    echo(f"2. Export: {agent_path} ({len(doc['policy']):,} information states; on unseen ones it plays {unseen})\n")

    specs = [f"policy({agent_path})", "ismcts(sims=100)", "heuristic", "random"]
    echo(f"3. Tournament: {', '.join(specs)}; {games} games, seats rotated, duplicate deals")
    folder = os.path.join(out_dir, "tournament")
    outcome = run_tournament(DEMO_GAME, specs, games, seed=seed, workers=workers, out_dir=folder, progress=True,
                             log=log)
    echo(format_table(outcome.results))
    echo(f"\nresults in {folder}/ (results.json, results.csv, games.jsonl; `kibitz replay` reproduces any game)")
    return {"policy": policy_path, "agent": agent_path, "tournament": folder, "outcome": outcome}
