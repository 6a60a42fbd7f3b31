"""Experiment specs and their runner (``kibitz experiment run experiments/NAME``).

An experiment is a folder holding ``spec.toml``; its ``kind`` picks the
runner. Each run writes, into its output folder, a CSV of every measurement,
PNG plots (matplotlib; kinds convergence and strength) and ``table.md``, a
markdown table of the headline figures. Every run is seeded; rerunning a spec gives the same numbers except
wall-clock times.

Kinds:

``convergence``
    NashConv against iterations and against seconds for each CFR variant of
    kibitz (on the compiled tree) on each game, beside OpenSpiel's C++ CFR+
    (``pyspiel.CFRPlusSolver`` on ``pyspiel.load_game_as_cached_tree``, the
    fastest OpenSpiel path for a Python game). Keys: ``games`` (game
    strings), ``algorithms`` (kibitz variants), ``iterations``,
    ``openspiel_iterations`` (0 to skip OpenSpiel), ``points`` (evaluation
    points, log-spaced). Besides ``table.md`` (every solver's last point),
    ``summary.md``: each game's best kibitz variant and OpenSpiel's CFR+.

``strength``
    A tournament (``agents.tournament``) of ``agents`` on each of ``games``,
    ``games_per_match`` games each, seats rotated on duplicate deals. A
    tournament already in the output folder is continued (``--resume``):
    running the spec again after Ctrl-C plays only the games not finished.

``mccfr_convergence``
    The exact NashConv (on the compiled tree) of external- and
    outcome-sampling MCCFR's average policies (information states never
    visited play uniformly) at log-spaced iteration counts from 10 to
    ``iterations``, beside the uniform policy's. Keys: ``games``,
    ``iterations``, ``points``, ``seed``.

``training``
    The exact NashConv (on the compiled tree) of the network policy that
    ``kibitz train`` trains (self-play MMD, ``solvers/train.py``) against
    training steps and seconds, on each game, beside the uniform policy's;
    only the training steps are timed. Keys: ``games``, ``seconds`` (the
    training time per game), ``points`` (evaluations, spread evenly over
    the time), ``seed``. Each point is kept as it ends: after Ctrl-C or
    SIGTERM, running the spec again continues from the last one.

``ismcts_match``
    IS-MCTS strength matches (``experiments.ismcts_strength``): each table
    of ``matches`` names one match (``name``, its CSV ``NAME.csv`` in the
    output folder) and its options (``game``, ``opponent``, ``sims``,
    ``rollout_moves``, ...: the options of ``ismcts_strength.py`` with
    ``_``); a match option at the top level is every match's default
    (e.g. ``games``, ``start``, ``seed``). ``jobs`` matches run at a time,
    each logging to ``logs/NAME.log``; ``only`` runs the matches whose name
    contains it. A match resumes where its CSV stops, and runs of disjoint
    ``start``/``games`` ranges may share a CSV. ``table.md`` is rewritten
    from the CSVs of every match of the spec, in name order.

``run(..., ray={"address": ...})`` (``kibitz experiment run --ray``) plays
the games of the kinds strength and ismcts_match as Ray tasks
(``agents.ray_pool``): the tournaments' files are those of one process;
the matches' games all go to the cluster, the matches in turn (``jobs``
unused), each CSV written in game order with the rows a run without Ray
writes (the ``seconds`` column aside).
"""

from __future__ import annotations

import json
import math
import time
import tomllib
from pathlib import Path

import numpy as np

from kibitz.experiments.records import write_csv
from kibitz.solvers.solve import ConfigError

KINDS = ("convergence", "strength", "mccfr_convergence", "training", "ismcts_match")


class MatchesFailed(RuntimeError):
    """Matches of an ismcts_match run that stopped with an error (their logs say which)."""


class ExperimentSpecError(ValueError):
    """A spec, or a ``--set`` override, that names an unknown key or a bad value."""


class ExperimentInterrupted(Exception):
    """Ctrl-C stopped a run; what finished is kept and the message says how to continue."""


#: their short names in this module
SpecError, Interrupted = ExperimentSpecError, ExperimentInterrupted


def _games(v):
    return isinstance(v, list) and v and all(isinstance(g, str) and g.strip() for g in v)


def _count(low, high=10**9):
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and low <= v <= high


#: the keys each kind reads: key -> (check, what is allowed)
_COMMON = {"kind": (lambda v: v in KINDS, f"one of {', '.join(KINDS)}"),
           "name": (lambda v: isinstance(v, str) and v.strip(), "a non-empty string")}
