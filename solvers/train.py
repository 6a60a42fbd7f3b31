"""Training a network policy by self-play with Magnetic Mirror Descent.

The method is Magnetic Mirror Descent (MMD; Sokota, D'Orazio, Kolter,
Loizou, Lanctot, Mitliagkas, Brown, Kroer: "A Unified Approach to
Reinforcement and Game-Theoretic Learning with Magnetic Mirror Descent",
ICLR 2023) run as a self-play actor-critic with function approximation. One
policy network (:mod:`solvers.network`, the exported one) plays every seat:
its input, the acting player's encoding (``TrainConfig.encoding``: the
information-state tensor, or another encoding the game offers such as Doubt
and Bet's ``compact``), says whose view it is. A second MLP of the same
shape, the critic, estimates ``Q(s, a)``, the acting player's expected
return after action ``a`` at information state ``s``. With
``TrainConfig.output = "factored"`` both networks output the game's factor
logits and every action's value is the sum of its factors
(:func:`solvers.network.forward`).

One step (:meth:`MMDTrainer.iterate`):

1. Play ``batch`` self-play episodes with the current policy ``pi``; chance
   outcomes are drawn exactly from ``chance_outcomes()`` with the trainer's
   seeded ``np.random.Generator``.
2. At every decision ``(s, a)`` of player ``p`` the target is ``G``, the
   episode's final return of ``p`` divided by the game's payoff range
   ``max_utility - min_utility`` (so that ``alpha`` weighs the same in every
   game: the kibitz games pay in [0, 1], kuhn_poker in [-2, 2]).
3. One Adam step (step size ``lr`` for the policy, ``critic_lr`` for the
   critic: the critic moves faster, as in two-timescale actor-critic) on the mean over the batch's decisions
   (its gradient summed over chunks of decisions with similar numbers of legal
   actions, :func:`chunks`, each over its legal actions only: a game with
   thousands of actions never holds a batch's logits of every action) of

   ``L = -sum_a pi(a|s) * sg(Q(s,a) - V(s)) + alpha * KL(pi(.|s) || rho(.|s))
   + 1/2 * (Q(s,a) - G)^2``, with ``V(s) = sum_a sg(pi(a|s)) sg(Q(s,a))``

   (``sg``: no gradient; sums over legal actions). The first two terms are
   the gradient form of MMD's step ``argmax_pi <q, pi> - alpha KL(pi, rho) -
   (1/eta) KL(pi, pi_t)``: Adam's step size plays ``eta``; the all-actions
   form uses the critic on every legal action instead of the sampled
   action's return alone (lower variance).
4. The magnet ``rho`` is the initial, near-uniform policy: MMD then
   converges to the ``alpha``-regularised equilibrium (an agent quantal
   response equilibrium for a uniform magnet), which approaches a Nash
   equilibrium as ``alpha`` falls. With ``magnet_every = m > 0`` the magnet
   becomes the current policy every ``m`` steps (the paper's moving
   magnet); measured here on kuhn_poker, this lets the sampled policy
   collapse onto pure strategies (NashConv 0.5), so it is off by default.

The update rule and the settings are documented in docs/solvers/training.md.
The trainer follows the protocol of :mod:`solvers.driver` (``iteration``,
``iterate()``, ``state_dict()``/``load_state_dict()``), so ``kibitz train``
gets checkpoints, ``--resume``, ``--time`` and stopping on signals from the
shared driver. Same seed, same parameters: everything random goes through
the one generator, whose state the checkpoint holds.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pyspiel

from kibitz.solvers import network

#: the smallest padded batch of decisions (shapes are powers of two from here)
MIN_PAD = 64
#: the fewest legal-action columns of a chunk (a chunk's width is a power of two from here)
MIN_WIDTH = 64
#: the most logits (decisions x columns) one gradient chunk holds per array
CHUNK_LOGITS = 1 << 21


def _pow2(k: int) -> int:
    """The smallest power of two >= ``k`` (1 for k <= 1)."""
    return 1 << max(int(k) - 1, 0).bit_length()


def chunks(counts, num_actions: int, dense: bool) -> list[tuple[int, int, np.ndarray]]:
    """How a batch of decisions is cut for the gradient: ``(rows, width,
    decisions)`` per chunk, ``decisions`` the indices (into ``counts``, each
    decision's number of legal actions) of at most ``rows`` decisions, and
    ``width`` the legal-action columns of the chunk.

    Decisions are grouped by their legal actions' count: ``width`` is that
    count rounded up to a power of two (at least :data:`MIN_WIDTH`, at most
    ``num_actions``), so that a claim with thousands of legal actions and an
    exchange with three do not share a shape. A group is cut into chunks of
    ``rows`` decisions, a power of two (at least :data:`MIN_PAD`), as many
    as the group has but no more than :data:`CHUNK_LOGITS` logits hold
    (counting every action of a ``dense`` network, whose forward pass
    computes them all). The shapes are powers of two, so the compiled
    gradients are few; a game with few actions has one chunk.
    """
    counts = np.asarray(counts, np.int64)
    if not len(counts):  # no decision: one empty chunk (a zero gradient)
        return [(MIN_PAD, min(MIN_WIDTH, num_actions), counts)]
    width = np.minimum(np.maximum([_pow2(c) for c in counts], MIN_WIDTH), num_actions).astype(np.int64)
    out = []
    for w in np.unique(width):
        rows_of = np.flatnonzero(width == w)
        cap = max(MIN_PAD, 1 << (CHUNK_LOGITS // (num_actions if dense else int(w))).bit_length() - 1)
        rows = min(max(MIN_PAD, _pow2(len(rows_of))), cap)
        out += [(rows, int(w), rows_of[lo:lo + rows]) for lo in range(0, len(rows_of), rows)]
    return out


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """The settings of an MMD run (all of them go into the checkpoint's meta)."""

    hidden: tuple[int, ...] = (128, 128)
    encoding: str = network.ENCODING  # the input encoding (kibitz.games.encodings)
    # or "factored" (the game's action factors); None: the game's default (solvers.train_run.output_kind)
    output: str | None = "dense"
    batch: int = 32  # episodes per step
    lr: float = 1e-3  # Adam's step size of the policy (MMD's eta)
    critic_lr: float = 1e-3  # Adam's step size of the critic
    alpha: float = 0.05  # weight of KL(pi || magnet)
    magnet_every: int = 0  # steps between magnet updates (0: the magnet stays the initial policy)
    opponent: str = ""  # an agent spec that holds some seats of some episodes ("": self-play only)
    opponent_share: float = 0.0  # the share of episodes with opponent seats (needs ``opponent``)
    imitation_steps: int = 0  # first steps that imitate ``opponent`` in games it plays alone (then it is the magnet)
    imitation_lr: float = 0.0  # the policy's step size in the imitation steps (0: lr)
    explore: float = 0.0  # chance that a network move of an episode is uniform over the legal actions instead

    def __post_init__(self):
        from kibitz.solvers.solve import ConfigError

        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        if self.opponent_share > 0 and not self.opponent:
            raise ConfigError(f"{self.opponent_share:g} needs --opponent SPEC (e.g. heuristic)",
                                   "--opponent-share")
        if self.imitation_steps and not self.opponent:
            raise ConfigError(f"{self.imitation_steps} needs --opponent SPEC to imitate (e.g. heuristic)",
                                   "--imitation-steps")
        checks = [("batch", self.batch >= 1, ">= 1"), ("lr", 0 < self.lr <= 1, "in (0, 1]"),
                  ("critic_lr", 0 < self.critic_lr <= 1, "in (0, 1]"),
                  ("alpha", 0 <= self.alpha <= 100, "in [0, 100]"),
                  ("magnet_every", self.magnet_every >= 0, ">= 0"),
                  ("output", self.output is None or self.output in network.OUTPUTS,
                   " or ".join(network.OUTPUTS) + " (None: the game's default)"),
                  ("opponent_share", 0 <= self.opponent_share <= 1 and (self.opponent_share == 0 or
                                                                       bool(self.opponent)),
                   "in [0, 1], and above 0 only with an opponent"),
                  ("explore", 0 <= self.explore < 1, "in [0, 1)"),
                  ("imitation_lr", 0 <= self.imitation_lr <= 1, "in [0, 1] (0: lr)"),
                  ("imitation_steps", self.imitation_steps >= 0 and (self.imitation_steps == 0 or
                                                                     bool(self.opponent)),
                   ">= 0, and above 0 only with an opponent"),
                  ("hidden", bool(self.hidden) and min(self.hidden) >= 1, "one or more widths >= 1")]
        for name, ok, allowed in checks:
            if not ok or (isinstance(getattr(self, name), float) and not np.isfinite(getattr(self, name))):
                raise ValueError(f"{name}={getattr(self, name)!r} is out of range; allowed: {allowed}")

    def as_dict(self) -> dict:
        """The settings for a checkpoint's meta; ``encoding``, ``output`` and
        the opponent's settings only when they are not the defaults, so that
        a checkpoint written before they existed still resumes."""
        d = {**dataclasses.asdict(self), "hidden": list(self.hidden)}
        for key, default in (("encoding", network.ENCODING), ("output", "dense"), ("opponent", ""),
                             ("opponent_share", 0.0), ("imitation_steps", 0),
                             ("explore", 0.0), ("imitation_lr", 0.0)):
            if d[key] == default:
                del d[key]
        return d


def check_trainable(game) -> None:
    """ValueError unless ``game`` is a sequential game with information-state tensors."""
    gt = game.get_type()
    if gt.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        raise ValueError(f"{game}: training needs a sequential game (wrap a simultaneous one in "
                         "turn_based_simultaneous_game)")
    if not gt.provides_information_state_tensor:
        raise ValueError(f"{game}: the game has no information-state tensor to train on")
    try:
        game.information_state_tensor_size()
    except pyspiel.SpielError:  # declared, but not implemented by the game
        raise ValueError(f"{game}: the game has no information-state tensor to train on "
                         "(InformationStateTensorShape is not implemented)") from None


def payoff_range(game) -> float:
    """``max_utility - min_utility``, or 1 when the game does not give a finite, positive one."""
    try:
        span = float(game.max_utility()) - float(game.min_utility())
    except Exception:  # noqa: BLE001 - some games leave the utilities unset
        return 1.0
    return span if np.isfinite(span) and span > 0 else 1.0


def _sample(rng: np.random.Generator, probs) -> int:
    """The index drawn from ``probs`` with one uniform number (deterministic under the seed)."""
    cum = np.cumsum(probs)
    return min(int(np.searchsorted(cum, rng.random() * cum[-1], side="right")), len(cum) - 1)


def _draw_chance(state, rng: np.random.Generator):
    """Draws ``state``'s chance outcomes with ``rng`` until a player is to
    move or the game is over; returns ``state``."""
    while state.is_chance_node():
        actions, probs = zip(*state.chance_outcomes())
        state.apply_action(actions[_sample(rng, probs)])
    return state


def _policy_numpy(params, x, mask, index=None):
    """Probabilities of a batch over all actions (numpy; the probes)."""
    return network.masked_softmax(network.forward(params, x, index=index).astype(np.float64), mask)


def _legal_probabilities(params, x, legal, index=None) -> list[np.ndarray]:
    """The policy's probabilities of each row's ``legal`` actions (numpy,
    float64; the behaviour policy of the episodes): the masked softmax over
    the legal actions' logits only."""
    width = max(len(la) for la in legal)
    acts = np.zeros((len(legal), width), np.int64)
    valid = np.zeros((len(legal), width), bool)
    for i, la in enumerate(legal):
        acts[i, :len(la)] = la
        valid[i, :len(la)] = True
    z = network.forward_at(params, x, acts, index=index).astype(np.float64)
    z = np.where(valid, z, -np.inf)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    return [p[i, :len(la)] for i, la in enumerate(legal)]


def opponent_seats(game, rng: np.random.Generator, count: int, opponent, share: float,
                   every_seat: bool = False) -> list[dict]:
    """For each of ``count`` episodes, the seats ``opponent`` holds: ``{seat: agent}``.

    With probability ``share`` an episode has opponent seats: the network
    keeps ``k`` seats, ``k`` uniform in ``1..n-1``, the seats themselves a
    uniform draw; every other seat gets ``opponent(game, seat, seed)`` with a
    seed from ``rng``. Otherwise (and always when ``opponent`` is None or
    ``share`` is 0, which draws nothing from ``rng``) the network plays every
    seat. ``every_seat``: the opponent holds every seat of every episode
    (the imitation steps)."""
    seats = [{} for _ in range(count)]
    n = game.num_players()
    if every_seat:
        return [{p: opponent(game, p, int(rng.integers(2 ** 63))) for p in range(n)} for _ in seats]
    if opponent is None or share <= 0:
        return seats
    for held in seats:
        if rng.random() < share:
            mine = set(rng.permutation(n)[:int(rng.integers(1, n))].tolist())
            for seat in range(n):
                if seat not in mine:
                    held[seat] = opponent(game, seat, int(rng.integers(2 ** 63)))
    return seats


def _opponent_move(rng, agent, state) -> tuple[list[int], int]:
    """``(legal actions, position of the one drawn)`` for ``agent``'s move, drawn with ``rng``."""
    probs = agent.action_probabilities(state)
    legal = sorted(probs)
    return legal, _sample(rng, [probs[a] for a in legal])


def play_episodes(game, params, rng: np.random.Generator, count: int,
                  encoding: str = network.ENCODING, index=None, opponent=None, share: float = 0.0,
                  imitate: bool = False, explore: float = 0.0):
    """``count`` episodes of the network, stepped in lockstep so that the
    network runs once per round on every episode waiting for its decision;
    ``index``: the action factors of a factored network
    (:func:`network.forward`).

    The network plays every seat (self-play), except that with ``opponent``
    (a callable ``(game, seat, seed) -> agent``, the agent's
    ``action_probabilities(state)`` giving its policy) a share ``share`` of
    the episodes have some seats played by that agent (:func:`opponent_seats`);
    its moves are drawn with ``rng`` too and are not training data. With
    ``imitate`` the opponent plays every seat of every episode and its
    decisions are the data (``params`` is not used). ``explore``: the chance
    that a network move is drawn uniformly from the legal actions instead of
    from the policy (one more uniform number per move when above 0).

    Returns ``(x, legal, taken, target)``: the acting players' encodings
    (float32), the legal actions (ascending lists), the position of the
    chosen action in its list, and the acting players' final returns of
    every decision of the network (with ``imitate``: of the opponent), in
    order of play."""
    from kibitz.games import encoding_tensor

    states = [game.new_initial_state() for _ in range(count)]
    held = opponent_seats(game, rng, count, opponent, share, every_seat=imitate)
    rows = []  # (episode, player, x, legal actions, position of the action taken)
    if imitate:
        for e, s in enumerate(states):
            while not s.is_terminal():
                if s.is_chance_node():
                    actions, probs = zip(*s.chance_outcomes())
                    s.apply_action(actions[_sample(rng, probs)])
                    continue
                p = s.current_player()
                legal, j = _opponent_move(rng, held[e][p], s)
                rows.append((e, p, encoding_tensor(s, p, encoding), legal, j))
                s.apply_action(legal[j])
    live = [] if imitate else list(range(count))
    while live:
        waiting = []
        for e in live:
            s = states[e]
            while s.is_chance_node() or (held[e] and not s.is_terminal() and s.current_player() in held[e]):
                if s.is_chance_node():
                    actions, probs = zip(*s.chance_outcomes())
                    s.apply_action(actions[_sample(rng, probs)])
                else:
                    legal, j = _opponent_move(rng, held[e][s.current_player()], s)
                    s.apply_action(legal[j])
            if not s.is_terminal():
                waiting.append(e)
        if not waiting:
            break
        players = [states[e].current_player() for e in waiting]
        xs = np.array([encoding_tensor(states[e], p, encoding) for e, p in zip(waiting, players)], np.float32)
        legal = [states[e].legal_actions() for e in waiting]
        probs = _legal_probabilities(params, xs, legal, index)
        for i, e in enumerate(waiting):
            j = _sample(rng, probs[i])
            if explore > 0 and rng.random() < explore:
                j = int(rng.integers(len(legal[i])))
            rows.append((e, players[i], xs[i], legal[i], j))
            states[e].apply_action(legal[i][j])
        live = waiting
    returns = [s.returns() for s in states]
    x = np.array([r[2] for r in rows], np.float32).reshape(len(rows), -1)
    legal = [r[3] for r in rows]
    taken = np.array([r[4] for r in rows], np.int32)
    target = np.array([returns[r[0]][r[1]] for r in rows], np.float32)
    return x, legal, taken, target


def _loss(jnp, jax, alpha, index=None):
    """The MMD actor-critic loss of the module docstring, as a function of
    ``(params, magnet, x, acts, valid, taken, target, weight, n)`` over a
    chunk of decisions: row ``i`` has the legal actions ``acts[i]`` where
    ``valid[i]`` (the rest is padding), took ``acts[i, taken[i]]``, and
    ``weight`` 1 (0 for a padding row). It is the sum over the rows divided
    by ``n``, the batch's decisions, so that the chunks' losses and
    gradients add up to the batch's. ``index``: the action factors of a
    factored policy and critic."""

    def log_policy(p, x, acts, mask):
        z = network.forward_at(p, x, acts, xp=jnp, index=index) + (mask - 1.0) * network.MASK_PENALTY
        return jax.nn.log_softmax(z, axis=-1)

    def loss(trainable, magnet, x, acts, valid, taken, target, weight, n):
        mask = valid.astype(jnp.float32)
        logp = log_policy(trainable["policy"], x, acts, mask)
        pi = jnp.exp(logp)
        q = network.forward_at(trainable["critic"], x, acts, xp=jnp, index=index)
        q_sg = jax.lax.stop_gradient(q) * mask
        v = jnp.sum(jax.lax.stop_gradient(pi) * q_sg, axis=-1, keepdims=True)
        gain = jnp.sum(pi * (q_sg - v) * mask, axis=-1)
        logm = jax.lax.stop_gradient(log_policy(magnet, x, acts, mask))
        kl = jnp.sum(pi * (logp - logm) * mask, axis=-1)
        q_taken = jnp.take_along_axis(q, taken[:, None], axis=-1)[:, 0]
        critic = 0.5 * (q_taken - target) ** 2
        policy_loss = jnp.sum(weight * (-gain + alpha * kl)) / n
        critic_loss = jnp.sum(weight * critic) / n
        return policy_loss + critic_loss, (policy_loss, critic_loss, jnp.sum(weight * kl) / n)

    return loss


def _imitation_loss(jnp, jax, index=None):
    """The loss of an imitation step over a chunk (the arguments of
    :func:`_loss`): the policy's cross-entropy on the opponent's moves, and
    the critic's loss of :func:`_loss`."""

    def loss(trainable, magnet, x, acts, valid, taken, target, weight, n):
        mask = valid.astype(jnp.float32)
        z = network.forward_at(trainable["policy"], x, acts, xp=jnp, index=index) + (mask - 1.0) * network.MASK_PENALTY
        logp = jax.nn.log_softmax(z, axis=-1)
        q = network.forward_at(trainable["critic"], x, acts, xp=jnp, index=index)
        ce = -jnp.sum(weight * jnp.take_along_axis(logp, taken[:, None], axis=-1)[:, 0]) / n
        q_taken = jnp.take_along_axis(q, taken[:, None], axis=-1)[:, 0]
        critic = jnp.sum(weight * 0.5 * (q_taken - target) ** 2) / n
        return ce + critic, (ce, critic, jnp.zeros(()))

    return loss


def input_scale(game, encoding: str = network.ENCODING, seed: int = 0, episodes: int = 16) -> np.ndarray:
    """Per input, ``max(1, max |x|)`` over the decisions of ``episodes`` games of
    uniformly random play (their own generator, seeded by ``seed``).

    The trainer's networks read ``x / scale``, so that counts and money
    (Over/Under's tally runs into hundreds) enter on the scale of the
    one-hot entries; the saved network folds the scale into its first layer
    (``W0 / scale[:, None]``) and reads the raw tensor like any other."""
    from kibitz.games import encoding_size, encoding_tensor

    rng = np.random.Generator(np.random.PCG64([seed, 7]))
    scale = np.ones(encoding_size(game, encoding), np.float32)
    for _ in range(episodes):
        s = game.new_initial_state()
        while not _draw_chance(s, rng).is_terminal():
            np.maximum(scale, np.abs(encoding_tensor(s, s.current_player(), encoding)), out=scale)
            legal = s.legal_actions()
            s.apply_action(legal[int(rng.integers(len(legal)))])
    return scale


class MMDTrainer:
    """Self-play MMD on ``game`` (see the module docstring); the solver
    protocol of :mod:`solvers.driver`."""

    def __init__(self, game, config: TrainConfig = TrainConfig(), seed: int = 0, opponent=None):
        """``opponent``: the agent factory ``(game, seat, seed) -> agent`` for
        ``config.opponent`` (the caller builds it: agents live above the
        solvers), needed when ``config.opponent_share > 0`` or
        ``config.imitation_steps > 0``."""
        import jax
        import jax.numpy as jnp
        import optax

        check_trainable(game)
        if (config.opponent_share > 0 or config.imitation_steps > 0) and opponent is None:
            raise ValueError(f"opponent_share={config.opponent_share} and imitation_steps="
                             f"{config.imitation_steps} need the agent factory of opponent={config.opponent!r}")
        self.opponent = opponent
        self.game = game
        self.config = config
        self.seed = int(seed)
        self.spec = network.NetworkSpec.for_game(game, hidden=config.hidden, encoding=config.encoding,
                                                 output=config.output)
        self.index = network.action_index(self.spec, game)
        self.inv_scale = (1.0 / input_scale(game, config.encoding, self.seed)).astype(np.float32)
        self.rng = np.random.Generator(np.random.PCG64(self.seed))
        self.iteration = 0
        self.scale = payoff_range(game)
        policy = network.init_params(self.spec, self.rng)
        critic = network.init_params(self.spec, self.rng)
        self._jnp = jnp
        self.trainable = {"policy": [jnp.asarray(p) for p in policy],
                          "critic": [jnp.asarray(p) for p in critic]}
        self.magnet = [jnp.asarray(p) for p in policy]
        policy_opt = optax.adam(config.lr)
        if config.imitation_steps and config.imitation_lr and config.imitation_lr != config.lr:
            # Adam with the step size imitation_lr for the imitation steps, then lr
            steps, first, then = config.imitation_steps, config.imitation_lr, config.lr
            policy_opt = optax.chain(optax.scale_by_adam(), optax.scale_by_schedule(
                lambda count: -jnp.where(count < steps, first, then)))
        self._opt = optax.multi_transform({"policy": policy_opt, "critic": optax.adam(config.critic_lr)},
                                          {"policy": "policy", "critic": "critic"})
        self.opt_state = self._opt.init(self.trainable)
        self.last = {"policy_loss": float("nan"), "critic_loss": float("nan"), "kl": float("nan"),
                     "decisions": 0}
        index = None if self.index is None else jnp.asarray(self.index)
        opt = self._opt

        def make_gradient(loss):
            grad = jax.value_and_grad(loss, has_aux=True)

            def gradient(trainable, magnet, x, acts, valid, taken, target, weight, n):
                (_, aux), g = grad(trainable, magnet, x, acts, valid, taken, target, weight, n)
                return g, aux

            return jax.jit(gradient)

        def apply(trainable, opt_state, g):
            updates, opt_state = opt.update(g, opt_state, trainable)
            return optax.apply_updates(trainable, updates), opt_state

        self._gradient = make_gradient(_loss(jnp, jax, config.alpha, index))
        self._imitation_gradient = make_gradient(_imitation_loss(jnp, jax, index))
        self._apply = jax.jit(apply)
        self._add = jax.jit(lambda a, b: jax.tree_util.tree_map(jnp.add, a, b))

    # -- the policy ---------------------------------------------------------
    def policy_params(self) -> list[np.ndarray]:
        """The policy network's parameters (numpy float32), for :func:`network.save`:
        a network on the game's raw encoding (the input scale folded into ``W0``)."""
        params = [np.asarray(p, np.float32) for p in self.trainable["policy"]]
        params[0] = (params[0] * self.inv_scale[:, None]).astype(np.float32)
        return params

    # -- one step -----------------------------------------------------------
    def iterate(self) -> None:
        from threadpoolctl import threadpool_limits

        imitating = self.iteration < self.config.imitation_steps
        # the episodes' forward passes are small matrix products, one per
        # round: measured on underdog, BLAS threads beside JAX's made them
        # 1.3x (self-play) to 4.7x (with heuristic seats) slower than one thread
        with threadpool_limits(limits=1, user_api="blas"):
            x, legal, taken, target = play_episodes(self.game, self.policy_params(), self.rng, self.config.batch,
                                                    self.config.encoding, self.index, self.opponent,
                                                    self.config.opponent_share, imitate=imitating,
                                                    explore=self.config.explore)
        self.update(x, legal, taken, target, imitating=imitating)
        self.iteration += 1
        if self.config.magnet_every and self.iteration % self.config.magnet_every == 0:
            self.magnet = list(self.trainable["policy"])
        if imitating and self.iteration == self.config.imitation_steps:
            self.magnet = list(self.trainable["policy"])  # the imitated policy is the magnet from now on

    def update(self, x, legal, taken, target, imitating: bool = False) -> None:
        """One Adam step of the loss of the module docstring (with
        ``imitating``: the imitation loss) on a batch of decisions, the
        arrays :func:`play_episodes` returns (raw encodings, returns in the
        game's units); sets :attr:`last`. Neither counts an iteration nor
        moves the magnet (:meth:`iterate` does)."""
        x = x * self.inv_scale
        gradient = self._imitation_gradient if imitating else self._gradient
        n = len(taken)
        target = target / np.float32(self.scale)
        total = np.float32(max(n, 1))
        grads = aux = None
        for rows, width, which in chunks([len(la) for la in legal], self.game.num_distinct_actions(),
                                         self.spec.output == "dense"):
            acts = np.zeros((rows, width), np.int32)
            valid = np.zeros((rows, width), bool)
            valid[len(which):, 0] = True  # a padding row has one "legal" action so its softmax is defined
            for i, k in enumerate(which):
                acts[i, :len(legal[k])] = legal[k]
                valid[i, :len(legal[k])] = True
            weight = np.zeros(rows, np.float32)
            weight[:len(which)] = 1.0

            def padded(a):
                out = np.zeros((rows, *a.shape[1:]), a.dtype)
                out[:len(which)] = a[which]
                return out

            g, a = gradient(self.trainable, self.magnet, padded(x), acts, valid, padded(taken),
                                  padded(target), weight, total)
            grads, aux = (g, a) if grads is None else (self._add(grads, g), self._add(aux, a))
        self.trainable, self.opt_state = self._apply(self.trainable, self.opt_state, grads)
        self.last = {"policy_loss": float(aux[0]), "critic_loss": float(aux[1]), "kl": float(aux[2]),
                     "decisions": n}

    # -- checkpoints --------------------------------------------------------
    def _leaves(self):
        import jax

        return jax.tree_util.tree_flatten((self.trainable, self.magnet, self.opt_state))

    def state_dict(self) -> dict[str, np.ndarray]:
        leaves, _ = self._leaves()
        arrays = {f"leaf{i:03d}": np.asarray(v) for i, v in enumerate(leaves)}
        arrays["iteration"] = np.array(self.iteration, np.int64)
        arrays["rng"] = np.frombuffer(json.dumps(self.rng.bit_generator.state).encode(), np.uint8)
        return arrays

    def load_state_dict(self, arrays) -> None:
        import jax

        leaves, treedef = self._leaves()
        new = []
        for i, old in enumerate(leaves):
            v = np.asarray(arrays[f"leaf{i:03d}"])
            if v.shape != np.shape(old) or v.dtype != np.asarray(old).dtype:
                raise ValueError(f"entry leaf{i:03d} has shape {v.shape} {v.dtype}, "
                                 f"expected {np.shape(old)} {np.asarray(old).dtype}")
            new.append(self._jnp.asarray(v))
        extra = set(arrays) - {f"leaf{i:03d}" for i in range(len(leaves))} - {"iteration", "rng"}
        if extra:
            raise ValueError(f"unexpected entries {sorted(extra)}")
        self.trainable, self.magnet, self.opt_state = jax.tree_util.tree_unflatten(treedef, new)
        self.magnet = list(self.magnet)
        self.iteration = int(arrays["iteration"])
        rng = np.random.Generator(np.random.PCG64())
        rng.bit_generator.state = json.loads(np.asarray(arrays["rng"]).tobytes().decode())
        self.rng = rng


# -- strength probes -----------------------------------------------------------

def infoset_states(game, tree, player: int | None = None):
    """Yields ``(k, state)`` for every information state ``k`` of ``tree``
    (of ``player`` only, when given), in order: ``state`` is one history
    that reaches it, replayed in ``game``."""
    infoset = tree.node_infoset
    nodes = np.flatnonzero(infoset >= 0)
    ks, first = np.unique(infoset[nodes], return_index=True)
    for k, node in zip(ks, nodes[first]):
        if player is not None and tree.infoset_player[k] != player:
            continue
        path = []
        while tree.parent[node] >= 0:
            path.append(int(tree.action[node]))
            node = tree.parent[node]
        state = game.new_initial_state()
        for a in reversed(path):
            state.apply_action(a)
        yield int(k), state


class TreeProbe:
    """Exact NashConv of network policies on ``game``'s compiled tree.

    The network's input (``spec.encoding``; without a spec, a dense network
    on the information-state tensor) of every information state is read
    once (from one history that reaches it, replayed in the game); each
    probe is then one batched forward pass and
    :func:`solvers.evaluate.nash_conv`."""

    def __init__(self, game, tree, spec: network.NetworkSpec | None = None):
        from kibitz.games import encoding_size, encoding_tensor

        self.tree = tree
        encoding = spec.encoding if spec is not None else network.ENCODING
        self.index = network.action_index(spec, game) if spec is not None else None
        num_actions = game.num_distinct_actions()
        self.x = np.zeros((tree.num_infosets, encoding_size(game, encoding)), np.float32)
        self.mask = np.zeros((tree.num_infosets, num_actions), np.float32)
        for k, state in infoset_states(game, tree):
            self.x[k] = encoding_tensor(state, state.current_player(), encoding)
            lo, hi = tree.infoset_slots[k], tree.infoset_slots[k + 1]
            self.mask[k, tree.slot_action[lo:hi]] = 1.0

    def slots(self, params) -> np.ndarray:
        """The network policy as a slot vector of the tree."""
        probs = _policy_numpy(params, self.x, self.mask, self.index)
        tree = self.tree
        out = probs[tree.slot_infoset, tree.slot_action]
        sums = np.add.reduceat(out, tree.infoset_slots[:-1])
        return out / sums[tree.slot_infoset]

    def nash_conv(self, params) -> float:
        from kibitz.solvers import evaluate

        return evaluate.nash_conv(self.tree, self.slots(params))

    def uniform_nash_conv(self) -> float:
        from kibitz.solvers import evaluate

        return evaluate.nash_conv(self.tree, self.tree.uniform_policy())


def network_policy_nash_conv(game, params, tree=None, spec: network.NetworkSpec | None = None) -> float:
    """The exact NashConv of the network policy ``params`` (of ``spec``; a
    dense information-state network without one) on ``game``'s compiled
    tree (compiled here unless given)."""
    if tree is None:
        from kibitz.solvers.tree import compile_tree

        tree = compile_tree(game)
    return TreeProbe(game, tree, spec).nash_conv(params)


def mean_return_against_random(game, params, *, games: int = 20, seed: int = 0,
                               spec: network.NetworkSpec | None = None) -> float:
    """The network's (of ``spec``; a dense information-state network
    without one) mean return over ``games`` games in each seat, the other
    seats playing uniformly at random (its own seeded generator: the probe
    does not touch a trainer's)."""
    from kibitz.games import encoding_tensor

    encoding = spec.encoding if spec is not None else network.ENCODING
    index = network.action_index(spec, game) if spec is not None else None
    rng = np.random.Generator(np.random.PCG64(seed))
    n = game.num_players()
    total = 0.0
    for seat in range(n):
        for _ in range(games):
            s = game.new_initial_state()
            while not _draw_chance(s, rng).is_terminal():
                legal = s.legal_actions()
                if s.current_player() == seat:
                    p = network.probabilities(params, encoding_tensor(s, seat, encoding), legal, index)
                    s.apply_action(legal[_sample(rng, [p[a] for a in legal])])
                else:
                    s.apply_action(legal[int(rng.integers(len(legal)))])
            total += s.returns()[seat]
    return total / (n * games)
