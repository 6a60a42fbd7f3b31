"""The network policy: a multilayer perceptron over a game's information-state tensor.

This module fixes what every part of kibitz's trained opponents agrees on:
the trainer (``solvers/train.py``) produces it, ``kibitz export`` turns it
into an ONNX model inside an agent file, and the ``net(FILE)`` agent plays
it. It depends on numpy only; training code uses :func:`forward` with
``xp=jax.numpy`` and the same parameters.

Input: ``x``, the float32 information-state tensor of the player to move
(``state.information_state_tensor(player)``, the game observer's layout,
``game.information_state_tensor_size()`` floats), and ``mask``, float32
``num_distinct_actions`` with 1 at the legal actions and 0 elsewhere.

Network: ``h_0 = x``; ``h_{k+1} = relu(h_k @ W_k + b_k)`` for the hidden
layers; ``logits = h_K @ W_K + b_K`` (one logit per distinct action).

Output: the policy ``softmax(logits + (mask - 1) * MASK_PENALTY)``, which
is 0 (to float precision: below ``exp(-MASK_PENALTY)``) on illegal actions;
:func:`probabilities` renormalises over the legal ones exactly.

Files: :func:`save` writes one ``.npz`` with ``W0, b0, W1, b1, ...`` and a
``meta`` entry (JSON: the :class:`NetworkSpec` fields).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

#: added (times mask - 1) to the logits of illegal actions before the softmax
MASK_PENALTY = 1e9
#: the input encoding every network here reads
ENCODING = "information_state_tensor"


#: the input encodings: the name and the State method that computes it
ENCODINGS = ("information_state_tensor", "observation_tensor")


def encoding_size(game, encoding: str) -> int:
    """The number of floats of ``encoding`` in ``game``."""
    if encoding not in ENCODINGS:
        raise ValueError(f"encoding {encoding!r}: allowed: {', '.join(ENCODINGS)}")
    return getattr(game, f"{encoding}_size")()


def encoder(encoding: str):
    """``tensor(state, player=None)``: the input ``encoding`` of the player to move (or ``player``)."""
    if encoding not in ENCODINGS:
        raise ValueError(f"encoding {encoding!r}: allowed: {', '.join(ENCODINGS)}")

    def tensor(state, player=None):
        method = getattr(state, encoding)
        return method() if player is None else method(player)

    return tensor


@dataclasses.dataclass(frozen=True)
class NetworkSpec:
    """The shape of a network policy and the game it plays."""

    game: str  # the game string (str(game))
    input_size: int  # game.information_state_tensor_size()
    num_actions: int  # game.num_distinct_actions()
    hidden: tuple[int, ...] = (128, 128)
    encoding: str = ENCODING

    def __post_init__(self):
        if self.input_size < 1 or self.num_actions < 1:
            raise ValueError(f"input_size and num_actions must be >= 1; got {self.input_size}, {self.num_actions}")
        if not self.hidden or any(int(h) < 1 for h in self.hidden):
            raise ValueError(f"hidden must be one or more layer widths >= 1; got {self.hidden!r}")
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))

    @classmethod
    def for_game(cls, game, hidden=(128, 128), encoding=ENCODING) -> "NetworkSpec":
        return cls(game=str(game), input_size=encoding_size(game, encoding),
                   num_actions=game.num_distinct_actions(), hidden=tuple(hidden), encoding=encoding)

    @property
    def sizes(self) -> tuple[int, ...]:
        return (self.input_size, *self.hidden, self.num_actions)


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


def forward(params, x, xp=np):
    """The logits for a batch ``x`` (shape ``(..., input_size)``)."""
    h = x
    last = len(params) // 2 - 1
    for k in range(last + 1):
        h = h @ params[2 * k] + params[2 * k + 1]
        if k < last:
            h = xp.maximum(h, 0.0)
    return h


def masked_softmax(logits, mask, xp=np):
    """The policy the network defines (the formula of the module docstring)."""
    z = logits + (mask - 1.0) * MASK_PENALTY
    z = z - z.max(axis=-1, keepdims=True)
    e = xp.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def probabilities(params, x, legal) -> dict[int, float]:
    """``{action: probability}`` over ``legal`` for one information-state tensor ``x``."""
    logits = forward(params, np.asarray(x, np.float32)[None, :])[0]
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
            spec = NetworkSpec(**{**meta, "hidden": tuple(meta["hidden"])})
            params = []
            for k in range(len(spec.sizes) - 1):
                params += [z[f"W{k}"], z[f"b{k}"]]
    except (OSError, ValueError, KeyError, TypeError, EOFError) as e:
        raise ValueError(f"{path}: not a kibitz network file ({e})") from None
    for k, (fan_in, fan_out) in enumerate(zip(spec.sizes[:-1], spec.sizes[1:])):
        if params[2 * k].shape != (fan_in, fan_out) or params[2 * k + 1].shape != (fan_out,):
            raise ValueError(f"{path}: layer {k} has shape {params[2 * k].shape}, the spec says "
                             f"{(fan_in, fan_out)}")
    return spec, params
