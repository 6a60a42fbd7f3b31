"""``kibitz solve``: exact CFR on a compiled game tree, with checkpoints.

    kibitz solve GAME --algorithm {cfr,cfr+,lcfr,dcfr} --iterations N
                 [--time LIMIT] [--target-nashconv X] [--eval-every K]
                 --out FILE [--resume]

The game is compiled once (and cached, see ``solvers.tree``), then the
solver iterates on arrays. A progress bar shows iterations/s and the latest
NashConv. A checkpoint (``FILE.ckpt.npz``) is written atomically every
``--checkpoint-every`` seconds, at the end, and when the run is interrupted
(Ctrl-C or SIGTERM); ``--resume`` continues from it and ends with exactly the
policy an uninterrupted run would have produced. The average policy is
written to ``FILE`` in kibitz's policy-file format
(``docs/formats/policy-file.md``).

A one-player game has no opponent to regret against: its best response to
nothing is the optimal policy, which ``solve`` computes exactly and reports
with its expected value.
"""

from __future__ import annotations

import math
import os
import re
import signal
import time
from pathlib import Path

import click
import numpy as np

from kibitz.commands._paths import (POLICY_KINDS, NumberRange, check_ray, ray_options, refuse_to_replace_run,
                                    run_options, writable_file)
from kibitz.games import GameStringError, load_game
from kibitz.solvers.mccfr_ray import DEFAULT_BATCH

#: the most MCCFR actors of one run
MAX_ACTORS = 256


#: MCCFR's memory limit at most, when --max-memory is not given (bytes)
DEFAULT_MAX_MEMORY = 4 * 2**30

#: iterations when neither -n, --time nor --target-nashconv bounds a run
DEFAULT_ITERATIONS = 1000
#: NashConv evaluations in a run without an iteration limit: every this many
UNLIMITED_EVAL_EVERY = 100


#: what ``kibitz solve`` can solve, said when a game is refused
SOLVABLE = ("kibitz solve needs a sequential game with information-state strings: a kibitz game "
            "(`kibitz games` names a small configuration of each), or e.g. kuhn_poker, leduc_poker, "
            "turn_based_simultaneous_game(game=goofspiel(num_cards=3))")


def parse_size(text: str | None, param_hint: str = "--max-memory") -> int | None:
    """``"4G"``, ``"4GiB"``, ``"512M"``, ``"1.5g"``, ``"800000000"`` -> bytes
    (binary units: K, M, G, T are powers of 1024; more than 0)."""
    if text is None:
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(?:([kmgt])(?:i?b)?|b)?", text.strip().lower())
    if not m:
        raise click.BadParameter(f"{text!r} is not a size (e.g. 4G, 512M, 1.5GiB, or bytes)", param_hint=param_hint)
    size = float(m.group(1)) * 1024 ** (" kmgt".index(m.group(2)) if m.group(2) else 0)
    if size < 1:
        raise click.BadParameter(f"{text!r}: a size must be at least 1 byte", param_hint=param_hint)
    return int(size)


