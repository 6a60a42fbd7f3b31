"""Expert iteration (``kibitz iterate``): search with the best network so far, distil the search into the next.

    from kibitz.agents.training.iterate import IterateConfig, run
    result = run(IterateConfig("kuhn_poker", start="gen0.json.gz", out="iter", generations=2, opponent="random"))
    print(result.best, [g["kept"] for g in result.record["generations"]])

A run is one frozen :class:`IterateConfig`, checked when it is made
(:class:`ConfigError` names the option at fault). Generation 0 is the
``start`` agent file (a network agent file; default the game's shipped
``trained`` network). Generation ``g = 1..generations``, in ``out/``:

1. distil: the teacher ``ismcts(prior=net(BEST),sims=S)`` (``search`` adds
   IS-MCTS options) plays ``games`` games against ``opponent`` and a network
   of the start's encoding, output and hidden widths (or ``hidden``) is
   fitted to its moves (:func:`.distill_run.distill`, the data folder
   ``gen{g}/data``, the network ``gen{g}/net.npz``), starting from the best
   network when the shapes agree;
2. export: ``gen{g}.json.gz`` at the start file's temperature;
3. the acceptance match: ``net(gen{g})`` against ``opponent`` and
   ``net(BEST)`` against ``opponent``, two tournaments of ``match_games``
   games with the same seed (``gen{g}/match_new``, ``gen{g}/match_best``:
   the same deals, seatings and agent seeds), paired game by game
   (:func:`kibitz.agents.matches.tournament.paired_comparison`).

The acceptance rule: generation ``g`` becomes the best network only if the
95% interval of the paired difference (its mean payoff a game minus the
best network's, on the same games) lies wholly above 0 (a match of one
deal has no interval: rejected); otherwise it is
rejected and the next generation searches with the same best network (on
other games: the distillation's and the match's seeds are ``seed + g``).

``out/iterate.json`` records the settings, the best generation and for
each generation its teacher, the distillation's figures, the match's
figures, the decision and the seconds of each step; it is rewritten after
every step. Running again with the same ``out`` continues: finished steps
are skipped, an unfinished distillation continues its data folder and an
unfinished match its tournament; a folder made with other settings is a
ConfigError naming ``--out`` (``generations``, ``time_limit`` and
``workers`` may change). ``time_limit`` is checked between steps (a step
begun runs to its end, a collection only up to the limit: its games are
kept, and the generation is finished by the next run). Ctrl-C stops with
:class:`SolveStopped`, the finished steps kept. Nothing here prints: the
run reports to ``log``.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import numbers
import shutil
import time
from pathlib import Path
from typing import Callable

from kibitz.solvers.solve import ConfigError, SolveStopped, quiet

#: the settings that shape a run's results: a folder holding a run of other values is refused
RESULT_FIELDS = ("game", "start", "sims", "search", "games", "epochs", "lr", "hidden", "chunk",
                 "match_games", "opponent", "seed")


@dataclasses.dataclass(frozen=True)
class IterateConfig:
    """One ``kibitz iterate`` run; every field is an option of the command
    (``time_limit`` in seconds). ``start`` None: the game's shipped network
    (agents/trained/GAME.json.gz). ``hidden`` None: the start network's
    widths. ``games``, ``epochs``, ``lr`` and ``chunk`` are each
    generation's :class:`.distill_run.DistillConfig` settings, ``sims`` and
    ``search`` its teacher's; ``opponent`` plays the other seats of the
    teacher games and of the acceptance match."""

    game: str
    out: str | None = None
    start: str | None = None
    generations: int = 3
    sims: int = 200
    search: str = ""
    games: int = 200
    epochs: int = 10
    lr: float = 1e-3
    hidden: tuple | None = None
    chunk: int = 4
    match_games: int = 400
    opponent: str = "heuristic"
    seed: int = 0
    time_limit: float | None = None
    workers: int = 1

    def __post_init__(self):
        for name, value, low in (("--generations", self.generations, 1), ("--sims", self.sims, 1),
                                 ("--games", self.games, 1), ("--epochs", self.epochs, 1), ("--chunk", self.chunk, 1),
                                 ("--match-games", self.match_games, 2), ("--seed", self.seed, 0),
                                 ("--workers", self.workers, 1)):
            if not isinstance(value, numbers.Integral) or value < low:
                raise ConfigError(f"{value}: a whole number, at least {low}", name)
        if not 0 < self.lr <= 1:
            raise ConfigError(f"{self.lr}: allowed: 0 < x <= 1", "--lr")
        if self.time_limit is not None and not self.time_limit > 0:
            raise ConfigError(f"{self.time_limit}: a duration must be more than 0", "--time")
        if self.out is None or not str(self.out).strip():
            raise ConfigError("give --out DIR: the folder of the run's files", "--out")
        if Path(self.out).exists() and not Path(self.out).is_dir():
            raise ConfigError(f"{self.out} exists and is not a folder", "--out")
        _nameable(Path(self.out), "--out")
        if self.hidden is not None:
            if not self.hidden or not all(isinstance(h, numbers.Integral) and h >= 1 for h in self.hidden):
                raise ConfigError(f"{self.hidden}: one or more layer widths of at least 1", "--hidden")
            object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        if any(c in self.search for c in "()"):
            raise ConfigError(f"{self.search!r}: IS-MCTS options (name=value, comma-separated), no agent specs",
                              "--search")
        game = _checked_game(self.game)
        object.__setattr__(self, "start", str(_start_file(self.start, game)))
        from kibitz.agents.registry import check_automatic_agent
        check_automatic_agent(self.opponent, game, "--opponent", "play teacher games and the match")

    def settings(self) -> dict:
        """The fields that shape the results (:data:`RESULT_FIELDS`), as JSON values."""
        values = dict(dataclasses.asdict(self), start=str(Path(self.start).resolve()))
        return {k: list(values[k]) if isinstance(values[k], tuple) else values[k] for k in RESULT_FIELDS}


def _checked_game(game_string: str):
    from kibitz.games import GameStringError, load_game

    try:
        return load_game(game_string)
    except GameStringError as e:
        raise ConfigError(str(e), "GAME") from None


def _start_file(start, game) -> Path:
    """The start agent file (default the game's shipped network), checked:
    a network agent file for ``game`` (ConfigError naming ``--start``)."""
    from kibitz.agents.net_agent import load_network, trained_path

    try:
        path = Path(start) if start is not None else trained_path(game)
        network = load_network(str(path))
    except (ValueError, OSError) as e:  # AgentFileError is a ValueError
        raise ConfigError(str(e), "--start") from None
    if network.game != str(game):
        raise ConfigError(f"{path} is a network for {network.game}, not for {game}", "--start")
    _nameable(path, "--start")
    return path


def _nameable(path: Path, option: str) -> None:
    """ConfigError naming ``option`` unless ``path`` can be named inside an agent spec (``net(PATH)``)."""
    if any(c in str(path.resolve()) for c in "(),="):
        raise ConfigError(f"{path}: a path holding ( ) , or = cannot be named in an agent spec", option)


@dataclasses.dataclass
class IterateResult:
    """What a run made: ``record`` (the document of ``out/iterate.json``),
    ``best`` (the best generation's agent file) and ``stopped`` ("time": the
    time limit ended it before the last generation; None: every generation
    is finished)."""

    config: IterateConfig
    record: dict
    best: Path
    stopped: str | None

    def lines(self) -> list[str]:
        """The summary ``kibitz iterate`` prints: a line a generation, then the best file."""
        lines = [generation_line(g) for g in self.record["generations"]]
        if self.stopped:
            lines.append(f"stopped at the time limit: the same command continues in {self.config.out}")
        return lines + [f"best:        {self.best} (generation {self.record['best']}); "
                        f"{self.record['seconds']:.0f} s in all"]


def generation_line(g: dict) -> str:
    """One generation's line: the match's paired difference and the decision (or what is unfinished)."""
    m = g.get("match")
    if m is None:
        return f"generation {g['generation']}: unfinished ({', '.join(g['steps']) or 'no step'} done)"
    interval = (f"[{m['ci95_low']:+.3f}, {m['ci95_high']:+.3f}]" if m["ci95_low"] is not None
                else f"(no interval from {m['deals']} deal)")
    return (f"generation {g['generation']}: {m['new']:+.3f} against {m['opponent']} (best so far, generation "
            f"{g['best_before']}: {m['best']:+.3f}); paired difference {m['difference']:+.3f} {interval} "
            f"over {m['games']} games: "
            f"{'kept' if g['kept'] else 'rejected'}; {g['seconds']:.0f} s")


def _finite(figures: dict) -> dict:
    """``figures`` with None for a number that is not finite (JSON has no
    nan: a fit with no held-out game, a match of one deal)."""
    return {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in figures.items()}


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _save(out: Path, record: dict) -> None:
    from kibitz.solvers._io import atomic_write

    atomic_write(out / "iterate.json", lambda f: f.write((json.dumps(record, indent=1) + "\n").encode()))


def _open_record(config: IterateConfig, out: Path) -> dict:
    """The run's record: ``out/iterate.json`` continued (ConfigError naming
    ``--out`` if its settings differ) or a new one, with generation 0 (the
    start file copied to ``gen0.json.gz``, its network to ``gen0.npz``)."""
    path = out / "iterate.json"
    if path.exists():
        try:
            record = json.loads(path.read_text())
            old = record["settings"]
        except (ValueError, KeyError, TypeError) as e:
            raise ConfigError(f"{path} cannot be read ({e}); give another folder", "--out") from None
        changed = [k for k in RESULT_FIELDS if old.get(k) != config.settings()[k]]
        if changed:
            raise ConfigError(f"{out} holds a run with other settings ({', '.join(changed)}: "
                              f"{', '.join(repr(old.get(k)) for k in changed)}); give another folder", "--out")
        return record
    if out.exists() and any(out.iterdir()):
        raise ConfigError(f"{out} is not empty and holds no iterate.json: give a new or empty folder", "--out")
    out.mkdir(parents=True, exist_ok=True)
    temperature = _write_start(config.start, out)
    record = {"game": config.game, "settings": config.settings(), "temperature": temperature, "best": 0,
              "started": _now(), "seconds": 0.0, "generations": []}
    _save(out, record)
    return record


def _write_start(start: str, out: Path) -> float:
    """Copies the start file to ``out/gen0.json.gz`` and writes its network
    as fitted (the export temperature taken out of its last layer) to
    ``out/gen0.npz``; returns that temperature."""
    from kibitz.agents.formats.export import network_of_agent_file, sharpened
    from kibitz.agents.formats.kibitz_agent_loader import read_document
    from kibitz.solvers import network

    temperature = float(read_document(start).get("source", {}).get("temperature", 1.0))
    spec, params = network_of_agent_file(start)
    network.save(out / "gen0.npz", spec, sharpened(params, 1.0 / temperature) if temperature != 1.0 else params)
    shutil.copyfile(start, out / "gen0.json.gz")
    return temperature


def teacher_spec(config: IterateConfig, best_file: Path) -> str:
    """The teacher of a generation: IS-MCTS on the best network's prior."""
    extra = f",{config.search}" if config.search else ""
    return f"ismcts(prior=net({best_file.resolve()}),sims={config.sims}{extra})"


