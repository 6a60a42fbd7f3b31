"""One run of ``kibitz distill`` or ``kibitz improve``: collect the data, fit, write the network.

    from kibitz.agents.training.distill_run import DistillConfig, distill
    config = DistillConfig("kuhn_poker", teacher="ismcts(sims=50)", opponent="random", games=40, out="kuhn-net.npz")
    result = distill(config)
    print(result.best["agreement"])

A run is one frozen config, checked when it is made (:class:`ConfigError`
names the option at fault): :class:`DistillConfig` (a teacher's moves,
docs/solvers/training.md, "Distillation") or :class:`ImproveConfig` (one
step of policy improvement of a network agent from rollouts of its moves);
the settings that made the shipped networks are named presets
(:data:`PRESETS`): ``DistillConfig.preset("underdog", "underdog",
out="net.npz")``.
Both have two stages. The data is collected into a folder of shards
(:mod:`.distill`'s teacher games, :mod:`.improve`'s rollout labels; default
``OUT.data``) that a later run with the same settings continues, so an
interruption loses at most the games in flight; ``time_limit`` ends the
collection early and the games played are fitted. Then the network is
fitted (:func:`kibitz.solvers.distill.fit`), Ctrl-C or SIGTERM ending the
fit with the best epoch so far (the result's ``stopped``), and written to
``out`` with :func:`kibitz.solvers.network.save`. Nothing here prints: the
stages report to a ``progress`` callback (:class:`DistillProgress`), and
bad input raises :class:`ConfigError`, a run that cannot go on
:class:`SolveFailed`, an interrupted collection (or a fit before its first
epoch ended) :class:`SolveStopped`, each saying what is kept.
"""

from __future__ import annotations

import dataclasses
import numbers
import signal
import time
from pathlib import Path
from types import MappingProxyType
from typing import Callable, ClassVar, Mapping

from kibitz.solvers.solve import ConfigError, SolveFailed, SolveStopped


@dataclasses.dataclass(frozen=True)
class DistillProgress:
    """Where a run is, for a progress bar: ``done`` of ``total`` ``unit``s
    of its ``stage`` (``"teacher games"`` or ``"rollout games"``, then
    ``"fit"``), with the latest ``figures`` as text. A stage's first report
    says where it starts (the games the data folder already holds); a
    folder that holds every game reports no collection."""

    stage: str
    unit: str
    done: int
    total: int
    figures: dict = dataclasses.field(default_factory=dict)


def _at_least(lowest) -> None:
    """ConfigError naming the first ``(option, value, lowest)`` whose value is below its lowest."""
    for name, value, low in lowest:
        if value < low:
            raise ConfigError(f"{value}: at least {low}", name)


def _check_common(config) -> None:
    """The checks of the options both runs have."""
    _at_least((("--games", config.games, 1), ("--workers", config.workers, 1), ("--chunk", config.chunk, 1),
               ("--epochs", config.epochs, 1), ("--batch", config.batch, 1), ("--seed", config.seed, 0)))
    if not 0 < config.lr <= 1:
        raise ConfigError(f"{config.lr}: allowed: 0 < x <= 1", "--lr")
    if config.time_limit is not None and not config.time_limit > 0:
        raise ConfigError(f"{config.time_limit}: a duration must be more than 0", "--time")
    if config.out is None and config.data is None:
        raise ConfigError("give --out (the network file; the data goes to OUT.data) or --data", "--out")


