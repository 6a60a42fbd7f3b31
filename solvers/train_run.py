"""One training run of a network policy: self-play Magnetic Mirror Descent.

    from kibitz.solvers.train_run import TrainRun, train
    result = train(TrainRun("kuhn_poker", steps=200, out="kuhn-net.npz"))
    print(result.measure)

A run is one :class:`TrainRun` (frozen, checked when it is made): the game,
the steps or time, the network file ``out``, the probe, and the trainer's
settings :class:`kibitz.solvers.train.TrainConfig`. The trainer is
:class:`solvers.train.MMDTrainer` (docs/solvers/training.md) in the solve
driver (:func:`kibitz.solvers.solve.drive`): a progress bar, a checkpoint
``OUT.ckpt.npz`` every ``checkpoint_every`` seconds, at the end and on
Ctrl-C/SIGTERM, and ``resume`` ending with exactly the parameters an
uninterrupted run would have. The probe is the exact NashConv of the
network's policy when the game's tree compiles within ``probe_nodes``
nodes, else the network's mean return against random seats. ``kibitz
train`` builds the run from its options; ``kibitz.train`` from keywords.
"""

from __future__ import annotations

import dataclasses
import math
import signal
import time
from typing import Callable

from kibitz.solvers.solve import ConfigError, SolveFailed, SolveStopped, check_run_fields, drive, quiet

#: steps when neither ``steps`` nor ``time_limit`` bounds a run
DEFAULT_STEPS = 1000
#: the node budget under which the probe is the exact NashConv
DEFAULT_PROBE_NODES = 200_000


@dataclasses.dataclass(frozen=True)
class TrainRun:
    """One ``kibitz train`` run; ``config`` holds the trainer's settings
    (its ``output`` None: chosen by :func:`output_kind`)."""

    game: str
    out: str | None = None
    steps: int | None = None
    time_limit: float | None = None
    seed: int = 0
    config: object = None  # a kibitz.solvers.train.TrainConfig (default: its defaults, the game's output)
    probe_every: int = 100
    probe_nodes: int = DEFAULT_PROBE_NODES
    resume: bool = False
    checkpoint_every: float = 60.0
    progress: bool = False

    def __post_init__(self):
        from kibitz.solvers.train import TrainConfig

        if self.config is None:
            object.__setattr__(self, "config", TrainConfig(output=None))
        check_run_fields(self, (("--steps", self.steps, 1), ("--seed", self.seed, 0),
                                ("--probe-every", self.probe_every, 0), ("--probe-nodes", self.probe_nodes, 1)))

    @property
    def step_limit(self) -> float:
        if self.steps is not None:
            return self.steps
        return math.inf if self.time_limit is not None else DEFAULT_STEPS


def output_kind(game, encoding: str, output: str | None) -> str:
    """Checks that ``game`` can be learnt from ``encoding`` and returns the
    output kind: ``output``, or by default factored for an encoding other
    than the information-state tensor in a game with action factors, else
    dense. :class:`ConfigError` naming GAME, --encoding or --output."""
    from kibitz.games import check_encoding, output_kinds
    from kibitz.solvers import network
    from kibitz.solvers import train as train_mod

    try:
        train_mod.check_trainable(game)
    except ValueError as e:
        raise ConfigError(str(e), "GAME") from None
    try:
        check_encoding(game, encoding)
    except ValueError as e:
        raise ConfigError(str(e), "'--encoding'") from None
    if output is None:
        output = "factored" if encoding != network.ENCODING and "factored" in output_kinds(game) else "dense"
    if output not in output_kinds(game):
        raise ConfigError(f"{game.get_type().short_name} has no action factors; allowed: "
                               f"{', '.join(output_kinds(game))}", "'--output'")
    return output


