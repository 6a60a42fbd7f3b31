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

import contextlib
import json
import re
import signal
import time
from pathlib import Path

import click
import numpy as np

from kibitz.games import GameStringError, load_game


def parse_duration(text: str | None) -> float | None:
    """``"90"``, ``"90s"``, ``"10m"``, ``"1.5h"``, ``"1h30m"`` -> seconds."""
    if text is None:
        return None
    t = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", t):
        return float(t)
    parts = re.findall(r"(\d+(?:\.\d+)?)([hms])", t)
    if not parts or "".join(a + b for a, b in parts) != t:
        raise click.BadParameter(f"{text!r} is not a duration (e.g. 90, 90s, 10m, 1h30m)",
                                 param_hint="--time")
    scale = {"h": 3600.0, "m": 60.0, "s": 1.0}
    return sum(float(a) * scale[b] for a, b in parts)


def checkpoint_path(out) -> Path:
    return Path(str(out) + ".ckpt.npz")


def _meta(tree, algorithm, config) -> dict:
    return {"game": tree.game_string, "algorithm": algorithm, "settings": config.as_dict(),
            "nodes": int(tree.num_nodes), "slots": int(tree.num_slots)}


def save_checkpoint(path: Path, solver, meta: dict, seconds: float) -> None:
    """Writes the solver state atomically (temporary file, then rename)."""
    from kibitz.solvers._io import atomic_write

    info = dict(meta, seconds=seconds)
    atomic_write(path, lambda f: np.savez(
        f, meta=np.frombuffer(json.dumps(info).encode(), dtype=np.uint8), **solver.state_dict()))


def load_checkpoint(path: Path, solver, meta: dict) -> float:
    """Restores ``solver`` from ``path``; returns the seconds already spent."""
    with np.load(path, allow_pickle=False) as z:
        info = json.loads(z["meta"].tobytes().decode())
        for key in ("game", "algorithm", "settings", "nodes", "slots"):
            if info.get(key) != meta[key]:
                raise click.UsageError(
                    f"checkpoint {path} was made with {key}={info.get(key)!r}, this run has "
                    f"{meta[key]!r}; run without --resume to start afresh")
        solver.load_state_dict({k: z[k] for k in ("iteration", "regret", "cumulative", "policy")})
    return float(info.get("seconds", 0.0))


@contextlib.contextmanager
def stop_on_signals():
    """Turns SIGINT and SIGTERM into a flag that the loop checks between
    iterations (so that a checkpoint can be written); yields the flag."""
    flag = {"signal": None}

    def handler(signum, frame):  # noqa: ARG001
        flag["signal"] = signum

    saved = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                saved[sig] = signal.signal(sig, handler)
            except ValueError:  # not in the main thread
                pass
        yield flag
    finally:
        for sig, old in saved.items():
            signal.signal(sig, old)


def run_solver(solver, *, iterations, time_limit=None, target_nashconv=None, eval_every=0,
               checkpoint=None, checkpoint_every=60.0, meta=None, seconds_before=0.0,
               stop_flag=None, progress=True, evaluate=None):
    """The solve loop. Returns ``(reason, seconds, last_nash_conv)``; reason is
    ``"iterations"``, ``"time"``, ``"target"`` or ``"interrupted"``.

    ``stop_flag`` is a dict whose ``"signal"`` entry becomes truthy to stop
    (see :func:`stop_on_signals`); ``evaluate(solver)`` returns the NashConv
    of the average policy.
    """
    from tqdm import tqdm

    stop_flag = stop_flag if stop_flag is not None else {"signal": None}
    t0 = time.perf_counter()
    last_ckpt = t0
    last_nc = None
    reason = "iterations"
    bar = tqdm(total=iterations, initial=solver.iteration, unit="it", dynamic_ncols=True,
               disable=None if progress else True, desc="solve")
    try:
        while solver.iteration < iterations:
            if stop_flag.get("signal"):
                reason = "interrupted"
                break
            solver.iterate()
            bar.update(1)
            now = time.perf_counter()
            if eval_every and solver.iteration % eval_every == 0:
                last_nc = evaluate(solver)
                bar.set_postfix(nashconv=f"{last_nc:.3g}", refresh=False)
                if target_nashconv is not None and last_nc <= target_nashconv:
                    reason = "target"
                    break
            if time_limit is not None and now - t0 >= time_limit:
                reason = "time"
                break
            if checkpoint is not None and now - last_ckpt >= checkpoint_every:
                save_checkpoint(checkpoint, solver, meta, seconds_before + now - t0)
                last_ckpt = time.perf_counter()
    finally:
        bar.close()
    seconds = seconds_before + time.perf_counter() - t0
    if checkpoint is not None:
        save_checkpoint(checkpoint, solver, meta, seconds)
    return reason, seconds, last_nc


@click.command()
@click.argument("game_string", metavar="GAME")
@click.option("--algorithm", "-a", type=click.Choice(["cfr", "cfr+", "lcfr", "dcfr", "mccfr-es", "mccfr-os"]),
              default="cfr+", show_default=True,
              help="CFR variant (docs/solvers/cfr.md), or Monte Carlo CFR with external or outcome "
                   "sampling over game states (docs/solvers/mccfr.md).")
@click.option("--iterations", "-n", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Total iterations (a resumed run counts those already done).")
@click.option("--time", "time_limit", metavar="LIMIT", default=None,
              help="Stop after this long (this run's wall time): 90, 90s, 10m, 1h30m.")
@click.option("--target-nashconv", type=click.FloatRange(min=0), default=None,
              help="Stop once an evaluation finds NashConv at or below this.")
@click.option("--eval-every", type=click.IntRange(min=0), default=None,
              help="Evaluate NashConv every K iterations (0: only at the end). "
                   "Default: iterations/20.")
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False),
              help="Policy file to write (.json, or .json.gz for gzip).")
