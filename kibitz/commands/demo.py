"""``kibitz demo``: the main job on a small default.

Solves a small configuration of Doubt and Bet with CFR+ (showing NashConv as
it falls), exports the average policy as an agent file, and plays a short
tournament of that agent against IS-MCTS, the heuristic and random.
``--play`` instead shows one bot game of Underdog move by move.

Run again, the demo replaces its own earlier output: it lists the files it
writes in ``--out``/kibitz-demo.txt and, on the next run, removes exactly
those (and refuses to start if ``--out`` holds a file of the same name it
did not write). Nothing else in the folder is touched.
"""

from __future__ import annotations

import os
import time

import click

from kibitz.commands.play import build_seats, play_game
from kibitz.games import load_game

DEMO_GAME = "doubt_and_bet(players=2,chips=3,slots=1,colours=2,copies=2,single_bet=true)"
PLAY_GAME = "underdog(players=4)"
PLAY_SEATS = ["heuristic", "random", "heuristic", "random"]
CHECKPOINTS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000)
#: the files the demo writes in its output folder, and the list it keeps of them
OUTPUT_FILES = ("policy.json.gz", "agent.json.gz", "tournament/tournament.json",
                "tournament/games.jsonl", "tournament/results.json", "tournament/results.csv")
MARKER = "kibitz-demo.txt"


def _take_over(out_dir):
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
            raise click.ClickException(
                f"--out {out_dir} holds {', '.join(foreign)}, which kibitz demo did not write "
                f"(no {MARKER} lists it); move it away or give another --out")
        for name in present:
            os.remove(os.path.join(out_dir, name))
        # made only now: a refused --out is left as it was
        os.makedirs(os.path.join(out_dir, "tournament"), exist_ok=True)
        with open(marker, "w") as f:
            f.write("# written by kibitz demo; the next kibitz demo with this --out replaces:\n")
            f.write("".join(name + "\n" for name in OUTPUT_FILES))
    except OSError as e:
        raise click.ClickException(f"--out {out_dir}: {e.strerror or e}") from None


def _solve(game_string, iterations, out_dir):
    """CFR+ on the compiled tree; prints a convergence table; returns the policy file."""
    from tqdm import tqdm

    from kibitz.solvers import compile_tree, expected_returns, make_config, nash_conv
    from kibitz.solvers.cfr import CFRSolver
    from kibitz.solvers.policy_file import policy_document, write_policy_file

    t0 = time.perf_counter()
    tree = compile_tree(load_game(game_string))
    click.echo(f"compiled: {tree.num_nodes:,} nodes, {tree.num_infosets:,} information states "
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
    click.echo(f"{'iterations':>10}  {'NashConv':>10}  {'seconds':>8}")
    for it, nc, sec in rows:
        click.echo(f"{it:>10,}  {nc:>10.3e}  {sec:>8.2f}")
    policy = solver.average_policy()
    returns = expected_returns(tree, policy)
    click.echo("expected returns of the average policy: "
               + "  ".join(f"p{i} {r:+.4f}" for i, r in enumerate(returns)))
    path = os.path.join(out_dir, "policy.json.gz")
    doc = policy_document(tree, policy, algorithm="cfr+", settings=config.as_dict(),
                          iterations=iterations, seconds=rows[-1][2], nash_conv=rows[-1][1],
                          expected_returns=returns)
    write_policy_file(path, doc)
    return path


@click.command("demo")
@click.option("--out", "out_dir", default="demo-output", show_default=True, type=click.Path(file_okay=False),
              help="Folder for the policy, the agent file and the tournament results.")
@click.option("--iterations", type=click.IntRange(1), default=2000, show_default=True,
              help="CFR+ iterations.")
@click.option("--games", type=click.IntRange(1), default=240, show_default=True,
              help="Tournament games.")
@click.option("--workers", type=click.IntRange(1, 64), default=2, show_default=True,
              help="Tournament worker processes.")
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True,
              help="Seed for the tournament.")
@click.option("--play", "play_only", is_flag=True,
              help="Instead: one bot game of Underdog, shown move by move.")
def demo(out_dir, iterations, games, workers, seed, play_only):
    """Run the main job: solve a small game, export the agent, play a tournament.

    A second run with the same --out replaces the first one's files.
    """
    if play_only:
        game = load_game(PLAY_GAME)
        click.echo(f"kibitz demo: {PLAY_GAME}, seats {', '.join(PLAY_SEATS)}, seed {seed}\n")
        play_game(game, build_seats(game, PLAY_SEATS, seed), seed)
        return
    from kibitz.agents.formats.export import export_agent
    from kibitz.agents.matches.tournament import format_table, run_tournament

    _take_over(out_dir)
    click.echo(f"kibitz demo\n\n1. Solve {DEMO_GAME} with CFR+")
    policy_path = _solve(DEMO_GAME, iterations, out_dir)
    click.echo(f"wrote {policy_path}\n")

    agent_path = os.path.join(out_dir, "agent.json.gz")
    doc = export_agent(policy_path, agent_path)
    unseen = doc.get("unseen")
    unseen = unseen.get("behaviour", unseen) if isinstance(unseen, dict) else unseen
    click.echo(f"2. Export: {agent_path} ({len(doc['policy']):,} information states; "
               f"on unseen ones it plays {unseen})\n")

    specs = [f"policy({agent_path})", "ismcts(sims=100)", "heuristic", "random"]
    click.echo(f"3. Tournament: {', '.join(specs)}; {games} games, seats rotated, duplicate deals")
    outcome = run_tournament(DEMO_GAME, specs, games, seed=seed, workers=workers,
                             out_dir=os.path.join(out_dir, "tournament"), progress=True,
                             log=lambda line: click.echo(line, err=True))
    click.echo(format_table(outcome.results))
    click.echo(f"\nresults in {os.path.join(out_dir, 'tournament')}/ (results.json, results.csv, "
               "games.jsonl; `kibitz replay` reproduces any game)")
