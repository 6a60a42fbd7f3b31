"""An afterstate value network for AIVAT: every child's value from one look at the parent.

AIVAT (Burch, Schmid, Moravcik, Morrill, Bowling: "AIVAT: A New Variance
Reduction Technique for Agent Evaluation in Imperfect Information Games",
AAAI 2018) corrects a game's payoff at each chance node and each decision of
an agent with known probabilities by ``sum_a' p(a'|h) V(h.a') - V(h.a)``. It
needs, for a node ``h``, the values of all its children at once. Cloning and
applying a child costs 10-16 us and encoding it for every player 80-320 us
in Python, so per-child state features would cost more than the game. This
network is Q-style instead: it reads the parent once and lets the action
enter as a learned embedding.

Features ``x(h)`` (:class:`Features`): the concatenation over players
``0..n-1`` of one encoding of ``kibitz.games.encoding`` (by default
``observation_tensor``): the evaluator knows every player's private
information. For the pyspiel encodings the game's observer
(``game.make_py_observer``, OpenSpiel's Python observer API) writes each
player's tensor straight into the feature vector: the same numbers as
``encoding_tensor`` at a sixth of the cost (10-18 us for four players
against 65-75 us in the four kibitz games).

Network, for a node of kind ``k`` (0: chance, its outcomes; 1: a decision,
its legal actions) and action ``a``::

    h_1 = relu(x @ W_x + E_k[a] + b_x)
    h_{j+1} = relu(h_j @ W_j + b_j)            (further hidden layers)
    Q(x, a, k) = h_J @ W_out + b_out           (num_players values)

``E_chance`` has ``game.max_chance_outcomes()`` rows; ``E_action`` has
``game.num_distinct_actions()`` rows, or, for a game with more than
:data:`FACTOR_ABOVE` actions that offers action factors
(``kibitz.games.action_factors``: ``index`` of shape ``(A, R)``, entries in
``0..F``), ``E_action[a] = sum_r E_factor[index[a, r]]`` with ``F + 1`` rows
(the last one zero): Doubt and Bet's 29,896 claims then need 368 rows, not
29,896. For ``k`` children the cost is one feature extraction, one product
with ``W_x`` (over the nonzero features only), and a ``(k, H)`` gather, add
and small matrix products in numpy.

Training (:func:`train_value_net`, JAX and optax, as ``solvers/train.py``
and ``solvers/distill.py`` do; inference is numpy only, so that a
tournament never imports JAX): Adam on the mean squared error between
``Q(x(h), a, k)`` and the game's final returns, over examples ``(x(h), a,
k, returns)`` from played games (``agents/training/value_data.py``), starting from
the mean predictor. A tenth of the games is held out (:func:`held_out_games`);
the fit reported is the held-out MSE against that of predicting the
training examples' mean returns (and ``R^2 = 1 - mse / mse_mean``). The
parameters kept are those of the check (four an epoch) with the lowest
held-out MSE, rounded to float16, which is how the file stores them
(so that the four shipped networks stay small); the reported fit is the
rounded network's.

Training for the variance (:func:`train_for_variance`, ``kibitz value-net``'s
default): what a control variate needs is the least variance of the
estimate, not the least error in the values. From the nodes a tournament
corrects in played games (:class:`NodeGames`), :func:`variance_loss` is the
AIVAT estimate's variance over a batch of games, and :func:`node_variance_loss`
the same in expectation with a gradient that leaves out the other nodes'
terms; the check with the lowest held-out variance is kept.

Files: :func:`save` writes one ``.npz`` with the arrays and a ``meta`` entry
(JSON: ``format`` "kibitz-value-net", the game string, the feature
encoding, the layer sizes, the action table, the training settings, the
data size and the fit); :func:`load` checks them.
"""

from __future__ import annotations

import dataclasses
import json
import time
import zipfile
import zlib
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from kibitz import games

FORMAT = "kibitz-value-net"
#: the default feature encoding: in all four kibitz games the cheapest complete view
ENCODING = games.OBSERVATION_TENSOR
#: the default hidden layer widths
HIDDEN = (64,)
#: node kinds
CHANCE, DECISION = 0, 1
#: a game with more distinct actions than this embeds them by its action factors, when it offers them
FACTOR_ABOVE = 1024
#: the held-out games: those whose index times the golden ratio has a fractional part >= 1 - HOLD_OUT
#: (a tenth of the games, spread over every residue: ``index % 10 == 9`` would hold out only odd games,
#: and with two agents rotated over the seats, only one of the two seatings)
HOLD_OUT = 0.1
_GOLDEN = (5 ** 0.5 - 1) / 2


