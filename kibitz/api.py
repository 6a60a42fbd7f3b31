"""kibitz's Python API: what the commands do, as functions.

    import kibitz
    result = kibitz.solve("kuhn_poker", algorithm="cfr+", iterations=1000, out="kuhn.json")
    kibitz.export("kuhn.json", "kuhn-agent.json")
    outcome = kibitz.tournament("kuhn_poker", ["policy(kuhn-agent.json)", "random"], games=100)

Each function takes what its command takes (the names of the command's
options, ``-`` as ``_``) and raises ValueError (or a subclass naming the
option) for bad input instead of printing; nothing here prints but
:func:`play`, whose game goes to its ``write`` (``print`` by default).
"""

from __future__ import annotations

from typing import Callable

from kibitz.solvers.solve import ConfigError, SolveConfig, SolveResult, quiet
from kibitz.solvers.train_run import TrainRun

# the configs, errors and limits are imported with the module (the CLI
# parses its options with them); what a run needs beyond them (JAX, onnx,
# onnxruntime) is imported when a function first runs, so that
# ``import kibitz.api`` (and the CLI's start) loads none of those

__all__ = ["load_game", "make_agent", "solve", "SolveConfig", "SolveResult", "train", "TrainRun", "export",
           "tournament", "compare", "exploit"]
# each section below adds its names to __all__ beside its definitions


def load_game(game_string: str):
    """The ``pyspiel.Game`` of ``game_string``, kibitz's games registered
    (GameStringError, a ValueError, names what is wrong)."""
    from kibitz.games import load_game as load
    return load(game_string)


def make_agent(spec: str, game, player: int, seed: int | None = None):
    """The agent (a ``pyspiel.Bot``) that ``spec`` names for seat ``player`` of ``game``."""
    from kibitz.agents.registry import make_agent as make
    return make(spec, game, player, seed)


def _check_fallback(spec: str, game, seed: int) -> None:
    make_agent(spec, game, 0, seed)


def solve(game: str | SolveConfig, *, log: Callable[[str], None] = quiet, **options) -> SolveResult:
    """Solves ``game`` as ``kibitz solve`` does: ``options`` are the fields
    of :class:`kibitz.solvers.solve.SolveConfig` (``algorithm``,
    ``iterations``, ``time_limit`` in seconds, ``out``, ``resume``, ...), or
    pass a whole config. The result has the policy, its NashConv and its
    document (written to ``out`` when given). ``log`` receives the run's
    progress lines (what ``kibitz solve`` writes to stderr)."""
    config = game if isinstance(game, SolveConfig) else SolveConfig(game, **options)
    if options and isinstance(game, SolveConfig):
        raise ValueError("give a SolveConfig or options, not both")
    from kibitz.solvers.solve import solve as run
    return run(config, log=log, check_fallback=_check_fallback)


def train(game: str | TrainRun, *, log: Callable[[str], None] = quiet, **options):
    """Trains a network policy for ``game`` as ``kibitz train`` does:
    ``options`` are the fields of :class:`kibitz.solvers.train_run.TrainRun`
    (``steps``, ``time_limit`` in seconds, ``out``, ``seed``, ``config``: a
    :class:`kibitz.solvers.train.TrainConfig` with the network's and the
    trainer's settings, ...), or pass a whole run. Returns a
    :class:`kibitz.solvers.train_run.TrainResult` (``.trainer.policy_params()``,
    ``.measure``); the network is written to ``out`` when given."""
    from kibitz.solvers.train_run import train as run

    if options and isinstance(game, TrainRun):
        raise ValueError("give a TrainRun or options, not both")
    spec_run = game if isinstance(game, TrainRun) else TrainRun(game, **options)
    opponent = spec_run.config.opponent
    factory = None
    if opponent:
        from kibitz.agents.registry import check_automatic_agent
        from kibitz.games import GameStringError
        try:
            game_object = load_game(spec_run.game)
        except GameStringError as e:
            raise ConfigError(str(e), "GAME") from None
        check_automatic_agent(opponent, game_object, "--opponent", "hold seats in training")

        def factory(g, seat, agent_seed):
            return make_agent(opponent, g, seat, agent_seed)
    return run(spec_run, log=log, opponent=factory)


