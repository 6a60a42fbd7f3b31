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

from kibitz import games


@pytest.mark.parametrize("name", sorted(games.REGISTRY))
def test_events_are_complete_named_tuples(name):
    rng = np.random.default_rng(0)
    game = pyspiel.load_game(name)
    module = importlib.import_module(f"kibitz.games.{name}")
    kinds = {}
    for _ in range(5):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
            else:
                legal = state.legal_actions()
                state.apply_action(legal[int(rng.integers(len(legal)))])
        for e in state.log():
            cls = type(e)
            assert getattr(module, cls.__name__) is cls and cls._fields[0] == "kind"
            assert len(e) == len(cls._fields), e
            assert kinds.setdefault(e.kind, cls) is cls, f"{e.kind} is two types"
    assert kinds