KEYS = {
    "convergence": {
        "games": (_games, "a non-empty list of game strings"),
        "algorithms": (lambda v: isinstance(v, list) and v and set(v) <= {"cfr", "cfr+", "lcfr", "dcfr"},
                       "a non-empty list of cfr, cfr+, lcfr, dcfr"),
        "iterations": (_count(1), "an integer in 1..1,000,000,000"),
        "openspiel_iterations": (_count(0), "an integer in 0..1,000,000,000 (0 skips OpenSpiel)"),
        "points": (_count(1, 1000), "an integer in 1..1000"),
    },
    "strength": {
        "games": (_games, "a non-empty list of game strings"),
        "agents": (lambda v: isinstance(v, list) and len(v) >= 1 and all(isinstance(a, str) for a in v),
                   "a non-empty list of agent specs"),
        "games_per_match": (_count(1, 10**7), "an integer in 1..10,000,000"),
        "workers": (_count(1, 64), "an integer in 1..64"),
        "seed": (_count(0), "an integer >= 0"),
        "progress": (lambda v: isinstance(v, bool), "true or false"),
        "aivat": (lambda v: isinstance(v, str) and v.strip(), "a value function, as kibitz tournament --aivat "
                  "takes: none, zero, exact, rollout(N), net, net(FILE)"),
    },
    "mccfr_convergence": {
        "games": (_games, "a non-empty list of game strings"),
        "iterations": (_count(10), "an integer in 10..1,000,000,000"),
        "points": (_count(1, 1000), "an integer in 1..1000"),
        "seed": (_count(0), "an integer >= 0"),
    },
    "training": {
        "games": (_games, "a non-empty list of game strings"),
        "seconds": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= 86400,
                    "a number of seconds in (0, 86400]"),
        "points": (_count(1, 1000), "an integer in 1..1000"),
        "seed": (_count(0), "an integer >= 0"),
    },
    "ismcts_match": {
        "matches": (lambda v: isinstance(v, list) and v and all(isinstance(m, dict) and isinstance(
            m.get("name"), str) for m in v), "a non-empty list of tables, each with a name"),
        "jobs": (_count(1, 64), "an integer in 1..64"),
        "only": (lambda v: isinstance(v, str), "a string (matches whose name contains it)"),
    },
}
#: the keys a kind must have
REQUIRED = {"convergence": ("games",), "strength": ("games", "agents"), "mccfr_convergence": ("games",),
            "training": ("games",), "ismcts_match": ("matches",)}


def _match_keys() -> dict:
    """The ismcts_match kind also takes every match option as a default for all its matches."""
    from kibitz.experiments.ismcts_strength import OPTIONS
    return {k: (lambda v: isinstance(v, (int, float, str)) and not isinstance(v, bool) or isinstance(v, bool),
                "a number, string or boolean (checked with the match)") for k in OPTIONS}


def _check_agents(spec: dict, where: str) -> None:
    """Every agent spec of a strength spec makes an agent for every game."""
    from kibitz.agents.registry import make_agent
    from kibitz.games import GameStringError, load_game

    for game_string in spec["games"]:
        try:
            game = load_game(game_string)
        except GameStringError as e:
            raise SpecError(f"{where}: games: {e}") from None
        for agent in spec["agents"]:
            try:
                make_agent(agent, game, 0, seed=0)
            except (ValueError, OSError) as e:
                raise SpecError(f"{where}: agents: {agent!r} in {game_string}: {e}") from None


def _check_matches(spec: dict, where: str) -> None:
    """Every match of an ismcts_match spec has valid options, IS-MCTS
    configuration and game (checked here, not in the worker that plays it)."""
    from kibitz.agents.registry import make_agent
    from kibitz.experiments.ismcts_strength import OPTIONS, ismcts_config, ismcts_spec, match_from_options
    from kibitz.games import GameStringError, load_game

    common = {k: v for k, v in spec.items() if k in OPTIONS}
    for m in spec["matches"]:
        name = m["name"]
        try:
            args = match_from_options({**common, **{k: v for k, v in m.items() if k != "name"}}, "-")
            make_agent(ismcts_spec(ismcts_config(args)), load_game(args.game), 0, seed=0)
        except (ValueError, GameStringError) as e:
            raise SpecError(f"{where}: match {name!r}: {e}") from None


def check_spec(spec: dict, where: str) -> dict:
    """Raises :class:`SpecError` naming the first unknown key or bad value of ``spec``."""
    kind = spec.get("kind")
    if kind not in KINDS:
        raise SpecError(f"{where}: kind = {kind!r}; allowed kinds: {', '.join(KINDS)}")
    keys = {**_COMMON, **KEYS[kind], **(_match_keys() if kind == "ismcts_match" else {})}
    for key in spec:
        if key not in keys:
            raise SpecError(f"{where}: unknown key {key!r} for kind {kind}; keys: {', '.join(sorted(keys))}")
    for key in REQUIRED[kind]:
        if key not in spec:
            raise SpecError(f"{where}: kind {kind} needs the key {key!r} ({keys[key][1]})")
    for key, value in spec.items():
        check, allowed = keys[key]
        try:
            ok = check(value)
        except TypeError:
            ok = False
        if not ok:
            raise SpecError(f"{where}: {key} = {value!r} is not allowed; {key} must be {allowed}")
    if kind == "strength":
        _check_agents(spec, where)
    if kind == "ismcts_match":
        _check_matches(spec, where)
    if kind in ("convergence", "strength", "mccfr_convergence", "training"):
        from kibitz.games import GameStringError, load_game
        for game_string in spec["games"]:
            try:
                game = load_game(game_string)
            except GameStringError as e:
                raise SpecError(f"{where}: games: {e}") from None
            if kind == "training":
                from kibitz.solvers.train import check_trainable
                try:
                    check_trainable(game)
                except ValueError as e:
                    raise SpecError(f"{where}: games: {e}") from None
    return spec


