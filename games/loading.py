"""Loading games from game strings with errors a person can act on.

``load_game`` is ``pyspiel.load_game`` for kibitz's games and OpenSpiel's,
raising :class:`GameStringError` with a one-line message (the parameter
check that failed, or the known game names) instead of pyspiel's own.

pyspiel's parser is lenient: it ignores whatever follows the closing
parenthesis (``underdog(players=3))`` and ``underdog(players=3)x`` load),
lets a repeated parameter silently win (``underdog(players=3,players=4)``
is a 4-player game) and drops an empty one (``kuhn_poker(players=2,)``).
:func:`check_game_string` refuses all of these first, naming the fault:

    NAME | NAME(KEY=VALUE,...)     VALUE may itself be a game string
"""

from __future__ import annotations

import contextlib
import os
import re
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


_NAME = re.compile(r"[^\W\d]\w*")  # pyspiel then names an unknown one
_FORM = "NAME or NAME(KEY=VALUE,...), e.g. underdog(players=3,cards=9)"
_INT_MAX = 2**31 - 1  # pyspiel's integer parameters are C++ ints


def _closing(text: str, start: int) -> int:
    """The index of the parenthesis that closes the one at ``start``, or -1."""
    depth = 0
    for i in range(start, len(text)):
        depth += text[i] == "("
        depth -= text[i] == ")"
        if depth == 0:
            return i
    return -1


def _split_params(body: str) -> list[str]:
    """``body`` (what is between a game's parentheses) split at its top-level commas."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    return parts


def check_game_string(text: str) -> None:
    """Raises :class:`GameStringError` unless ``text`` is ``NAME`` or
    ``NAME(KEY=VALUE,...)`` with balanced parentheses, nothing after the
    closing one, and each parameter given once (nested game strings as
    values are checked the same way)."""
    def fail(why):
        raise GameStringError(f"game string {text!r}: {why}; expected {_FORM}")

    if not text:
        fail("it is empty")
    if any(ch.isspace() for ch in text):
        fail("spaces are not allowed (write "
             f"{''.join(ch for ch in text if not ch.isspace())!r})")
    _check(text, fail)


def _check(text: str, fail) -> None:
    m = _NAME.match(text)
    if not m:
        fail(f"{text!r} does not start with a game name")
    end = m.end()
    if end == len(text):
        return
    if text[end] != "(":
        fail(f"unexpected {text[end]!r} after the game name {m.group()!r}")
    close = _closing(text, end)
    if close < 0:
        fail(f"the parenthesis after {m.group()!r} is never closed")
    if close != len(text) - 1:
        fail(f"unexpected {text[close + 1:]!r} after the closing parenthesis")
    body = text[end + 1:close]
    if not body:
        return
    seen = set()
    for part in _split_params(body):
        key, eq, value = part.partition("=")
        if not part:
            fail("an empty parameter (two commas, or a comma before ')')")
        if not eq or not _NAME.fullmatch(key):
            fail(f"{part!r} is not KEY=VALUE")
        if key in seen:
            fail(f"parameter {key!r} is given twice")
        seen.add(key)
        if not value:
            fail(f"parameter {key!r} has no value")
        if re.fullmatch(r"[-+]?\d+", value) and abs(int(value)) > _INT_MAX:
            fail(f"parameter {key}={value} is beyond OpenSpiel's integers (at most {_INT_MAX})")
        if "(" in value or ")" in value:
            _check(value, fail)


_WRONG_TYPE = re.compile(r"Wrong type for parameter (\w+)\. Expected type: k(\w+), got k\w+ with (.*)",
                         re.S)
_KINDS = {"Int": "an integer", "Double": "a number", "Bool": "true or false",
          "String": "a string", "Game": "a game string"}


def _wrong_type(game_string: str, msg: str) -> str | None:
    """pyspiel's "Wrong type for parameter X ..." as a sentence naming the
    allowed values (from the game's declared parameters when it is kibitz's)."""
    m = _WRONG_TYPE.match(msg)
    if not m:
        return None
    name, kind, value = m.group(1), m.group(2), m.group(3).strip()
    short = game_string.split("(", 1)[0]
    out = f"{short}: parameter {name}={value} must be {_KINDS.get(kind, kind)}"
    spec = REGISTRY.get(short)
    param = next((p for p in spec.params if p.name == name), None) if spec else None
    if param:
        return out + f"; allowed: {param.allowed}"
    # an OpenSpiel game: its declared default shows the kind of value it takes
    types = [t for t in pyspiel.registered_games() if t.short_name == short]
    default = types[0].parameter_specification.get(name) if types else None
    return out + (f" (default {default})" if default is not None else "")


def load_game(game_string: str) -> pyspiel.Game:
    """``pyspiel.load_game`` with a short, clear error for bad game strings."""
    check_game_string(game_string)
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
        elif "num_players" in msg:  # an OpenSpiel game's check on its player count, in C++ terms
            types = [t for t in pyspiel.registered_games() if t.short_name == game_string.split("(", 1)[0]]
            if types:
                msg = (f"players must be {types[0].min_num_players}..{types[0].max_num_players} "
                       f"for {types[0].short_name}")
        else:
            msg = _wrong_type(game_string, msg) or msg.strip().splitlines()[0]
            if msg.startswith(game_string.split("(", 1)[0] + ":"):
                raise GameStringError(msg) from None
        raise GameStringError(f"{game_string}: {msg}") from None
