"""A state-value network on the compiled rules: AIVAT's value function.

``V(s)`` is a multilayer perceptron (ReLU) on the features of a position
``s`` of the game's compiled rules (``kibitz.games.search.CompiledRules``):
every player's observation tensor, one after the other (the evaluator
knows every player's private information), then ``n + 2`` flags saying who
moves (a player, chance, the end): ``games.batched``'s ``features``. Its
output is one value per player, the expected returns from ``s``.

AIVAT (solvers/aivat.py) needs the values of all the children of a node at
once: :meth:`StateValueNet.child_values` reads the node's position from the
Python state (the rules' ``position_of``), plays each child on a copy and
writes its features in compiled code (``child_features``), and runs the
network once over the children in numpy (a tournament never imports JAX).
A child that ends the game gets its true returns, not the network's guess.
A tournament asks for a whole game's at once when it ends
(:meth:`StateValueNet.game_child_values`: one replay in compiled code, one
pass of the network), which costs a fraction of a call a node.

Training (:func:`train`): plain regression on the final returns (mean
squared error, Adam) over positions of freshly played games, streamed:
every batch comes from games the fit has not seen, so it cannot learn games
by heart, and the data is as large as the time allows (the batched
environment plays tens of thousands of games a second of network play:
agents/training/value_data.py's ``stream``). The inputs are divided by a per-feature
scale (the largest magnitude in a first sample, at least 1), stored with the
weights.
"""

from __future__ import annotations

import json
import time
import zipfile
import zlib
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numba
import numpy as np

FORMAT = "kibitz-state-value"
HIDDEN = (256, 256)


@numba.njit(cache=True, nogil=True)
def _first_layer(x, inverse_scale, w, b, out):
    """``out = relu((x * inverse_scale) @ w + b)`` row by row, skipping the
    zeros of ``x`` (a position's features are 2-25% non-zero)."""
    for i in range(x.shape[0]):
        o = out[i]
        o[:] = b
        for j in range(x.shape[1]):
            v = x[i, j]
            if v != 0.0:
                v *= inverse_scale[j]
                for h in range(w.shape[1]):
                    o[h] += v * w[j, h]
        for h in range(w.shape[1]):
            if o[h] < 0.0:
                o[h] = 0.0


@numba.njit(cache=True, nogil=True)
def _first_layer_children(nodes, x, first, inverse_scale, w, b, out):
    """:func:`_first_layer` of the children of nodes: row ``r`` of ``x``, a
    child of node ``i`` (``first[i] <= r < first[i + 1]``), differs from the
    node's features ``nodes[i]`` in a few places (in Over/Under about 33 of
    its 150 non-zero ones), so the node's sum is made once and each child
    adds its differences (the same values to float32 rounding)."""
    z = np.empty(w.shape[1], np.float32)
    for i in range(nodes.shape[0]):
        p = nodes[i]
        z[:] = b
        for j in range(p.shape[0]):
            v = p[j]
            if v != 0.0:
                v *= inverse_scale[j]
                for h in range(w.shape[1]):
                    z[h] += v * w[j, h]
        for r in range(first[i], first[i + 1]):
            o = out[r]
            o[:] = z
            for j in range(p.shape[0]):
                if x[r, j] != p[j]:
                    v = (x[r, j] - p[j]) * inverse_scale[j]
                    for h in range(w.shape[1]):
                        o[h] += v * w[j, h]
            for h in range(w.shape[1]):
                if o[h] < 0.0:
                    o[h] = 0.0


def feature_size(game) -> int:
    """The length of a position's features: every player's observation tensor, then ``n + 2`` flags."""
    n = game.num_players()
    return n * game.observation_tensor_size() + n + 2


def compiled_features(game):
    """``(rules, loops)``: ``game``'s compiled rules and the module of their
    loops that computes features (games/batched.py); ValueError naming the
    game when its rules cannot."""
    from kibitz.games import search
    from kibitz.games.batched import compiled_loops

    short = game.get_type().short_name
    if search.COMPILED not in search.capabilities(game):
        raise ValueError(f"game {short!r} has no compiled rules: the state-value network needs them")
    rules = game.compiled_rules()
    if rules.observation is None or rules.position_of is None:
        raise ValueError(f"game {short!r}: its compiled rules compute no observation tensor or read no Python "
                         "state (CompiledRules.observation, position_of)")
    return rules, compiled_loops(rules, "observation_tensor")