@dataclasses.dataclass
class TrainResult:
    """What a run produced: the trainer (its network's parameters:
    ``trainer.policy_params()``), why it stopped and the last probe."""

    run: TrainRun
    game: object
    trainer: object
    stopped: str
    seconds: float
    wall: float
    measure: tuple  # ("NashConv", value) or ("vs random", mean return)
    uniform_nash_conv: float | None

    def lines(self) -> list[str]:
        """The summary ``kibitz train`` prints."""
        run, c, t = self.run, self.run.config, self.trainer
        rate = f" ({t.iteration / self.seconds:,.1f} steps/s)" if t.iteration and self.seconds > 0 else ""
        lines = [f"game:        {self.game}",
                 f"encoding:    {c.encoding} input, {c.output} output"
                 + (f" ({t.spec.factors} factor logits)" if c.output == "factored" else ""),
                 f"method:      mmd (hidden {','.join(map(str, c.hidden))}, batch {c.batch}, lr {c.lr:g}, "
                 f"critic lr {c.critic_lr:g}, alpha {c.alpha:g}, magnet every {c.magnet_every or 'never'}, "
                 f"seed {run.seed})"]
        if c.opponent:
            lines.append(f"opponent:    {c.opponent} in {c.opponent_share:.0%} of the episodes"
                         + (f", imitated in the first {c.imitation_steps:,} steps (lr {c.imitation_lr or c.lr:g})"
                            if c.imitation_steps else ""))
        if c.explore:
            lines.append(f"exploration: {c.explore:.0%} of the network's moves in training are uniform")
        lines += [f"steps:       {t.iteration:,} ({self.stopped})",
                  f"seconds:     {self.seconds:.2f} training, all runs{rate}; this run's wall time {self.wall:.2f} "
                  "(strength probes included)"]
        if math.isnan(t.last['policy_loss']):
            lines.append("loss:        - (no step in this run)")
        else:
            lines.append(f"loss:        policy {t.last['policy_loss']:.4g}, critic {t.last['critic_loss']:.4g}")
        name, value = self.measure
        if name == "NashConv":
            lines.append(f"NashConv:    {value:.6g} (uniform policy {self.uniform_nash_conv:.6g})")
        else:
            lines.append(f"vs random:   mean return {value:+.4g} over {10 * self.game.num_players()} games "
                         f"(tree over {run.probe_nodes:,} nodes: no exact NashConv)")
        lines.append(f"network:     {run.out} ({t.spec.input_size:,} inputs, {t.spec.num_actions:,} actions)")
        return lines


def _start(game, run: TrainRun, opponent: Callable | None):
    """The trainer and the probe (None: the tree is over ``probe_nodes``)."""
    from kibitz.solvers import driver
    from kibitz.solvers import train as train_mod
    from kibitz.solvers import tree as tree_mod

    # Ctrl-C while JAX starts would land in its callbacks, which drop it:
    # it is held as a flag until the trainer and the probe are made
    with driver.stop_on_signals() as early:
        trainer = train_mod.MMDTrainer(game, run.config, seed=run.seed, opponent=opponent)
        try:
            tree = tree_mod.compile_tree(game, max_nodes=run.probe_nodes)
            probe = train_mod.TreeProbe(game, tree, trainer.spec)
        except (tree_mod.TreeTooLarge, ValueError):
            probe = None
    if early["signal"] is not None:
        raise SolveStopped("\ninterrupted while starting: nothing was trained or written",
                           130 if early["signal"] == signal.SIGINT else 143)
    return trainer, probe


def train(run: TrainRun, *, log: Callable[[str], None] = quiet, opponent: Callable | None = None) -> TrainResult:
    """Runs ``run``; ``opponent(game, seat, seed)`` makes the agent of
    ``run.config.opponent`` (the agent layer passes it). The network is
    written to ``run.out`` at the end, and when a signal or a failure stops
    the run after a step (its checkpoint beside it). Raises
    :class:`ConfigError`, :class:`SolveFailed`, :class:`SolveStopped`."""
    from kibitz.games import GameStringError, load_game
    from kibitz.solvers import driver, network
    from kibitz.solvers import train as train_mod

    try:
        game = load_game(run.game)
    except GameStringError as e:
        raise ConfigError(str(e), "GAME") from None
    output = output_kind(game, run.config.encoding, run.config.output)
    run = dataclasses.replace(run, config=dataclasses.replace(run.config, output=output))
    trainer, probe = _start(game, run, opponent)

    def measure(params):
        if probe is not None:
            return "NashConv", probe.nash_conv(params)
        return "vs random", train_mod.mean_return_against_random(game, params, games=10, seed=run.seed,
                                                                 spec=trainer.spec)

    shown = {}

    def postfix(t):
        if run.probe_every and t.iteration % run.probe_every == 0:
            name, value = measure(t.policy_params())
            shown[name] = f"{value:.3g}"
        return {"loss": f"{t.last['policy_loss'] + t.last['critic_loss']:.3g}", **shown}

    meta = driver.checkpoint_meta(str(game), "mmd", {**run.config.as_dict(), "seed": run.seed})
    t0 = time.perf_counter()
    try:
        reason, seconds, _ = drive(trainer, meta, run.out, run.resume, log, iterations=run.step_limit,
                                   time_limit=run.time_limit, eval_every=0, checkpoint_every=run.checkpoint_every,
                                   progress=run.progress, postfix=postfix, desc="train", unit="step")
    except (SolveStopped, SolveFailed):  # the network so far is kept
        if trainer.iteration and run.out is not None:
            network.save(run.out, trainer.spec, trainer.policy_params())
            log(f"the network after step {trainer.iteration:,} is in {run.out}")
        raise
    params = trainer.policy_params()
    if run.out is not None:
        network.save(run.out, trainer.spec, params)
    return TrainResult(run, game, trainer, driver.STOPPED[reason], seconds, time.perf_counter() - t0,
                       measure(params), probe.uniform_nash_conv() if probe is not None else None)