#: The settings of the shipped networks (agents/trained/README.md; ``make
#: trained GAME=...`` runs them), by command and name: each maps the
#: config's fields to the values that made the network, and
#: :meth:`DistillConfig.preset` / :meth:`ImproveConfig.preset` (``kibitz
#: distill|improve --preset NAME``) build a config from them. A name is the
#: game's short name; ``GAME-init`` is the first distillation of a game
#: whose network starts (``init``) from one fitted to its heuristic, into
#: ``build/distill/GAME_heuristic`` (Doubt and Bet's ``anchor``: a path
#: relative to the repository's root, where ``make trained`` runs).
PRESETS = MappingProxyType({
    "distill": MappingProxyType({
        "underdog-init": MappingProxyType(dict(teacher="heuristic", encoding="observation_tensor", games=3000,
                                               chunk=100, epochs=30)),
        "underdog": MappingProxyType(dict(teacher="ismcts(belief_opponents,sims=400)", encoding="observation_tensor",
                                          games=500, chunk=4, epochs=15, lr=1e-3)),
        "pub-init": MappingProxyType(dict(teacher="heuristic", opponent="none", encoding="compact", games=4000,
                                          chunk=100, epochs=20)),
        "pub": MappingProxyType(dict(teacher="ismcts", encoding="compact", games=1404, chunk=4, epochs=15)),
        "over_under": MappingProxyType(dict(teacher="ismcts(one_step)", encoding="compact", games=320, chunk=8,
                                            epochs=40)),
        "doubt_and_bet-init": MappingProxyType(dict(teacher="heuristic", opponent="none", encoding="compact",
                                                    games=1500, chunk=50, epochs=3)),
        "doubt_and_bet": MappingProxyType(dict(teacher="ismcts(shortlist_model,sims=300)", encoding="compact",
                                               games=724, chunk=4, epochs=15, lr=3e-4,
                                               anchor="build/distill/doubt_and_bet_heuristic", anchor_games=150,
                                               anchor_weight=0.25)),
    }),
    "improve": MappingProxyType({
        "underdog": MappingProxyType(dict(rounds=1, games=8000, chunk=20, epochs=8, lr=3e-4, kl=0.01)),
    }),
})


def _from_preset(cls, name: str, first: str, overrides: dict):
    """``cls(first, ...)`` with the values of its preset ``name``
    (``cls.PRESETS``), those in ``overrides`` replaced; ConfigError naming
    ``--preset`` for an unknown name."""
    if name not in cls.PRESETS:
        raise ConfigError(f"{name!r}; allowed: {', '.join(cls.PRESETS)}", "--preset")
    return cls(first, **{**cls.PRESETS[name], **overrides})


@dataclasses.dataclass(frozen=True)
class DistillConfig:
    """One ``kibitz distill`` run; every field is an option of the command
    (``time_limit`` in seconds, ``data`` the folder ``--data``, ``init``,
    ``anchor`` and ``replay`` the files and folders of ``--init``,
    ``--anchor`` and ``--replay``). ``opponent`` ``"none"`` (or ``""``): the
    teacher holds every seat. ``out`` None: the network is not written (the
    result holds it), and ``data`` must be given."""

    #: the presets of :meth:`preset`: ``PRESETS["distill"]``
    PRESETS: ClassVar[Mapping[str, Mapping]] = PRESETS["distill"]

    game: str
    teacher: str
    opponent: str = "heuristic"
    out: str | None = None
    data: str | None = None
    games: int = 200
    workers: int = 1
    chunk: int = 4
    time_limit: float | None = None
    encoding: str = "information_state_tensor"
    output: str | None = None
    hidden: tuple = (128, 128)
    epochs: int = 20
    lr: float = 1e-3
    batch: int = 256
    init: str | None = None
    anchor: str | None = None
    anchor_games: int | None = None
    anchor_weight: float = 1.0
    replay: str | None = None
    behaviour: str | None = None
    target: str = "moves"
    seed: int = 0

    def __post_init__(self):
        from kibitz.solvers.distill import TARGETS
        from kibitz.solvers.network import OUTPUTS

        if self.opponent == "none":
            object.__setattr__(self, "opponent", "")
        _check_common(self)
        if not self.hidden or not all(isinstance(h, numbers.Integral) and h >= 1 for h in self.hidden):
            raise ConfigError(f"{self.hidden}: one or more layer widths of at least 1", "--hidden")
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        if self.output is not None and self.output not in OUTPUTS:
            raise ConfigError(f"{self.output!r}; allowed: {', '.join(OUTPUTS)}", "--output")
        if self.target not in TARGETS:
            raise ConfigError(f"{self.target!r}; allowed: {', '.join(TARGETS)}", "--target")
        if not 0 < self.anchor_weight <= 1000:
            raise ConfigError(f"{self.anchor_weight}: allowed: 0 < x <= 1000", "--anchor-weight")
        if self.anchor_games is not None:
            _at_least((("--anchor-games", self.anchor_games, 1),))
        if (self.anchor_games is not None or self.anchor_weight != 1.0) and not self.anchor:
            raise ConfigError("--anchor-games and --anchor-weight need --anchor DIR")
        if self.behaviour is not None and self.replay:
            raise ConfigError("--replay takes no --behaviour: a behaviour agent's games are not replayed "
                              "from the teacher's labels")

    @classmethod
    def preset(cls, name: str, game: str, **overrides) -> DistillConfig:
        """The config of ``PRESETS["distill"][name]`` (the settings of a
        shipped network) for ``game``, any field in ``overrides`` replacing
        the preset's value (``out``, ``data``, ``seed``, ...); ConfigError
        naming ``--preset`` (with the allowed names) for an unknown ``name``."""
        return _from_preset(cls, name, game, overrides)


