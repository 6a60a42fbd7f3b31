"""Distillation: a network policy fitted to a teacher's moves.

Policy distillation (Rusu et al., "Policy Distillation", ICLR 2016) of a
search, as in expert iteration (Anthony, Tian, Barber, "Thinking Fast and
Slow with Deep Learning and Tree Search", NeurIPS 2017): a teacher, here an
IS-MCTS search that beats the heuristics, labels the decisions of its own
games (``agents/training/distill.py`` writes them), and the network of
:mod:`solvers.network` is fitted to the labels by minimising the
cross-entropy over each decision's legal moves,

    ``L = -1/|B| sum_{(s, t) in B} sum_{a legal at s} t(a) log pi(a | s)``,

with ``t`` the teacher's move (one-hot, ``target="moves"``) or its root
visit shares (``target="visits"``), by Adam with step size ``lr`` over
minibatches ``B`` of ``batch`` decisions (of one width bucket: decisions
whose legal moves round up to the same power of two), ``epochs`` passes
over the data.
A tenth of the games (those with index ``% 10 == 9``) are held out; the
parameters of the epoch with the lowest held-out loss are the result, and
each epoch reports the held-out loss and the share of held-out decisions
where the network's most likely move is the teacher's.

An *anchor* (another teacher's decisions, e.g. the heuristic's, of which the
network is already a copy) adds its decisions to every epoch with weight
``w`` each (``anchor_weight``), so that the loss is

    ``L = (sum_{B_t} CE + w sum_{B_a} CE) / (|B_t| + w |B_a|)``

over a minibatch's teacher rows ``B_t`` and anchor rows ``B_a``: the fit
follows the teacher where it has seen the teacher's moves and stays near
the anchor's play elsewhere, which a fine-tune on a few thousand of a
search's decisions alone does not (it forgets what the copy knew). The
anchor's held-out games are held out too; the held-out loss and agreement
that choose the epoch are the teacher's, and the anchor's agreement is
reported beside them. This is a cross-entropy counterpart of regularising
towards an anchor policy (piKL: A. P. Jacob, D. J. Wu, G. Farina, A. Lerer,
H. Hu, A. Bakhtin, J. Andreas, N. Brown, "Modeling Strong and Human-Like
Gameplay with KL-Regularized Search", ICML 2022).

With ``objective="improve"`` the same machinery makes one step of policy
improvement from rollout labels (``agents/training/improve.py``: every legal move
``a`` of a decision rolled out once from the true state, return ``R_a``;
the played network's probabilities ``pi_0``): the fit maximises the
expected advantage of its own policy under a KL leash to ``pi_0``,

    ``L = 1/|B| sum_s [ -sum_a pi(a|s) (R_a - mean_a R_a) + beta KL(pi_0(.|s) || pi(.|s)) ]``

(the "all-actions" policy-gradient estimate: Sutton, Singh, McAllester,
"Comparing policy-gradient algorithms", 2000; as a policy-iteration step
with rollout action values: Lagoudakis and Parr, "Reinforcement learning
as classification", ICML 2003), and the epoch kept is the one with the
highest held-out gain ``sum_a (pi(a|s) - pi_0(a|s)) R_a`` a decision, the
estimate of what switching to ``pi`` at those decisions wins.

The network reads the encoding divided by a per-input scale
(:func:`solvers.train.input_scale`), folded into its first layer at the
end, as in training. Same data, settings and seed, same parameters.
"""

from __future__ import annotations

import dataclasses
import zipfile
import zlib

import numpy as np

from kibitz.solvers import network, stats

TARGETS = ("moves", "visits")
OBJECTIVES = ("cross_entropy", "improve")


@dataclasses.dataclass
class Examples:
    """Labelled decisions: ``x`` (N, d); the legal moves of row ``i`` are
    ``legal[offset[i]:offset[i+1]]`` with teacher targets ``target`` beside
    them; ``game`` the game index of each row; ``base`` (rollout labels
    only) the played policy's probabilities beside ``legal``."""

    x: np.ndarray
    legal: np.ndarray
    offset: np.ndarray
    target: np.ndarray
    taken: np.ndarray
    game: np.ndarray
    base: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.taken)

    def rows(self, which) -> "Examples":
        which = np.asarray(which, np.int64)
        counts = self.offset[which + 1] - self.offset[which]
        offset = np.zeros(len(which) + 1, np.int64)
        offset[1:] = np.cumsum(counts)
        flat = np.concatenate([np.arange(self.offset[i], self.offset[i + 1]) for i in which]) \
            if len(which) else np.zeros(0, np.int64)
        return Examples(self.x[which], self.legal[flat], offset, self.target[flat], self.taken[which],
                        self.game[which], None if self.base is None else self.base[flat])