def export(source, out, *, unseen: str | None = None, name: str | None = None, temperature: float = 1.0) -> dict:
    """Writes the portable agent file ``out`` from a policy file or a
    network checkpoint ``source`` (``kibitz export``); returns its document."""
    from kibitz.agents.formats.export import export_agent
    return export_agent(source, out, unseen=unseen, name=name, temperature=temperature)


def tournament(game, agents=None, games: int = 100, *, log: Callable[[str], None] = quiet, **options):
    """Plays ``agents`` (agent specs, a list or their comma-separated text)
    against each other as ``kibitz tournament`` does: duplicate deals,
    every seat arrangement, ``games`` rounded up to whole deals; options are
    the fields of :class:`kibitz.agents.matches.tournament.TournamentConfig`
    (``seed``, ``workers``, ``out``: the folder of its files, ``resume``,
    ``aivat``, ``progress``, ``ray``), or pass a whole config. The outcome
    (``kibitz.agents.matches.tournament.Outcome``)'s ``results`` hold each agent's
    mean return with its 95% interval (and AIVAT's, with ``aivat``)."""
    from kibitz.agents.matches.tournament import TournamentConfig

    if isinstance(game, TournamentConfig):
        if agents is not None or options:
            raise ValueError("give a TournamentConfig or options, not both")
        config = game
    else:
        config = TournamentConfig(game, agents if agents is not None else (), games, **options)
    return config.run(log)


def exploit(game, agent: str | None = None, out=None, *, stop_flag: dict | None = None, **options) -> dict:
    """A lower bound on the exploitability of ``agent`` (an agent spec) in
    ``game``, as ``kibitz exploit`` measures it: a best response by
    ``method`` (``search``: ISMCTS-BR at each of ``sims`` simulations a
    move; ``learned`` or ``batched``: a network trained for ``iterations``
    updates a seat, measured at ``points`` points) in each of ``seats``
    (default all) against ``agent`` in the others, evaluated on ``games``
    fresh deals. ``options`` are the fields of :class:`ExploitConfig`
    (``method``, ``seats``, ``games``, ``sims``, ``iterations``, ``points``,
    ``options``: the method's settings, docs/solvers/exploit.md;
    ``time_limit`` in seconds: the games so far count and ``resume=True``
    continues the run in ``out``; ``seed``, ``progress``), or pass a whole
    config. ``stop_flag["signal"]`` set by another thread stops it too.
    Writes ``out/exploit.json``, ``curve.csv``, ``curve.png`` and returns the
    exploit.json document: per seat the gain with its 95% interval,
    ``mean_gain`` and ``mean_gain_ci95``. Bad input raises ValueError
    (``ExploitError``, naming the option)."""
    from kibitz.agents.matches.exploit import ExploitConfig

    if isinstance(game, ExploitConfig):
        if agent is not None or out is not None or options:
            raise ValueError("give an ExploitConfig or options, not both")
        config = game
    else:
        if "time" in options:  # the command's name for it
            options["time_limit"] = options.pop("time")
        config = ExploitConfig(game, agent, out, **options)
    return config.run(stop_flag=stop_flag)


def compare(dir_a, dir_b) -> dict:
    """Pairs two tournaments of the same game, seed and agent count game by
    game, as ``kibitz compare`` does: games with the same index share their
    deal, seating and seeds, so each agent slot's difference A - B loses the
    luck they share. Returns ``{"game", "seed", "games", "aivat", "slots"}``,
    per slot both means, ``difference``, ``se`` and its 95% interval
    (deals as clusters), and AIVAT's where both have it. A folder that is
    not such a tournament raises ValueError (``RecordsError``, naming it)."""
    from kibitz.agents.matches.tournament import paired_comparison
    return paired_comparison(str(dir_a), str(dir_b))