class Features:
    """``x(h)``: ``encoding`` of a state for every player, concatenated (float32)."""

    def __init__(self, game, encoding: str = ENCODING):
        games.check_encoding(game, encoding)
        self.encoding = encoding
        self.num_players = game.num_players()
        self.width = games.encoding_size(game, encoding)
        self.size = self.num_players * self.width
        self._observer = None
        if encoding in (games.INFORMATION_STATE_TENSOR, games.OBSERVATION_TENSOR) and \
                hasattr(game, "make_py_observer"):
            import pyspiel

            recall = encoding == games.INFORMATION_STATE_TENSOR
            observer = game.make_py_observer(pyspiel.IIGObservationType(perfect_recall=recall), None)
            if getattr(observer, "tensor", None) is not None and observer.tensor.size == self.width:
                self._observer = observer

    def __call__(self, state) -> np.ndarray:
        """The features of ``state`` (a new array of :attr:`size` floats)."""
        out = np.empty(self.size, np.float32)
        w = self.width
        if self._observer is not None:
            observer = self._observer
            for p in range(self.num_players):
                observer.set_from(state, p)
                out[p * w:(p + 1) * w] = observer.tensor
        else:
            for p in range(self.num_players):
                out[p * w:(p + 1) * w] = games.encoding_tensor(state, p, self.encoding)
        return out