def _read_shards(paths, keys, kind: str, none: str) -> tuple[list[dict], np.ndarray]:
    """The arrays ``keys`` of each shard (ValueError naming a file that is
    not a ``kind``, or saying ``none`` if there are no shards) and the rows'
    offsets into the concatenated flat arrays."""
    parts = []
    for path in paths:
        try:
            with np.load(path, allow_pickle=False) as z:
                parts.append({k: z[k] for k in keys})
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as e:
            raise ValueError(f"{path}: not a kibitz {kind} ({e})") from None
    if not parts:
        raise ValueError(f"{none}: the data folder has no shards")
    offsets, base = [], 0
    for p in parts:
        offsets.append(p["offset"][:-1] + base)
        base += p["offset"][-1]
    return parts, np.concatenate(offsets + [np.array([base])]).astype(np.int64)


def load_examples(paths, target: str = "moves") -> Examples:
    """The examples of the shards ``paths`` (in order), with ``target`` as labels."""
    if target not in TARGETS:
        raise ValueError(f"target={target!r}; allowed: {', '.join(TARGETS)}")
    parts, offset = _read_shards(paths, ("x", "legal", "offset", "taken", "policy", "visits", "game"),
                                 "teacher-data shard", "no teacher data")
    taken = np.concatenate([p["taken"] for p in parts])
    legal = np.concatenate([p["legal"] for p in parts])
    if target == "moves":
        t = np.zeros(len(legal), np.float32)
        t[offset[:-1] + taken] = 1.0
    else:
        t = np.concatenate([p["visits"] for p in parts]).astype(np.float32)
    return Examples(np.concatenate([p["x"] for p in parts]), legal, offset, t, taken,
                    np.concatenate([p["game"] for p in parts]))


def load_rollouts(paths) -> Examples:
    """The decisions of rollout-label shards (``agents/training/improve.py``), in
    order: ``target`` the advantages ``R_a - mean_a R_a`` of each decision's
    legal moves, ``base`` the played probabilities."""
    parts, offset = _read_shards(paths, ("x", "legal", "offset", "taken", "policy", "value", "game"),
                                 "rollout-label shard", "no rollout labels")
    value = np.concatenate([p["value"] for p in parts]).astype(np.float64)
    counts = offset[1:] - offset[:-1]
    mean = np.add.reduceat(value, offset[:-1]) / counts if len(counts) else value[:0]
    return Examples(np.concatenate([p["x"] for p in parts]), np.concatenate([p["legal"] for p in parts]),
                    offset, (value - np.repeat(mean, counts)).astype(np.float32),
                    np.concatenate([p["taken"] for p in parts]), np.concatenate([p["game"] for p in parts]),
                    np.concatenate([p["policy"] for p in parts]).astype(np.float32))


def concat(a: Examples, b: Examples) -> Examples:
    """The rows of ``a`` then those of ``b`` (teacher labels: ``base`` is not kept)."""
    offset = np.concatenate([a.offset[:-1], b.offset + a.offset[-1]])
    return Examples(np.concatenate([a.x, b.x]), np.concatenate([a.legal, b.legal]), offset,
                    np.concatenate([a.target, b.target]), np.concatenate([a.taken, b.taken]),
                    np.concatenate([a.game, b.game]))