@dataclasses.dataclass(frozen=True)
class ImproveConfig:
    """One ``kibitz improve`` run; every field is an option of the command
    (``agent_file`` the network agent file AGENT_FILE, ``time_limit`` in
    seconds, ``data`` the folder ``--data``). ``out`` None: the network is
    not written (the result holds it), and ``data`` must be given."""

    #: the presets of :meth:`preset`: ``PRESETS["improve"]``
    PRESETS: ClassVar[Mapping[str, Mapping]] = PRESETS["improve"]

    agent_file: str
    out: str | None = None
    opponent: str = "heuristic"
    data: str | None = None
    games: int = 4000
    rounds: int = 0
    moves: int = -1
    workers: int = 1
    chunk: int = 20
    time_limit: float | None = None
    epochs: int = 8
    lr: float = 3e-4
    batch: int = 512
    kl: float = 0.01
    seed: int = 0

    def __post_init__(self):
        _check_common(self)
        _at_least((("--rounds", self.rounds, 0), ("--moves", self.moves, -1)))
        if not 0 <= self.kl <= 1000:
            raise ConfigError(f"{self.kl}: allowed: 0 <= x <= 1000", "--kl")

    @classmethod
    def preset(cls, name: str, agent_file: str, **overrides) -> ImproveConfig:
        """The config of ``PRESETS["improve"][name]`` (the settings of a
        shipped network's improvement step) for ``agent_file``, any field in
        ``overrides`` replacing the preset's value; ConfigError naming
        ``--preset`` (with the allowed names) for an unknown ``name``."""
        return _from_preset(cls, name, agent_file, overrides)


def _share(x: float) -> str:
    """A share as a percentage; 'n/a' where no held-out game measured it."""
    return "n/a (no held-out games)" if x != x else f"{x:.1%}"


def _held_out(record: dict, digits: int = 4) -> str:
    """The held-out loss of an epoch's record; 'n/a' where no game was held
    out (the fit then keeps the epoch of the lowest training loss)."""
    return "n/a" if record["agreement"] != record["agreement"] else f"{record['held_out_loss']:.{digits}f}"


@dataclasses.dataclass
class _RunResult:
    """What both runs make: the network (``spec``, ``params``, written to
    ``config.out`` when given), the data ``folder`` with the games it holds
    (``played``) and their ``decisions`` (``held_out`` of them held out),
    the fit's ``history`` (a record per epoch), the seconds of this run's
    collection and fit, and ``stopped``: the signal that ended the fit
    early (None: it ran every epoch)."""

    config: object
    game: object
    spec: object
    params: list
    folder: Path
    played: int
    decisions: int
    held_out: int
    history: list
    collect_seconds: float
    fit_seconds: float
    stopped: int | None