def with_overrides(spec: dict, overrides: dict | None) -> dict:
    """``spec`` with ``--set`` values in place, checked as a whole (SpecError)."""
    if not overrides:
        return spec
    return check_spec({**spec, **overrides}, f"--set {', '.join(f'{k}=' for k in sorted(overrides))}")


def load_spec(folder, overrides: dict | None = None) -> dict:
    """The spec in ``folder`` (its spec.toml) with ``overrides`` (``--set``)
    in place, checked as a whole, so that ``--set`` may mend a bad key of
    the file. SpecError names the file's fault, or else the setting's."""
    spec = _read_spec(folder)
    if not overrides:
        return check_spec(spec, spec.pop("_path"))
    path = spec.pop("_path")
    try:
        return with_overrides(spec, overrides)
    except SpecError:
        check_spec(spec, path)  # the file's own fault, if it has one
        raise


def _read_spec(folder) -> dict:
    folder = Path(folder)
    path = folder / "spec.toml" if folder.is_dir() else folder
    if not path.is_file():
        raise FileNotFoundError(f"no experiment spec at {path} (expected a folder with spec.toml)")
    try:
        with open(path, "rb") as f:
            spec = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{path}: not valid TOML: {e}") from None
    except UnicodeDecodeError:
        raise SpecError(f"{path}: not valid TOML: not UTF-8 text") from None
    except RecursionError:
        raise SpecError(f"{path}: not valid TOML: nested too deeply") from None
    except OSError as e:
        raise SpecError(f"{path}: cannot be read ({e.strerror or e})") from None
    if "kind" not in spec:
        raise SpecError(f"{path}: no 'kind' key: not an experiment spec (kinds: {', '.join(KINDS)}; "
                        "experiments/NAME/spec.toml shows one)")
    spec.setdefault("name", path.resolve().parent.name)  # "." names the folder it is
    return {**spec, "_path": str(path)}


def eval_points(iterations: int, points: int) -> list[int]:
    """About ``points`` log-spaced iteration counts from 1 to ``iterations``."""
    pts = np.unique(np.round(np.logspace(0, math.log10(max(iterations, 1)), points)).astype(int))
    return [int(p) for p in pts if p >= 1]


# ----------------------------------------------------------------- convergence
def _curve(label, step, evaluate, iterations, points, log):
    """Runs ``step`` to each evaluation point; rows of (iterations, seconds, NashConv).

    Only the steps are timed, not the evaluations."""
    rows, done, spent = [], 0, 0.0
    for mark in eval_points(iterations, points):
        t0 = time.perf_counter()
        while done < mark:
            step()
            done += 1
        spent += time.perf_counter() - t0
        rows.append((done, spent, evaluate()))
        log(f"    {label:<7} {done:>8,} it  {spent:8.2f} s  NashConv {rows[-1][2]:.3e}")
    return rows


def _kibitz_curve(tree, algorithm, iterations, points, log):
    from kibitz.solvers import make_config, nash_conv
    from kibitz.solvers.cfr import CFRSolver

    CFRSolver(tree, make_config(algorithm)).iterate()  # compiles the kernels outside the timed loop
    solver = CFRSolver(tree, make_config(algorithm))
    return _curve(algorithm, solver.iterate, lambda: nash_conv(tree, solver.average_policy()),
                  iterations, points, log)


def _openspiel_curve(game_string, iterations, points, log):
    import pyspiel

    t0 = time.perf_counter()
    cached = pyspiel.load_game_as_cached_tree(game_string)
    log(f"    openspiel cached tree built in {time.perf_counter() - t0:.1f} s")
    solver = pyspiel.CFRPlusSolver(cached)
    return _curve("os-cfr+", solver.evaluate_and_update_policy,
                  lambda: pyspiel.nash_conv(cached, solver.average_policy()), iterations, points, log)


