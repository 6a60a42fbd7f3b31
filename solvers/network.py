"""The network policy: a multilayer perceptron over one of a game's input encodings.

This module fixes what every part of kibitz's trained opponents agrees on:
the trainer (``solvers/train.py``) produces it, ``kibitz export`` turns it
into an ONNX model inside an agent file, and the ``net(FILE)`` agent plays
it. It depends on numpy only (and the games layer for a game's sizes);
training code uses :func:`forward` with ``xp=jax.numpy`` and the same
parameters.

Input: ``x``, the float32 encoding of the player to move, ``spec.encoding``
of ``kibitz.games.encoding`` (``information_state_tensor``: the game
observer's perfect-recall tensor; a game may offer others, e.g. Doubt and
Bet's ``compact``), ``spec.input_size`` floats; and ``mask``, float32
``num_distinct_actions`` with 1 at the legal actions and 0 elsewhere.

Network: ``h_0 = x``; ``h_{k+1} = relu(h_k @ W_k + b_k)`` for the hidden
layers; ``out = h_K @ W_K + b_K``. With output ``dense``, ``out`` is the
logits, one per distinct action. With output ``factored``, ``out`` is
``spec.factors`` (F) factor logits and, with the game's action factors
``index`` (``kibitz.games.action_factors``: int32 ``(num_actions, R)``,
entries in 0..F), ``logits[a] = sum_r out_ext[index[a, r]]`` where
``out_ext`` is ``out`` followed by one 0 (index F adds nothing). The index
comes from the game, not from the file.

Output: the policy ``softmax(logits + (mask - 1) * MASK_PENALTY)``, which
is 0 (to float precision: below ``exp(-MASK_PENALTY)``) on illegal actions;
:func:`probabilities` renormalises over the legal ones exactly.

Files: :func:`save` writes one ``.npz`` with ``W0, b0, W1, b1, ...`` and a
``meta`` entry (JSON: the :class:`NetworkSpec` fields, the output kind and
F among them); :func:`load` checks them against the arrays.
"""

from __future__ import annotations

import dataclasses
import json
import zipfile
import zlib
from pathlib import Path

import numpy as np

#: added (times mask - 1) to the logits of illegal actions before the softmax
MASK_PENALTY = 1e9
#: the default input encoding (every game offers it)
ENCODING = "information_state_tensor"
#: the output kinds: one logit per action, or sums of the game's factor logits
OUTPUTS = ("dense", "factored")


@dataclasses.dataclass(frozen=True)
class NetworkSpec:
    """The shape of a network policy and the game it plays."""

    game: str  # the game string (str(game))
    input_size: int  # the encoding's size (kibitz.games.encoding_size)
    num_actions: int  # game.num_distinct_actions()
    hidden: tuple[int, ...] = (128, 128)
    encoding: str = ENCODING
    output: str = "dense"  # or "factored"
    factors: int = 0  # F, the factor logits of a factored output (0 for dense)

    def __post_init__(self):
        if self.input_size < 1 or self.num_actions < 1:
            raise ValueError(f"input_size and num_actions must be >= 1; got {self.input_size}, {self.num_actions}")
        if not self.hidden or any(int(h) < 1 for h in self.hidden):
            raise ValueError(f"hidden must be one or more layer widths >= 1; got {self.hidden!r}")
        if not isinstance(self.encoding, str) or not self.encoding:
            raise ValueError(f"encoding must be an encoding's name; got {self.encoding!r}")
        if self.output not in OUTPUTS:
            raise ValueError(f"output must be one of {', '.join(OUTPUTS)}; got {self.output!r}")
        if isinstance(self.factors, bool) or not isinstance(self.factors, int):
            raise ValueError(f"factors must be a whole number; got {self.factors!r}")
        if self.output == "factored" and self.factors < 1:
            raise ValueError(f"a factored output needs factors >= 1; got {self.factors}")
        if self.output == "dense" and self.factors != 0:
            raise ValueError(f"a dense output has factors 0; got {self.factors}")
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))

    @classmethod
    def for_game(cls, game, hidden=(128, 128), encoding: str = ENCODING, output: str = "dense") -> "NetworkSpec":
        """The spec of a network for ``game`` reading ``encoding``; ValueError
        naming the allowed ones if the game offers no such encoding or output."""
        from kibitz import games

        size = games.encoding_size(game, encoding)
        if output not in games.output_kinds(game):
            raise ValueError(f"{game.get_type().short_name} has no output {output!r}; allowed: "
                             f"{', '.join(games.output_kinds(game))}")
        factors = games.action_factors(game)[1] if output == "factored" else 0
        return cls(game=str(game), input_size=size, num_actions=game.num_distinct_actions(),
                   hidden=tuple(hidden), encoding=encoding, output=output, factors=factors)

    @property
    def out_size(self) -> int:
        """The last layer's width: F for a factored output, else num_actions."""
        return self.factors if self.output == "factored" else self.num_actions

    @property
    def sizes(self) -> tuple[int, ...]:
        return (self.input_size, *self.hidden, self.out_size)