# ---------------------------------------------------------------------------
# errors and limits of solve, tournament, train and exploit
# ---------------------------------------------------------------------------

from kibitz.agents.formats.kinds import file_kind  # noqa: E402
from kibitz.agents.matches import exploit as _exploit  # noqa: E402
from kibitz.agents.matches.exploit import ExploitConfig, ExploitError  # noqa: E402
from kibitz.agents.matches.ray_pool import RayRunError  # noqa: E402
from kibitz.agents.matches import tournament as _tournament  # noqa: E402
from kibitz.agents.matches.tournament import (GameFailed, Outcome, RecordsError, TournamentConfig,  # noqa: E402
                                              format_table, read_plan)
from kibitz.solvers.driver import checkpoint_path, stop_on_signals  # noqa: E402
from kibitz.solvers import mccfr_ray as _mccfr_ray  # noqa: E402
from kibitz.solvers.ray_cluster import RayUnavailable  # noqa: E402
from kibitz.solvers import solve as _solve  # noqa: E402
from kibitz.solvers import train_run as _train_run  # noqa: E402
from kibitz.solvers.solve import SolveFailed, SolveStopped  # noqa: E402
from kibitz.solvers.train import TrainConfig  # noqa: E402
from kibitz.solvers.train_run import TrainResult, output_kind  # noqa: E402

ALGORITHMS: tuple = _solve.ALGORITHMS
"""The algorithms of :func:`solve` (``kibitz solve --algorithm``)."""
DEFAULT_ITERATIONS: int = _solve.DEFAULT_ITERATIONS
"""Iterations of a solve run that gives neither ``iterations``, ``time_limit`` nor ``target_nashconv``."""
UNLIMITED_EVAL_EVERY: int = _solve.UNLIMITED_EVAL_EVERY
"""NashConv is evaluated every this many iterations in a solve run without an iteration limit."""
MAX_ACTORS: int = _solve.MAX_ACTORS
"""The most MCCFR actors (``workers`` with ``ray``) of one solve run."""
DEFAULT_BATCH: int = _mccfr_ray.DEFAULT_BATCH
"""Iterations each MCCFR actor runs between merges, by default."""
MAX_GAMES: int = _tournament.MAX_GAMES
"""The most games of one tournament (it lists its games in memory)."""
MAX_WORKERS: int = _tournament.MAX_WORKERS
"""The most worker processes of one tournament."""
DEFAULT_STEPS: int = _train_run.DEFAULT_STEPS
"""Training steps of a train run that gives neither ``steps`` nor ``time_limit``."""
DEFAULT_PROBE_NODES: int = _train_run.DEFAULT_PROBE_NODES
"""The node budget under which a train run's probe is the exact NashConv."""
EXPLOIT_METHODS: tuple = tuple(_exploit.METHODS)
"""The methods of :func:`exploit` (``kibitz exploit --method``)."""
EXPLOIT_SETTINGS: str = _exploit.SETTINGS
"""The settings file an exploit run writes in its folder (what ``resume`` compares)."""

__all__ += ["ConfigError", "SolveFailed", "SolveStopped", "TournamentConfig", "Outcome", "GameFailed",
            "RecordsError", "RayUnavailable", "RayRunError", "TrainConfig", "TrainResult", "ExploitError", "ExploitConfig",
            "ALGORITHMS", "DEFAULT_ITERATIONS", "UNLIMITED_EVAL_EVERY", "MAX_ACTORS", "DEFAULT_BATCH",
            "MAX_GAMES", "MAX_WORKERS", "DEFAULT_STEPS", "DEFAULT_PROBE_NODES", "EXPLOIT_METHODS",
            "EXPLOIT_SETTINGS", "output_kind", "format_table", "read_plan", "checkpoint_path", "stop_on_signals", "file_kind"]