class StateValueNet:
    """AIVAT's value function (``solvers/aivat.py``'s protocol) from a
    state-value network: ``child_values(state, actions)``, float64
    ``(len(actions), num_players)``. ``state`` is not modified."""

    def __init__(self, game, layers: Sequence[tuple[np.ndarray, np.ndarray]], scale: np.ndarray,
                 name: str = "net(unsaved)", meta: dict | None = None):
        self.game, self.name, self.meta = game, name, dict(meta or {})
        self.rules, self._loops = compiled_features(game)
        self.n, self.size = game.num_players(), game.observation_tensor_size()
        size = feature_size(game)
        if scale.shape != (size,) or layers[0][0].shape[0] != size or layers[-1][0].shape[1] != self.n:
            raise ValueError(f"the network reads {layers[0][0].shape[0]} features and gives "
                             f"{layers[-1][0].shape[1]} values; {game} has {size} features and {self.n} players")
        self.layers = [(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in layers]
        self.inverse_scale = (1.0 / np.asarray(scale, np.float32)).astype(np.float32)
        self._x = np.zeros((self.rules.max_branch, size), np.float32)
        self._ended = np.zeros(self.rules.max_branch, np.bool_)
        self._rets = np.zeros((self.rules.max_branch, self.n), np.float64)
        self._buffers: dict[str, np.ndarray] = {}  # game_child_values' arrays, kept from game to game
        self._one_thread = None

    def values(self, x: np.ndarray) -> np.ndarray:
        """The network's values of features ``x`` (rows), float64. The first
        layer reads only the non-zero features (compiled); the others are
        numpy products, which the caller should keep on one BLAS thread
        (threads only cost on products of a few rows: :meth:`child_values` does)."""
        w, b = self.layers[0]
        h = np.empty((len(x), w.shape[1]), np.float32)
        _first_layer(np.ascontiguousarray(x, np.float32), self.inverse_scale, w, b, h)
        return self._dense(h)

    def _dense(self, h: np.ndarray, reuse: bool = False) -> np.ndarray:
        """The layers after the first, on its output ``h``; ``reuse``: into
        the kept arrays (:meth:`_buffer`), not fresh ones."""
        for i, (w, b) in enumerate(self.layers[1:-1]):
            if reuse:
                h = np.matmul(h, w, out=self._buffer(f"h{i + 1}", (len(h), w.shape[1]), np.float32))
            else:
                h = h @ w
            h += b
            np.maximum(h, 0.0, out=h)
        w, b = self.layers[-1]
        return (h @ w + b).astype(np.float64)

    def _buffer(self, name: str, shape: tuple[int, ...], dtype) -> np.ndarray:
        """The first ``shape[0]`` rows of a kept array (grown by doubling):
        a game's arrays are megabytes, fresh ones cost page faults each game."""
        have = self._buffers.get(name)
        if have is None or len(have) < shape[0]:
            have = self._buffers[name] = np.empty((max(shape[0], 2 * (0 if have is None else len(have))),
                                                   *shape[1:]), dtype)
        return have[:shape[0]]

    def _limit_threads(self) -> None:
        if self._one_thread is None:  # BLAS threads slow a product of a few rows down, on a busy machine most
            from threadpoolctl import threadpool_limits
            self._one_thread = threadpool_limits(limits=1, user_api="blas")

    def child_values(self, state, actions: Sequence[int]) -> np.ndarray:
        acts = np.asarray(actions, np.int64)
        k = len(acts)
        if k > len(self._x):
            raise ValueError(f"{k} children; the game's rules say at most {len(self._x)}")
        self._limit_threads()
        r = self.rules
        self._loops.child_features(r.position_of(state), r.params, self.n, self.size, acts, self._x[:k],
                                   self._ended[:k], self._rets[:k])
        v = self.values(self._x[:k])
        end = self._ended[:k]
        v[end] = self._rets[:k][end]
        return v

    def game_child_values(self, moves: Sequence[int], steps: np.ndarray, first: np.ndarray,
                          actions: np.ndarray) -> np.ndarray:
        """The children's values of a whole game's nodes at once (AIVAT's
        deferred corrections, ``Corrections.finish``): node ``i`` is the
        position before move ``steps[i]`` of ``moves`` (the game's every
        action from the start, chance included; ``steps`` ascending), its
        children those of ``actions[first[i]:first[i + 1]]``. Row ``j`` is
        what :meth:`child_values` gives that child, to float32 rounding
        (one replay of the game in compiled code and one pass of the
        network over every row, instead of a Python call a node; the first
        layer sums a node's features once and each child's differences from
        them: ``_first_layer_children``)."""
        acts = np.ascontiguousarray(actions, np.int64)
        first = np.ascontiguousarray(first, np.int64)
        rows, size = len(acts), self._x.shape[1]
        self._limit_threads()
        x = self._buffer("x", (rows, size), np.float32)
        nodes = self._buffer("nodes", (len(first) - 1, size), np.float32)
        ended, rets = self._buffer("ended", (rows,), np.bool_), self._buffer("rets", (rows, self.n), np.float64)
        r = self.rules
        self._loops.game_child_features(r.initial, r.params, self.n, self.size, np.asarray(moves, np.int64),
                                        np.ascontiguousarray(steps, np.int64), first, acts, x, ended, rets, nodes)
        w, b = self.layers[0]
        h = self._buffer("h0", (rows, w.shape[1]), np.float32)
        _first_layer_children(nodes, x, first, self.inverse_scale, w, b, h)
        v = self._dense(h, reuse=True)
        v[ended] = rets[ended]
        return v


# ---------------------------------------------------------------- files
def save(path, net: StateValueNet) -> None:
    """Writes ``net`` to ``path`` (``.npz``: the weights as float16, which
    halves the file, the scale and the JSON meta), atomically; :func:`load`
    reads the weights back as float32."""
    from kibitz.solvers._io import atomic_write

    meta = {"format": FORMAT, "game": str(net.game), "hidden": [w.shape[1] for w, _ in net.layers[:-1]],
            **{k: v for k, v in net.meta.items() if k not in ("format", "game", "hidden")}}
    arrays = {"scale": (1.0 / net.inverse_scale).astype(np.float32)}
    for i, (w, b) in enumerate(net.layers):
        arrays[f"w{i}"], arrays[f"b{i}"] = w.astype(np.float16), b.astype(np.float16)
    blob = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    atomic_write(Path(path), lambda f: np.savez_compressed(f, meta=blob, **arrays))


def is_state_value_file(path) -> bool:
    """Whether ``path`` is a file :func:`save` wrote (False for anything else, missing files included)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            return json.loads(z["meta"].tobytes().decode()).get("format") == FORMAT
    except Exception:  # noqa: BLE001 - any unreadable file is simply not one
        return False


def load(path, game) -> StateValueNet:
    """The network :func:`save` wrote, named ``net(PATH)``; ValueError naming the file otherwise."""
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(z["meta"].tobytes().decode())
            if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                raise ValueError(f"its meta says format {meta.get('format') if isinstance(meta, dict) else None!r}")
            depth = len(meta["hidden"]) + 1
            layers = [(z[f"w{i}"].astype(np.float32), z[f"b{i}"].astype(np.float32)) for i in range(depth)]
            scale = z["scale"]
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        raise ValueError(f"{path}: not a kibitz state-value network file ({e})") from None
    if meta["game"] != str(game):
        raise ValueError(f"{path}: a value network for {meta['game']}, not for {game}")
    return StateValueNet(game, layers, scale, name=f"net({path})",
                         meta={k: v for k, v in meta.items() if k not in ("format", "game", "hidden")})


# ---------------------------------------------------------------- training
def train(game, chunks: Iterator[tuple[np.ndarray, np.ndarray]], held_out: tuple[np.ndarray, np.ndarray], *,
          hidden: Sequence[int] = HIDDEN, lr: float = 1e-3, batch: int = 1024, seed: int = 0,
          time_limit: float = 600.0, max_chunks: int | None = None,
          on_check: Callable[[dict], None] | None = None, settings: dict | None = None) -> StateValueNet:
    """Fits a :class:`StateValueNet` to the returns of ``chunks`` (an
    iterator of ``(features, returns)`` arrays of fresh positions, each used
    once) by Adam on the mean squared error, until ``time_limit`` seconds
    or ``max_chunks`` chunks. ``held_out`` (features and returns of other
    games) measures the fit after every chunk; the check with the lowest
    held-out error is returned (the mean predictor, every weight of the
    output zero, is check 0). ``meta["fit"]``: ``mse``, ``mse_mean`` (the
    held-out error of the mean), ``r2``, ``chunks``, ``positions``,
    ``seconds``; ``on_check(record)`` after each check."""
    import jax
    import jax.numpy as jnp
    import optax

    if not 0 < lr <= 1 or batch < 1 or not hidden or min(hidden) < 1:
        raise ValueError(f"lr={lr}, batch={batch}, hidden={tuple(hidden)}: allowed lr in (0, 1], batch >= 1, "
                         "hidden widths >= 1 (at least one layer)")
    x_out, y_out = held_out
    size, n = feature_size(game), game.num_players()
    if x_out.shape[1] != size or y_out.shape[1] != n:
        raise ValueError(f"held-out data of {x_out.shape[1]} features and {y_out.shape[1]} returns; {game} has "
                         f"{size} and {n}")
    t0 = time.perf_counter()
    scale = np.maximum(np.abs(x_out).max(axis=0), 1.0).astype(np.float32)
    mean = y_out.mean(axis=0)
    rng = np.random.Generator(np.random.PCG64([seed, 47]))
    sizes = (size, *hidden)
    params = [(jnp.asarray(rng.normal(0.0, np.sqrt(2.0 / a), (a, b)), jnp.float32), jnp.zeros(b, jnp.float32))
              for a, b in zip(sizes[:-1], sizes[1:])]
    params.append((jnp.zeros((sizes[-1], n), jnp.float32), jnp.asarray(mean, jnp.float32)))

    def forward(p, x):
        h = x
        for w, b in p[:-1]:
            h = jax.nn.relu(h @ w + b)
        return h @ p[-1][0] + p[-1][1]

    opt = optax.adam(lr)
    state = opt.init(params)

    @jax.jit
    def step(p, s, x, y):
        loss, grad = jax.value_and_grad(lambda q: jnp.mean((forward(q, x) - y) ** 2))(p)
        updates, s = opt.update(grad, s, p)
        return optax.apply_updates(p, updates), s, loss

    def as_net(p):
        return StateValueNet(game, [(np.asarray(w), np.asarray(b)) for w, b in p], scale)

    def held_mse(net):
        return float(np.mean((np.concatenate([net.values(x_out[i:i + 8192]) for i in range(0, len(x_out), 8192)])
                              - y_out) ** 2))

    mse_mean = float(np.mean((y_out - mean) ** 2))
    best, best_mse, best_check = as_net(params), mse_mean, 0
    checks, positions = 0, 0
    for x, y in chunks:
        x = np.asarray(x, np.float32) / scale
        y = np.asarray(y, np.float32)
        order = rng.permutation(len(x))
        for lo in range(0, len(order) - batch + 1, batch):
            rows = order[lo:lo + batch]
            params, state, _ = step(params, state, x[rows], y[rows])
        positions += len(x)
        checks += 1
        net = as_net(params)
        held = held_mse(net)
        record = {"chunk": checks, "positions": positions, "mse": held, "mse_mean": mse_mean,
                  "r2": 1.0 - held / mse_mean if mse_mean > 0 else 0.0, "seconds": time.perf_counter() - t0}
        if held < best_mse:
            best, best_mse, best_check = net, held, checks
        if on_check is not None:
            on_check(record)
        if time.perf_counter() - t0 >= time_limit or (max_chunks is not None and checks >= max_chunks):
            break
    best.meta = {"training": {"method": "adam on the mean squared error to the final returns, streamed",
                              "hidden": list(hidden), "lr": lr, "batch": batch, "seed": seed,
                              "time_limit": time_limit, **(settings or {})},
                 "fit": {"mse": best_mse, "mse_mean": mse_mean,
                         "r2": 1.0 - best_mse / mse_mean if mse_mean > 0 else 0.0, "check": best_check,
                         "chunks": checks, "positions": positions, "held_out_positions": int(len(x_out)),
                         "seconds": time.perf_counter() - t0}}
    return best