def _batch(ex: Examples, which, num_actions: int):
    """Padded arrays of rows ``which``: acts, valid, targets, base (zeros
    without one) (width a power of two)."""
    counts = ex.offset[which + 1] - ex.offset[which]
    width = min(max(64, 1 << max(int(counts.max()) - 1, 0).bit_length()), num_actions)
    rows = len(which)
    acts = np.zeros((rows, width), np.int32)
    valid = np.zeros((rows, width), bool)
    tgt = np.zeros((rows, width), np.float32)
    base = np.zeros((rows, width), np.float32)
    for r, i in enumerate(which):
        lo, hi = ex.offset[i], ex.offset[i + 1]
        acts[r, :hi - lo] = ex.legal[lo:hi]
        valid[r, :hi - lo] = True
        tgt[r, :hi - lo] = ex.target[lo:hi]
        if ex.base is not None:
            base[r, :hi - lo] = ex.base[lo:hi]
    return acts, valid, tgt, base


def held_out(ex: Examples) -> np.ndarray:
    """True for the rows of held-out games (index ``% 10 == 9``)."""
    return ex.game % 10 == 9


def fit(game, spec: network.NetworkSpec, ex: Examples, *, epochs: int = 20, lr: float = 1e-3,
        batch: int = 256, seed: int = 0, inv_scale=None, init=None, on_epoch=None, anchor=None,
        anchor_weight: float = 1.0, should_stop=None, objective: str = "cross_entropy", kl: float = 0.01):
    """Fits a network of ``spec`` to ``ex`` (see the module docstring).

    Returns ``(params, history)``: the parameters (numpy float32, the input
    scale folded in) of the best held-out epoch, and per epoch a dict with
    ``epoch``, ``loss`` (training), ``held_out_loss``, ``agreement``; with
    ``objective="improve"`` (``ex`` from :func:`load_rollouts`, KL weight
    ``kl``), ``held_out_gain`` (a decision) instead of the agreement, and
    the ``init`` network itself unless an epoch's held-out gain is above 0.
    ``init``: starting parameters (a network of ``spec`` on the raw
    encoding, e.g. :func:`network.load`'s) instead of fresh ones.
    ``anchor``: the anchor's :class:`Examples`, each row weighing
    ``anchor_weight`` (the records then add ``anchor_agreement``).
    ``on_epoch(record)`` after each epoch. ``should_stop()``, asked after
    every minibatch, ends the fit early (e.g. on Ctrl-C): the best of the
    epochs that ended is returned, or ``(None, [])`` if none did."""
    import jax
    import jax.numpy as jnp
    import optax

    _check_fit(ex, epochs=epochs, lr=lr, batch=batch, anchor=anchor, anchor_weight=anchor_weight,
               objective=objective, kl=kl)
    improve = objective == "improve"
    teacher_rows = len(ex)
    if anchor is not None:
        ex = concat(ex, anchor)
    row_weight = np.ones(len(ex), np.float32)
    row_weight[teacher_rows:] = anchor_weight
    jindex = None if (index := network.action_index(spec, game)) is None else jnp.asarray(index)
    num_actions = game.num_distinct_actions()
    rng = np.random.Generator(np.random.PCG64([seed, 11]))
    inv = np.ones(spec.input_size, np.float32) if inv_scale is None else np.asarray(inv_scale, np.float32)
    params = [jnp.asarray(p) for p in _starting_params(spec, rng, init, inv)]
    opt = optax.adam(lr)
    state = opt.init(params)

    loss = _fit_loss(jax, jnp, jindex, improve, kl)
    grad = jax.value_and_grad(loss, has_aux=True)

    @jax.jit
    def step(p, s, x, acts, valid, tgt, base, weight):
        (value, _), g = grad(p, x, acts, valid, tgt, base, weight)
        updates, s = opt.update(g, s, p)
        return optax.apply_updates(p, updates), s, value

    evaluate = jax.jit(loss)
    train_rows, test_rows, anchor_test = _split_rows(ex, teacher_rows, improve)
    x = ex.x * inv

    rows = _Minibatches(ex, x, row_weight, batch, num_actions, rng)
    padded = rows.padded

    def measure(p, which):
        """Mean loss and agreement over ``which`` (rows of one kind: teacher or anchor)."""
        total = agree = weight = 0.0
        for lo in range(0, len(which), batch):
            xs, acts, valid, tgt, base, w = padded(which[lo:lo + batch])
            value, a = evaluate(p, xs, acts, valid, tgt, base, w)
            total += float(value) * float(w.sum())
            agree += float(a)
            weight += float(w.sum())
        return total / max(weight, 1e-12), agree / max(weight, 1e-12)

    test_rows, anchor_test = (r[np.argsort(rows.bucket[r], kind="stable")] for r in (test_rows, anchor_test))

    history, best, best_loss = [], None, np.inf
    if improve and init is not None:  # no held-out gain, no step: the played network stays
        best, best_loss = [np.asarray(p, np.float32) for p in params], 0.0
    for epoch in range(1, epochs + 1):
        seen = running = 0.0
        cut = False
        for which in rows.minibatches(rng.permutation(train_rows)):
            if should_stop is not None and should_stop():
                cut = True  # the epoch does not end: it is not measured
                break
            params, state, value = step(params, state, *padded(which))
            w = float(row_weight[which].sum())
            running += float(value) * w
            seen += w
        if cut:
            break
        test_loss, agreement = measure(params, test_rows) if len(test_rows) else (running / seen, float("nan"))
        record = {"epoch": epoch, "loss": running / seen, "held_out_loss": test_loss,
                  ("held_out_gain" if improve else "agreement"): agreement}
        if anchor is not None:
            record["anchor_agreement"] = measure(params, anchor_test)[1] if len(anchor_test) else float("nan")
        history.append(record)
        score = -agreement if improve else test_loss  # improve: the highest held-out gain
        if score < best_loss:
            best_loss, best = score, [np.asarray(p, np.float32) for p in params]
        if on_epoch is not None:
            on_epoch(record)
        if should_stop is not None and should_stop():
            break
    if best is None:
        return None, history
    best[0] = (best[0] * inv[:, None]).astype(np.float32)
    return best, history


