"""``kibitz play``: a game in the terminal, people and bots."""

from __future__ import annotations

import click

from kibitz.api import AgentFileError, ConfigError, Quit, load_game, seat_agents
from kibitz.api import play as run_play


def build_seats(game, seat_specs, seed, read=input, write=click.echo):
    """One agent per seat; seat i's bot is seeded with seed*1000+i."""
    try:
        return seat_agents(game, seat_specs, seed, read=read, write=write)
    except ConfigError as e:
        raise click.BadParameter(str(e), param_hint=e.param) from None


def play_game(game, agents, seed, write=click.echo):
    """Plays one game; chance is drawn from ``seed``. Returns the final state."""
    return run_play(game, agents, seed, write=write)


@click.command("play")
@click.argument("game_string", metavar="GAME")
@click.option("--seats", default=None,
              help="Comma-separated agent specs, one per seat, e.g. human,random,heuristic "
                   "(default: human in seat 0, heuristic or random elsewhere).")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Seed for chance and the bots (reproducible game), 0 or more.")
def play(game_string, seats, seed):
    """Play a game in the terminal: people and bots, seat by seat."""
    try:
        game = load_game(game_string)
    except ValueError as e:  # GameStringError is one
        raise click.BadParameter(str(e), param_hint="GAME") from None
    agents = build_seats(game, seats, seed)
    try:
        play_game(game, agents, seed)
    except Quit as e:
        click.echo()  # ends the line of the prompt
        if e.end_of_input:  # not a person's choice: a script's input ran out, or stdin was never a terminal
            raise click.ClickException(f"end of input at player {e.player}'s move: game abandoned") from None
        click.echo("game abandoned")
    except AgentFileError as e:  # an entry of a policy(FILE) seat that does not fit the game
        raise click.ClickException(str(e)) from None
