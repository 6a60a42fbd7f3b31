"""``kibitz solve``: parses the options into a
:class:`kibitz.solvers.solve.SolveConfig`, runs it and prints its summary
(the run itself, checkpoints and resume: ``solvers/solve.py``).

    kibitz solve GAME --algorithm {cfr,cfr+,lcfr,dcfr,mccfr-es,mccfr-os} --iterations N
                 [--time LIMIT] [--target-nashconv X] [--eval-every K]
                 --out FILE [--resume]
"""

from __future__ import annotations

import contextlib
import re

import click

from kibitz.commands._paths import (POLICY_KINDS, NumberRange, check_ray, ray_options, refuse_to_replace_run,
                                    run_options, writable_file)
from kibitz.api import (ALGORITHMS, DEFAULT_BATCH, DEFAULT_ITERATIONS, MAX_ACTORS, UNLIMITED_EVAL_EVERY,
                        ConfigError, SolveConfig, SolveFailed, SolveStopped)
from kibitz.api import solve as run_solve


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
@click.option("--algorithm", "-a", type=click.Choice(ALGORITHMS),
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
    refuse_to_replace_run(out, POLICY_KINDS, resume=resume, overwrite=overwrite)
    limit = parse_duration(time_limit)
    ray = check_ray(ray, ray_address, workers, workers_meaning="actors")
    with solve_errors():
        config = SolveConfig(game_string, algorithm=algorithm, iterations=iterations, time_limit=limit,
                             target_nashconv=target_nashconv, eval_every=eval_every, out=out, resume=resume,
                             checkpoint_every=checkpoint_every, simultaneous=simultaneous, alpha=alpha,
                             beta=beta, gamma=gamma, max_nodes=max_nodes, use_cache=not no_cache,
                             threads=threads, progress=progress, seed=seed, epsilon=epsilon,
                             max_memory=parse_size(max_memory), fallback=fallback, ray=ray,
                             ray_address=ray_address, workers=workers, batch=batch)
        result = run_solve(config, log=lambda line: click.echo(line, err=True))
    for line in result.lines():
        click.echo(line)


@contextlib.contextmanager
def solve_errors():
    """The errors of :mod:`kibitz.solvers.solve` as a command gives them: a
    bad option (exit 2, naming it), a failed run (exit 1), a stopped one
    (its message, exit 130 or 143)."""
    try:
        yield
    except ConfigError as e:
        if e.param is not None:
            raise click.BadParameter(str(e), param_hint=e.param) from None
        raise click.UsageError(str(e)) from None
    except SolveFailed as e:
        raise click.ClickException(str(e)) from None
    except SolveStopped as e:
        click.echo(str(e), err=True)
        raise SystemExit(e.code) from None