def default_max_memory() -> int:
    """MCCFR's memory limit when --max-memory is not given: half the
    machine's memory, at most :data:`DEFAULT_MAX_MEMORY`."""
    from kibitz.solvers.driver import physical_memory

    machine = physical_memory()
    return DEFAULT_MAX_MEMORY if machine is None else min(DEFAULT_MAX_MEMORY, machine // 2)


def _gib(size: int) -> str:
    return f"{size / 2**30:.3g} GiB"


def parse_duration(text: str | None) -> float | None:
    """``"90"``, ``"90s"``, ``"10m"``, ``"1.5h"``, ``"1h30m"`` -> seconds (more than 0)."""
    if text is None:
        return None
    t = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", t):
        seconds = float(t)
    else:
        parts = re.findall(r"(\d+(?:\.\d+)?)([hms])", t)
        if not parts or "".join(a + b for a, b in parts) != t:
            raise click.BadParameter(f"{text!r} is not a duration (e.g. 90, 90s, 10m, 1h30m)",
                                     param_hint="--time")
        scale = {"h": 3600.0, "m": 60.0, "s": 1.0}
        seconds = sum(float(a) * scale[b] for a, b in parts)
    if seconds <= 0:
        raise click.BadParameter(f"{text!r}: a duration must be more than 0", param_hint="--time")
    return seconds


@click.command()
@click.argument("game_string", metavar="GAME")
@click.option("--algorithm", "-a", type=click.Choice(["cfr", "cfr+", "lcfr", "dcfr", "mccfr-es", "mccfr-os"]),
              default="cfr+", show_default=True,
              help="CFR variant (docs/solvers/cfr.md), or Monte Carlo CFR with external or outcome "
                   "sampling over game states (docs/solvers/mccfr.md).")
@click.option("--iterations", "-n", type=click.IntRange(min=1), default=None,
              help="Total iterations (a resumed run counts those already done). Default: "
                   f"{DEFAULT_ITERATIONS}, or no limit when --time or --target-nashconv is given.")
@click.option("--time", "time_limit", metavar="LIMIT", default=None,
              help="Stop after this long (this run's wall time): 90, 90s, 10m, 1h30m. "
                   "Given alone, the run lasts this long.")
@click.option("--target-nashconv", type=NumberRange(min=0), default=None,
              help="Stop once an evaluation finds NashConv at or below this.")
@click.option("--eval-every", type=click.IntRange(min=0), default=None,
              help="Evaluate NashConv every K iterations (0: only at the end). "
                   f"Default: iterations/20, or every {UNLIMITED_EVAL_EVERY} without an "
                   "iteration limit.")
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False), callback=writable_file,
              help="Policy file to write (.json, or .json.gz for gzip), in an existing folder.")
@run_options("policy")
@click.option("--simultaneous", is_flag=True,
              help="Simultaneous instead of alternating updates.")
@click.option("--alpha", type=float, default=None, help="DCFR alpha (default 1.5).")
@click.option("--beta", type=float, default=None, help="DCFR beta (default 0).")
@click.option("--gamma", type=float, default=None, help="DCFR gamma (default 2).")
@click.option("--max-nodes", type=click.IntRange(min=1), default=None,
              help="Node budget of the tree compiler (default 20,000,000; mccfr-es/mccfr-os: 20,000, for "
                   "the NashConv after the run).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the compiled-tree cache.")
@click.option("--threads", type=click.IntRange(1, 2), default=1, show_default=True,
              help="CFR: cores the iterations use. 2 runs the compact layout (float32; the default from a "
                   "million nodes), deterministic and equal to one thread of it to about 1e-12; measured "
                   "1.3-1.9x one thread on trees of a million nodes or more, when the other core is free; "
                   "small trees lose (docs/solvers/cfr.md).")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Show the progress bar (only on a terminal).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="MCCFR: random seed.")
@click.option("--epsilon", type=NumberRange(0, 1, min_open=True), default=0.6, show_default=True,
              help="MCCFR outcome sampling: exploration of the updating player.")
@click.option("--max-memory", metavar="SIZE", default=None,
              help="MCCFR: stop (with the policy and a checkpoint written) once the process holds this "
                   "much memory: 4G, 512M, 1.5GiB. Default: half the machine's memory, at most 4 GiB.")
@click.option("--fallback", default="uniform", show_default=True,
              help="MCCFR: what the policy plays on information states it never visited: "
                   "uniform, or an agent spec (e.g. heuristic); recorded in the policy file.")
@ray_options("MCCFR: --workers K actors traverse in parallel, merged after each batch")
@click.option("--workers", type=click.IntRange(1, MAX_ACTORS), default=1, show_default=True,
              help="CFR: processes the tree compiler's direct walk of a kibitz game takes (1 or 2; "
                   "a game with compiled rules, as all four kibitz games are, is walked compiled, in one, "
                   "where its keys fit in int64); "
                   "MCCFR with --ray: K Ray actors (the same seed and K give the same policy).")