@dataclasses.dataclass
class DistillResult(_RunResult):
    """What a distill run made (the fields of both runs: the network of the
    kept epoch, the data folder and its counts, the fit's ``history``, per
    epoch ``loss``, ``held_out_loss``, ``agreement`` and with an anchor
    ``anchor_agreement``, the seconds, ``stopped``), and the anchor's games
    and decisions (0: no anchor)."""

    anchor_games: int = 0
    anchor_decisions: int = 0

    @property
    def best(self) -> dict:
        """The record of the epoch kept (the lowest held-out loss)."""
        return min(self.history, key=lambda r: r["held_out_loss"])

    def lines(self) -> list[str]:
        """The summary ``kibitz distill`` prints."""
        c, spec, best = self.config, self.spec, self.best
        lines = [f"game:        {self.game}",
                 f"teacher:     {c.teacher}" + (f" against {c.opponent}" if c.opponent else " in every seat")
                 + (f", labelling the moves of {c.behaviour}" if c.behaviour else ""),
                 f"data:        {self.folder}: {self.played:,} games, {self.decisions:,} decisions "
                 f"({self.held_out:,} held out); collection {self.collect_seconds:.1f} s this run"
                 + (f", replaying {c.replay} where it has the games" if c.replay else "")]
        if c.anchor:
            lines.append(f"anchor:      {c.anchor}: {self.anchor_games:,} games, {self.anchor_decisions:,} "
                         f"decisions, weight {c.anchor_weight:g} each")
        lines += [f"encoding:    {c.encoding} input, {spec.output} output; hidden {','.join(map(str, c.hidden))}; "
                  f"target {c.target}",
                  f"fit:         {c.epochs} epochs, batch {c.batch}, lr {c.lr:g}, seed {c.seed}"
                  + (f", from {c.init}" if c.init else "") + f": {self.fit_seconds:.1f} s"]
        lines += [f"  epoch {r['epoch']:>3}: loss {r['loss']:.4f}, held-out loss {_held_out(r)}, "
                  f"agreement {_share(r['agreement'])}"
                  + (f", anchor agreement {_share(r['anchor_agreement'])}" if "anchor_agreement" in r else "")
                  for r in self.history]
        return lines + [f"kept:        epoch {best['epoch']} (held-out loss {_held_out(best)}, "
                        f"agreement with the teacher {_share(best['agreement'])})",
                        f"network:     {c.out or 'not written'} ({spec.input_size:,} inputs, "
                        f"{spec.num_actions:,} actions)"]


@dataclasses.dataclass
class ImproveResult(_RunResult):
    """What an improve run made (the fields of both runs: the network, that
    of the kept epoch or the played network if no epoch gained, the data
    folder and its counts, the fit's ``history``, per epoch ``loss`` and
    ``held_out_gain``, the seconds, ``stopped``), and the kept network's
    held-out ``gain`` a decision with its standard error ``gain_se`` over
    ``gain_games`` games."""

    gain: float = 0.0
    gain_se: float = 0.0
    gain_games: int = 0

    @property
    def kept(self) -> int | None:
        """The epoch kept: the first of the highest held-out gain, if above
        0 (None: the played network is kept)."""
        best = max(self.history, key=lambda r: r["held_out_gain"], default=None)
        return best["epoch"] if best is not None and best["held_out_gain"] > 0 else None

    def lines(self) -> list[str]:
        """The summary ``kibitz improve`` prints."""
        c, kept = self.config, self.kept
        limits = ([f"{c.rounds} round{'s' if c.rounds > 1 else ''}"] if c.rounds else []) \
            + ([f"{c.moves} move{'s' if c.moves != 1 else ''}"] if c.moves >= 0 else [])
        lines = [f"game:        {self.game}",
                 f"network:     {c.agent_file} (its policy as played) against {c.opponent}",
                 f"data:        {self.folder}: {self.played:,} games, {self.decisions:,} decisions "
                 f"({self.held_out:,} held out), every legal move rolled out "
                 f"{' and '.join(limits) or 'to the end'}; collection {self.collect_seconds:.1f} s this run",
                 f"fit:         {c.epochs} epochs, batch {c.batch}, lr {c.lr:g}, KL weight {c.kl:g}, seed {c.seed}: "
                 f"{self.fit_seconds:.1f} s"]
        lines += [f"  epoch {r['epoch']:>3}: loss {r['loss']:+.5f}, held-out gain {r['held_out_gain']:+.5f} "
                  "a decision" for r in self.history]
        lines.append("kept:        " + (f"epoch {kept}" if kept else "the played network (no epoch gained on the "
                                                                       "held-out games)")
                     + (f": held-out gain {self.gain:+.5f} ({self.gain_se:.5f}) a decision over "
                        f"{self.gain_games:,} games" if self.gain_games else ""))
        written = f"{c.out}; export it with: kibitz export {c.out} -o AGENT.json.gz" if c.out else "not written"
        return lines + [f"written:     {written}"]