def action_index(spec: NetworkSpec, game):
    """The game's factor ``index`` for a factored ``spec`` (None for a dense
    one); ValueError unless the game's factors are the spec's."""
    if spec.output != "factored":
        return None
    from kibitz import games

    index, count = games.action_factors(game)
    if count != spec.factors or index.shape[0] != spec.num_actions:
        raise ValueError(f"the network has {spec.factors} factor logits over {spec.num_actions:,} actions; "
                         f"{game} has {count} over {index.shape[0]:,}")
    return index


def init_params(spec: NetworkSpec, rng: np.random.Generator) -> list[np.ndarray]:
    """``[W0, b0, W1, b1, ...]`` (float32): He-uniform weights, zero biases;
    the last layer is scaled down so that the first policy is near uniform."""
    params = []
    sizes = spec.sizes
    for k, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        bound = np.sqrt(6.0 / fan_in) * (0.01 if k == len(sizes) - 2 else 1.0)
        params.append(rng.uniform(-bound, bound, size=(fan_in, fan_out)).astype(np.float32))
        params.append(np.zeros(fan_out, np.float32))
    return params


def forward(params, x, xp=np, index=None):
    """The logits for a batch ``x`` (shape ``(..., input_size)``); ``index``:
    the game's action factors for a factored network (:func:`action_index`),
    None for a dense one."""
    h = x
    last = len(params) // 2 - 1
    for k in range(last + 1):
        h = h @ params[2 * k] + params[2 * k + 1]
        if k < last:
            h = xp.maximum(h, 0.0)
    if index is None:
        return h
    ext = xp.concatenate([h, xp.zeros((*h.shape[:-1], 1), h.dtype)], axis=-1)
    logits = xp.take(ext, index[:, 0], axis=-1)
    for r in range(1, index.shape[1]):
        logits = logits + xp.take(ext, index[:, r], axis=-1)
    return logits


def forward_at(params, x, acts, xp=np, index=None):
    """The logits of the actions ``acts`` only: an integer array ``(N, L)``
    of action ids per row of ``x`` (``(N, input_size)``); the same numbers
    as ``take_along_axis(forward(params, x, xp, index), acts, -1)``, and for
    a factored network without computing the other actions' logits."""
    h = forward(params, x, xp)
    if index is None:
        return xp.take_along_axis(h, acts, axis=-1)
    ext = xp.concatenate([h, xp.zeros((*h.shape[:-1], 1), h.dtype)], axis=-1)
    factors = xp.take(index, acts, axis=0)  # (N, L, R)
    logits = xp.take_along_axis(ext, factors[..., 0], axis=-1)
    for r in range(1, index.shape[1]):
        logits = logits + xp.take_along_axis(ext, factors[..., r], axis=-1)
    return logits


def masked_softmax(logits, mask, xp=np):
    """The policy the network defines (the formula of the module docstring)."""
    z = logits + (mask - 1.0) * MASK_PENALTY
    z = z - z.max(axis=-1, keepdims=True)
    e = xp.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def probabilities(params, x, legal, index=None) -> dict[int, float]:
    """``{action: probability}`` over ``legal`` for one input ``x`` (``index``: see :func:`forward`)."""
    logits = forward(params, np.asarray(x, np.float32)[None, :], index=index)[0]
    mask = np.zeros(logits.shape[-1], np.float32)
    mask[list(legal)] = 1.0
    p = masked_softmax(logits.astype(np.float64), mask)
    total = float(sum(p[a] for a in legal))
    return {int(a): float(p[a]) / total for a in legal}


def save(path, spec: NetworkSpec, params) -> None:
    """Writes ``spec`` and ``params`` to ``path`` (``.npz``), atomically."""
    from kibitz.solvers._io import atomic_write

    arrays = {f"{'W' if i % 2 == 0 else 'b'}{i // 2}": np.asarray(p, np.float32) for i, p in enumerate(params)}
    meta = json.dumps(dataclasses.asdict(spec))
    atomic_write(Path(path), lambda f: np.savez(f, meta=np.frombuffer(meta.encode(), np.uint8), **arrays))


def load(path) -> tuple[NetworkSpec, list[np.ndarray]]:
    """The spec and parameters :func:`save` wrote; ValueError naming the file otherwise."""
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(z["meta"].tobytes().decode())
            # files from before the output kinds are dense (no "output", "factors")
            spec = NetworkSpec(**{**meta, "hidden": tuple(meta["hidden"])})
            params = []
            for k in range(len(spec.sizes) - 1):
                params += [z[f"W{k}"], z[f"b{k}"]]
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        why = "not a NumPy .npz of arrays" if "pickle" in str(e) else e
        raise ValueError(f"{path}: not a kibitz network file ({why})") from None
    for k, (fan_in, fan_out) in enumerate(zip(spec.sizes[:-1], spec.sizes[1:])):
        if params[2 * k].shape != (fan_in, fan_out) or params[2 * k + 1].shape != (fan_out,):
            what = f" ({spec.output} output, {spec.out_size} logits)" if k == len(spec.sizes) - 2 else ""
            raise ValueError(f"{path}: layer {k} has shape {params[2 * k].shape}, the spec says "
                             f"{(fan_in, fan_out)}{what}")
    return spec, params