# ---------------------------------------------------------------------------
# distill and improve
# ---------------------------------------------------------------------------

from kibitz.agents.training.distill_run import (DistillConfig, DistillProgress, DistillResult,  # noqa: E402
                                                ImproveConfig, ImproveResult)


def _run_config(cls, first, options: dict, preset: str | None = None):
    """``first`` if it is a ``cls`` (and no ``preset`` or ``options``), else
    ``cls.preset(preset, first, **options)`` or ``cls(first, **options)``."""
    if isinstance(first, cls):
        if options or preset is not None:
            raise ValueError(f"give a {cls.__name__} or options, not both")
        return first
    return cls(first, **options) if preset is None else cls.preset(preset, first, **options)


def distill(game: str | DistillConfig, *, preset: str | None = None,
            progress: Callable[[DistillProgress], None] | None = None, **options) -> DistillResult:
    """Fits a network policy for ``game`` to a teacher's moves as ``kibitz
    distill`` does: ``options`` are the fields of :class:`DistillConfig`
    (``teacher``, ``opponent``, ``out``, ``data``, ``games``,
    ``time_limit`` in seconds, ``hidden``, ``epochs``, ...), replacing the
    values of ``preset`` when given (the name of a shipped network's
    settings: :meth:`DistillConfig.preset`), or pass a whole config. The
    teacher's games go to the data folder (``data``, default ``OUT.data``;
    a later run with the same settings continues it), the network is
    written to ``out`` when given. ``progress`` receives a
    :class:`DistillProgress` after each data shard and each epoch. Returns
    a :class:`DistillResult` (``.params``, ``.history``, ``.best``,
    ``.lines()``). Raises ConfigError (naming the option), SolveFailed
    (data the fit cannot take), SolveStopped (interrupted before a network
    could be written; Ctrl-C after an epoch ends the fit with the best
    epoch so far, the result's ``.stopped``)."""
    from kibitz.agents.training.distill_run import distill as run
    return run(_run_config(DistillConfig, game, options, preset), progress=progress)


def improve(agent_file: str | ImproveConfig, *, preset: str | None = None,
            progress: Callable[[DistillProgress], None] | None = None, **options) -> ImproveResult:
    """One step of policy improvement of the network agent file
    ``agent_file`` as ``kibitz improve`` does: ``options`` are the fields of
    :class:`ImproveConfig` (``out``, ``opponent``, ``data``, ``games``,
    ``rounds``, ``moves``, ``time_limit`` in seconds, ``epochs``, ``kl``,
    ...), replacing the values of ``preset`` when given
    (:meth:`ImproveConfig.preset`), or pass a whole config. The rollout
    labels go to the data folder (``data``, default ``OUT.data``), the
    network to ``out`` when given (its logits are the policy as played:
    export it with no temperature).
    ``progress`` as in :func:`distill`. Returns an :class:`ImproveResult`
    (``.params``, ``.history``, ``.kept``, ``.gain``, ``.lines()``); raises
    as :func:`distill`."""
    from kibitz.agents.training.distill_run import improve as run
    return run(_run_config(ImproveConfig, agent_file, options, preset), progress=progress)


__all__ += ["distill", "DistillConfig", "DistillResult", "DistillProgress", "improve", "ImproveConfig",
            "ImproveResult"]


# ---------------------------------------------------------------------------
# value networks
# ---------------------------------------------------------------------------

from kibitz.agents.training.value_run import ValueNetConfig, ValueNetResult  # noqa: E402


