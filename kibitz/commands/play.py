"""``kibitz play``: a game in the terminal, people and bots."""

from __future__ import annotations

import re

import click
import numpy as np

from kibitz.agents.human import HumanAgent, Quit
from kibitz.agents.formats.kibitz_agent_loader import AgentFileError
from kibitz.agents.registry import make_agent, split_specs
from kibitz.agents.base import check_turn_based
from kibitz.games import GameStringError, load_game


def build_seats(game, seat_specs, seed, read=input, write=click.echo):
    """One agent per seat; seat i's bot is seeded with seed*1000+i."""
    n = game.num_players()
    if len(seat_specs) != n:
        raise click.BadParameter(
            f"{game} has {n} players but {len(seat_specs)} seats were given", param_hint="--seats")
    agents = []
    for i, spec in enumerate(seat_specs):
        if spec.strip().lower() == "human":
            agents.append(HumanAgent(game, i, read=read, write=write))
        else:
            try:
                agents.append(make_agent(spec, game, i, seed=None if seed is None else seed * 1000 + i))
            except ValueError as e:
                raise click.BadParameter(str(e), param_hint="--seats") from None
            except OSError as e:  # a policy(FILE) that cannot be read
                raise click.BadParameter(f"{spec}: {e.strerror or e}", param_hint="--seats") from None
    return agents


def play_game(game, agents, seed, write=click.echo):
    """Plays one game; chance is drawn from ``seed``. Returns the final state."""
    rng = np.random.default_rng(seed)
    humans = [a for a in agents if isinstance(a, HumanAgent)]
    state = game.new_initial_state()
    for a in agents:
        a.restart_at(state)
    while not state.is_terminal():
        player = state.current_player()
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            probs = np.array([p for _, p in outcomes])
            action = outcomes[rng.choice(len(outcomes), p=probs / probs.sum())][0]
            if not humans:
                write(f"chance: {state.action_to_string(player, action)}")
        else:
            action = agents[player].step(state)
            if not humans:
                write(f"p{player} ({agents[player].name}): {state.action_to_string(player, action)}")
        for i, a in enumerate(agents):
            if i != player:
                a.inform_action(state, player, action)
        state.apply_action(action)
    for h in humans:
        h.show_view(state)
    write("")
    if not humans:  # a spectator may see everything; a seated person only their view
        write(_without_returns(str(state)))
    returns = state.returns()
    write("returns: " + "  ".join(f"p{i} {r:g}" for i, r in enumerate(returns)))
    return state


_RETURNS_LINE = re.compile(r"(.*?)(?::\s*)?returns(?: [-+\d.e]+)+")


def _without_returns(text: str) -> str:
    """A final state's text without the returns it may end with (``game
    over: returns 1 0 0``): :func:`play_game` prints them on its own line."""
    lines = text.splitlines()
    m = _RETURNS_LINE.fullmatch(lines[-1]) if lines else None
    if m:
        lines[-1] = m.group(1)
        if not lines[-1]:
            lines.pop()
    return "\n".join(lines)


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
        check_turn_based(game)
    except (GameStringError, ValueError) as e:
        raise click.BadParameter(str(e), param_hint="GAME") from None
    if seats is None:
        from kibitz.agents.heuristics import HEURISTICS
        bot = "heuristic" if game.get_type().short_name in HEURISTICS else "random"
        specs = ["human"] + [bot] * (game.num_players() - 1)
    else:
        try:
            specs = split_specs(seats)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--seats") from None
    agents = build_seats(game, specs, seed)
    try:
        play_game(game, agents, seed)
    except Quit as e:
        click.echo()  # ends the line of the prompt
        if e.end_of_input:  # not a person's choice: a script's input ran out, or stdin was never a terminal
            raise click.ClickException(f"end of input at player {e.player}'s move: game abandoned") from None
        click.echo("game abandoned")
    except AgentFileError as e:  # an entry of a policy(FILE) seat that does not fit the game
        raise click.ClickException(str(e)) from None