class _Minibatches:
    """:func:`fit`'s rows cut into minibatches: ``padded(which)`` the
    arrays of rows ``which`` padded to ``batch`` rows (weight 0), and
    ``minibatches(order)`` ``order`` cut into minibatches of one width
    bucket each (a decision with three legal moves does not share a width
    with one of thousands), in a random order when there are several
    buckets (one bucket: ``order`` cut in turn)."""

    def __init__(self, ex: Examples, x, row_weight, batch: int, num_actions: int, rng):
        self.ex, self.x, self.row_weight, self.batch, self.num_actions, self.rng = \
            ex, x, row_weight, batch, num_actions, rng
        counts = ex.offset[1:] - ex.offset[:-1]
        self.bucket = np.minimum(np.maximum([1 << max(int(c) - 1, 0).bit_length() for c in counts], 64),
                                 num_actions)

    def padded(self, which):
        acts, valid, tgt, base = _batch(self.ex, which, self.num_actions)
        pad = self.batch - len(which)
        w = np.concatenate([self.row_weight[which], np.zeros(pad, np.float32)])
        xs = np.concatenate([self.x[which], np.zeros((pad, self.x.shape[1]), np.float32)])
        acts = np.concatenate([acts, np.zeros((pad, acts.shape[1]), np.int32)])
        valid = np.concatenate([valid, np.zeros((pad, valid.shape[1]), bool)])
        valid[len(which):, 0] = True
        tgt = np.concatenate([tgt, np.zeros((pad, tgt.shape[1]), np.float32)])
        base = np.concatenate([base, np.zeros((pad, base.shape[1]), np.float32)])
        return xs, acts, valid.astype(np.float32), tgt, base, w

    def minibatches(self, order):
        bucket, batch = self.bucket, self.batch
        order = order[np.argsort(bucket[order], kind="stable")]
        cuts = []
        for b in np.unique(bucket[order]):
            rows = order[bucket[order] == b]
            cuts += [rows[lo:lo + batch] for lo in range(0, len(rows), batch)]
        if len(np.unique(bucket[order])) > 1:
            cuts = [cuts[i] for i in self.rng.permutation(len(cuts))]
        return cuts


def _split_rows(ex: Examples, teacher_rows: int, improve: bool):
    """The rows of ``ex`` to train on, the teacher's held-out rows and the
    anchor's (:func:`held_out`); ValueError when nothing is left to train
    on, or (``improve``) nothing held out to choose the step by."""
    out = held_out(ex)
    train_rows = np.flatnonzero(~out)
    test_rows = np.flatnonzero(out[:teacher_rows])
    anchor_test = np.flatnonzero(out[teacher_rows:]) + teacher_rows
    if not len(train_rows):
        raise ValueError("no training rows: every game is held out (the data needs games with index % 10 != 9)")
    if improve and not len(test_rows):
        raise ValueError("no held-out games to choose the step by: the data needs game 9 (games with index "
                         "% 10 == 9 are held out), so at least 10 games")
    return train_rows, test_rows, anchor_test


