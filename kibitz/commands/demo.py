"""``kibitz demo``: the main job on a small default."""

from __future__ import annotations

import click

from kibitz.commands.play import build_seats, play_game
from kibitz.gameutil import load_game

DEMO_GAME = "underdog(players=4)"
DEMO_SEATS = ["heuristic", "random", "heuristic", "random"]


@click.command("demo")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed for the demo game.")
def demo(seed):
    """Run the main job on a small default: a bot game of Underdog, move by move."""
    game = load_game(DEMO_GAME)
    click.echo(f"kibitz demo: {DEMO_GAME}, seats {', '.join(DEMO_SEATS)}, seed {seed}\n")
    agents = build_seats(game, DEMO_SEATS, seed)
    play_game(game, agents, seed)
