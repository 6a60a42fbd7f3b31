"""One game seat by seat (``kibitz play``): people and bots, chance drawn from a seed.

:func:`seat_agents` makes one agent per seat from agent specs: ``human`` is
a person who reads through ``read`` and is shown their seat's view through
``write``; a bot in seat i is seeded with ``seed * 1000 + i``.
:func:`play_game` plays the seated agents to the end. With nobody seated a
spectator is shown every move, chance's included, and the final state;
with a person seated, only that seat's view. The returns end the game on
a line of their own. Bad input raises
:class:`kibitz.solvers.solve.ConfigError` naming the option (``GAME``,
``--seats``, ``--seed``); a person who quits raises
:class:`kibitz.agents.human.Quit`.
"""

from __future__ import annotations

import re
from typing import Callable

import numpy as np

from kibitz.agents.base import check_turn_based
from kibitz.agents.human import HumanAgent
from kibitz.agents.registry import make_agent, split_specs
from kibitz.games import load_game
from kibitz.solvers.solve import ConfigError


def playable_game(game):
    """``game`` (a game string or a ``pyspiel.Game``) loaded and checked to
    be played one move at a time (ConfigError naming ``GAME`` if not)."""
    try:
        if isinstance(game, str):
            game = load_game(game)
        check_turn_based(game)
    except ValueError as e:  # GameStringError is one
        raise ConfigError(str(e), "GAME") from None
    return game


def default_seats(game) -> list[str]:
    """A person in seat 0 and the game's heuristic (random where it has none) in the others."""
    from kibitz.agents.heuristics import HEURISTICS

    bot = "heuristic" if game.get_type().short_name in HEURISTICS else "random"
    return ["human"] + [bot] * (game.num_players() - 1)


def seat_agents(game, seats=None, seed: int | None = None, *, read: Callable[[str], str] = input,
                write: Callable[[str], None] = print) -> list:
    """One agent per seat of ``game`` (a game string or a ``pyspiel.Game``).

    ``seats``: one entry a seat, an agent spec or an agent already made (a
    list, or the specs' comma-separated text); None: :func:`default_seats`.
    """
    game = playable_game(game)
    if seats is None:
        seats = default_seats(game)
    elif isinstance(seats, str):
        try:
            seats = split_specs(seats)
        except ValueError as e:
            raise ConfigError(str(e), "--seats") from None
    n = game.num_players()
    if len(seats) != n:
        raise ConfigError(f"{game} has {n} players but {len(seats)} seats were given", "--seats")
    return [_seat(game, i, spec, seed, read, write) for i, spec in enumerate(seats)]


def _seat(game, player: int, spec, seed: int | None, read, write):
    """The agent of seat ``player``: ``spec`` made, or ``spec`` itself if it is already an agent."""
    if not isinstance(spec, str):
        return spec
    if spec.strip().lower() == "human":
        return HumanAgent(game, player, read=read, write=write)
    try:
        return make_agent(spec, game, player, seed=None if seed is None else seed * 1000 + player)
    except ValueError as e:
        raise ConfigError(str(e), "--seats") from None
    except OSError as e:  # a policy(FILE) that cannot be read
        raise ConfigError(f"{spec}: {e.strerror or e}", "--seats") from None


def play(game, seats=None, seed: int | None = None, *, read: Callable[[str], str] = input,
         write: Callable[[str], None] = print):
    """Plays one game of ``game`` with the agents of ``seats`` (as
    :func:`seat_agents` reads them) and returns its final state."""
    if seed is not None and seed < 0:
        raise ConfigError(f"{seed}: at least 0", "--seed")
    game = playable_game(game)
    return play_game(game, seat_agents(game, seats, seed, read=read, write=write), seed, write=write)


def play_game(game, agents, seed: int | None, write: Callable[[str], None] = print):
    """Plays one game of ``game`` with one agent a seat; chance is drawn
    from ``seed``. Returns the final state."""
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