@dataclasses.dataclass(frozen=True)
class ValueSpec:
    """The shape of a value network and the game it values."""

    game: str  # the game string (str(game))
    encoding: str  # the feature encoding (Features)
    input_size: int  # num_players * encoding_size
    num_players: int
    chance_outcomes: int  # rows of E_chance: game.max_chance_outcomes()
    num_actions: int  # game.num_distinct_actions()
    action_rows: int  # rows of E_action: num_actions, or F + 1 for factored embeddings
    factored: bool = False
    hidden: tuple[int, ...] = HIDDEN

    def __post_init__(self):
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        if not self.hidden or min(self.hidden) < 1:
            raise ValueError(f"hidden must be one or more layer widths >= 1; got {self.hidden!r}")
        for name in ("input_size", "num_players", "chance_outcomes", "num_actions", "action_rows"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1; got {getattr(self, name)!r}")

    @classmethod
    def for_game(cls, game, encoding: str = ENCODING, hidden=HIDDEN) -> "ValueSpec":
        """The spec for ``game``; ValueError naming the allowed encodings for an unknown one."""
        size = games.encoding_size(game, encoding)
        num_actions = game.num_distinct_actions()
        factored = num_actions > FACTOR_ABOVE and "factored" in games.output_kinds(game)
        rows = games.action_factors(game)[1] + 1 if factored else num_actions
        return cls(game=str(game), encoding=encoding, input_size=game.num_players() * size,
                   num_players=game.num_players(), chance_outcomes=max(game.max_chance_outcomes(), 1),
                   num_actions=num_actions, action_rows=rows, factored=factored, hidden=tuple(hidden))

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Every array's name and shape, in order."""
        h = self.hidden
        out = {"W_x": (self.input_size, h[0]), "b_x": (h[0],), "E_chance": (self.chance_outcomes, h[0]),
               "E_action": (self.action_rows, h[0])}
        for j, (a, b) in enumerate(zip(h[:-1], h[1:])):
            out[f"W{j + 1}"], out[f"b{j + 1}"] = (a, b), (b,)
        out["W_out"], out["b_out"] = (h[-1], self.num_players), (self.num_players,)
        return out


def init_params(spec: ValueSpec, rng: np.random.Generator, mean=None) -> dict[str, np.ndarray]:
    """He-uniform weights, zero biases, small embeddings, and ``W_out`` zero
    with ``b_out`` = ``mean`` (the mean returns, if given): the first
    network predicts the mean everywhere, so all its AIVAT terms are zero."""
    params = {}
    for name, shape in spec.shapes().items():
        if name.startswith("b"):
            params[name] = np.zeros(shape, np.float32)
        elif name.startswith("E"):
            params[name] = rng.normal(0.0, 0.1, size=shape).astype(np.float32)
        else:
            bound = 0.0 if name == "W_out" else np.sqrt(6.0 / shape[0])
            params[name] = rng.uniform(-bound, bound, size=shape).astype(np.float32)
    if spec.factored:
        params["E_action"][-1] = 0.0
    if mean is not None:
        params["b_out"] = np.asarray(mean, np.float32).reshape(spec.num_players)
    return params


def _hidden_names(spec: ValueSpec) -> list[tuple[str, str]]:
    return [(f"W{j}", f"b{j}") for j in range(1, len(spec.hidden))]


def _head(params, spec: ValueSpec, h, xp=np):
    """From the first hidden layer's pre-activations to the values."""
    h = xp.maximum(h, 0.0)
    for w, b in _hidden_names(spec):
        h = xp.maximum(h @ params[w] + params[b], 0.0)
    return h @ params["W_out"] + params["b_out"]


def forward(params, spec: ValueSpec, x, actions, kinds, xp=np, index=None):
    """``Q`` for a batch: ``x`` ``(N, input_size)``, ``actions`` and ``kinds``
    ``(N,)``; ``index`` the game's action factors for a factored spec. The
    training's function (``xp=jax.numpy``) and the reference for
    :meth:`ValueNet.child_values`."""
    return _head(params, spec, x @ params["W_x"] + params["b_x"] + _embedding(params, spec, actions, kinds, xp, index),
                 xp)


def _embedding(params, spec: ValueSpec, actions, kinds, xp=np, index=None):
    """``E_kind[a]`` for each of ``actions`` and ``kinds``."""
    e_chance = xp.take(params["E_chance"], xp.minimum(actions, spec.chance_outcomes - 1), axis=0)
    act = xp.minimum(actions, spec.num_actions - 1)
    if spec.factored:
        e_action = sum(xp.take(params["E_action"], xp.take(index[:, r], act, axis=0), axis=0)
                       for r in range(index.shape[1]))
    else:
        e_action = xp.take(params["E_action"], act, axis=0)
    return xp.where((kinds == CHANCE)[:, None], e_chance, e_action)


class ValueNet:
    """The value function AIVAT reads (``solvers/aivat.py``'s protocol):
    ``child_values(state, actions)``, float64 ``(len(actions), num_players)``,
    the expected returns after each action. ``state`` is not modified."""

    def __init__(self, spec: ValueSpec, params: dict, game=None, name: str = "net(unsaved)", meta=None):
        game = game if game is not None else games.load_game(spec.game)
        if str(game) != spec.game:
            raise ValueError(f"the value network is for {spec.game}, not {game}")
        self.spec, self.name, self.meta = spec, name, dict(meta or {})
        self.params = {k: np.asarray(v, np.float32) for k, v in params.items()}
        self.features = Features(game, spec.encoding)
        self._index = games.action_factors(game)[0] if spec.factored else None
        if spec.factored:
            self._e_action = self.params["E_action"][self._index].sum(axis=1)
        else:
            self._e_action = self.params["E_action"]
        self._e_chance = self.params["E_chance"]
        self._w_x, self._b_x = self.params["W_x"], self.params["b_x"]
        self._layers = [(self.params[w], self.params[b]) for w, b in _hidden_names(spec)]
        self._layers.append((self.params["W_out"], self.params["b_out"]))

    def child_values(self, state, actions: Sequence[int]) -> np.ndarray:
        h = (self._e_chance if state.is_chance_node() else self._e_action)[np.asarray(actions, np.intp)]
        h += self.features(state) @ self._w_x + self._b_x
        np.maximum(h, 0.0, out=h)
        for w, b in self._layers[:-1]:
            h = h @ w
            h += b
            np.maximum(h, 0.0, out=h)
        w, b = self._layers[-1]
        return (h @ w + b).astype(np.float64)

    def q(self, state, action: int) -> np.ndarray:
        """One child's value by :func:`forward` (dense, unbatched): the reference for tests."""
        kind = np.array([CHANCE if state.is_chance_node() else DECISION])
        x = self.features(state)[None, :]
        return forward(self.params, self.spec, x, np.array([action]), kind, index=self._index)[0].astype(np.float64)


# ---------------------------------------------------------------- files
def save(path, net: ValueNet) -> None:
    """Writes ``net`` to ``path`` (``.npz``, float16 arrays and the JSON meta), atomically."""
    from kibitz.solvers._io import atomic_write

    meta = {"format": FORMAT, **dataclasses.asdict(net.spec), "hidden": list(net.spec.hidden),
            **{k: v for k, v in net.meta.items() if k != "format"}}
    arrays = {k: np.asarray(v, np.float16) for k, v in net.params.items()}
    blob = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    atomic_write(Path(path), lambda f: np.savez_compressed(f, meta=blob, **arrays))


def load(path, game=None) -> ValueNet:
    """The network :func:`save` wrote, named ``net(PATH)``; ValueError naming the file otherwise."""
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(z["meta"].tobytes().decode())
            if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                raise ValueError(f"its meta says format {meta.get('format') if isinstance(meta, dict) else None!r}")
            fields = {f.name for f in dataclasses.fields(ValueSpec)}
            spec = ValueSpec(**{k: v for k, v in meta.items() if k in fields})
            params = {name: z[name].astype(np.float32) for name in spec.shapes()}
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        raise ValueError(f"{path}: not a kibitz value network file ({e})") from None
    for name, shape in spec.shapes().items():
        if params[name].shape != shape:
            raise ValueError(f"{path}: {name} has shape {params[name].shape}, the meta says {shape}")
    extra = {k: v for k, v in meta.items() if k not in fields and k != "format"}
    return ValueNet(spec, params, game=game, name=f"net({path})", meta=extra)


# ---------------------------------------------------------------- training
def held_out_games(game) -> np.ndarray:
    """Whether each game index of ``game`` is held out: ``frac(index * 0.618...) >= 0.9``, a tenth of the
    games, the first of them 8, 21, 29, 42, ..."""
    return np.modf(np.asarray(game, np.float64) * _GOLDEN)[0] >= 1.0 - HOLD_OUT


@dataclasses.dataclass
class Examples:
    """Training examples, one per node of played games: ``x`` the parent's
    features (float16: a sixth of a float64's memory; the encodings hold
    counts and one-hots), ``action`` and ``kind`` (:data:`CHANCE` or
    :data:`DECISION`), ``returns`` the game's final returns, ``game`` the
    index of the game it comes from (the held-out split is by game: :func:`held_out_games`)."""

    x: np.ndarray  # (N, input_size) float16
    action: np.ndarray  # (N,) int32
    kind: np.ndarray  # (N,) int8
    returns: np.ndarray  # (N, num_players) float32
    game: np.ndarray  # (N,) int32

    def __len__(self) -> int:
        return len(self.action)

    def held_out(self) -> np.ndarray:
        """Which examples are held out: those of a tenth of the games (:data:`HOLD_OUT`)."""
        return held_out_games(self.game)


def mse(net_or_params, spec: ValueSpec, ex: Examples, rows, index=None, batch: int = 4096) -> float:
    """The mean squared error (over examples and players) of the network on ``ex``'s ``rows``."""
    params = net_or_params.params if isinstance(net_or_params, ValueNet) else net_or_params
    total = 0.0
    for lo in range(0, len(rows), batch):
        r = rows[lo:lo + batch]
        q = forward(params, spec, ex.x[r].astype(np.float32), ex.action[r], ex.kind[r], index=index)
        total += float(((q - ex.returns[r]) ** 2).sum())
    return total / max(len(rows) * spec.num_players, 1)


def _check_fit_args(epochs, batch, checks, lr, weight_decay):
    if epochs < 1 or batch < 1 or checks < 1 or not 0 < lr <= 1 or not 0 <= weight_decay < 1:
        raise ValueError(f"epochs={epochs}, batch={batch}, checks={checks}, lr={lr}, weight_decay={weight_decay}: "
                         "allowed epochs, batch and checks >= 1, lr in (0, 1], weight_decay in [0, 1)")


def _rounded(params) -> dict:
    """The parameters as numpy float32, rounded to float16 (as they are saved)."""
    return {k: np.asarray(v, np.float16).astype(np.float32) for k, v in params.items()}


def _adam_step(spec, loss, lr, weight_decay):
    """A jitted ``step(params, opt_state, *batch) -> (params, opt_state,
    loss)`` of Adam (AdamW with ``weight_decay`` above 0) on ``loss(params,
    *batch)``, with its optimizer's ``init``; a factored network's factor
    table keeps its last row ("no factor") at zero."""
    import jax
    import optax

    opt = optax.adamw(lr, weight_decay=weight_decay) if weight_decay > 0 else optax.adam(lr)

    @jax.jit
    def step(p, s, *batch):
        value, grad = jax.value_and_grad(loss)(p, *batch)
        if spec.factored:
            grad = {**grad, "E_action": grad["E_action"].at[-1].set(0.0)}
        updates, s = opt.update(grad, s, p)
        return optax.apply_updates(p, updates), s, value

    step.init = opt.init
    return step


def _checked_fit(step, params, fit_rows, measure, rng, ids, start, start_score, *, initial=None, batch, epochs,
                 checks, t0, time_limit, on_epoch):
    """The training loop of the value networks: ``epochs`` passes over
    ``ids`` in a random order, ``batch`` at a time (``fit_rows(rows) ->
    (step's batch arguments, the rows' weight)``), measured ``checks``
    times an epoch by ``measure(rounded params, epoch, train loss) ->
    (score, extra, record)``; stops early after a check past
    ``time_limit`` seconds from ``t0``. Returns ``(best parameters, (best
    score, the records, the best's check number: 0 is ``start``), the
    best's extra)``, the best being the lowest score; ``on_epoch(record)``
    after each check."""
    state = step.init(params)
    best, best_score, best_extra, best_check, history = start, start_score, initial, 0, []
    steps = -(-len(ids) // batch)
    ends = {int(round(steps * c / checks)): c for c in range(1, checks + 1)}  # the steps after which to check
    for epoch in range(epochs):
        order = rng.permutation(ids)
        total, count = 0.0, 0
        for i, lo in enumerate(range(0, len(order), batch)):
            args, weight = fit_rows(order[lo:lo + batch])
            params, state, value = step(params, state, *args)
            total += float(value) * weight
            count += weight
            if i + 1 not in ends:
                continue
            current = _rounded(params)
            score, extra, record = measure(current, epoch + ends[i + 1] / checks, total / count)
            total, count = 0.0, 0
            history.append(record)
            if score < best_score:
                best, best_score, best_extra, best_check = current, score, extra, len(history)
            if on_epoch is not None:
                on_epoch(record)
            if time_limit is not None and time.perf_counter() - t0 >= time_limit:
                return best, (best_score, history, best_check), best_extra
    return best, (best_score, history, best_check), best_extra


def train_value_net(game, examples: Examples, *, hidden=HIDDEN, encoding: str = ENCODING, epochs: int = 30,
                    batch: int = 512, lr: float = 1e-3, weight_decay: float = 0.0, checks: int = 4,
                    seed: int = 0, time_limit: float | None = None,
                    on_epoch: Callable[[dict], None] | None = None, settings: dict | None = None) -> ValueNet:
    """Fits ``Q(x, a, k)`` to the final returns of ``examples`` (MSE, Adam;
    AdamW with ``weight_decay`` above 0) for at most ``epochs`` epochs or
    ``time_limit`` seconds (at least one check); measures the held-out MSE
    ``checks`` times an epoch and returns the :class:`ValueNet` of the
    check with the lowest (the nodes of a game share its returns, so a fit
    can learn the training games by heart within an epoch; the mean
    predictor it starts from counts as check 0), float16-rounded. Its
    ``meta`` holds the settings (``settings`` added), the data size and the
    fit: ``mse`` and ``mse_mean`` (predicting the training mean) on the
    held-out games, ``r2``, ``train_mse``, ``epoch`` (of the kept check,
    fractional), ``epochs``, ``seconds``. ``on_epoch(record)`` after each
    check."""
    import jax.numpy as jnp

    _check_fit_args(epochs, batch, checks, lr, weight_decay)
    spec = ValueSpec.for_game(game, encoding, hidden)
    if examples.x.shape[1:] != (spec.input_size,):
        raise ValueError(f"the examples have {examples.x.shape[1:]} features; {encoding} of {game} has "
                         f"{spec.input_size}")
    out = examples.held_out()
    train_rows, test_rows = np.flatnonzero(~out), np.flatnonzero(out)
    if not len(train_rows) or not len(test_rows):
        raise ValueError(f"{len(train_rows)} training and {len(test_rows)} held-out examples: the data needs "
                         "held-out games (the first is game 8) and others")
    t0 = time.perf_counter()
    rng = np.random.Generator(np.random.PCG64([seed, 43]))
    mean = examples.returns[train_rows].mean(axis=0)
    index = games.action_factors(game)[0] if spec.factored else None
    jindex = None if index is None else jnp.asarray(index)
    params = {k: jnp.asarray(v) for k, v in init_params(spec, rng, mean).items()}

    def loss(p, x, a, k, g, w):
        q = forward(p, spec, x, a, k, xp=jnp, index=jindex)
        return jnp.sum(w[:, None] * (q - g) ** 2) / jnp.maximum(jnp.sum(w), 1.0) / spec.num_players

    step = _adam_step(spec, loss, lr, weight_decay)
    mse_mean = float(((examples.returns[test_rows] - mean) ** 2).mean())

    def fit_rows(rows):
        pad = batch - len(rows)
        w = np.concatenate([np.ones(len(rows), np.float32), np.zeros(pad, np.float32)])
        rows = np.concatenate([rows, np.full(pad, rows[0])])
        return (examples.x[rows].astype(np.float32), examples.action[rows], examples.kind[rows].astype(np.int32),
                examples.returns[rows], w), len(rows) - pad

    def measure(current, epoch, train_loss):
        held = mse(current, spec, examples, test_rows, index)
        return held, held, {"epoch": epoch, "train_mse": train_loss, "mse": held, "mse_mean": mse_mean,
                            "seconds": time.perf_counter() - t0}

    start = _rounded(params)
    best, (best_mse, history, best_check), _ = _checked_fit(
        step, params, fit_rows, measure, rng, train_rows, start, mse(start, spec, examples, test_rows, index),
        batch=batch, epochs=epochs, checks=checks, t0=t0, time_limit=time_limit, on_epoch=on_epoch)
    meta = {"training": {"method": "adam on the mean squared error to the final returns", "epochs": epochs,
                         "batch": batch, "lr": lr, "weight_decay": weight_decay, "checks": checks, "seed": seed,
                         "time_limit": time_limit, **(settings or {})},
            "data": {"examples": len(examples), "games": int(len(np.unique(examples.game))),
                     "held_out_examples": int(len(test_rows)),
                     "chance_examples": int((examples.kind == CHANCE).sum())},
            "fit": {"mse": best_mse, "mse_mean": mse_mean, "r2": 1.0 - best_mse / mse_mean if mse_mean > 0 else None,
                    "train_mse": history[best_check - 1]["train_mse"] if best_check else None,
                    "epoch": history[best_check - 1]["epoch"] if best_check else 0,
                    "epochs": history[-1]["epoch"] if history else 0, "seconds": time.perf_counter() - t0}}
    return ValueNet(spec, best, game=game, meta=meta)


# ---------------------------------------------------------------- the variance objective
#: the objectives of :func:`train_value_net` and :func:`train_for_variance`
OBJECTIVES = ("variance", "mse")


@dataclasses.dataclass
class NodeGames:
    """The nodes AIVAT corrects in played games, for :func:`train_for_variance`.

    Node ``n`` (the parent ``h``: features ``x[n]``, float16) belongs to game
    ``node_game[n]`` (a row of ``returns``); its candidates (the outcomes of
    a chance node, the actions a reporting agent's policy gives a positive
    probability) are rows ``c`` of the candidate arrays with
    ``cand_node[c] == n``: ``cand_action``, ``cand_kind`` and ``cand_weight``
    ``= p(a|h) - [a taken]``. A game's AIVAT term is then
    ``sum_c cand_weight[c] * Q(x[cand_node[c]], cand_action[c], cand_kind[c])``.
    Nodes and candidates are stored game after game (``node_game`` and
    ``cand_node`` ascending); ``game`` holds each game's index (the
    held-out split: :func:`held_out_games`)."""

    x: np.ndarray  # (N, input_size) float16
    node_game: np.ndarray  # (N,) int32, row of returns
    cand_node: np.ndarray  # (C,) int32
    cand_action: np.ndarray  # (C,) int32
    cand_kind: np.ndarray  # (C,) int8
    cand_weight: np.ndarray  # (C,) float32
    returns: np.ndarray  # (G, num_players) float32
    game: np.ndarray  # (G,) int32

    def __len__(self) -> int:
        return len(self.game)

    def held_out(self) -> np.ndarray:
        return held_out_games(self.game)

    def subset(self, rows) -> "NodeGames":
        """Games ``rows`` (in that order), node and candidate indices renumbered."""
        rows = np.asarray(rows, np.intp)
        node_lo = np.searchsorted(self.node_game, rows, "left")
        node_hi = np.searchsorted(self.node_game, rows, "right")
        cand_lo = np.searchsorted(self.cand_node, node_lo, "left")
        cand_hi = np.searchsorted(self.cand_node, node_hi, "left")
        node_rows = np.concatenate([np.arange(a, b) for a, b in zip(node_lo, node_hi)] or [np.zeros(0, np.intp)])
        cand_rows = np.concatenate([np.arange(a, b) for a, b in zip(cand_lo, cand_hi)] or [np.zeros(0, np.intp)])
        counts = node_hi - node_lo
        new_node = np.zeros(len(self.node_game) + 1, np.int64)
        new_node[node_rows] = np.arange(len(node_rows))
        return NodeGames(x=self.x[node_rows], node_game=np.repeat(np.arange(len(rows)), counts).astype(np.int32),
                         cand_node=new_node[self.cand_node[cand_rows]].astype(np.int32),
                         cand_action=self.cand_action[cand_rows], cand_kind=self.cand_kind[cand_rows],
                         cand_weight=self.cand_weight[cand_rows], returns=self.returns[rows], game=self.game[rows])


def concat_node_games(parts: Sequence[NodeGames], input_size: int, num_players: int) -> NodeGames:
    """The games of ``parts`` in order (indices renumbered; none: an empty set of the given sizes)."""
    if not parts:
        return NodeGames(x=np.zeros((0, input_size), np.float16), node_game=np.zeros(0, np.int32),
                         cand_node=np.zeros(0, np.int32), cand_action=np.zeros(0, np.int32),
                         cand_kind=np.zeros(0, np.int8), cand_weight=np.zeros(0, np.float32),
                         returns=np.zeros((0, num_players), np.float32), game=np.zeros(0, np.int32))
    nodes = np.cumsum([0] + [len(p.node_game) for p in parts])
    games_ = np.cumsum([0] + [len(p.game) for p in parts])
    return NodeGames(x=np.concatenate([p.x for p in parts]),
                     node_game=np.concatenate([p.node_game + g for p, g in zip(parts, games_)]).astype(np.int32),
                     cand_node=np.concatenate([p.cand_node + n for p, n in zip(parts, nodes)]).astype(np.int32),
                     cand_action=np.concatenate([p.cand_action for p in parts]),
                     cand_kind=np.concatenate([p.cand_kind for p in parts]),
                     cand_weight=np.concatenate([p.cand_weight for p in parts]),
                     returns=np.concatenate([p.returns for p in parts]),
                     game=np.concatenate([p.game for p in parts]))


def _candidate_values(params, spec: ValueSpec, x, cand_node, cand_action, cand_kind, xp=np, index=None):
    """``Q`` of every candidate: the first layer's product once per node, then gathered."""
    pre = x @ params["W_x"] + params["b_x"]
    emb = _embedding(params, spec, cand_action, cand_kind, xp, index)
    return _head(params, spec, xp.take(pre, cand_node, axis=0) + emb, xp)


def aivat_terms(params, spec: ValueSpec, data: NodeGames, index=None, chunk: int = 256) -> np.ndarray:
    """``(G, num_players)``: each game's sum of AIVAT terms under ``params`` (numpy)."""
    out = np.zeros(data.returns.shape, np.float64)
    for lo in range(0, len(data), chunk):
        part = data.subset(np.arange(lo, min(lo + chunk, len(data))))
        if not len(part.cand_node):
            continue
        q = _candidate_values(params, spec, part.x.astype(np.float32), part.cand_node, part.cand_action,
                              part.cand_kind, index=index)
        terms = np.zeros(part.returns.shape, np.float64)
        np.add.at(terms, part.node_game[part.cand_node], part.cand_weight[:, None] * q)
        out[lo:lo + len(part)] = terms
    return out


def variance_ratio(returns, terms) -> np.ndarray:
    """Per player: ``var(returns) / var(returns + terms)`` over games (above 1: AIVAT helps)."""
    returns = np.asarray(returns, np.float64)
    corrected = returns + np.asarray(terms, np.float64)
    return returns.var(axis=0) / np.maximum(corrected.var(axis=0), 1e-300)


def variance_loss(params, spec: ValueSpec, batch: dict, mean, xp=np, index=None):
    """The AIVAT estimate's mean squared deviation from ``mean``, summed
    over the players: ``mean_g || R_g - mean + sum_c w_c Q(c) ||^2`` over
    the batch's real games (``batch["game_mask"]``). With ``mean`` the
    expected returns, this is the estimate's variance, as the terms have
    mean zero whatever ``Q`` is."""
    q = _candidate_values(params, spec, batch["x"], batch["cand_node"], batch["cand_action"], batch["cand_kind"],
                          xp, index)
    terms = _segment_sum(batch["cand_weight"][:, None] * q, batch["cand_game"], batch["returns"].shape[0], xp)
    dev = batch["returns"] - mean + terms
    mask = batch["game_mask"]
    return xp.sum(mask[:, None] * dev ** 2) / xp.maximum(xp.sum(mask), 1.0)


def node_variance_loss(params, spec: ValueSpec, batch: dict, mean, xp=np, index=None):
    """:func:`variance_loss` less ``var(R)``, in expectation, node by node:
    the terms ``t_n`` of a game are martingale differences (``E[t_n | h_n] =
    0``), so ``E[t_n t_m] = 0`` for ``n != m`` and ``E[t_n b(h_n)] = 0`` for
    any ``b``, and ``E||R - mean + sum_n t_n||^2 - E||R - mean||^2 =
    E sum_n (||t_n||^2 + 2 t_n . (R - b_n))``. With the baseline ``b_n =
    sum_b p(b|h_n) Q(h_n.b)`` (held constant) the gradient is ``2 (R -
    Q(h_n.a)) . grad t_n``: the other nodes' terms, pure noise in the
    gradient of the game-level form, drop out. Per game of the batch, as
    :func:`variance_loss`."""
    q = _candidate_values(params, spec, batch["x"], batch["cand_node"], batch["cand_action"], batch["cand_kind"],
                          xp, index)
    nodes = batch["x"].shape[0]
    weight = batch["cand_weight"][:, None]
    t = _segment_sum(weight * q, batch["cand_node"], nodes, xp)
    prob = xp.where(weight > 0, weight, weight + 1.0) * (weight != 0)  # p(c) (the taken one: w + 1)
    base = _segment_sum(prob * q, batch["cand_node"], nodes, xp)
    if xp is not np:
        import jax

        base = jax.lax.stop_gradient(base)
    returns = xp.take(batch["returns"], batch["node_game"], axis=0)
    per_node = xp.sum(batch["node_mask"][:, None] * (t ** 2 + 2.0 * t * (returns - base)))
    return per_node / xp.maximum(xp.sum(batch["game_mask"]), 1.0)


def _segment_sum(values, segments, count: int, xp):
    if xp is np:
        out = np.zeros((count,) + values.shape[1:], values.dtype)
        np.add.at(out, segments, values)
        return out
    import jax

    return jax.ops.segment_sum(values, segments, num_segments=count)


def _bucket(n: int, step: int) -> int:
    """``n`` rounded up to a power of two times ``step`` (few shapes, few compilations)."""
    size = step
    while size < n:
        size *= 2
    return size


def variance_batch(data: NodeGames, rows, num_games: int) -> dict:
    """Games ``rows`` of ``data`` as padded arrays: ``num_games`` game slots,
    nodes and candidates padded to buckets (padding: weight 0, mask 0)."""
    part = data.subset(rows)
    nodes, cands = _bucket(len(part.node_game), 256), _bucket(len(part.cand_node), 1024)
    x = np.zeros((nodes, part.x.shape[1]), np.float32)
    x[:len(part.node_game)] = part.x
    pad = cands - len(part.cand_node)
    returns = np.zeros((num_games, part.returns.shape[1]), np.float32)
    returns[:len(part)] = part.returns
    mask = np.zeros(num_games, np.float32)
    mask[:len(part)] = 1.0
    return {"x": x,
            "cand_node": np.concatenate([part.cand_node, np.zeros(pad, np.int32)]),
            "cand_action": np.concatenate([part.cand_action, np.zeros(pad, np.int32)]),
            "cand_kind": np.concatenate([part.cand_kind.astype(np.int32), np.zeros(pad, np.int32)]),
            "cand_weight": np.concatenate([part.cand_weight, np.zeros(pad, np.float32)]),
            "cand_game": np.concatenate([part.node_game[part.cand_node], np.zeros(pad, np.int32)]),
            "node_game": np.concatenate([part.node_game, np.zeros(nodes - len(part.node_game), np.int32)]),
            "node_mask": (np.arange(nodes) < len(part.node_game)).astype(np.float32),
            "returns": returns, "game_mask": mask}


def train_for_variance(game, data: NodeGames, *, hidden=HIDDEN, encoding: str = ENCODING, epochs: int = 30,
                       batch: int = 32, lr: float = 1e-3, weight_decay: float = 0.0, checks: int = 4,
                       seed: int = 0, time_limit: float | None = None, init: ValueNet | None = None,
                       per_node: bool = True,
                       on_epoch: Callable[[dict], None] | None = None, settings: dict | None = None) -> ValueNet:
    """Fits ``Q`` so that the AIVAT estimate ``R_g + sum_c w_c Q(c)`` has the
    least variance over the training games of ``data`` (:func:`variance_loss`
    with the training games' mean returns; Adam, AdamW with ``weight_decay``;
    ``batch`` games a step), from ``init``'s parameters or from zero output
    weights (every term zero: the plain estimate). The held-out games'
    variance of the estimate is measured ``checks`` times an epoch; the
    check with the lowest is kept (check 0: the start), float16-rounded.
    ``per_node``: the gradient of :func:`node_variance_loss` (the same
    objective in expectation, less noise) rather than :func:`variance_loss`'s.
    ``meta["fit"]``: ``variance`` and ``variance_plain`` (summed over the
    players) of the held-out games, ``ratio`` per player (plain over
    corrected), ``train_loss`` (the training loss of the kept check), ``epoch``, ``epochs``, ``seconds``."""
    import jax.numpy as jnp

    _check_fit_args(epochs, batch, checks, lr, weight_decay)
    spec = init.spec if init is not None else ValueSpec.for_game(game, encoding, hidden)
    if data.x.shape[1:] != (spec.input_size,):
        raise ValueError(f"the data have {data.x.shape[1:]} features; {spec.encoding} of {game} has "
                         f"{spec.input_size}")
    out = data.held_out()
    train_games, test_games = np.flatnonzero(~out), np.flatnonzero(out)
    if len(train_games) < 2 or len(test_games) < 2:
        raise ValueError(f"{len(train_games)} training and {len(test_games)} held-out games: the data needs two "
                         "or more of each (the held-out games are 8, 21, 29, 42, ...)")
    t0 = time.perf_counter()
    rng = np.random.Generator(np.random.PCG64([seed, 45]))
    mean = data.returns[train_games].mean(axis=0)
    index = games.action_factors(game)[0] if spec.factored else None
    jindex = None if index is None else jnp.asarray(index)
    start = init.params if init is not None else init_params(spec, rng, mean)
    params = {k: jnp.asarray(v) for k, v in start.items()}
    jmean = jnp.asarray(mean)
    loss = node_variance_loss if per_node else variance_loss
    step = _adam_step(spec, lambda p, b: loss(p, spec, b, jmean, jnp, jindex), lr, weight_decay)
    test = data.subset(test_games)
    test_returns = test.returns.astype(np.float64)
    plain = float(((test_returns - mean) ** 2).sum(axis=1).mean())

    def held_out(p):
        terms = aivat_terms(p, spec, test, index)
        return float(((test_returns - mean + terms) ** 2).sum(axis=1).mean()), variance_ratio(test_returns, terms)

    def fit_rows(rows):
        rows = np.sort(rows)
        return ({k: jnp.asarray(v) for k, v in variance_batch(data, rows, batch).items()},), len(rows)

    def measure(current, epoch, train_loss):
        held, ratio = held_out(current)
        return held, ratio, {"epoch": epoch, "train_loss": train_loss, "variance": held, "variance_plain": plain,
                             "ratio": [float(r) for r in ratio], "seconds": time.perf_counter() - t0}

    start = _rounded(params)
    best_var, best_ratio = held_out(start)
    best, (best_var, history, best_check), best_ratio = _checked_fit(
        step, params, fit_rows, measure, rng, train_games, start, best_var, initial=best_ratio,
        batch=batch, epochs=epochs, checks=checks, t0=t0, time_limit=time_limit, on_epoch=on_epoch)
    meta = {"training": {"objective": "variance",
                         "method": "adam on the variance of the AIVAT estimate over games (solvers/value_net.py)",
                         "loss": "node_variance_loss" if per_node else "variance_loss",
                         "epochs": epochs, "batch_games": batch, "lr": lr, "weight_decay": weight_decay,
                         "checks": checks, "seed": seed, "time_limit": time_limit,
                         "init": init.name if init is not None else "zero output weights", **(settings or {})},
            "data": {"games": len(data), "held_out_games": int(len(test_games)), "nodes": int(len(data.node_game)),
                     "candidates": int(len(data.cand_node)),
                     "chance_nodes": int(len(np.unique(data.cand_node[data.cand_kind == CHANCE])))},
            "fit": {"variance": best_var, "variance_plain": plain, "ratio": [float(r) for r in best_ratio],
                    "train_loss": history[best_check - 1]["train_loss"] if best_check else None,
                    "epoch": history[best_check - 1]["epoch"] if best_check else 0,
                    "epochs": history[-1]["epoch"] if history else 0, "seconds": time.perf_counter() - t0}}
    return ValueNet(spec, best, game=game, meta=meta)
