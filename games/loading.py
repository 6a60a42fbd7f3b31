"""Loading games from game strings with errors a person can act on.

``load_game`` is ``pyspiel.load_game`` for kibitz's games and OpenSpiel's,
raising :class:`GameStringError` with a one-line message (the parameter
check that failed, or the known game names) instead of pyspiel's own.
"""

from __future__ import annotations

import contextlib
import os
import sys

import pyspiel

from kibitz.games._common import REGISTRY


@contextlib.contextmanager
def _quiet_stderr():
    """pyspiel prints its own copy of every error to fd 2; hide it."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        yield
        return
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), fd)
            yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


class GameStringError(ValueError):
    """A game string that does not load; the message says why."""


def load_game(game_string: str) -> pyspiel.Game:
    """``pyspiel.load_game`` with a short, clear error for bad game strings."""
    try:
        with _quiet_stderr():
            return pyspiel.load_game(game_string)
    except ValueError as e:  # our own parameter validation
        raise GameStringError(str(e)) from None
    except pyspiel.SpielError as e:
        msg = str(e)
        if msg.startswith("Unknown game"):
            name = game_string.split("(", 1)[0]
            msg = (f"unknown game {name!r}; kibitz games: {', '.join(sorted(REGISTRY))} "
                   "(any OpenSpiel game name also works)")
        raise GameStringError(f"{game_string}: {msg}") from None
