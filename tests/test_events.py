"""Every game's log holds its named event types, each complete.

The rules build events with ``tuple.__new__`` (no arity check), so this
plays seeded random games of every registered game and checks each event:
its type is one of the game module's NamedTuples, its ``kind`` field
names it, and it has exactly that type's fields.
"""

from __future__ import annotations

import importlib

import numpy as np
import pyspiel
import pytest

from helpers import random_play_decisions
from kibitz import games


#: the games that keep a log of events: all but showdown, whose position is
#: its whole history (docs/adding-a-game.md: a log only if the strings read one)
LOGGED = sorted(name for name in games.REGISTRY if name != "showdown")


def test_only_showdown_keeps_no_log():
    for name in games.REGISTRY:
        state = pyspiel.load_game(name).new_initial_state()
        assert callable(getattr(state, "log", None)) == (name in LOGGED), name


@pytest.mark.parametrize("name", LOGGED)
def test_events_are_complete_named_tuples(name):
    rng = np.random.default_rng(0)
    game = pyspiel.load_game(name)
    module = importlib.import_module(f"kibitz.games.{name}")
    kinds = {}
    ends = [s.clone() for s in random_play_decisions(game, rng, 5) if s.is_terminal()]
    assert len(ends) == 5
    for state in ends:
        for e in state.log():
            cls = type(e)
            assert getattr(module, cls.__name__) is cls and cls._fields[0] == "kind"
            assert len(e) == len(cls._fields), e
            assert kinds.setdefault(e.kind, cls) is cls, f"{e.kind} is two types"
    assert kinds