def check_agent(spec: str, game, option: str) -> None:
    """ConfigError naming ``option`` unless ``spec`` makes an automatic agent for ``game``."""
    from kibitz.agents.registry import check_automatic_agent

    check_automatic_agent(spec, game, option, "play teacher games")


def data_folder(data, out) -> Path:
    """The data folder (``data``, default ``OUT.data``), made if missing;
    ConfigError naming ``--data`` if it cannot be."""
    folder = Path(data) if data else Path(str(out) + ".data")
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"{folder} is not a folder", "--data")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"{folder}: {e.strerror}", "--data") from None
    return folder


def _collect(folder: Path, games: int, time_limit: float | None, progress, stage: str, collect):
    """Runs ``collect(on_shard, should_stop)`` (a collection of
    :mod:`.distill`'s kind into ``folder``), stopped after ``time_limit``
    seconds, reporting the games and decisions to ``progress``. A folder of
    other settings is a ConfigError naming ``--data`` (``--replay`` for the
    folder replayed); Ctrl-C is SolveStopped (130), the finished shards
    kept. Returns ``(games the folder holds, seconds)``."""
    from kibitz.agents.training import distill as teacher_games

    t0 = time.perf_counter()
    done = min(sum(hi - lo for lo, hi, _ in teacher_games.done_shards(folder)), games)
    report = progress if done < games else None
    if report is not None:
        report(DistillProgress(stage, "game", done, games))
    examples = 0

    def on_shard(lo, hi, count):
        nonlocal done, examples
        done, examples = done + hi - lo, examples + count
        if report is not None:
            report(DistillProgress(stage, "game", done, games, {"decisions": f"{examples:,}"}))

    try:
        played = collect(on_shard, (lambda: time.perf_counter() - t0 > time_limit) if time_limit else None)
    except teacher_games.DataMismatch as e:
        raise ConfigError(str(e), "--replay" if isinstance(e, teacher_games.ReplayMismatch) else "--data") from None
    except KeyboardInterrupt:
        raise SolveStopped(f"\ninterrupted: the finished games are kept in {folder}; the same command continues",
                           130) from None
    return played, time.perf_counter() - t0


def _first_games(ex, games: int):
    """The rows of ``ex`` of the games ``0..games-1`` (a shard of an earlier run may hold later games)."""
    return ex.rows((ex.game < games).nonzero()[0]) if (ex.game >= games).any() else ex


def _fit(fit, epochs: int, progress, figures: Callable[[dict], dict], kept: str):
    """Runs ``fit(on_epoch, should_stop)`` (:func:`kibitz.solvers.distill.fit`),
    reporting each epoch's ``figures(record)`` to ``progress``; Ctrl-C or
    SIGTERM ends it with the best epoch so far. Returns ``(params, history,
    signal or None)``; SolveStopped (130, 143 on SIGTERM) before any epoch
    ended, saying that nothing is written and what is ``kept``; SolveFailed
    for data the fit cannot take."""
    from kibitz.solvers import driver

    done = 0
    if progress is not None:
        progress(DistillProgress("fit", "epoch", done, epochs))

    def on_epoch(record):
        nonlocal done
        done += 1
        if progress is not None:
            progress(DistillProgress("fit", "epoch", done, epochs, figures(record)))

    try:
        with driver.stop_on_signals() as stop:  # Ctrl-C ends the fit with the best epoch so far
            params, history = fit(on_epoch, lambda: stop["signal"] is not None)
    except ValueError as e:
        raise SolveFailed(str(e)) from None
    if params is None:
        raise SolveStopped(f"\ninterrupted before the first epoch ended: no network written; {kept}, and the same "
                           "command fits again", 130 if stop["signal"] == signal.SIGINT else 143)
    return params, history, stop["signal"]


