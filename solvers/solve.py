"""Solving a game: CFR on its compiled tree, or MCCFR over its states.

    from kibitz.solvers.solve import SolveConfig, solve
    result = solve(SolveConfig("kuhn_poker", algorithm="cfr+", iterations=1000, out="kuhn.json"))
    print(result.nash_conv)

One run is one :class:`SolveConfig`: frozen, and checked when it is made
(:class:`ConfigError` names the option at fault and what it allows).
``kibitz solve`` builds it from its options and prints :meth:`SolveResult.lines`;
``kibitz.solve`` builds it from keyword arguments. What the run writes:
the average policy in kibitz's policy-file format at ``out``
(``docs/formats/policy-file.md``) and a checkpoint ``OUT.ckpt.npz`` every
``checkpoint_every`` seconds, at the end and when the run is interrupted
(Ctrl-C or SIGTERM: :class:`SolveStopped`), which ``resume`` continues from,
ending with exactly the policy an uninterrupted run would have produced.
Without ``out`` nothing is written and the result carries the policy.

A one-player game has no opponent to regret against: its best response to
nothing is the optimal policy, computed exactly.
"""

from __future__ import annotations

import dataclasses
import math
import signal
import time
from pathlib import Path
from typing import Callable

#: iterations when neither ``iterations``, ``time_limit`` nor ``target_nashconv`` bounds a run
DEFAULT_ITERATIONS = 1000
#: NashConv evaluations in a run without an iteration limit: every this many
UNLIMITED_EVAL_EVERY = 100
#: MCCFR's memory limit at most, when ``max_memory`` is not given (bytes)
DEFAULT_MAX_MEMORY = 4 * 2**30
#: the most MCCFR actors of one run
MAX_ACTORS = 256
#: the algorithms of :func:`solve`
ALGORITHMS = ("cfr", "cfr+", "lcfr", "dcfr", "mccfr-es", "mccfr-os")
#: MCCFR's options and their defaults (a CFR run refuses any other value)
_MCCFR_DEFAULTS = {"seed": 0, "epsilon": 0.6, "fallback": "uniform", "max_memory": None}

#: what can be solved, said when a game is refused
SOLVABLE = ("kibitz solve needs a sequential game with information-state strings: a kibitz game "
            "(`kibitz games` names a small configuration of each), or e.g. kuhn_poker, leduc_poker, "
            "turn_based_simultaneous_game(game=goofspiel(num_cards=3))")


class ConfigError(ValueError):
    """A setting that cannot run; ``param`` names the option at fault (None:
    a combination of options)."""

    def __init__(self, message: str, param: str | None = None):
        super().__init__(message)
        self.param = param


class SolveFailed(RuntimeError):
    """A run that could not go on (a tree over its budget, out of memory, a
    checkpoint that cannot be written or read); the message says what is kept."""