def _distill_step(config: IterateConfig, out: Path, g: int, best: int, deadline, log) -> dict | None:
    """Step 1 of generation ``g``: the teacher's games and the fit into
    ``gen{g}/``. Returns the step's figures, or None if the time limit ended
    the collection first (its games are kept for the next run)."""
    from kibitz.agents.training.distill_run import DistillConfig, distill
    from kibitz.solvers import network

    spec0, _ = network.load(out / "gen0.npz")
    best_spec, _ = network.load(out / f"gen{best}.npz")
    hidden = config.hidden or spec0.hidden
    init = out / f"gen{best}.npz" if best_spec.hidden == hidden else None
    teacher = teacher_spec(config, out / f"gen{best}.json.gz")
    left = None if deadline is None else max(deadline - time.monotonic(), 1e-3)
    dc = DistillConfig(config.game, teacher=teacher, opponent=config.opponent, out=str(out / f"gen{g}" / "net.npz"),
                       data=str(out / f"gen{g}" / "data"), games=config.games, workers=config.workers,
                       chunk=config.chunk, time_limit=left, encoding=spec0.encoding, output=spec0.output,
                       hidden=hidden, epochs=config.epochs, lr=config.lr, init=str(init) if init else None,
                       seed=config.seed + g)
    log(f"generation {g}: distilling {config.games} games of {teacher} against {config.opponent}")
    t0 = time.perf_counter()
    result = distill(dc)
    if result.stopped is not None:
        raise SolveStopped(f"\ninterrupted in the fit of generation {g}: the teacher's games are kept in "
                           f"{result.folder}; the same command continues", 130)
    if result.played < config.games:
        return None
    best_epoch = _finite(result.best)
    return {"teacher": teacher, "init": f"gen{best}" if init else None, "hidden": list(hidden),
            "encoding": spec0.encoding, "output": spec0.output, "games": result.played,
            "decisions": result.decisions, "epoch": best_epoch["epoch"], "loss": best_epoch["loss"],
            "held_out_loss": best_epoch["held_out_loss"], "agreement": best_epoch["agreement"],
            "collect_seconds": result.collect_seconds, "fit_seconds": result.fit_seconds,
            "seconds": time.perf_counter() - t0}