def _load_game(game_string: str):
    from kibitz.games import GameStringError, load_game

    try:
        return load_game(game_string)
    except GameStringError as e:
        raise ConfigError(str(e), "GAME") from None


def _init_params(path, spec):
    """The parameters of the network file ``path``; ConfigError naming ``--init`` unless it is a network of ``spec``."""
    from kibitz.solvers import network

    try:
        init_spec, init = network.load(path)
    except ValueError as e:
        raise ConfigError(str(e), "--init") from None
    if init_spec != spec:
        raise ConfigError(f"{path} is a network of {init_spec.encoding} input, {init_spec.output} output, hidden "
                          f"{init_spec.hidden} for {init_spec.game}; this fit needs {spec.encoding}, {spec.output}, "
                          f"{spec.hidden} for {spec.game}", "--init")
    return init


def _check_distill(config: DistillConfig):
    """The game, the network's spec, the ``--init`` parameters and the
    anchor's shards of ``config``, each checked (ConfigError naming the
    option) before anything is made."""
    from kibitz.agents.training import distill as teacher_games
    from kibitz.solvers import network
    from kibitz.solvers.train_run import output_kind

    game = _load_game(config.game)
    output = output_kind(game, config.encoding, config.output)
    check_agent(config.teacher, game, "--teacher")
    if config.opponent:
        check_agent(config.opponent, game, "--opponent")
    if config.behaviour is not None:
        check_agent(config.behaviour, game, "--behaviour")
    spec = network.NetworkSpec.for_game(game, hidden=config.hidden, encoding=config.encoding, output=output)
    init = _init_params(config.init, spec) if config.init else None
    anchor_paths = None
    if config.anchor:
        try:
            anchor_paths = teacher_games.anchor_shards(Path(config.anchor), str(game), config.encoding,
                                                       config.anchor_games)
        except teacher_games.DataMismatch as e:
            raise ConfigError(str(e), "--anchor") from None
    return game, spec, init, anchor_paths


def _stages(c, game, spec, progress, result: type, *, stage: str, kept: str, collect, load, fit, figures,
            extra=None):
    """The two stages of both runs: the data folder (:func:`data_folder`),
    ``collect(folder, on_shard, should_stop)`` reporting as ``stage``
    (:func:`_collect`), the examples ``load(shards)`` of the games
    ``0..games-1`` (SolveFailed if they cannot be read), then ``fit(ex,
    inv_scale, on_epoch, should_stop)`` reporting ``figures(record)``
    (:func:`_fit`; ``kept``: what an interruption keeps, said before the
    folder) and the network written to ``out``. Returns the ``result``
    with the fields ``extra(ex, params)`` adds."""
    from kibitz.agents.training import distill as teacher_games
    from kibitz.solvers import distill as distill_mod
    from kibitz.solvers import network
    from kibitz.solvers import train as train_mod

    folder = data_folder(c.data, c.out)
    played, collect_seconds = _collect(folder, c.games, c.time_limit, progress, stage,
                                       lambda on_shard, should_stop: collect(folder, on_shard, should_stop))
    try:
        ex = _first_games(load(teacher_games.shards_for(folder, c.games)), c.games)
    except ValueError as e:
        raise SolveFailed(str(e)) from None
    inv = 1.0 / train_mod.input_scale(game, spec.encoding, c.seed)
    t1 = time.perf_counter()
    params, history, stopped = _fit(lambda on_epoch, should_stop: fit(ex, inv, on_epoch, should_stop),
                                    c.epochs, progress, figures, f"{kept} {folder}")
    if c.out is not None:
        network.save(c.out, spec, params)
    more = extra(ex, params) if extra is not None else {}
    return result(config=c, game=game, spec=spec, params=params, folder=folder, played=played, decisions=len(ex),
                  held_out=int(distill_mod.held_out(ex).sum()), history=history, collect_seconds=collect_seconds,
                  fit_seconds=time.perf_counter() - t1, stopped=stopped, **more)


