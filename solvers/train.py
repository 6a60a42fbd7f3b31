"""Training a network policy by self-play with Magnetic Mirror Descent.

The method is Magnetic Mirror Descent (MMD; Sokota, D'Orazio, Kolter,
Loizou, Lanctot, Mitliagkas, Brown, Kroer: "A Unified Approach to
Reinforcement and Game-Theoretic Learning with Magnetic Mirror Descent",
ICLR 2023) run as a self-play actor-critic with function approximation. One
policy network (:mod:`solvers.network`, the exported one) plays every seat:
the information-state tensor says whose view it is. A second MLP of the
same shape, the critic, estimates ``Q(s, a)``, the acting player's expected
return after action ``a`` at information state ``s``.

One step (:meth:`MMDTrainer.iterate`):

1. Play ``batch`` self-play episodes with the current policy ``pi``; chance
   outcomes are drawn exactly from ``chance_outcomes()`` with the trainer's
   seeded ``np.random.Generator``.
2. At every decision ``(s, a)`` of player ``p`` the target is ``G``, the
   episode's final return of ``p`` divided by the game's payoff range
   ``max_utility - min_utility`` (so that ``alpha`` weighs the same in every
   game: the kibitz games pay in [0, 1], kuhn_poker in [-2, 2]).
3. One Adam step (step size ``lr`` for the policy, ``critic_lr`` for the
   critic: the critic moves faster, as in two-timescale actor-critic) on the mean over the batch's decisions of

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


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """The settings of an MMD run (all of them go into the checkpoint's meta)."""

    hidden: tuple[int, ...] = (128, 128)
    batch: int = 32  # episodes per step
    lr: float = 1e-3  # Adam's step size of the policy (MMD's eta)
    critic_lr: float = 1e-3  # Adam's step size of the critic
    alpha: float = 0.05  # weight of KL(pi || magnet)
    magnet_every: int = 0  # steps between magnet updates (0: the magnet stays the initial policy)
    opponent: str = ""  # an agent spec that holds some seats of some episodes ("": self-play only)
    opponent_share: float = 0.0  # the share of episodes with opponent seats (needs ``opponent``)
    encoding: str = "information_state_tensor"  # the network's input: or observation_tensor
    imitation_steps: int = 0  # first steps that imitate ``opponent`` in games it plays alone (then it is the magnet)

    def __post_init__(self):
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        checks = [("batch", self.batch >= 1, ">= 1"), ("lr", 0 < self.lr <= 1, "in (0, 1]"),
                  ("critic_lr", 0 < self.critic_lr <= 1, "in (0, 1]"),
                  ("alpha", 0 <= self.alpha <= 100, "in [0, 100]"),
                  ("magnet_every", self.magnet_every >= 0, ">= 0"),
                  ("opponent_share", 0 <= self.opponent_share <= 1 and (self.opponent_share == 0 or
                                                                       bool(self.opponent)),
                   "in [0, 1], and above 0 only with an opponent"),
                  ("imitation_steps", self.imitation_steps >= 0 and (self.imitation_steps == 0 or
                                                                     bool(self.opponent)),
                   ">= 0, and above 0 only with an opponent"),
                  ("hidden", bool(self.hidden) and min(self.hidden) >= 1, "one or more widths >= 1")]
        for name, ok, allowed in checks:
            if not ok or (isinstance(getattr(self, name), float) and not np.isfinite(getattr(self, name))):
                raise ValueError(f"{name}={getattr(self, name)!r} is out of range; allowed: {allowed}")

    def as_dict(self) -> dict:
        return {**dataclasses.asdict(self), "hidden": list(self.hidden)}


def check_trainable(game) -> None:
    """ValueError unless ``game`` is a sequential game with information-state tensors."""
    gt = game.get_type()
    if gt.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        raise ValueError(f"{game}: training needs a sequential game (wrap a simultaneous one in "
                         "turn_based_simultaneous_game)")
    if not gt.provides_information_state_tensor:
        raise ValueError(f"{game}: the game has no information-state tensor to train on")


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


def _policy_numpy(params, x, mask):
    """Probabilities of a batch (numpy; the behaviour policy of the episodes)."""
    return network.masked_softmax(network.forward(params, x).astype(np.float64), mask)


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


def play_episodes(game, params, rng: np.random.Generator, count: int, opponent=None, share: float = 0.0,
                  imitate: bool = False, encoding: str = network.ENCODING):
    """``count`` episodes of the network, stepped in lockstep so that the
    network runs once per round on every episode waiting for its decision.

    The network plays every seat (self-play), except that with ``opponent``
    (a callable ``(game, seat, seed) -> agent``, the agent's
    ``action_probabilities(state)`` giving its policy) a share ``share`` of
    the episodes have some seats played by that agent (:func:`opponent_seats`);
    its moves are drawn with ``rng`` too and are not training data. With
    ``imitate`` the opponent plays every seat of every episode and its
    decisions are the data (``params`` is not used).

    Returns ``(x, mask, action, target)``: the information-state tensors,
    legal masks, chosen actions and acting players' final returns of every
    decision of the network (with ``imitate``: of the opponent), in order of
    play."""
    states = [game.new_initial_state() for _ in range(count)]
    held = opponent_seats(game, rng, count, opponent, share, every_seat=imitate)
    tensor = network.encoder(encoding)
    if imitate:
        return _imitation_episodes(game, states, held, rng, tensor)
    num_actions = game.num_distinct_actions()
    rows = []  # (episode, player, x, mask, action)
    live = list(range(count))
    while live:
        waiting = []
        for e in live:
            s = states[e]
            while s.is_chance_node() or (held[e] and not s.is_terminal() and s.current_player() in held[e]):
                if s.is_chance_node():
                    actions, probs = zip(*s.chance_outcomes())
                else:
                    actions, probs = zip(*sorted(held[e][s.current_player()].action_probabilities(s).items()))
                s.apply_action(actions[_sample(rng, probs)])
            if not s.is_terminal():
                waiting.append(e)
        if not waiting:
            break
        xs = np.array([tensor(states[e]) for e in waiting], np.float32)
        masks = np.zeros((len(waiting), num_actions), np.float32)
        legal = [states[e].legal_actions() for e in waiting]
        for i, la in enumerate(legal):
            masks[i, la] = 1.0
        probs = _policy_numpy(params, xs, masks)
        for i, e in enumerate(waiting):
            a = legal[i][_sample(rng, probs[i, legal[i]])]
            rows.append((e, states[e].current_player(), xs[i], masks[i], a))
            states[e].apply_action(a)
        live = waiting
    returns = [s.returns() for s in states]
    x = np.array([r[2] for r in rows], np.float32).reshape(len(rows), -1)
    mask = np.array([r[3] for r in rows], np.float32).reshape(len(rows), num_actions)
    action = np.array([r[4] for r in rows], np.int32)
    target = np.array([returns[r[0]][r[1]] for r in rows], np.float32)
    return x, mask, action, target


def _imitation_episodes(game, states, held, rng, tensor):
    """The episodes of :func:`play_episodes` with ``imitate``: every seat is
    the opponent's, every decision is recorded."""
    num_actions = game.num_distinct_actions()
    xs, masks, actions, who = [], [], [], []
    for e, s in enumerate(states):
        while not s.is_terminal():
            if s.is_chance_node():
                outcomes, probs = zip(*s.chance_outcomes())
                s.apply_action(outcomes[_sample(rng, probs)])
                continue
            p = s.current_player()
            legal, probs = zip(*sorted(held[e][p].action_probabilities(s).items()))
            a = legal[_sample(rng, probs)]
            m = np.zeros(num_actions, np.float32)
            m[list(legal)] = 1.0
            xs.append(tensor(s))
            masks.append(m)
            actions.append(a)
            who.append((e, p))
            s.apply_action(a)
    returns = [s.returns() for s in states]
    x = np.array(xs, np.float32).reshape(len(xs), -1)
    mask = np.array(masks, np.float32).reshape(len(masks), num_actions)
    target = np.array([returns[e][p] for e, p in who], np.float32)
    return x, mask, np.array(actions, np.int32), target


def _loss(jnp, jax, alpha):
    """The MMD actor-critic loss of the module docstring, as a function of
    ``(params, magnet, x, mask, action, target, weight)``."""

    def log_policy(p, x, mask):
        z = network.forward(p, x, xp=jnp) + (mask - 1.0) * network.MASK_PENALTY
        return jax.nn.log_softmax(z, axis=-1)

    def loss(trainable, magnet, x, mask, action, target, weight):
        logp = log_policy(trainable["policy"], x, mask)
        pi = jnp.exp(logp)
        q = network.forward(trainable["critic"], x, xp=jnp)
        q_sg = jax.lax.stop_gradient(q) * mask
        v = jnp.sum(jax.lax.stop_gradient(pi) * q_sg, axis=-1, keepdims=True)
        gain = jnp.sum(pi * (q_sg - v) * mask, axis=-1)
        logm = jax.lax.stop_gradient(log_policy(magnet, x, mask))
        kl = jnp.sum(pi * (logp - logm) * mask, axis=-1)
        q_taken = jnp.take_along_axis(q, action[:, None], axis=-1)[:, 0]
        critic = 0.5 * (q_taken - target) ** 2
        n = jnp.maximum(weight.sum(), 1.0)
        policy_loss = jnp.sum(weight * (-gain + alpha * kl)) / n
        critic_loss = jnp.sum(weight * critic) / n
        return policy_loss + critic_loss, (policy_loss, critic_loss, jnp.sum(weight * kl) / n)

    return loss


def _imitation_loss(jnp, jax):
    """The loss of an imitation step: the policy's cross-entropy on the
    opponent's actions, and the critic's loss of :func:`_loss`."""

    def loss(trainable, magnet, x, mask, action, target, weight):
        z = network.forward(trainable["policy"], x, xp=jnp) + (mask - 1.0) * network.MASK_PENALTY
        logp = jax.nn.log_softmax(z, axis=-1)
        q = network.forward(trainable["critic"], x, xp=jnp)
        n = jnp.maximum(weight.sum(), 1.0)
        ce = -jnp.sum(weight * jnp.take_along_axis(logp, action[:, None], axis=-1)[:, 0]) / n
        q_taken = jnp.take_along_axis(q, action[:, None], axis=-1)[:, 0]
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
    rng = np.random.Generator(np.random.PCG64([seed, 7]))
    tensor = network.encoder(encoding)
    scale = np.ones(network.encoding_size(game, encoding), np.float32)
    for _ in range(episodes):
        s = game.new_initial_state()
        while not s.is_terminal():
            if s.is_chance_node():
                actions, probs = zip(*s.chance_outcomes())
                s.apply_action(actions[_sample(rng, probs)])
                continue
            np.maximum(scale, np.abs(np.asarray(tensor(s), np.float32)), out=scale)
            legal = s.legal_actions()
            s.apply_action(legal[int(rng.integers(len(legal)))])
    return scale


class MMDTrainer:
    """Self-play MMD on ``game`` (see the module docstring); the solver
    protocol of :mod:`solvers.driver`."""

    def __init__(self, game, config: TrainConfig = TrainConfig(), seed: int = 0, opponent=None):
        """``opponent``: the agent factory ``(game, seat, seed) -> agent`` for
        ``config.opponent`` (the caller builds it: agents live above the
        solvers), needed when ``config.opponent_share > 0``."""
        import jax
        import jax.numpy as jnp
        import optax

        check_trainable(game)
        if config.opponent_share > 0 and opponent is None:
            raise ValueError(f"opponent_share={config.opponent_share} needs the agent factory of "
                             f"opponent={config.opponent!r}")
        self.opponent = opponent
        self.game = game
        self.config = config
        self.seed = int(seed)
        self.spec = network.NetworkSpec.for_game(game, hidden=config.hidden, encoding=config.encoding)
        self.inv_scale = 1.0 / input_scale(game, config.encoding, self.seed)
        self.rng = np.random.Generator(np.random.PCG64(self.seed))
        self.iteration = 0
        self.scale = payoff_range(game)
        policy = network.init_params(self.spec, self.rng)
        critic = network.init_params(self.spec, self.rng)
        self._jnp = jnp
        self.trainable = {"policy": [jnp.asarray(p) for p in policy],
                          "critic": [jnp.asarray(p) for p in critic]}
        self.magnet = [jnp.asarray(p) for p in policy]
        self._opt = optax.multi_transform({"policy": optax.adam(config.lr), "critic": optax.adam(config.critic_lr)},
                                          {"policy": "policy", "critic": "critic"})
        self.opt_state = self._opt.init(self.trainable)
        self.last = {"policy_loss": float("nan"), "critic_loss": float("nan"), "kl": float("nan"),
                     "decisions": 0}
        opt = self._opt

        def make_update(loss):
            grad = jax.value_and_grad(loss, has_aux=True)

            def update(trainable, opt_state, magnet, x, mask, action, target, weight):
                (_, aux), g = grad(trainable, magnet, x, mask, action, target, weight)
                updates, opt_state = opt.update(g, opt_state, trainable)
                return optax.apply_updates(trainable, updates), opt_state, aux

            return jax.jit(update)

        self._update = make_update(_loss(jnp, jax, config.alpha))
        self._imitation_update = make_update(_imitation_loss(jnp, jax))

    # -- the policy ---------------------------------------------------------
    def policy_params(self) -> list[np.ndarray]:
        """The policy network's parameters (numpy float32), for :func:`network.save`:
        a network on the game's raw tensor (the input scale folded into ``W0``)."""
        params = [np.asarray(p, np.float32) for p in self.trainable["policy"]]
        params[0] = (params[0] * self.inv_scale[:, None]).astype(np.float32)
        return params

    # -- one step -----------------------------------------------------------
    def iterate(self) -> None:
        from threadpoolctl import threadpool_limits

        # the episodes' forward passes are small matrix products, one per
        # round: measured on underdog, BLAS threads beside JAX's made them
        # 1.3x (self-play) to 4.7x (with heuristic seats) slower than one thread
        imitating = self.iteration < self.config.imitation_steps
        with threadpool_limits(limits=1, user_api="blas"):
            x, mask, action, target = play_episodes(self.game, self.policy_params(), self.rng, self.config.batch,
                                                    self.opponent, self.config.opponent_share, imitate=imitating,
                                                    encoding=self.config.encoding)
        n = len(action)
        pad = max(MIN_PAD, 1 << max(n - 1, 0).bit_length())
        weight = np.zeros(pad, np.float32)
        weight[:n] = 1.0

        def padded(a, fill=0):
            out = np.full((pad, *a.shape[1:]), fill, a.dtype)
            out[:n] = a
            return out

        mask_p = padded(mask)
        mask_p[n:, 0] = 1.0  # a padded row has one "legal" action so its softmax is defined
        update = self._imitation_update if imitating else self._update
        self.trainable, self.opt_state, aux = update(
            self.trainable, self.opt_state, self.magnet, padded(x * self.inv_scale), mask_p, padded(action),
            padded(target / np.float32(self.scale)), weight)
        self.iteration += 1
        if self.config.magnet_every and self.iteration % self.config.magnet_every == 0:
            self.magnet = list(self.trainable["policy"])
        if imitating and self.iteration == self.config.imitation_steps:
            self.magnet = list(self.trainable["policy"])  # the imitated policy is the magnet from now on
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

class TreeProbe:
    """Exact NashConv of network policies on ``game``'s compiled tree.

    The information-state tensor of every information state is read once
    (from one history that reaches it, replayed in the game); each probe is
    then one batched forward pass and :func:`solvers.evaluate.nash_conv`."""

    def __init__(self, game, tree, encoding: str = network.ENCODING):
        self.tree = tree
        infoset = tree.node_infoset
        nodes = np.flatnonzero(infoset >= 0)
        _, first = np.unique(infoset[nodes], return_index=True)
        num_actions = game.num_distinct_actions()
        tensor = network.encoder(encoding)
        self.x = np.zeros((tree.num_infosets, network.encoding_size(game, encoding)), np.float32)
        self.mask = np.zeros((tree.num_infosets, num_actions), np.float32)
        for k, node in enumerate(nodes[first]):
            path = []
            while tree.parent[node] >= 0:
                path.append(int(tree.action[node]))
                node = tree.parent[node]
            state = game.new_initial_state()
            for a in reversed(path):
                state.apply_action(a)
            self.x[k] = tensor(state)
            lo, hi = tree.infoset_slots[k], tree.infoset_slots[k + 1]
            self.mask[k, tree.slot_action[lo:hi]] = 1.0

    def slots(self, params) -> np.ndarray:
        """The network policy as a slot vector of the tree."""
        probs = _policy_numpy(params, self.x, self.mask)
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


def network_policy_nash_conv(game, params, tree=None) -> float:
    """The exact NashConv of the network policy ``params`` on ``game``'s
    compiled tree (compiled here unless given)."""
    if tree is None:
        from kibitz.solvers.tree import compile_tree

        tree = compile_tree(game)
    return TreeProbe(game, tree).nash_conv(params)


def mean_return_against_random(game, params, *, games: int = 20, seed: int = 0,
                               encoding: str = network.ENCODING) -> float:
    """The network's mean return over ``games`` games in each seat, the other
    seats playing uniformly at random (its own seeded generator: the probe
    does not touch a trainer's)."""
    rng = np.random.Generator(np.random.PCG64(seed))
    tensor = network.encoder(encoding)
    n = game.num_players()
    total = 0.0
    for seat in range(n):
        for _ in range(games):
            s = game.new_initial_state()
            while not s.is_terminal():
                if s.is_chance_node():
                    actions, probs = zip(*s.chance_outcomes())
                    s.apply_action(actions[_sample(rng, probs)])
                    continue
                legal = s.legal_actions()
                if s.current_player() == seat:
                    p = network.probabilities(params, tensor(s), legal)
                    s.apply_action(legal[_sample(rng, [p[a] for a in legal])])
                else:
                    s.apply_action(legal[int(rng.integers(len(legal)))])
            total += s.returns()[seat]
    return total / (n * games)