def _match_step(config: IterateConfig, out: Path, g: int, best: int, log) -> dict:
    """Step 3 of generation ``g``: the two tournaments of one seed and their pairing."""
    from kibitz.agents.matches.tournament import TournamentConfig, paired_comparison

    t0 = time.perf_counter()
    seed = config.seed + g
    folders = {}
    for side, k in (("new", g), ("best", best)):
        folder = out / f"gen{g}" / f"match_{side}"
        log(f"generation {g}: match of generation {k} against {config.opponent} ({config.match_games} games)")
        outcome = TournamentConfig(config.game, (f"net({(out / f'gen{k}.json.gz').resolve()})", config.opponent),
                                   config.match_games, seed=seed, workers=config.workers, out=str(folder),
                                   resume=(folder / "tournament.json").exists()).run()
        if outcome.interrupted or outcome.finished < outcome.total:
            raise SolveStopped(f"\ninterrupted in the match of generation {g}: its finished games are kept in "
                               f"{folder}; the same command continues", 130)
        folders[side] = folder
    slot = paired_comparison(str(folders["new"]), str(folders["best"]))["slots"][0]
    slot = _finite(slot)
    return {"opponent": config.opponent, "seed": seed, "games": slot["games"], "deals": slot["deals"],
            "new": slot["mean_a"], "best": slot["mean_b"], "difference": slot["difference"], "se": slot["se"],
            "ci95_low": slot["ci95_low"], "ci95_high": slot["ci95_high"], "seconds": time.perf_counter() - t0}