def value_net(game: str | ValueNetConfig, *, progress: Callable[[str, dict | None], None] | None = None,
              **options) -> ValueNetResult:
    """Trains the value network that AIVAT's corrections read for ``game``
    as ``kibitz value-net`` does: ``options`` are the fields of
    :class:`ValueNetConfig` (``objective``: variance, mse or state;
    ``agents``, ``games``, ``keep``, ``seed``, ``time_limit`` in seconds,
    ``epochs``, ``hidden``, ``encoding``, ``out``), or pass a whole config.
    The network is written to ``out`` when given. ``progress(stage,
    record)`` hears of the work: ``record`` None as the stage ``"play"`` or
    ``"fit"`` starts, then after each game played or check of the fit.
    Returns a :class:`ValueNetResult` (``.net``, its ``.net.meta["fit"]``,
    ``.play_seconds``, ``.fit_seconds``, ``.lines()``). Bad options raise
    ConfigError (naming the option); data too small to hold out games for
    the fit raises ValueError."""
    from kibitz.agents.training.value_run import run
    return run(_run_config(ValueNetConfig, game, options), progress=progress)


__all__ += ["value_net", "ValueNetConfig", "ValueNetResult"]


# ---------------------------------------------------------------------------
# play, replay, serve, the lists of games and agents
# ---------------------------------------------------------------------------

from kibitz.agents.formats.kibitz_agent_loader import AgentFileError  # noqa: E402
from kibitz.agents.human import Quit  # noqa: E402
from kibitz.agents.serving.web_app import ServeConfig  # noqa: E402
from kibitz.games import GameStringError  # noqa: E402


def play(game, seats=None, seed: int | None = None, *, read: Callable[[str], str] = input,
         write: Callable[[str], None] = print):
    """Plays one game of ``game`` (a game string or a ``pyspiel.Game``) as
    ``kibitz play`` does and returns its final state. ``seats``: one entry
    a seat, an agent spec or an agent already made (:func:`seat_agents`),
    or the specs' comma-separated text; None: a person in seat 0 and the
    game's heuristic (random where it has none) in the others. A person
    (``human``) is shown their seat's view through ``write`` and answers
    through ``read``; with nobody seated ``write`` is given every move and
    the final state. Chance is drawn from ``seed``, and the bot in seat i
    is seeded with ``seed * 1000 + i``. Bad input raises ConfigError naming
    ``GAME``, ``--seats`` or ``--seed``; a person who quits, or whose input
    ends, raises :class:`Quit`; an agent file that does not fit the game,
    :class:`AgentFileError`."""
    from kibitz.agents.matches.play import play as run
    return run(game, seats, seed, read=read, write=write)


def seat_agents(game, seats=None, seed: int | None = None, *, read: Callable[[str], str] = input,
                write: Callable[[str], None] = print) -> list:
    """The agents of :func:`play`, one a seat (each a ``pyspiel.Bot``),
    made from ``seats`` as :func:`play` reads them, to play with
    ``play(game, agents, seed)``."""
    from kibitz.agents.matches.play import seat_agents as make
    return make(game, seats, seed, read=read, write=write)


def replay(path, index: int, *, rerun: bool = False):
    """Game number ``index`` of a tournament's games.jsonl ``path``, replayed
    as ``kibitz replay`` shows it: a
    :class:`kibitz.agents.matches.replay.Replay` with the ``record``, the
    ``moves`` as ``(player, move name)`` (player None: chance) and the
    ``final`` state. The moves are checked against the rules and the
    recorded returns; ``rerun=True`` also plays the game again from its
    seeds with fresh agents, every move equal to the record. A file that is
    not a games.jsonl raises :class:`RecordsError`; a game it does not
    hold, ConfigError naming ``--game``; a record that does not replay,
    ValueError saying where."""
    from kibitz.agents.matches.replay import replay as run
    return run(path, index, rerun=rerun)