def _check_fit(ex: Examples, *, epochs, lr, batch, anchor, anchor_weight, objective, kl) -> None:
    """:func:`fit`'s arguments: ValueError naming the one out of range."""
    if epochs < 1 or batch < 1 or not 0 < lr <= 1:
        raise ValueError(f"epochs={epochs}, batch={batch}, lr={lr}: allowed epochs >= 1, batch >= 1, lr in (0, 1]")
    if not anchor_weight > 0:
        raise ValueError(f"anchor_weight={anchor_weight}: allowed > 0")
    if objective not in OBJECTIVES:
        raise ValueError(f"objective={objective!r}; allowed: {', '.join(OBJECTIVES)}")
    if objective == "improve" and (ex.base is None or anchor is not None or not kl >= 0):
        raise ValueError("objective='improve' needs rollout labels (load_rollouts), no anchor and kl >= 0")


def _starting_params(spec: network.NetworkSpec, rng, init, inv) -> list:
    """Fresh parameters of ``spec`` (drawn from ``rng``), or ``init``'s,
    whose first layer then reads the scaled input ``x * inv``."""
    fresh = network.init_params(spec, rng)
    if init is None:
        return fresh
    if [np.shape(p) for p in init] != [np.shape(p) for p in fresh]:
        raise ValueError(f"the starting network's shapes {[np.shape(p) for p in init]} are not those of "
                         f"{spec.hidden} hidden on {spec.input_size} inputs")
    start = [np.asarray(p, np.float32) for p in init]
    start[0] = start[0] / inv[:, None]  # the fit reads x * inv
    return start


def _fit_loss(jax, jnp, jindex, improve: bool, kl: float):
    """The loss of :func:`fit` over a padded minibatch, with its aux (the
    summed agreement, or the summed gain for the improve objective)."""
    def loss(p, x, acts, valid, tgt, base, weight):
        z = network.forward_at(p, x, acts, xp=jnp, index=jindex) + (valid - 1.0) * network.MASK_PENALTY
        logp = jax.nn.log_softmax(z, axis=-1)
        if improve:  # tgt: the advantages; the aux: the gain over the played policy, summed
            gain = jnp.sum(jnp.where(valid > 0, (jnp.exp(logp) - base) * tgt, 0.0), axis=-1)
            leash = jnp.sum(jnp.where((valid > 0) & (base > 0), base * (jnp.log(jnp.where(base > 0, base, 1.0))
                                                                         - logp), 0.0), axis=-1)
            ce, agree = kl * leash - gain, gain
        else:
            ce = -jnp.sum(tgt * jnp.where(valid > 0, logp, 0.0), axis=-1)
            agree = (jnp.argmax(z, axis=-1) == jnp.argmax(tgt + (valid - 1.0), axis=-1)).astype(jnp.float32)
        total = jnp.sum(weight)
        return jnp.sum(weight * ce) / jnp.where(total > 0, total, 1.0), jnp.sum(weight * agree)
    return loss


def held_out_gain(game, spec, params, ex) -> tuple[float, float, int]:
    """The mean over the held-out decisions of ``ex`` of ``sum_a (pi(a) -
    pi_0(a)) A_a`` for the network ``params`` (its standard error with the
    games as clusters, and the number of held-out games)."""
    rows = np.flatnonzero(held_out(ex))
    if not len(rows):
        return float("nan"), float("nan"), 0
    index = network.action_index(spec, game)
    logits = network.forward(params, ex.x[rows], index=index)
    gains = np.zeros(len(rows))
    for r, i in enumerate(rows):
        lo, hi = ex.offset[i], ex.offset[i + 1]
        legal = ex.legal[lo:hi]
        z = logits[r, legal].astype(np.float64)
        p = np.exp(z - z.max())
        p /= p.sum()
        gains[r] = float(((p - ex.base[lo:hi]) * ex.target[lo:hi]).sum())
    return stats.clustered_mean(gains, ex.game[rows])