@click.option("--batch", type=click.IntRange(min=1), default=None,
              help=f"MCCFR with --ray: iterations per actor between merges (default {DEFAULT_BATCH}).")
def solve(game_string, algorithm, iterations, time_limit, target_nashconv, eval_every, out,
          resume, overwrite, checkpoint_every, simultaneous, alpha, beta, gamma, max_nodes, no_cache,
          threads, progress, seed, epsilon, max_memory, fallback, ray, ray_address, workers, batch):
    """Solve GAME with CFR on its compiled tree, or MCCFR over states, and save the average policy.

    \b
    Examples:
      kibitz solve kuhn_poker --iterations 1000 --out kuhn.json
      kibitz solve 'underdog(players=3,cards=5,bank=2)' -a dcfr --time 10m --out ud.json.gz
      kibitz solve leduc_poker --iterations 100000 --out leduc.json --resume
    """
    from kibitz.solvers import cfr as cfr_mod
    from kibitz.solvers import driver
    from kibitz.solvers import evaluate as ev
    from kibitz.solvers import policy_file, tree as tree_mod

    try:
        game = load_game(game_string)
    except GameStringError as e:
        raise click.BadParameter(str(e), param_hint="GAME") from None
    refuse_to_replace_run(out, POLICY_KINDS, resume=resume, overwrite=overwrite)
    limit = parse_duration(time_limit)
    if iterations is None:  # --time or --target-nashconv alone bound the run
        iterations = math.inf if limit is not None or target_nashconv is not None else DEFAULT_ITERATIONS
    ray = check_ray(ray, ray_address, workers, workers_meaning="actors")
    if not algorithm.startswith("mccfr") and (ray or batch is not None):
        raise click.UsageError("--ray and --batch run MCCFR on Ray (-a mccfr-es or mccfr-os)")
    if not algorithm.startswith("mccfr") and workers > 2:
        raise click.BadParameter(f"{workers}: CFR's tree compiler walks with 1 or 2 processes; allowed: 1, 2 "
                                 "(more are MCCFR's Ray actors: -a mccfr-es --ray)", param_hint="--workers")
    if algorithm.startswith("mccfr") and not ray and (workers != 1 or batch is not None):
        raise click.UsageError("--workers and --batch are the Ray actors of MCCFR: give --ray too")
    if algorithm.startswith("mccfr"):
        cfr_only = [name for name, value in (
            ("--target-nashconv", target_nashconv), ("--eval-every", eval_every),
            ("--simultaneous", simultaneous or None), ("--alpha", alpha), ("--beta", beta),
            ("--gamma", gamma), ("--threads", threads if threads != 1 else None))
            if value is not None]
        if cfr_only:
            raise click.UsageError(f"{', '.join(cfr_only)}: CFR options, not used by {algorithm}")
        max_memory = parse_size(max_memory)
        if max_memory is not None and ray:
            raise click.UsageError("--max-memory bounds the MCCFR of this process, not Ray's actors "
                                   "(give one of --max-memory and --ray)")
        _solve_mccfr(game, algorithm, iterations=iterations, time_limit=limit, out=out,
                     resume=resume, checkpoint_every=checkpoint_every, progress=progress,
                     seed=seed, epsilon=epsilon, fallback=fallback, max_nodes=max_nodes,
                     use_cache=not no_cache, max_memory=max_memory,
                     ray={"address": ray_address, "actors": workers, "batch": batch or DEFAULT_BATCH} if ray else None)
        return
    if seed != 0 or epsilon != 0.6 or fallback != "uniform" or max_memory is not None:
        raise click.UsageError("--seed, --epsilon, --max-memory and --fallback are MCCFR options "
                               "(--algorithm mccfr-es or mccfr-os)")
    if simultaneous and threads > 1:
        raise click.UsageError("--threads 2 runs alternating updates only (not --simultaneous)")
    try:
        config = cfr_mod.make_config(algorithm, alternating_updates=not simultaneous,
                                     alpha=alpha, beta=beta, gamma=gamma)
    except ValueError as e:
        raise click.UsageError(str(e)) from None

    click.echo(f"compiling {game} ...", err=True)
    t0 = time.perf_counter()

    def report(count):
        click.echo(f"  {count:,} nodes ...", err=True)

    try:
        tree = tree_mod.compile_tree(game, max_nodes=max_nodes or tree_mod.DEFAULT_MAX_NODES,
                                     use_cache=not no_cache, progress=report, workers=workers)
    except tree_mod.TreeTooLarge as e:
        raise click.ClickException(str(e)) from None
    except ValueError as e:  # a game the compiler cannot walk
        raise click.BadParameter(f"{e}. {SOLVABLE}", param_hint="GAME") from None
    except KeyboardInterrupt:
        click.echo("\ninterrupted while compiling the tree: nothing was solved or written", err=True)
        raise SystemExit(130) from None
    compile_s = time.perf_counter() - t0
    click.echo(f"tree: {tree.summary()} ({compile_s:.2f} s)", err=True)

    out = Path(out)
    n = tree.num_players
    if n == 1:
        value, choice = ev.best_response(tree, tree.uniform_policy(), 0)
        pol = ev.best_response_policy(tree, choice)
        doc = policy_file.policy_document(
            tree, pol, algorithm="best_response", settings={}, iterations=0,
            seconds=time.perf_counter() - t0, nash_conv=0.0, expected_returns=[value],
            extra={"optimal_value": value})
        policy_file.write_policy_file(out, doc)
        _summary(game, tree, "best response (one-player game: the optimal policy)", 0,
                 "solved exactly", time.perf_counter() - t0, 0.0, [value], out)
        click.echo(f"optimal expected value: {value:.6g}")
        return

    from kibitz.solvers import _kernels

    _kernels.warmup(threads=threads > 1)  # load the compiled loops before the clock starts
    solver = cfr_mod.CFRSolver(tree, config, threads=threads)
    meta = driver.checkpoint_meta(tree.game_string, algorithm, config.as_dict(),
                                  nodes=int(tree.num_nodes), slots=int(tree.num_slots))
    if eval_every is None:
        eval_every = UNLIMITED_EVAL_EVERY if iterations == math.inf else max(1, iterations // 20)

    def evaluate(s):
        return ev.nash_conv(tree, s.average_policy())

    reason, seconds, _ = _drive(solver, meta, out, resume, iterations=iterations, time_limit=limit,
                                target_nashconv=target_nashconv, eval_every=eval_every,
                                checkpoint_every=checkpoint_every, progress=progress,
                                evaluate=evaluate)
    avg = solver.average_policy()
    nc, _, on = ev.nash_conv(tree, avg, details=True)
    doc = policy_file.policy_document(
        tree, avg, algorithm=algorithm, settings=config.as_dict(), iterations=solver.iteration,
        seconds=seconds, nash_conv=nc, expected_returns=on)
    policy_file.write_policy_file(out, doc)
    _summary(game, tree, algorithm, solver.iteration, driver.STOPPED[reason], seconds, nc, on, out)


def _summary(game, tree, algorithm, iterations, stopped, seconds, nc, returns, out):
    rate = f" ({iterations / seconds:,.0f} it/s)" if iterations and seconds > 0 else ""
    click.echo(f"game:        {game}")
    click.echo(f"tree:        {tree.summary()}")
    click.echo(f"algorithm:   {algorithm}")
    click.echo(f"iterations:  {iterations:,} ({stopped})")
    click.echo(f"seconds:     {seconds:.2f}{rate}")
    click.echo(f"NashConv:    {nc:.6g} (exploitability {nc / tree.num_players:.6g})")
    click.echo("returns:     " + "  ".join(f"p{i} {v:+.6g}" for i, v in enumerate(returns)))
    click.echo(f"policy:      {out}")


def _drive(solver, meta, out, resume, **loop):
    """Resumes ``solver`` if asked, runs the solve loop (``loop``: the options
    of :func:`solvers.driver.run_solver`) with checkpoints beside ``out``, and
    exits with 130 (SIGINT) or 143 (SIGTERM) when interrupted. Returns
    ``(reason, seconds, last_nash_conv)``."""
    from kibitz.solvers import driver

    ckpt = driver.checkpoint_path(out)
    unit = "step" if loop.get("unit") == "step" else "iteration"
    seconds_before = 0.0
    if resume:
        if not ckpt.exists():
            raise click.UsageError(f"--resume: no checkpoint at {ckpt}; run without --resume")
        try:
            seconds_before = driver.load_checkpoint(ckpt, solver, meta)
        except driver.CheckpointMismatch as e:
            raise click.UsageError(f"{e}; run without --resume to start afresh") from None
        except driver.CheckpointError as e:
            raise click.ClickException(f"--resume: {e}") from None
        click.echo(f"resumed from {ckpt} at {unit} {solver.iteration:,}", err=True)
        wanted = loop.get("iterations")
        if wanted is not None and math.isfinite(wanted) and solver.iteration >= wanted:
            click.echo(f"the checkpoint is already at {unit} {solver.iteration:,}, the count asked for is "
                       f"{int(wanted):,}: no {unit} is run (give a larger count to continue)", err=True)
    with driver.stop_on_signals() as flag:
        t0 = time.perf_counter()
        try:
            result = driver.run_solver(solver, checkpoint=ckpt, meta=meta, seconds_before=seconds_before,
                                       stop_flag=flag, **loop)
        except MemoryError:
            # MCCFR undoes the iteration in progress (solvers/mccfr.py), so what
            # is kept is the state after the last whole one
            try:
                driver.save_checkpoint(ckpt, solver, meta, seconds_before + time.perf_counter() - t0)
                kept = f"checkpoint written to {ckpt} (continue with --resume and a lower --max-memory)"
            except (MemoryError, OSError):
                kept = "no checkpoint could be written either"
            click.echo(f"Error: out of memory at {unit} {solver.iteration:,}; {kept}", err=True)
            raise SystemExit(1) from None
        except OSError as e:  # a checkpoint that cannot be written (disk full, permissions)
            click.echo(f"Error: cannot write the checkpoint {ckpt}: {e.strerror or e}; the run stopped at "
                       f"{unit} {solver.iteration:,}", err=True)
            raise SystemExit(1) from None
    if result[0] == "interrupted":
        click.echo(f"interrupted at {unit} {solver.iteration:,}; checkpoint written to {ckpt}; "
                   "continue with --resume", err=True)
        raise SystemExit(130 if flag["signal"] == signal.SIGINT else 143)
    return result


def _solve_mccfr(game, algorithm: str, *, iterations: int, time_limit, out, resume: bool,
                 checkpoint_every: float, progress: bool, seed: int, epsilon: float, fallback: str,
                 max_nodes=None, use_cache: bool = True, ray: dict | None = None, max_memory=None):
    """``kibitz solve --algorithm mccfr-es|mccfr-os``: MCCFR (solvers/mccfr.py)
    in the solve driver, then the policy file and the summary. ``ray``
    ({address, actors, batch}) runs it on Ray actors (solvers/mccfr_ray.py).

    The game is compiled only to evaluate and complete the policy at the end
    (when it has at most ``max_nodes`` nodes, default 20,000: a larger
    budget costs a walk of that many nodes even when it fails); MCCFR
    itself walks game states.
    """
    from kibitz.solvers import driver, mccfr, mccfr_compiled, policy_file
    from kibitz.solvers import tree as tree_mod

    if algorithm == "mccfr-es" and epsilon != 0.6:
        raise click.UsageError("--epsilon is the exploration of outcome sampling (mccfr-os), "
                               "not used by mccfr-es")
    if fallback != "uniform":
        from kibitz.agents.registry import make_agent
        try:
            make_agent(fallback, game, 0, seed)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--fallback") from None
    settings = {"seed": seed, "epsilon": epsilon, "fallback": fallback}
    es_states = _refuse_unaffordable_es(game, seed) if algorithm == "mccfr-es" else None
    if ray is None:
        max_memory = default_max_memory() if max_memory is None else max_memory
        try:
            solver, backend = mccfr.make_solver(game, seed, algorithm, epsilon=epsilon, fallback=fallback,
                                                max_bytes=mccfr_compiled.TABLE_SHARE * max_memory,
                                                es_states=es_states)
            if backend == "compiled":  # its checkpoints are its own (the Python solver's resume elsewhere)
                settings["backend"] = backend
        except ValueError as e:
            raise click.BadParameter(f"{e}. {SOLVABLE}", param_hint="GAME") from None
        reason, seconds = _drive_mccfr(solver, game, algorithm, settings, out, resume, iterations,
                                       time_limit, checkpoint_every, progress, max_memory=max_memory)
        if solver.abandoned_decisions and not solver.finished:
            click.echo(f"no external-sampling iteration finished: the one in progress had walked "
                       f"{solver.abandoned_decisions:,} decision nodes when it was stopped, and was undone; "
                       "-a mccfr-os samples one path per player", err=True)
        if reason == "memory" and settings.get("backend") == "compiled":
            click.echo(f"stopped at the memory limit: the tables ({_gib(solver.table_bytes())}) and the "
                       f"writing of their policy file (about {_gib(solver.finish_bytes())}) reached "
                       f"{mccfr_compiled.TABLE_SHARE:g} of --max-memory {_gib(max_memory)} with "
                       f"{solver.num_infostates:,} information states; the policy so far is written "
                       f"(--resume with a larger --max-memory continues)", err=True)
        elif reason == "memory":
            click.echo(f"stopped at the memory limit: the process reached --max-memory {_gib(max_memory)} with "
                       f"{len(solver.table):,} information states in the tables; the policy so far is written "
                       f"(--resume with a larger --max-memory continues)", err=True)
    else:
        reason, seconds, solver = _drive_mccfr_ray(game, algorithm, settings, ray, out, resume, iterations,
                                                   time_limit, checkpoint_every, progress)
    out = Path(out)
    budget = max_nodes or mccfr.EVAL_MAX_NODES
    tree = None
    # a tree estimated at ten times the budget is not walked only to fail
    if mccfr.estimate_tree_nodes(game, seed, give_up_above=10 * budget) <= 10 * budget:
        try:
            tree = tree_mod.compile_tree(game, max_nodes=budget, use_cache=use_cache)
        except tree_mod.TreeTooLarge:
            pass
    doc = mccfr.policy_document(solver, algorithm=algorithm, seconds=seconds, tree=tree)
    policy_file.write_policy_file(out, doc)
    rate = f" ({solver.iteration / seconds:,.0f} it/s)" if solver.iteration and seconds > 0 else ""
    click.echo(f"game:        {game}")
    click.echo(f"algorithm:   {algorithm} (seed {seed}{', epsilon %g' % epsilon if algorithm == 'mccfr-os' else ''})")
    click.echo(f"iterations:  {solver.iteration:,} ({driver.STOPPED[reason]})")
    click.echo(f"seconds:     {seconds:.2f}{rate}")
    if ray is not None:
        click.echo(f"ray:         {ray['actors']} actor(s), {ray['batch']} iterations each per batch; "
                   f"merges and round trips {100 * solver.overhead_share:.1f}% of the batch time")
    cov = doc["coverage"]
    click.echo(f"infostates:  {cov['visited']:,} visited" + (
        (f", {cov['filled_with_fallback']:,} unvisited written as uniform" if fallback == "uniform"
         else f", {cov['filled_with_fallback']:,} unvisited forced moves written with their one action")
        if cov["filled_with_fallback"] else ""))
    click.echo(f"unseen:      {fallback} (fallback recorded in the file)")
    if doc["nash_conv"] is not None:
        click.echo(f"NashConv:    {doc['nash_conv']:.6g} (exploitability {doc['nash_conv'] / solver.num_players:.6g})")
        click.echo("returns:     " + "  ".join(f"p{i} {v:+.6g}" for i, v in enumerate(doc["expected_returns"])))
    elif tree is not None:
        click.echo(f"NashConv:    not computed (the fallback {fallback} plays the unseen information states: "
                   "the tree's evaluation cannot run an agent)")
    else:
        click.echo(f"NashConv:    not computed (more than {budget:,} nodes; --max-nodes raises the budget)")
    click.echo(f"policy:      {out}")


def _refuse_unaffordable_es(game, seed: int) -> None:
    """External sampling walks every move of the traverser: one line, and no
    run, when one iteration would walk more than ``mccfr.ES_MAX_STATES``
    decision nodes (estimated on sampled paths before anything starts)."""
    from kibitz.solvers import mccfr

    click.echo("mccfr-es: estimating the cost of an iteration ...", err=True)
    states = mccfr.estimate_es_states(game, seed, give_up_above=100 * mccfr.ES_MAX_STATES)
    if states > mccfr.ES_MAX_STATES:
        raise click.ClickException(
            f"mccfr-es cannot afford {game}: one external-sampling iteration walks about {states:.2g} "
            f"decision nodes (estimated on sampled paths; the limit is {mccfr.ES_MAX_STATES:,}); use "
            "-a mccfr-os (one sampled path per player), or a smaller configuration (`kibitz games`)")
    click.echo(f"mccfr-es: about {states:,.0f} decision nodes an iteration (estimated on sampled paths)", err=True)
    return states


def _drive_mccfr(solver, game, algorithm, settings, out, resume, iterations, time_limit, checkpoint_every,
                 progress, max_memory=None):
    from kibitz.solvers import driver

    meta = driver.checkpoint_meta(str(game), algorithm, settings)
    reason, seconds, _ = _drive(solver, meta, Path(out), resume, iterations=iterations,
                                time_limit=time_limit, eval_every=0,
                                checkpoint_every=checkpoint_every, progress=progress, max_memory=max_memory,
                                finish=getattr(type(solver), "finish_seconds", None))
    return reason, seconds


def _drive_mccfr_ray(game, algorithm, settings, ray_opts, out, resume, iterations, time_limit,
                     checkpoint_every, progress):
    """MCCFR on Ray actors in the solve driver; (reason, seconds, solver)."""
    from kibitz.solvers import mccfr
    from kibitz.solvers.mccfr_ray import RayMCCFR
    from kibitz.solvers.ray_cluster import RayUnavailable, session

    try:
        with session(ray_opts["address"]) as ray:
            try:
                solver = RayMCCFR(game, seed=settings["seed"], actors=ray_opts["actors"],
                                  batch=ray_opts["batch"], sampling=mccfr.ALGORITHMS[algorithm],
                                  epsilon=settings["epsilon"], fallback=settings["fallback"])
            except ValueError as e:
                raise click.UsageError(str(e)) from None
            try:
                reason, seconds = _drive_mccfr(solver, game, algorithm,
                                               {**settings, "actors": solver.actors, "batch": solver.batch},
                                               out, resume, iterations, time_limit, checkpoint_every, progress)
            except ray.exceptions.RayActorError as e:
                raise click.ClickException(f"a Ray actor died ({type(e).__name__}); the last checkpoint "
                                           f"is kept: continue with --resume") from None
            finally:
                solver.close()
    except RayUnavailable as e:
        raise click.UsageError(str(e)) from None
    return reason, seconds, solver