def _generation(config: IterateConfig, out: Path, record: dict, g: int, deadline, log) -> bool:
    """Runs the steps of generation ``g`` not yet in ``record``, saving it
    after each; returns False if the time limit stopped it."""
    from kibitz.agents.formats.export import export_network

    gens = record["generations"]
    if len(gens) < g:
        gens.append({"generation": g, "best_before": record["best"], "steps": [], "seconds": 0.0})
    rec = gens[g - 1]
    best = rec["best_before"]
    if "distill" not in rec["steps"]:
        figures = _distill_step(config, out, g, best, deadline, log)
        if figures is None:
            return False
        rec.update(distill=figures, steps=rec["steps"] + ["distill"], seconds=rec["seconds"] + figures["seconds"])
        _save(out, record)
    if "export" not in rec["steps"]:
        export_network(out / f"gen{g}" / "net.npz", out / f"gen{g}.json.gz", temperature=record["temperature"])
        rec.update(export=f"gen{g}.json.gz", steps=rec["steps"] + ["export"])
        _save(out, record)
    if "match" not in rec["steps"]:
        if deadline is not None and time.monotonic() > deadline:
            return False
        match = _match_step(config, out, g, best, log)
        kept = match["ci95_low"] is not None and match["ci95_low"] > 0
        rec.update(match=match, kept=kept, steps=rec["steps"] + ["match"], seconds=rec["seconds"] + match["seconds"],
                   finished=_now())
        if kept:
            record["best"] = g
            (out / f"gen{g}.npz").write_bytes((out / f"gen{g}" / "net.npz").read_bytes())
        _save(out, record)
        log(generation_line(rec))
    return True


def run(config: IterateConfig, log: Callable[[str], None] = quiet) -> IterateResult:
    """Runs (or continues) ``config``'s generations in ``config.out`` (see
    the module docstring); ``log`` receives a line as each step begins and
    each generation's line as it ends. Raises ConfigError (naming the
    option), SolveStopped on Ctrl-C (the finished steps kept), and the
    errors of the distillation and the tournaments."""
    out = Path(config.out)
    record = _open_record(config, out)
    t0 = time.perf_counter()
    deadline = None if config.time_limit is None else time.monotonic() + config.time_limit
    stopped = None
    try:
        for g in range(1, config.generations + 1):
            if deadline is not None and time.monotonic() > deadline or \
                    not _generation(config, out, record, g, deadline, log):
                stopped = "time"
                break
    except KeyboardInterrupt:
        raise SolveStopped(f"\ninterrupted: the finished steps are kept in {out}; the same command continues",
                           130) from None
    finally:
        record["seconds"] += time.perf_counter() - t0
        _save(out, record)
    return IterateResult(config=config, record=record, best=out / f"gen{record['best']}.json.gz", stopped=stopped)