def serve(config: ServeConfig | None = None, **options):
    """The server of ``kibitz serve``: its agents at ``POST /act`` and the
    web table at ``/`` (docs/serving.md). ``options`` are the fields of
    :class:`ServeConfig` (``agents``, ``host``, ``port``, ``bot_delay``,
    ``max_tables``, ``table_idle``, ``db``, ``policy_dir``, ``log``), or
    pass a whole config. Returns a
    :class:`kibitz.agents.serving.web_app.Server` listening on
    ``host:port`` (port 0: a free one; ``.url``) but not yet answering:
    ``.run()`` serves until Ctrl-C, ``.start()`` serves from a background
    thread and ``.stop()`` ends it. Bad options raise ConfigError naming
    the option (``--agent`` for a spec that cannot be served, ``--db`` for
    a records file that cannot be opened); OSError if it cannot listen."""
    if config is not None and options:
        raise ValueError("give a ServeConfig or options, not both")
    return (config or ServeConfig(**options)).listen()


def registered_games(name: str | None = None) -> dict[str, dict]:
    """kibitz's own games as ``kibitz games`` lists them, by short name
    (``name``: that one alone; one that is not a kibitz game raises
    ConfigError naming ``NAME``). Each has its ``long_name``, ``summary``,
    ``small`` (a configuration exact solvers handle), ``parameters`` (by
    name: ``default``, ``allowed``, ``help``) and ``encodings`` (the network
    inputs at the defaults: encoding -> its size in floats). Other OpenSpiel
    games are played by their game strings but not listed."""
    from kibitz import games as kibitz_games

    specs = kibitz_games.REGISTRY
    if name is not None and name not in specs:
        hint = ("; give the name alone, without parameters" if "(" in name else
                "; other OpenSpiel games (e.g. kuhn_poker) are played by their game strings but not listed here")
        raise ConfigError(f"no kibitz game {name!r}; kibitz games: {', '.join(sorted(specs))}{hint}", "NAME")
    listed = {}
    for short in sorted(specs) if name is None else [name]:
        spec = specs[short]
        game = kibitz_games.load_game(short)
        listed[short] = {
            "long_name": spec.long_name, "summary": spec.summary, "small": spec.small,
            "parameters": {p.name: {"default": p.default, "allowed": p.allowed, "help": p.help} for p in spec.params},
            "encodings": {e: kibitz_games.encoding_size(game, e) for e in kibitz_games.encodings(game)}}
    return listed


def agent_kinds() -> dict[str, dict]:
    """Every agent kind as ``kibitz agents`` lists them, by name: its
    ``help``, ``options`` (by name: ``default``, ``help``), ``positional``
    (the option a bare value in the parentheses sets; None: none) and
    ``presets`` (preset name -> the options it sets)."""
    from kibitz.agents.registry import agent_kinds as kinds

    return {name: {"help": kind.help, "positional": kind.positional, "presets": dict(kind.presets),
                   "options": {opt: {"default": default, "help": text}
                               for opt, (default, text) in kind.options.items()}}
            for name, kind in sorted(kinds().items())}


__all__ += ["GameStringError", "AgentFileError", "Quit", "play", "seat_agents", "replay", "serve", "ServeConfig",
            "registered_games", "agent_kinds"]


# ---------------------------------------------------------------------------
# agent files, experiments, the demo
# ---------------------------------------------------------------------------

from kibitz.experiments.demo import DemoError  # noqa: E402
from kibitz.experiments.runner import ExperimentInterrupted, ExperimentSpecError, MatchesFailed  # noqa: E402


def inspect_agent_file(path, *, games: int | None = None, seed: int = 0) -> dict:
    """Reads the agent file (or policy file) ``path`` and checks it against
    its game as ``kibitz inspect`` does: a tabular file's information states
    met in ``games`` random games (default 200) must have the game's player
    and legal actions; a network's model must pass onnx.checker, match its
    SHA-256 and the game's sizes, and play ``games`` (default 5) random
    games. Returns ``{"document", "kind", "games", "check", "problems"}``:
    ``kind`` is "tabular" or "network" (None: a kind this version does not
    know, one of the problems), ``check`` the counts of the check (None if
    it did not run), ``problems`` empty when the file matches its game. A
    file that cannot be read or is not a JSON object raises
    :class:`AgentFileError`."""
    from kibitz.agents.formats.export import inspect_file
    return inspect_file(path, games=games, seed=seed)


