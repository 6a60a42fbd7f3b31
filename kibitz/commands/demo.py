"""``kibitz demo``: the main job on a small default, :func:`kibitz.api.demo`
(solve, export, tournament in ``--out``; experiments/demo.py says how a
second run replaces the first's files). ``--play`` instead shows one bot
game of Underdog move by move.
"""

from __future__ import annotations

import click

from kibitz.api import DemoError, load_game
from kibitz.api import demo as run_demo
from kibitz.commands.play import build_seats, play_game

PLAY_GAME = "underdog(players=4)"
PLAY_SEATS = ["heuristic", "random", "heuristic", "random"]


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
    try:
        run_demo(out_dir, iterations=iterations, games=games, workers=workers, seed=seed, echo=click.echo,
                 log=lambda line: click.echo(line, err=True))
    except DemoError as e:
        raise click.ClickException(str(e)) from None