def run_convergence(spec: dict, out: Path, log=print) -> list[dict]:
    from kibitz.games import load_game
    from kibitz.solvers import compile_tree

    iterations = int(spec.get("iterations", 1000))
    os_iterations = int(spec.get("openspiel_iterations", iterations))
    points = int(spec.get("points", 12))
    algorithms = list(spec.get("algorithms", ["cfr", "cfr+", "lcfr", "dcfr"]))
    records = []
    for game_string in spec["games"]:
        log(f"  {game_string}")
        tree = compile_tree(load_game(game_string))
        curves = {a: _kibitz_curve(tree, a, iterations, points, log) for a in algorithms}
        if os_iterations > 0:
            curves["openspiel cfr+"] = _openspiel_curve(game_string, os_iterations, points, log)
        for solver_name, rows in curves.items():
            for it, sec, nc in rows:
                records.append({"game": game_string, "solver": solver_name, "iterations": it,
                                "seconds": sec, "nash_conv": nc, "nodes": tree.num_nodes,
                                "infostates": tree.num_infosets})
    write_csv(out / "convergence.csv", records)
    _plot_convergence(records, out)
    _table_convergence(records, out / "table.md")
    _summary_convergence(records, out / "summary.md")
    return records


def _plot_convergence(records, out: Path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for game in dict.fromkeys(r["game"] for r in records):
        rows = [r for r in records if r["game"] == game]
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        for solver in dict.fromkeys(r["solver"] for r in rows):
            pts = [r for r in rows if r["solver"] == solver]
            style = "--" if solver.startswith("openspiel") else "-"
            axes[0].loglog([p["iterations"] for p in pts], [max(p["nash_conv"], 1e-12) for p in pts],
                           style, marker=".", label=solver)
            axes[1].loglog([max(p["seconds"], 1e-4) for p in pts],
                           [max(p["nash_conv"], 1e-12) for p in pts], style, marker=".", label=solver)
        axes[0].set_xlabel("iterations")
        axes[1].set_xlabel("seconds")
        for ax in axes:
            ax.set_ylabel("NashConv")
            ax.grid(True, which="both", alpha=0.3)
        axes[0].legend()
        fig.suptitle(game, fontsize=9)
        fig.tight_layout()
        fig.savefig(out / f"convergence_{_slug(game)}.png", dpi=110)
        plt.close(fig)


def _table_convergence(records, path: Path):
    lines = ["| game | solver | iterations | seconds | iterations/s | NashConv |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    for game in dict.fromkeys(r["game"] for r in records):
        for solver in dict.fromkeys(r["solver"] for r in records if r["game"] == game):
            last = [r for r in records if r["game"] == game and r["solver"] == solver][-1]
            rate = last["iterations"] / last["seconds"] if last["seconds"] > 0 else float("inf")
            lines.append(f"| `{game}` | {solver} | {last['iterations']:,} | {last['seconds']:.2f} | "
                         f"{rate:,.0f} | {last['nash_conv']:.2e} |")
    path.write_text("\n".join(lines) + "\n")


def _summary_convergence(records, path: Path):
    """The README's view of the run: on each game, the kibitz variant with
    the lowest final NashConv, and OpenSpiel's CFR+ when it ran."""
    lines = ["| game | solver | iterations | NashConv |", "| --- | --- | ---: | ---: |"]
    for game in dict.fromkeys(r["game"] for r in records):
        last = {}
        for r in records:
            if r["game"] == game:
                last[r["solver"]] = r
        ours = [r for s, r in last.items() if not s.startswith("openspiel")]
        shown = [min(ours, key=lambda r: r["nash_conv"])] if ours else []
        shown += [r for s, r in last.items() if s.startswith("openspiel")]
        for r in shown:
            who = ("OpenSpiel CFR+ (cached tree)" if r["solver"] == "openspiel cfr+"
                   else f"kibitz {r['solver'].upper()}")
            lines.append(f"| `{game}` | {who} | {r['iterations']:,} | {r['nash_conv']:.2e} |")
    path.write_text("\n".join(lines) + "\n")


# ----------------------------------------------------------- mccfr convergence
def run_mccfr_convergence(spec: dict, out: Path, log=print) -> list[dict]:
    from kibitz.games import load_game
    from kibitz.solvers import evaluate as ev
    from kibitz.solvers.mccfr import MCCFR
    from kibitz.solvers.tree import compile_tree

    iterations = int(spec.get("iterations", 20000))
    marks = sorted({int(x) for x in np.geomspace(10, iterations, int(spec.get("points", 12)))})
    seed = int(spec.get("seed", 0))
    value = spec.get("aivat", "none")
    records = []
    for game_string in spec["games"]:
        game = load_game(game_string)
        tree = compile_tree(game)
        uniform = ev.nash_conv(tree, tree.uniform_policy())
        for sampling in ("es", "os"):
            solver = MCCFR(game, np.random.default_rng(seed), sampling)
            records.append({"game": game_string, "sampling": sampling, "iterations": 0, "seconds": 0.0,
                            "nash_conv": uniform})
            spent = 0.0
            for mark in marks:
                t0 = time.perf_counter()
                solver.run(mark - solver.iteration)
                spent += time.perf_counter() - t0
                nc = ev.nash_conv(tree, ev.policy_to_slots(tree, solver.average_policy(), default="uniform"))
                records.append({"game": game_string, "sampling": sampling, "iterations": mark,
                                "seconds": spent, "nash_conv": nc})
                log(f"    {game_string:<50} {sampling}  {mark:>8} it  {spent:8.1f} s  NashConv {nc:.4g}")
    write_csv(out / "mccfr_convergence.csv", records)
    _plot_mccfr_convergence(records, out)
    lines = ["| game | sampling | iterations | seconds | NashConv |", "| --- | --- | ---: | ---: | ---: |"]
    for game_string in dict.fromkeys(r["game"] for r in records):
        for sampling in ("es", "os"):
            last = [r for r in records if r["game"] == game_string and r["sampling"] == sampling][-1]
            lines.append(f"| `{game_string}` | {sampling} | {last['iterations']:,} | {last['seconds']:.1f} | "
                         f"{last['nash_conv']:.3e} |")
    (out / "table.md").write_text("\n".join(lines) + "\n")
    return records


def _per_game_plot(records, path: Path, xlabel: str, draw) -> None:
    """One panel per game of ``records`` (NashConv on a log scale against
    ``xlabel``), ``draw(ax, rows)`` drawing a game's rows, saved to ``path``."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(r["game"] for r in records))
    fig, axes = plt.subplots(1, len(names), figsize=(5 * len(names), 4), squeeze=False)
    for ax, name in zip(axes[0], names):
        draw(ax, [r for r in records if r["game"] == name])
        ax.set_yscale("log")
        ax.set_title(name, fontsize=8)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("NashConv")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _plot_mccfr_convergence(records, out: Path):
    def draw(ax, rows):
        for sampling, label in (("es", "external sampling"), ("os", "outcome sampling")):
            pts = [(r["iterations"], r["nash_conv"]) for r in rows if r["sampling"] == sampling and r["iterations"] > 0]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        ax.set_xscale("log")
        ax.axhline(rows[0]["nash_conv"], color="grey", linestyle=":", label="uniform policy")

    _per_game_plot(records, out / "mccfr_convergence.png", "iterations", draw)


# -------------------------------------------------------------------- training
def run_training(spec: dict, out: Path, log=print) -> list[dict]:
    """The training curve of each game; each point is kept as it ends.

    After each point the trainer's state and the game's points so far go
    into ``training_GAME.ckpt.npz`` (``solvers.driver`` checkpoints, their
    meta naming the game, ``seconds``, ``points`` and ``seed``) and
    ``training.csv`` is rewritten, so that a run stopped by Ctrl-C or
    SIGTERM keeps every finished point (:class:`Interrupted`), and the same
    command continues from the last one: a game whose points are all kept
    is not trained again, one stopped part-way resumes with the trainer and
    the training seconds of its last point. A checkpoint made with other
    settings is refused (ValueError)."""
    from kibitz.solvers.driver import checkpoint_meta, save_checkpoint

    seconds = float(spec.get("seconds", 120))
    points = int(spec.get("points", 12))
    seed = int(spec.get("seed", 0))
    value = spec.get("aivat", "none")
    records = []
    for game_string in spec["games"]:
        path = out / f"training_{_slug(game_string)}.ckpt.npz"
        meta = checkpoint_meta(game_string, "mmd", {"seconds": seconds, "points": points, "seed": seed})
        rows = _kept_points(path, meta)
        if len(rows) == points + 1:
            log(f"    {game_string:<50} all {points} points kept in {path}")
            records += rows
            continue
        trainer, probe, spent = _training_start(game_string, seed, path, meta, rows)
        uniform = rows[0]["uniform"] if rows else probe.uniform_nash_conv()
        if not rows:
            rows.append({"game": game_string, "steps": 0, "seconds": 0.0, "nash_conv": uniform,
                         "uniform": uniform})
        try:
            for k in range(len(rows), points + 1):
                t0 = time.perf_counter()
                while spent + (time.perf_counter() - t0) < seconds * k / points:
                    trainer.iterate()
                spent += time.perf_counter() - t0
                nc = probe.nash_conv(trainer.policy_params())
                row = {"game": game_string, "steps": trainer.iteration, "seconds": spent, "nash_conv": nc,
                       "uniform": uniform}
                save_checkpoint(path, trainer, {**meta, "rows": rows + [row]}, spent)
                rows.append(row)
                write_csv(out / "training.csv", records + rows)
                log(f"    {game_string:<50} {trainer.iteration:>7} steps  {spent:7.1f} s  NashConv {nc:.4g} "
                    f"({nc / uniform:.3f} of uniform)")
        except KeyboardInterrupt:
            raise Interrupted(f"interrupted: {len(rows) - 1} of {points} points of {game_string} finished "
                              f"(kept in {path}); run the same command again to continue") from None
        records += rows
    write_csv(out / "training.csv", records)
    _plot_training(records, out)
    lines = ["| game | steps | seconds | NashConv | uniform | ratio |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for game_string in dict.fromkeys(r["game"] for r in records):
        last = [r for r in records if r["game"] == game_string][-1]
        lines.append(f"| `{game_string}` | {last['steps']:,} | {last['seconds']:.0f} | {last['nash_conv']:.4f} | "
                     f"{last['uniform']:.4f} | {last['nash_conv'] / last['uniform']:.3f} |")
    (out / "table.md").write_text("\n".join(lines) + "\n")
    return records


def _kept_points(path: Path, meta: dict) -> list[dict]:
    """The points of an earlier run kept in the checkpoint ``path`` (none
    without one); ValueError when it was made with other settings."""
    from kibitz.solvers.driver import read_checkpoint

    if not path.exists():
        return []
    info, _ = read_checkpoint(path)  # CheckpointError (a ValueError) names a damaged file
    theirs = {**{k: v for k, v in info.items() if k != "settings"}, **(info.get("settings") or {})}
    for key, want in {**{k: v for k, v in meta.items() if k != "settings"}, **meta["settings"]}.items():
        if theirs.get(key) != want:
            raise ValueError(f"{path} holds the points of a run with {key} = {theirs.get(key)!r}, not "
                             f"{want!r}; the points of an earlier run of this experiment are continued only "
                             "with its settings: give another --out, or those settings")
    return list(info.get("rows", []))


def _training_start(game_string: str, seed: int, path: Path, meta: dict, rows: list[dict]):
    """``(trainer, probe, training seconds)`` for a game: a new trainer, or,
    when ``rows`` were kept, the trainer of the last of them."""
    from kibitz.games import load_game
    from kibitz.solvers.driver import load_checkpoint
    from kibitz.solvers.train import MMDTrainer, TreeProbe
    from kibitz.solvers.tree import compile_tree

    game = load_game(game_string)
    probe = TreeProbe(game, compile_tree(game))
    trainer = MMDTrainer(game, seed=seed)
    spent = load_checkpoint(path, trainer, meta) if rows else 0.0
    return trainer, probe, spent


#: where a NashConv of 0 is drawn on the training plot's log scale
FLOOR = 1e-6


def _plot_training(records, out: Path):
    def draw(ax, rows):
        # an exact 0 (a pure equilibrium reached in float arithmetic) is drawn at the plot's floor
        ax.plot([r["seconds"] for r in rows], [max(r["nash_conv"], FLOOR) for r in rows], marker="o",
                label="MMD network")
        ax.axhline(rows[0]["uniform"], color="grey", linestyle=":", label="uniform policy")
        ax.axhline(rows[0]["uniform"] / 4, color="grey", linestyle="--", label="1/4 of uniform")

    _per_game_plot(records, out / "training.png", "training seconds", draw)


# -------------------------------------------------------------------- strength
def run_strength(spec: dict, out: Path, log=print, ray: dict | None = None) -> list[dict]:
    """The tournaments of a strength spec; ``ray`` ({"address": ...}) plays
    them on Ray (``workers`` unused), with the same files."""
    from kibitz.agents.matches.tournament import ResumeError, run_tournament

    agents = list(spec["agents"])
    n_games = int(spec.get("games_per_match", 200))
    workers = int(spec.get("workers", 1))
    seed = int(spec.get("seed", 0))
    value = spec.get("aivat", "none")
    records = []
    for game_string in spec["games"]:
        log(f"  {game_string}: {', '.join(agents)}; {n_games} games")
        folder = out / f"tournament_{_slug(game_string)}"
        try:
            outcome = run_tournament(game_string, agents, n_games, seed=seed, workers=workers,
                                     out_dir=str(folder), resume=(folder / "tournament.json").exists(),
                                     progress=spec.get("progress", True), log=log, ray=ray is not None,
                                     ray_address=(ray or {}).get("address"), value=value)
        except ResumeError as e:  # the folder holds another run's games: said in this command's terms
            why = str(e).removeprefix("--resume: ").replace("--games ", "games_per_match = ")
            raise ValueError(f"{why}; the games of an earlier run of this experiment are continued only with "
                             f"its settings: give another --out, or those settings") from None
        if outcome.interrupted:
            raise Interrupted(f"interrupted: {outcome.finished} of {outcome.total} games of {game_string} "
                              f"finished (kept in {folder}); run the same command again to continue")
        for row in outcome.results["agents"]:
            records.append({"game": game_string, **{k: row[k] for k in (
                "name", "games", "mean_payoff", "ci95_low", "ci95_high", "win_rate")},
                "rating": _rating_value(row.get("rating")),
                **({k: row[k] for k in ("aivat_mean", "aivat_ci95_low", "aivat_ci95_high")}
                   if "aivat_mean" in row else {})})
    write_csv(out / "strength.csv", records)
    _plot_strength(records, out)
    aivat = value != "none"
    lines = ["| game | agent | games | mean payoff | 95% CI | win rate | rating |"
             + (" AIVAT mean | AIVAT 95% CI |" if aivat else ""),
             "| --- | --- | ---: | ---: | --- | ---: | ---: |" + (" ---: | --- |" if aivat else "")]
    for r in records:
        lines.append(f"| `{r['game']}` | {r['name']} | {r['games']} | {r['mean_payoff']:.3f} | "
                     f"[{r['ci95_low']:.3f}, {r['ci95_high']:.3f}] | {r['win_rate']:.3f} | "
                     f"{r['rating']:.2f} |"
                     + (f" {r['aivat_mean']:.3f} | [{r['aivat_ci95_low']:.3f}, {r['aivat_ci95_high']:.3f}] |"
                        if aivat else ""))
    (out / "table.md").write_text("\n".join(lines) + "\n")
    return records


def _rating_value(rating):
    if isinstance(rating, dict):
        return float(rating.get("ordinal", rating.get("mu", float("nan"))))
    return float(rating) if rating is not None else float("nan")


def _plot_strength(records, out: Path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for game in dict.fromkeys(r["game"] for r in records):
        rows = [r for r in records if r["game"] == game]
        fig, ax = plt.subplots(figsize=(7, 3.5))
        means = [r["mean_payoff"] for r in rows]
        err = [[m - r["ci95_low"] for m, r in zip(means, rows)],
               [r["ci95_high"] - m for m, r in zip(means, rows)]]
        ax.bar(range(len(rows)), means, yerr=err, capsize=4)
        ax.set_xticks(range(len(rows)), [r["name"] for r in rows], rotation=15, fontsize=8)
        ax.set_ylabel("mean payoff (95% CI)")
        ax.set_title(game, fontsize=9)
        fig.tight_layout()
        fig.savefig(out / f"strength_{_slug(game)}.png", dpi=110)
        plt.close(fig)


# ---------------------------------------------------------------- ismcts_match
def _match_worker_init():
    """A match's worker ignores SIGINT (the run stops its pool) and dies at
    once on SIGTERM (``Pool.terminate``), whatever handlers it inherited."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _play_logged(args, log_path: Path) -> bool:
    """Plays one match with its output in ``log_path``; False if it failed."""
    import contextlib
    import traceback

    from kibitz.experiments.ismcts_strength import play_match

    with open(log_path, "a") as f, contextlib.redirect_stdout(f), contextlib.redirect_stderr(f):
        try:
            play_match(args)
            return True
        except Exception:
            traceback.print_exc()
            return False


def _ray_matches(selected: dict, out: Path, address, log, every: float = 30.0) -> list[str]:
    """Every game of the ``selected`` matches as Ray tasks (agents.ray_pool),
    the matches in turn; each CSV gets its rows in game order, and the
    progress (games/s over the cluster) is logged every ``every`` seconds.
    Returns the names of the matches that failed (all of them, when a game
    raises: its error is logged)."""
    import contextlib

    from kibitz.agents.matches.ray_pool import run_batches
    from kibitz.experiments.ismcts_strength import (ismcts_config, ismcts_spec, match_file, opponent_label,
                                                    play_rows, report, row_game)
    from kibitz.solvers.ray_cluster import RayUnavailable, session

    files = {name: match_file(args) for name, args in selected.items()}
    todo = {name: [i for i in range(args.start, args.start + args.games) if i not in files[name].done]
            for name, args in selected.items()}
    items = [(name, i) for name, indices in todo.items() for i in indices]
    waiting = {name: {} for name in selected}
    played = {name: [] for name in selected}
    clock = {"start": time.perf_counter(), "said": time.perf_counter()}

    def keep(item, row):
        name, index = item
        waiting[name][index] = row
        indices, rows = todo[name], played[name]
        while len(rows) < len(indices) and indices[len(rows)] in waiting[name]:
            row = waiting[name].pop(indices[len(rows)])
            files[name].write(row)
            rows.append(row_game(row, sum(1 for k in row if k.startswith("return_"))))
        done, now = sum(len(v) for v in played.values()), time.perf_counter()
        if now - clock["said"] >= every or done == len(items):
            clock["said"] = now
            log(f"  ray: {done}/{len(items)} games, {done / (now - clock['start']):.3f} games/s")

    try:
        with session(address) as ray:
            summary = run_batches(ray, play_rows, selected, items, keep).summary()
        log("  " + summary)
    except RayUnavailable:
        raise
    except Exception as e:  # a game raised: the run stops, the rows written stay
        log(f"  FAILED: {type(e).__name__}: {e}")
        return list(selected)
    finally:
        for f in files.values():
            f.close()
    for name, args in selected.items():
        if played[name]:
            with open(out / "logs" / f"{name}.log", "a") as f, contextlib.redirect_stdout(f):
                report(args.game, opponent_label(args), ismcts_spec(ismcts_config(args)), played[name],
                       len(played[name][0][2]), f"this run on Ray, seed {args.seed}")
        log(f"  done   {name}")
    return []


def run_ismcts_match(spec: dict, out: Path, log=print, ray: dict | None = None) -> list[str]:
    """Plays (or resumes) the spec's matches; returns the names of those that
    failed. ``ray`` ({"address": ...}) plays their games on Ray, ``jobs`` unused."""
    from kibitz.experiments.ismcts_strength import OPTIONS, match_from_options, table_lines

    common = {k: v for k, v in spec.items() if k in OPTIONS}
    matches = {m["name"]: {**common, **{k: v for k, v in m.items() if k != "name"}} for m in spec["matches"]}
    only = str(spec.get("only", ""))
    selected = {name: match_from_options(options, out / f"{name}.csv")
                for name, options in matches.items() if only in name}
    if not selected:
        raise ValueError(f"no match name contains {only!r}")
    (out / "logs").mkdir(exist_ok=True)
    if ray is not None:
        failed = _ray_matches(selected, out, ray.get("address"), log)
        paths = [out / f"{name}.csv" for name in sorted(matches) if (out / f"{name}.csv").exists()]
        (out / "table.md").write_text("\n".join(table_lines(paths)) + "\n")
        return failed
    failed = []
    import multiprocessing
    import sys

    # forked workers are cheapest, but not from a process that has imported JAX (its threads)
    method = "spawn" if "jax" in sys.modules else None
    pool = multiprocessing.get_context(method).Pool(int(spec.get("jobs", 1)), initializer=_match_worker_init)
    ended = False
    try:
        running = {name: pool.apply_async(_play_logged, (args, out / "logs" / f"{name}.log"))
                   for name, args in selected.items()}
        for name, result in running.items():
            if result.get():
                log(f"  done   {name}")
            else:
                failed.append(name)
                log(f"  FAILED {name}: {_last_line(out / 'logs' / f'{name}.log')} "
                    f"(log: {out / 'logs' / name}.log)")
        ended = True
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: every game that ended is in its match's CSV
        raise Interrupted(f"interrupted: the games that ended are kept in the matches' CSVs in {out}; "
                          "run the same command again to continue") from None
    finally:
        if ended:
            pool.close()
        else:  # the matches in play stop here
            pool.terminate()
        pool.join()
    paths = [out / f"{name}.csv" for name in sorted(matches) if (out / f"{name}.csv").exists()]
    (out / "table.md").write_text("\n".join(table_lines(paths)) + "\n")
    return failed


# ---------------------------------------------------------------------- common
def _last_line(path: Path) -> str:
    """The last non-empty line of a match's log (the reason it failed), or a note that there is none."""
    try:
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "no log"
    return lines[-1][:300] if lines else "an empty log"


def _slug(game_string: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in game_string).strip("_")


#: the kinds that --ray runs on Ray
RAY_KINDS = ("strength", "ismcts_match")


def run(folder, out=None, log=print, overrides: dict | None = None, ray: dict | None = None) -> Path:
    """Runs the experiment in ``folder``; returns the output folder. ``ray``
    ({"address": ADDRESS or None}) plays the games of the kinds in
    ``RAY_KINDS`` on Ray (docs/scaling.md); another kind raises ConfigError
    (``param`` "--ray") before anything runs, as a bad spec raises SpecError."""
    spec = load_spec(folder, overrides)
    if ray is not None and spec["kind"] not in RAY_KINDS:
        raise ConfigError(f"kind {spec['kind']} runs in one process; --ray runs the kinds {', '.join(RAY_KINDS)}",
                          "--ray")
    out = Path(out or Path("runs") / spec["name"])
    out.mkdir(parents=True, exist_ok=True)
    log(f"experiment {spec['name']} ({spec['kind']}) -> {out}")
    t0 = time.perf_counter()
    if spec["kind"] == "convergence":
        run_convergence(spec, out, log)
    elif spec["kind"] == "strength":
        run_strength(spec, out, log, ray)
    elif spec["kind"] == "mccfr_convergence":
        run_mccfr_convergence(spec, out, log)
    elif spec["kind"] == "training":
        run_training(spec, out, log)
    else:
        failed = run_ismcts_match(spec, out, log, ray)
        if failed:
            raise MatchesFailed(f"{len(failed)} match(es) failed: "
                                + "; ".join(f"{name}: {_last_line(out / 'logs' / f'{name}.log')}" for name in failed)
                                + f" (logs in {out / 'logs'})")
    (out / "spec.json").write_text(json.dumps(spec, indent=2))
    log(f"done in {time.perf_counter() - t0:.1f} s: {out}/table.md and CSV")
    return out