def experiment(folder, *, out=None, overrides: dict | None = None, ray: bool = False, ray_address: str | None = None,
               log: Callable[[str], None] = quiet):
    """Runs the experiment spec in ``folder`` (a folder with spec.toml, or
    the spec file) as ``kibitz experiment run`` does; ``overrides``: spec
    keys and their values in place of the file's (``--set``). Writes its CSV,
    plots and table.md into ``out`` (default runs/NAME) and returns that
    folder (a ``pathlib.Path``); ``log`` receives its progress lines.
    ``ray`` (implied by ``ray_address``) plays the games of the kinds
    strength and ismcts_match on Ray. A bad spec raises
    :class:`ExperimentSpecError` and ``ray`` with another kind
    :class:`ConfigError`, both before anything runs; a run stopped by
    Ctrl-C :class:`ExperimentInterrupted` (what it finished is kept: the
    same call continues it)."""
    from kibitz.experiments.runner import run

    ray = ray or ray_address is not None
    return run(folder, out=out, log=log, overrides=overrides, ray={"address": ray_address} if ray else None)


def demo(out="demo-output", *, iterations: int = 2000, games: int = 240, workers: int = 2, seed: int = 1,
         echo: Callable[[str], None] = quiet, log: Callable[[str], None] = quiet) -> dict:
    """Runs ``kibitz demo`` in the folder ``out``: solves a small Doubt and
    Bet with CFR+ for ``iterations``, exports the agent file, and plays
    ``games`` games of it against IS-MCTS, the heuristic and random
    (``workers`` processes, ``seed``). ``echo`` receives the report line by
    line (what the command prints), ``log`` the tournament's progress.
    Returns ``{"policy", "agent", "tournament", "outcome"}``: the policy
    file, the agent file, the tournament's folder and its
    :class:`Outcome`. It replaces only the files an earlier demo wrote in
    ``out`` (kibitz-demo.txt lists them); a folder holding others of their
    names, or that cannot be written, raises :class:`DemoError`."""
    from kibitz.experiments.demo import run_demo
    return run_demo(out, iterations=iterations, games=games, workers=workers, seed=seed, echo=echo, log=log)


__all__ += ["inspect_agent_file", "experiment", "demo", "ExperimentSpecError", "ExperimentInterrupted",
            "MatchesFailed", "DemoError"]


# ---------------------------------------------------------------------------
# expert iteration
# ---------------------------------------------------------------------------

from kibitz.agents.training.iterate import IterateConfig, IterateResult  # noqa: E402


def iterate(game: str | IterateConfig, *, log: Callable[[str], None] = quiet, **options) -> IterateResult:
    """Expert iteration as ``kibitz iterate`` does: generations of IS-MCTS
    on the best network's prior distilled into the next network, each kept
    only if its paired match against ``opponent`` beats the best network's
    (the 95% interval of the difference above 0). ``options`` are the
    fields of :class:`IterateConfig` (``out``: the folder, required;
    ``start``, ``generations``, ``sims``, ``games``, ``epochs``,
    ``match_games``, ``opponent``, ``seed``, ``time_limit`` in seconds,
    ``workers``, ...), or pass a whole config. Everything is written into
    ``out`` (``iterate.json`` records each generation); the same call
    continues an interrupted run. ``log`` receives a line as each step
    begins and each generation's line. Returns an :class:`IterateResult`
    (``.record``, ``.best``, ``.lines()``); raises ConfigError (naming the
    option), SolveStopped (interrupted: the finished steps are kept) and
    the errors of :func:`distill` and :func:`tournament`."""
    from kibitz.agents.training.iterate import run

    if isinstance(game, IterateConfig):
        if options:
            raise ValueError("give an IterateConfig or options, not both")
        config = game
    else:
        config = IterateConfig(game, **options)
    return run(config, log=log)


__all__ += ["iterate", "IterateConfig", "IterateResult"]