@click.option("--resume", is_flag=True, help="Continue from the checkpoint OUT.ckpt.npz.")
@click.option("--checkpoint-every", type=click.FloatRange(min=0), default=60.0, show_default=True,
              help="Seconds between checkpoints.")
@click.option("--simultaneous", is_flag=True,
              help="Simultaneous instead of alternating updates.")
@click.option("--alpha", type=float, default=None, help="DCFR alpha (default 1.5).")
@click.option("--beta", type=float, default=None, help="DCFR beta (default 0).")
@click.option("--gamma", type=float, default=None, help="DCFR gamma (default 2).")
@click.option("--max-nodes", type=click.IntRange(min=1), default=None,
              help="Node budget of the tree compiler (default 20,000,000).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the compiled-tree cache.")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Show the progress bar (only on a terminal).")
@click.option("--seed", type=int, default=0, show_default=True, help="MCCFR: random seed.")
@click.option("--epsilon", type=float, default=0.6, show_default=True,
              help="MCCFR outcome sampling: exploration of the updating player.")
@click.option("--fallback", default="uniform", show_default=True,
              help="MCCFR: what the policy plays on information states it never visited: "
                   "uniform, or an agent spec (e.g. heuristic); recorded in the policy file.")
def solve(game_string, algorithm, iterations, time_limit, target_nashconv, eval_every, out,
          resume, checkpoint_every, simultaneous, alpha, beta, gamma, max_nodes, no_cache,
          progress, seed, epsilon, fallback):
    """Solve GAME with CFR on its compiled tree, or MCCFR over states, and save the average policy.

    \b
    Examples:
      kibitz solve kuhn_poker --iterations 1000 --out kuhn.json
      kibitz solve 'underdog(players=3,cards=5,bank=2)' -a dcfr --time 10m --out ud.json.gz
      kibitz solve leduc_poker --iterations 100000 --out leduc.json --resume
    """
    from kibitz.solvers import cfr as cfr_mod
    from kibitz.solvers import evaluate as ev
    from kibitz.solvers import policy_file, tree as tree_mod

    try:
        game = load_game(game_string)
    except GameStringError as e:
        raise click.BadParameter(str(e), param_hint="GAME") from None
    limit = parse_duration(time_limit)
    if algorithm.startswith("mccfr"):
        from kibitz.solvers import mccfr
        cfr_only = [name for name, value in (
            ("--target-nashconv", target_nashconv), ("--eval-every", eval_every),
            ("--simultaneous", simultaneous or None), ("--alpha", alpha), ("--beta", beta),
            ("--gamma", gamma)) if value is not None]
        if cfr_only:
            raise click.UsageError(f"{', '.join(cfr_only)}: CFR options, not used by {algorithm}")
        mccfr.solve_command(game, algorithm, iterations=iterations, time_limit=limit, out=out,
                            resume=resume, checkpoint_every=checkpoint_every, progress=progress,
                            seed=seed, epsilon=epsilon, fallback=fallback, max_nodes=max_nodes,
                            use_cache=not no_cache)
        return
    if seed != 0 or epsilon != 0.6 or fallback != "uniform":
        raise click.UsageError("--seed, --epsilon and --fallback are MCCFR options "
                               "(--algorithm mccfr-es or mccfr-os)")
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
                                     use_cache=not no_cache, progress=report)
    except tree_mod.TreeTooLarge as e:
        raise click.ClickException(str(e)) from None
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

    _kernels.warmup()  # load the compiled loops before the clock starts
    solver = cfr_mod.CFRSolver(tree, config)
    meta = _meta(tree, algorithm, config)
    ckpt = checkpoint_path(out)
    seconds_before = 0.0
    if resume:
        if not ckpt.exists():
            raise click.UsageError(f"--resume: no checkpoint at {ckpt}; run without --resume")
        seconds_before = load_checkpoint(ckpt, solver, meta)
        click.echo(f"resumed from {ckpt} at iteration {solver.iteration:,}", err=True)
    if eval_every is None:
        eval_every = max(1, iterations // 20) if iterations else 0

    def evaluate(s):
        return ev.nash_conv(tree, s.average_policy())

    with stop_on_signals() as flag:
        reason, seconds, last_nc = run_solver(
            solver, iterations=iterations, time_limit=limit, target_nashconv=target_nashconv,
            eval_every=eval_every, checkpoint=ckpt, checkpoint_every=checkpoint_every, meta=meta,
            seconds_before=seconds_before, stop_flag=flag, progress=progress, evaluate=evaluate)
    if reason == "interrupted":
        click.echo(f"interrupted at iteration {solver.iteration:,}; checkpoint written to {ckpt}; "
                   "continue with --resume", err=True)
        raise SystemExit(130 if flag["signal"] == signal.SIGINT else 143)
    avg = solver.average_policy()
    nc, _, on = ev.nash_conv(tree, avg, details=True)
    doc = policy_file.policy_document(
        tree, avg, algorithm=algorithm, settings=config.as_dict(), iterations=solver.iteration,
        seconds=seconds, nash_conv=nc, expected_returns=on)
    policy_file.write_policy_file(out, doc)
    stopped = {"iterations": "reached the iteration count", "time": "time limit",
               "target": "target NashConv reached"}[reason]
    _summary(game, tree, algorithm, solver.iteration, stopped, seconds, nc, on, out)


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
