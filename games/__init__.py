"""kibitz games. Importing this package registers every game with pyspiel.

Each game is a module of this package (found automatically, so adding a game
is adding a module); ``games.REGISTRY`` maps short names to their specs, and
``games.load_game`` loads a game string (raising ``GameStringError``).
``kibitz.games.search`` is the contract between a game and kibitz's searches
(which capabilities a spec may declare, and what the states then offer).
``win_shares`` splits a win among the best scores (payoff ``win``, and the
tournament's win counts). ``encodings``, ``encoding_size``,
``encoding_tensor``, ``encoding_layout``, ``output_kinds`` and
``action_factors`` (``kibitz.games.encoding``) are what learning code reads
of a game: its input encodings and its factored output.
"""

import importlib
import pkgutil

from kibitz.games._common import REGISTRY, GameSpec, Param, win_shares
from kibitz.games.encoding import (INFORMATION_STATE_TENSOR, OBSERVATION_TENSOR, OUTPUT_KINDS, action_factors,
                                   check_encoding, encoding_layout, encoding_size, encoding_tensor, encodings, output_kinds)
from kibitz.games.loading import GameStringError, load_game

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")

__all__ = ["INFORMATION_STATE_TENSOR", "OBSERVATION_TENSOR", "OUTPUT_KINDS", "REGISTRY", "GameSpec", "GameStringError", "Param",
           "action_factors", "check_encoding", "encoding_layout", "encoding_size", "encoding_tensor", "encodings",
           "load_game", "output_kinds", "win_shares"]
