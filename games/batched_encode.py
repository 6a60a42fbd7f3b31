"""A second encoding of the batched environment's positions.

:class:`kibitz.games.batched.BatchedEnv` hands out one encoding per
environment (the mover's observation tensor or its ``compact`` encoding).
Code that needs another one for some rows (a best response reading the
observation tensor among networks that read ``compact``) writes it here
from ``env.pos`` with the compiled rules' own encoder (``rules.observation``
or ``rules.compact``: ``(pos, params, player, out)``, the same numbers as
pyspiel's tensors, tests/test_compiled_observation_*.py):

    encode = RowEncoder(env, "compact")
    x = encode(rows, env.player[rows])   # float32, one row per entry of rows
"""

from __future__ import annotations

import numba
import numpy as np

from kibitz.games.batched import ENCODINGS


@numba.njit(nogil=True, boundscheck=False)
def _encode_rows(encoder, pos, params, rows, players, out):
    for i in range(len(rows)):
        encoder(pos[rows[i]], params, players[i], out[i])


class RowEncoder:
    """``encoding`` (a name of :data:`kibitz.games.batched.ENCODINGS`) of
    chosen rows of ``env`` for chosen players: ``self(rows, players)``
    returns a float32 array ``(len(rows), size)``."""

    def __init__(self, env, encoding: str):
        if encoding not in ENCODINGS:
            raise ValueError(f"encoding={encoding!r}; allowed: {', '.join(ENCODINGS)}")
        field, size = ENCODINGS[encoding]
        self.encoder = getattr(env.rules, field)
        if self.encoder is None:
            raise ValueError(f"game {env.game.get_type().short_name!r}: its compiled rules do not compute the "
                             f"{encoding} encoding")
        self.env = env
        self.size = int(getattr(env.game, size)())

    def __call__(self, rows, players) -> np.ndarray:
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        players = np.ascontiguousarray(players, dtype=np.int64)
        out = np.zeros((len(rows), self.size), np.float32)
        if len(rows):
            _encode_rows(self.encoder, self.env.pos, self.env.rules.params, rows, players, out)
        return out
