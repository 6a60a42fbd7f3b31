"""Rule-based heuristic agents, one module per game.

Each module registers its agent class with :func:`register` under the game's
short name; this package imports every module in it, so
``HEURISTICS["underdog"]`` is the Underdog heuristic.
"""

import importlib
import pkgutil

HEURISTICS: dict = {}


def register(game_short_name: str):
    def decorate(cls):
        HEURISTICS[game_short_name] = cls
        return cls
    return decorate


for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    importlib.import_module(f"{__name__}.{_info.name}")