class SolveStopped(Exception):
    """A run stopped by a signal; its checkpoint is written (the message says
    where). ``code`` is the exit status a command gives: 130 (SIGINT), 143 (SIGTERM)."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


def check_run_fields(run, lowest) -> None:
    """The checks every resumable run shares: each ``(option, value,
    lowest)`` of ``lowest`` at least its lowest (None: not given), a
    positive ``time_limit``, and ``resume`` only with ``out``."""
    for name, value, low in lowest:
        if value is not None and value < low:
            raise ConfigError(f"{value}: at least {low}", name)
    if run.time_limit is not None and not run.time_limit > 0:
        raise ConfigError(f"{run.time_limit}: a duration must be more than 0", "--time")
    if run.resume and run.out is None:
        raise ConfigError("--resume continues the run at --out: give --out", "--resume")


@dataclasses.dataclass(frozen=True)
class SolveConfig:
    """One solve run; every field is an option of ``kibitz solve``
    (``time_limit`` in seconds, ``max_memory`` in bytes)."""

    game: str
    algorithm: str = "cfr+"
    iterations: int | None = None
    time_limit: float | None = None
    target_nashconv: float | None = None
    eval_every: int | None = None
    out: str | None = None
    resume: bool = False
    checkpoint_every: float = 60.0
    simultaneous: bool = False
    alpha: float | None = None
    beta: float | None = None
    gamma: float | None = None
    max_nodes: int | None = None
    use_cache: bool = True
    threads: int = 1
    progress: bool = False
    seed: int = 0
    epsilon: float = 0.6
    max_memory: int | None = None
    fallback: str = "uniform"
    ray: bool = False
    ray_address: str | None = None
    workers: int = 1
    batch: int | None = None

    def __post_init__(self):
        self._check()

    @property
    def mccfr(self) -> bool:
        return self.algorithm.startswith("mccfr")

    def _check(self) -> None:
        if self.algorithm not in ALGORITHMS:
            raise ConfigError(f"{self.algorithm!r}; allowed: {', '.join(ALGORITHMS)}", "--algorithm")
        check_run_fields(self, (("--iterations", self.iterations, 1), ("--threads", self.threads, 1),
                                ("--workers", self.workers, 1), ("--batch", self.batch, 1),
                                ("--max-nodes", self.max_nodes, 1), ("--eval-every", self.eval_every, 0)))
        ray = self.ray or self.ray_address is not None
        if not self.mccfr and (ray or self.batch is not None):
            raise ConfigError("--ray and --batch run MCCFR on Ray (-a mccfr-es or mccfr-os)")
        if not self.mccfr and self.workers > 2:
            raise ConfigError(f"{self.workers}: CFR's tree compiler walks with 1 or 2 processes; allowed: "
                                   "1, 2 (more are MCCFR's Ray actors: -a mccfr-es --ray)", "--workers")
        if self.workers > MAX_ACTORS:
            raise ConfigError(f"{self.workers}: at most {MAX_ACTORS} actors", "--workers")
        if self.mccfr:
            self._check_mccfr(ray)
        else:
            self._check_cfr()

    def _check_mccfr(self, ray: bool) -> None:
        if not ray and (self.workers != 1 or self.batch is not None):
            raise ConfigError("--workers and --batch are the Ray actors of MCCFR: give --ray too")
        cfr_only = [name for name, value in (
            ("--target-nashconv", self.target_nashconv), ("--eval-every", self.eval_every),
            ("--simultaneous", self.simultaneous or None), ("--alpha", self.alpha), ("--beta", self.beta),
            ("--gamma", self.gamma), ("--threads", self.threads if self.threads != 1 else None))
            if value is not None]
        if cfr_only:
            raise ConfigError(f"{', '.join(cfr_only)}: CFR options, not used by {self.algorithm}")
        if self.max_memory is not None and ray:
            raise ConfigError("--max-memory bounds the MCCFR of this process, not Ray's actors "
                                   "(give one of --max-memory and --ray)")
        if self.algorithm == "mccfr-es" and self.epsilon != 0.6:
            raise ConfigError("--epsilon is the exploration of outcome sampling (mccfr-os), "
                                   "not used by mccfr-es")
        if not 0 < self.epsilon <= 1:
            raise ConfigError(f"{self.epsilon}: allowed: more than 0, at most 1", "--epsilon")

    def _check_cfr(self) -> None:
        if any(getattr(self, k) != v for k, v in _MCCFR_DEFAULTS.items()):
            raise ConfigError("--seed, --epsilon, --max-memory and --fallback are MCCFR options "
                                   "(--algorithm mccfr-es or mccfr-os)")
        if self.threads > 2:
            raise ConfigError(f"{self.threads}: allowed: 1, 2", "--threads")
        if self.simultaneous and self.threads > 1:
            raise ConfigError("--threads 2 runs alternating updates only (not --simultaneous)")
        self.cfr_config()  # the variant's parameters

    def cfr_config(self):
        """The :class:`kibitz.solvers.cfr.CFRConfig` of a CFR run."""
        from kibitz.solvers import cfr as cfr_mod
        try:
            return cfr_mod.make_config(self.algorithm, alternating_updates=not self.simultaneous,
                                       alpha=self.alpha, beta=self.beta, gamma=self.gamma)
        except ValueError as e:
            raise ConfigError(str(e)) from None

    @property
    def iteration_limit(self) -> float:
        """The iterations to run: ``iterations``, else no limit when the time
        or the NashConv target bounds the run, else :data:`DEFAULT_ITERATIONS`."""
        if self.iterations is not None:
            return self.iterations
        return math.inf if self.time_limit is not None or self.target_nashconv is not None else DEFAULT_ITERATIONS


@dataclasses.dataclass
class SolveResult:
    """What a run produced: the policy document written to ``out`` (or
    that would be), the compiled tree (None for MCCFR on a game over the
    evaluation budget) and the figures of the summary."""

    config: SolveConfig
    game: object
    algorithm: str
    iterations: int
    stopped: str
    seconds: float
    document: dict
    tree: object = None
    policy: object = None
    notes: list = dataclasses.field(default_factory=list)
    extra: dict = dataclasses.field(default_factory=dict)

    @property
    def nash_conv(self) -> float | None:
        return self.document.get("nash_conv")

    @property
    def expected_returns(self):
        return self.document.get("expected_returns")

    def lines(self) -> list[str]:
        """The summary ``kibitz solve`` prints."""
        return _mccfr_lines(self) if self.config.mccfr else _cfr_lines(self)


def _cfr_lines(r: SolveResult) -> list[str]:
    rate = f" ({r.iterations / r.seconds:,.0f} it/s)" if r.iterations and r.seconds > 0 else ""
    nc, n = r.nash_conv, r.tree.num_players
    lines = [f"game:        {r.game}", f"tree:        {r.tree.summary()}", f"algorithm:   {r.algorithm}",
             f"iterations:  {r.iterations:,} ({r.stopped})", f"seconds:     {r.seconds:.2f}{rate}",
             f"NashConv:    {nc:.6g} (exploitability {nc / n:.6g})",
             "returns:     " + "  ".join(f"p{i} {v:+.6g}" for i, v in enumerate(r.expected_returns)),
             f"policy:      {r.config.out}"]
    if "optimal_value" in r.extra:
        lines.append(f"optimal expected value: {r.extra['optimal_value']:.6g}")
    return lines


def _mccfr_lines(r: SolveResult) -> list[str]:
    c, doc = r.config, r.document
    rate = f" ({r.iterations / r.seconds:,.0f} it/s)" if r.iterations and r.seconds > 0 else ""
    lines = [f"game:        {r.game}",
             f"algorithm:   {r.algorithm} (seed {c.seed}{', epsilon %g' % c.epsilon if r.algorithm == 'mccfr-os' else ''})",
             f"iterations:  {r.iterations:,} ({r.stopped})", f"seconds:     {r.seconds:.2f}{rate}"]
    if "ray" in r.extra:
        ray = r.extra["ray"]
        lines.append(f"ray:         {ray['actors']} actor(s), {ray['batch']} iterations each per batch; "
                     f"merges and round trips {100 * ray['overhead_share']:.1f}% of the batch time")
    cov = doc["coverage"]
    lines.append(f"infostates:  {cov['visited']:,} visited" + (
        (f", {cov['filled_with_fallback']:,} unvisited written as uniform" if c.fallback == "uniform"
         else f", {cov['filled_with_fallback']:,} unvisited forced moves written with their one action")
        if cov["filled_with_fallback"] else ""))
    lines.append(f"unseen:      {c.fallback} (fallback recorded in the file)")
    if doc["nash_conv"] is not None:
        n = len(doc["expected_returns"])
        lines.append(f"NashConv:    {doc['nash_conv']:.6g} (exploitability {doc['nash_conv'] / n:.6g})")
        lines.append("returns:     " + "  ".join(f"p{i} {v:+.6g}" for i, v in enumerate(doc["expected_returns"])))
    elif r.tree is not None:
        lines.append(f"NashConv:    not computed (the fallback {c.fallback} plays the unseen information states: "
                     "the tree's evaluation cannot run an agent)")
    else:
        lines.append(f"NashConv:    not computed (more than {r.extra['budget']:,} nodes; "
                     "--max-nodes raises the budget)")
    lines.append(f"policy:      {c.out}")
    return lines


def default_max_memory() -> int:
    """MCCFR's memory limit when ``max_memory`` is not given: half the
    machine's memory, at most :data:`DEFAULT_MAX_MEMORY`."""
    from kibitz.solvers.driver import physical_memory

    machine = physical_memory()
    return DEFAULT_MAX_MEMORY if machine is None else min(DEFAULT_MAX_MEMORY, machine // 2)


def _gib(size: int) -> str:
    return f"{size / 2**30:.3g} GiB"


def quiet(message: str) -> None:
    """The default ``log`` of the runs: says nothing."""


def solve(config: SolveConfig, *, log: Callable[[str], None] = quiet,
          check_fallback: Callable | None = None) -> SolveResult:
    """Runs ``config``; ``log`` receives the progress lines (compiling,
    resuming, estimates, why a run stopped early). ``check_fallback(spec,
    game, seed)`` checks MCCFR's fallback agent (it raises ValueError when
    it cannot play; the agent layer passes its ``make_agent``).
    Raises :class:`ConfigError`, :class:`SolveFailed`, :class:`SolveStopped`."""
    from kibitz.games import GameStringError, load_game

    try:
        game = load_game(config.game)
    except GameStringError as e:
        raise ConfigError(str(e), "GAME") from None
    if config.mccfr:
        return _solve_mccfr(game, config, log, check_fallback)
    return _solve_cfr(game, config, log)


def _compile(game, config: SolveConfig, log):
    from kibitz.solvers import tree as tree_mod

    log(f"compiling {game} ...")
    try:
        return tree_mod.compile_tree(game, max_nodes=config.max_nodes or tree_mod.DEFAULT_MAX_NODES,
                                     use_cache=config.use_cache, progress=lambda n: log(f"  {n:,} nodes ..."),
                                     workers=config.workers)
    except tree_mod.TreeTooLarge as e:
        raise SolveFailed(str(e)) from None
    except ValueError as e:  # a game the compiler cannot walk
        raise ConfigError(f"{e}. {SOLVABLE}", "GAME") from None
    except KeyboardInterrupt:
        raise SolveStopped("\ninterrupted while compiling the tree: nothing was solved or written", 130) from None


def _solve_cfr(game, config: SolveConfig, log) -> SolveResult:
    from kibitz.solvers import _kernels, driver, policy_file
    from kibitz.solvers import cfr as cfr_mod
    from kibitz.solvers import evaluate as ev

    cfr_config = config.cfr_config()
    t0 = time.perf_counter()
    tree = _compile(game, config, log)
    log(f"tree: {tree.summary()} ({time.perf_counter() - t0:.2f} s)")
    if tree.num_players == 1:
        return _solve_one_player(game, config, tree, t0)
    _kernels.warmup(threads=config.threads > 1)  # load the compiled loops before the clock starts
    solver = cfr_mod.CFRSolver(tree, cfr_config, threads=config.threads)
    meta = driver.checkpoint_meta(tree.game_string, config.algorithm, cfr_config.as_dict(),
                                  nodes=int(tree.num_nodes), slots=int(tree.num_slots))
    iterations = config.iteration_limit
    eval_every = config.eval_every
    if eval_every is None:
        eval_every = UNLIMITED_EVAL_EVERY if iterations == math.inf else max(1, iterations // 20)
    reason, seconds, _ = drive(solver, meta, config.out, config.resume, log, iterations=iterations,
                               time_limit=config.time_limit, target_nashconv=config.target_nashconv,
                               eval_every=eval_every, checkpoint_every=config.checkpoint_every,
                               progress=config.progress, evaluate=lambda s: ev.nash_conv(tree, s.average_policy()))
    avg = solver.average_policy()
    nc, _, on = ev.nash_conv(tree, avg, details=True)
    doc = policy_file.policy_document(
        tree, avg, algorithm=config.algorithm, settings=cfr_config.as_dict(), iterations=solver.iteration,
        seconds=seconds, nash_conv=nc, expected_returns=on)
    if config.out is not None:
        policy_file.write_policy_file(Path(config.out), doc)
    return SolveResult(config, game, config.algorithm, solver.iteration, driver.STOPPED[reason], seconds, doc,
                       tree=tree, policy=avg)


def _solve_one_player(game, config: SolveConfig, tree, t0) -> SolveResult:
    from kibitz.solvers import evaluate as ev
    from kibitz.solvers import policy_file

    value, choice = ev.best_response(tree, tree.uniform_policy(), 0)
    pol = ev.best_response_policy(tree, choice)
    doc = policy_file.policy_document(
        tree, pol, algorithm="best_response", settings={}, iterations=0,
        seconds=time.perf_counter() - t0, nash_conv=0.0, expected_returns=[value],
        extra={"optimal_value": value})
    if config.out is not None:
        policy_file.write_policy_file(Path(config.out), doc)
    return SolveResult(config, game, "best response (one-player game: the optimal policy)", 0, "solved exactly",
                       time.perf_counter() - t0, doc, tree=tree, policy=pol, extra={"optimal_value": value})


def drive(solver, meta, out, resume: bool, log: Callable[[str], None] = quiet, **loop):
    """Resumes ``solver`` from the checkpoint beside ``out`` if asked, runs
    the solve loop (``loop``: the options of :func:`solvers.driver.run_solver`)
    with checkpoints beside ``out`` (none without ``out``). Returns
    ``(reason, seconds, last_nash_conv)``; raises :class:`SolveStopped` when
    a signal stops it (the checkpoint written), :class:`SolveFailed` when
    memory or the disk gives out, :class:`ConfigError` for a checkpoint
    that does not fit."""
    from kibitz.solvers import driver

    ckpt = driver.checkpoint_path(out) if out is not None else None
    unit = "step" if loop.get("unit") == "step" else "iteration"
    seconds_before = 0.0
    if resume:
        seconds_before = _resume(solver, meta, ckpt, unit, loop.get("iterations"), log)
    with driver.stop_on_signals() as flag:
        t0 = time.perf_counter()
        try:
            result = driver.run_solver(solver, checkpoint=ckpt, meta=meta, seconds_before=seconds_before,
                                       stop_flag=flag, **loop)
        except MemoryError:
            # MCCFR undoes the iteration in progress (solvers/mccfr.py), so what
            # is kept is the state after the last whole one
            kept = "no checkpoint could be written either"
            if ckpt is not None:
                try:
                    driver.save_checkpoint(ckpt, solver, meta, seconds_before + time.perf_counter() - t0)
                    kept = f"checkpoint written to {ckpt} (continue with --resume and a lower --max-memory)"
                except (MemoryError, OSError):
                    pass
            raise SolveFailed(f"out of memory at {unit} {solver.iteration:,}; {kept}") from None
        except OSError as e:  # a checkpoint that cannot be written (disk full, permissions)
            raise SolveFailed(f"cannot write the checkpoint {ckpt}: {e.strerror or e}; the run stopped at "
                              f"{unit} {solver.iteration:,}") from None
    if result[0] == "interrupted":
        where = f"checkpoint written to {ckpt}; continue with --resume" if ckpt is not None else "nothing written"
        raise SolveStopped(f"interrupted at {unit} {solver.iteration:,}; {where}",
                           130 if flag["signal"] == signal.SIGINT else 143)
    return result


def _resume(solver, meta, ckpt, unit: str, wanted, log) -> float:
    from kibitz.solvers import driver

    if ckpt is None or not ckpt.exists():
        raise ConfigError(f"--resume: no checkpoint at {ckpt}; run without --resume")
    try:
        seconds_before = driver.load_checkpoint(ckpt, solver, meta)
    except driver.CheckpointMismatch as e:
        raise ConfigError(f"{e}; run without --resume to start afresh") from None
    except driver.CheckpointError as e:
        raise SolveFailed(f"--resume: {e}") from None
    log(f"resumed from {ckpt} at {unit} {solver.iteration:,}")
    if wanted is not None and math.isfinite(wanted) and solver.iteration >= wanted:
        log(f"the checkpoint is already at {unit} {solver.iteration:,}, the count asked for is "
            f"{int(wanted):,}: no {unit} is run (give a larger count to continue)")
    return seconds_before


# ---------------------------------------------------------------- MCCFR
def _solve_mccfr(game, config: SolveConfig, log, check_fallback) -> SolveResult:
    """MCCFR (solvers/mccfr.py) in the solve driver, then the policy file.
    With ``ray`` it runs on Ray actors (solvers/mccfr_ray.py).

    The game is compiled only to evaluate and complete the policy at the end
    (when it has at most ``max_nodes`` nodes, default 20,000: a larger
    budget costs a walk of that many nodes even when it fails); MCCFR
    itself walks game states."""
    from kibitz.solvers import driver, mccfr, policy_file

    if config.fallback != "uniform" and check_fallback is not None:
        try:
            check_fallback(config.fallback, game, config.seed)
        except ValueError as e:
            raise ConfigError(str(e), "--fallback") from None
    settings = {"seed": config.seed, "epsilon": config.epsilon, "fallback": config.fallback}
    extra, notes = {}, []
    if config.ray or config.ray_address is not None:
        reason, seconds, solver = _drive_mccfr_ray(game, config, settings, log)
        extra["ray"] = {"actors": solver.actors, "batch": solver.batch, "overhead_share": solver.overhead_share}
    else:
        reason, seconds, solver = _drive_mccfr_local(game, config, settings, log)
    budget = config.max_nodes or mccfr.EVAL_MAX_NODES
    extra["budget"] = budget
    tree = _evaluation_tree(game, config, budget)
    doc = mccfr.policy_document(solver, algorithm=config.algorithm, seconds=seconds, tree=tree)
    if config.out is not None:
        policy_file.write_policy_file(Path(config.out), doc)
    return SolveResult(config, game, config.algorithm, solver.iteration, driver.STOPPED[reason], seconds, doc,
                       tree=tree, notes=notes, extra=extra)


def _evaluation_tree(game, config: SolveConfig, budget: int):
    """The compiled tree that evaluates MCCFR's policy, or None: a tree
    estimated at ten times the budget is not walked only to fail."""
    from kibitz.solvers import mccfr
    from kibitz.solvers import tree as tree_mod

    if mccfr.estimate_tree_nodes(game, config.seed, give_up_above=10 * budget) > 10 * budget:
        return None
    try:
        return tree_mod.compile_tree(game, max_nodes=budget, use_cache=config.use_cache)
    except tree_mod.TreeTooLarge:
        return None


def _drive_mccfr_local(game, config: SolveConfig, settings: dict, log):
    from kibitz.solvers import mccfr, mccfr_compiled

    es_states = _refuse_unaffordable_es(game, config.seed, log) if config.algorithm == "mccfr-es" else None
    max_memory = default_max_memory() if config.max_memory is None else config.max_memory
    try:
        solver, backend = mccfr.make_solver(game, config.seed, config.algorithm, epsilon=config.epsilon,
                                            fallback=config.fallback,
                                            max_bytes=mccfr_compiled.TABLE_SHARE * max_memory, es_states=es_states)
    except ValueError as e:
        raise ConfigError(f"{e}. {SOLVABLE}", "GAME") from None
    if backend == "compiled":  # its checkpoints are its own (the Python solver's resume elsewhere)
        settings["backend"] = backend
    reason, seconds = _drive_mccfr(solver, game, config, settings, log, max_memory=max_memory)
    if solver.abandoned_decisions and not solver.finished:
        log(f"no external-sampling iteration finished: the one in progress had walked "
            f"{solver.abandoned_decisions:,} decision nodes when it was stopped, and was undone; "
            "-a mccfr-os samples one path per player")
    if reason == "memory" and backend == "compiled":
        log(f"stopped at the memory limit: the tables ({_gib(solver.table_bytes())}) and the "
            f"writing of their policy file (about {_gib(solver.finish_bytes())}) reached "
            f"{mccfr_compiled.TABLE_SHARE:g} of --max-memory {_gib(max_memory)} with "
            f"{solver.num_infostates:,} information states; the policy so far is written "
            f"(--resume with a larger --max-memory continues)")
    elif reason == "memory":
        log(f"stopped at the memory limit: the process reached --max-memory {_gib(max_memory)} with "
            f"{len(solver.table):,} information states in the tables; the policy so far is written "
            f"(--resume with a larger --max-memory continues)")
    return reason, seconds, solver


def _refuse_unaffordable_es(game, seed: int, log) -> float:
    """External sampling walks every move of the traverser: no run, when one
    iteration would walk more than ``mccfr.ES_MAX_STATES`` decision nodes
    (estimated on sampled paths before anything starts)."""
    from kibitz.solvers import mccfr

    log("mccfr-es: estimating the cost of an iteration ...")
    states = mccfr.estimate_es_states(game, seed, give_up_above=100 * mccfr.ES_MAX_STATES)
    if states > mccfr.ES_MAX_STATES:
        raise SolveFailed(
            f"mccfr-es cannot afford {game}: one external-sampling iteration walks about {states:.2g} "
            f"decision nodes (estimated on sampled paths; the limit is {mccfr.ES_MAX_STATES:,}); use "
            "-a mccfr-os (one sampled path per player), or a smaller configuration (`kibitz games`)")
    log(f"mccfr-es: about {states:,.0f} decision nodes an iteration (estimated on sampled paths)")
    return states


def _drive_mccfr(solver, game, config: SolveConfig, settings: dict, log, max_memory=None):
    from kibitz.solvers import driver

    meta = driver.checkpoint_meta(str(game), config.algorithm, settings)
    reason, seconds, _ = drive(solver, meta, config.out, config.resume, log, iterations=config.iteration_limit,
                               time_limit=config.time_limit, eval_every=0,
                               checkpoint_every=config.checkpoint_every, progress=config.progress,
                               max_memory=max_memory, finish=getattr(type(solver), "finish_seconds", None))
    return reason, seconds


def _drive_mccfr_ray(game, config: SolveConfig, settings: dict, log):
    """MCCFR on Ray actors in the solve driver; (reason, seconds, solver)."""
    from kibitz.solvers import mccfr
    from kibitz.solvers.mccfr_ray import DEFAULT_BATCH, RayMCCFR
    from kibitz.solvers.ray_cluster import RayUnavailable, session

    try:
        with session(config.ray_address) as ray:
            try:
                solver = RayMCCFR(game, seed=config.seed, actors=config.workers,
                                  batch=config.batch or DEFAULT_BATCH, sampling=mccfr.ALGORITHMS[config.algorithm],
                                  epsilon=config.epsilon, fallback=config.fallback)
            except ValueError as e:
                raise ConfigError(str(e)) from None
            try:
                reason, seconds = _drive_mccfr(solver, game, config,
                                               {**settings, "actors": solver.actors, "batch": solver.batch}, log)
            except ray.exceptions.RayActorError as e:
                raise SolveFailed(f"a Ray actor died ({type(e).__name__}); the last checkpoint "
                                  f"is kept: continue with --resume") from None
            finally:
                solver.close()
    except RayUnavailable as e:
        raise ConfigError(str(e)) from None
    return reason, seconds, solver