def distill(config: DistillConfig, *, progress: Callable[[DistillProgress], None] | None = None) -> DistillResult:
    """Runs ``config``: the teacher's games into the data folder, then the
    fit, the network written to ``config.out`` when given (see the module
    docstring for what it raises)."""
    from kibitz.agents.training import distill as teacher_games
    from kibitz.solvers import distill as distill_mod

    c = config
    game, spec, init, anchor_paths = _check_distill(c)
    anchor = {}

    def load(shards):  # the anchor is read with the teacher's data, after the collection
        ex = distill_mod.load_examples(shards, c.target)
        anchor["ex"] = distill_mod.load_examples(anchor_paths, "moves") if anchor_paths else None
        return ex

    def anchor_counts(ex, params):
        a = anchor["ex"]
        return {"anchor_games": len(set(a.game.tolist())), "anchor_decisions": len(a)} if a is not None else {}

    return _stages(
        c, game, spec, progress, DistillResult, stage="teacher games", kept="the teacher's games are kept in",
        collect=lambda folder, on_shard, should_stop: teacher_games.collect(
            str(game), c.teacher, c.opponent, c.encoding, c.seed, c.games, folder, chunk=c.chunk, workers=c.workers,
            on_shard=on_shard, should_stop=should_stop, replay=c.replay, behaviour=c.behaviour),
        load=load,
        fit=lambda ex, inv, on_epoch, should_stop: distill_mod.fit(
            game, spec, ex, epochs=c.epochs, lr=c.lr, batch=c.batch, seed=c.seed, inv_scale=inv, init=init,
            on_epoch=on_epoch, anchor=anchor["ex"], anchor_weight=c.anchor_weight, should_stop=should_stop),
        figures=lambda r: {"loss": f"{r['loss']:.3f}", "held_out": _held_out(r, 3), "agree": _share(r['agreement'])},
        extra=anchor_counts)


def _check_improve(config: ImproveConfig):
    """The game and the network (spec, parameters) of ``config``'s agent
    file, the opponent and the rollout limits checked (ConfigError naming
    the option) before anything is made."""
    from kibitz.agents.formats.export import network_of_agent_file
    from kibitz.agents.formats.kibitz_agent_loader import AgentFileError
    from kibitz.agents.training import improve as rollouts
    from kibitz.games import load_game

    try:
        spec, params = network_of_agent_file(config.agent_file)
    except AgentFileError as e:
        raise ConfigError(str(e), "AGENT_FILE") from None
    game = load_game(spec.game)
    check_agent(config.opponent, game, "--opponent")
    try:
        rollouts.check_rounds(game, config.rounds, config.moves)
    except ValueError as e:
        raise ConfigError(str(e), "--rounds" if config.rounds else "--moves") from None
    return game, spec, params


def improve(config: ImproveConfig, *, progress: Callable[[DistillProgress], None] | None = None) -> ImproveResult:
    """Runs ``config``: the rollout labels into the data folder, then the
    fit, the network written to ``config.out`` when given (see the module
    docstring for what it raises)."""
    from kibitz.agents.training import improve as rollouts
    from kibitz.solvers import distill as distill_mod

    c = config
    game, spec, params = _check_improve(c)

    def gain(ex, new):
        held = distill_mod.held_out_gain(game, spec, new, ex)
        return dict(zip(("gain", "gain_se", "gain_games"), held))

    return _stages(
        c, game, spec, progress, ImproveResult, stage="rollout games", kept="the rollout labels are kept in",
        collect=lambda folder, on_shard, should_stop: rollouts.collect(
            c.agent_file, c.opponent, c.seed, c.games, folder, chunk=c.chunk, workers=c.workers, rounds=c.rounds,
            moves=c.moves, on_shard=on_shard, should_stop=should_stop),
        load=distill_mod.load_rollouts,
        fit=lambda ex, inv, on_epoch, should_stop: distill_mod.fit(
            game, spec, ex, epochs=c.epochs, lr=c.lr, batch=c.batch, seed=c.seed, inv_scale=inv, init=params,
            on_epoch=on_epoch, objective="improve", kl=c.kl, should_stop=should_stop),
        figures=lambda r: {"loss": f"{r['loss']:.4f}", "held_out_gain": f"{r['held_out_gain']:+.5f}"},
        extra=gain)
