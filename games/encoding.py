"""Input encodings and factored outputs: what a game offers to learning code.

A network policy (solvers/network.py) reads one float32 vector per decision
and gives one logit per distinct action. Which vector is the *encoding*:

* ``information_state_tensor`` (:data:`INFORMATION_STATE_TENSOR`), which
  every game offers: pyspiel's ``State.information_state_tensor(player)``,
  the game observer's perfect-recall tensor;
* ``observation_tensor`` (:data:`OBSERVATION_TENSOR`), which every game
  with observation tensors offers (all the kibitz games): pyspiel's
  ``State.observation_tensor(player)``, the observer's tensor of the current
  view (not perfect recall: far smaller, and what a player sees now);
* further encodings a kibitz game declares on its spec
  (``GameSpec.encodings``), e.g. Doubt and Bet's and Over/Under's ``compact``. For each such
  name ``X`` the game has ``X_tensor_size()`` and ``X_tensor_layout()``
  (``[(piece, size, shape)]`` in order) and its states ``X_tensor(player)``
  (a float32 array of that size that depends only on what ``player`` has
  seen).

A game may also offer *action factors* (``GameSpec.action_factors``): its
``action_factors()`` gives ``(index, F)``, an int32 array ``index`` of shape
``(num_distinct_actions, R)`` with entries in ``0..F`` and the number ``F``
of factor logits. A factored network outputs ``F`` values ``f`` and
``logits[a] = sum_r f_ext[index[a, r]]`` with ``f_ext = f`` followed by one
0 (index ``F`` adds nothing).

The layers above use only the functions here, never a game's methods.
"""

from __future__ import annotations

import numpy as np

from kibitz.games._common import REGISTRY

INFORMATION_STATE_TENSOR = "information_state_tensor"
OBSERVATION_TENSOR = "observation_tensor"
#: the encodings pyspiel defines (the rest are a kibitz game's own)
_PYSPIEL = (INFORMATION_STATE_TENSOR, OBSERVATION_TENSOR)
#: the output kinds of a network: one logit per action, or sums of factor logits
OUTPUT_KINDS = ("dense", "factored")


def _spec(game):
    return REGISTRY.get(game.get_type().short_name)


def encodings(game) -> tuple[str, ...]:
    """The encodings ``game`` offers: ``information_state_tensor`` first,
    then ``observation_tensor`` when the game has observation tensors."""
    spec = _spec(game)
    observation = (OBSERVATION_TENSOR,) if game.get_type().provides_observation_tensor else ()
    return (INFORMATION_STATE_TENSOR, *observation, *(spec.encodings if spec else ()))


def check_encoding(game, encoding: str) -> None:
    """ValueError naming the allowed encodings unless ``game`` offers ``encoding``."""
    allowed = encodings(game)
    if encoding not in allowed:
        raise ValueError(f"{game.get_type().short_name} has no encoding {encoding!r}; "
                         f"allowed: {', '.join(allowed)}")


def encoding_size(game, encoding: str) -> int:
    """The number of floats of ``encoding`` in ``game``."""
    check_encoding(game, encoding)
    if encoding == INFORMATION_STATE_TENSOR:
        return game.information_state_tensor_size()
    if encoding == OBSERVATION_TENSOR:
        return game.observation_tensor_size()
    return int(getattr(game, f"{encoding}_tensor_size")())


def encoding_tensor(state, player: int, encoding: str) -> np.ndarray:
    """``player``'s ``encoding`` of ``state`` as a float32 array."""
    if encoding == INFORMATION_STATE_TENSOR:
        return np.asarray(state.information_state_tensor(player), np.float32)
    if encoding == OBSERVATION_TENSOR:
        return np.asarray(state.observation_tensor(player), np.float32)
    check_encoding(state.get_game(), encoding)
    return np.asarray(getattr(state, f"{encoding}_tensor")(player), np.float32)


def encoding_layout(game, encoding: str) -> list[dict]:
    """The pieces of ``encoding``, ``[{"name", "offset", "size", "shape"}]``
    in order. For ``information_state_tensor`` and ``observation_tensor``:
    the views the game's observer exposes (``observer.dict``), or one piece
    ``information_state`` (``observation``) for an observer that exposes
    none."""
    check_encoding(game, encoding)
    if encoding not in _PYSPIEL:
        pieces, offset = [], 0
        for name, size, shape in getattr(game, f"{encoding}_tensor_layout")():
            pieces.append({"name": name, "offset": offset, "size": int(size), "shape": list(shape)})
            offset += size
        return pieces
    import pyspiel

    recall = encoding == INFORMATION_STATE_TENSOR
    observer = game.make_py_observer(pyspiel.IIGObservationType(perfect_recall=recall), None) \
        if hasattr(game, "make_py_observer") else None
    views = getattr(observer, "dict", None)
    tensor = getattr(observer, "tensor", None)
    size = encoding_size(game, encoding)
    if not views or tensor is None or tensor.size != size:
        name = "information_state" if recall else "observation"
        return [{"name": name, "offset": 0, "size": size, "shape": [size]}]
    base = tensor.__array_interface__["data"][0]
    pieces = []
    for name, view in views.items():
        offset = (view.__array_interface__["data"][0] - base) // tensor.itemsize
        pieces.append({"name": name, "offset": int(offset), "size": int(view.size), "shape": list(view.shape)})
    return sorted(pieces, key=lambda p: p["offset"])


def output_kinds(game) -> tuple[str, ...]:
    """The output kinds a network for ``game`` may have: ``dense`` always,
    ``factored`` when the game offers action factors."""
    spec = _spec(game)
    return OUTPUT_KINDS if spec is not None and spec.action_factors else OUTPUT_KINDS[:1]


def action_factors(game) -> tuple[np.ndarray, int]:
    """``(index, F)`` of the module docstring; ValueError if ``game`` offers none."""
    if "factored" not in output_kinds(game):
        raise ValueError(f"{game.get_type().short_name} offers no action factors; allowed output: dense")
    index, count = game.action_factors()
    return index, int(count)
