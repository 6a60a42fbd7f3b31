"""``kibitz distill``: a network policy fitted to a teacher's moves.

    kibitz distill GAME (--teacher SPEC | --preset NAME) --out FILE.npz [--opponent SPEC|none]
                   [--games N] [--data DIR] [--workers W] [--time LIMIT]
                   [--encoding NAME] [--output dense|factored] [--hidden 128,128]
                   [--epochs E] [--lr X] [--batch B] [--target moves|visits] [--seed S]
                   [--init FILE] [--anchor DIR [--anchor-games N] [--anchor-weight W]]
                   [--replay DIR] [--behaviour SPEC]

Two stages (docs/solvers/training.md, "Distillation"): the teacher (an agent
spec, e.g. ``ismcts(one_step)``) plays ``--games`` games against
``--opponent`` and its decisions are written to ``--data``
(agents/training/distill.py: a folder of shards that a later run with the same
settings continues, so an interrupted collection loses at most the games
in flight; ``--time`` ends the collection early and fits what is there);
then the network is fitted to them (solvers/distill.py) and written to
FILE with :func:`solvers.network.save`, ready for ``kibitz export``.
``--anchor`` adds another teacher's decisions (a data folder of the same
game and encoding, e.g. the heuristic's that ``--init``'s network was
fitted to) to the fit, each weighing ``--anchor-weight``. ``--replay``
takes the games that another data folder of the same teacher games holds
(in another encoding) from their recorded moves instead of searching them
again. ``--behaviour`` plays the teacher's seats with another agent (e.g.
the network being improved) while the teacher only labels their
decisions: the data comes from the states that agent reaches (DAgger).

``--preset NAME`` takes the settings that made a shipped network
(``PRESETS`` in agents/training/distill_run.py; ``make trained`` uses
them), any option given on the command line replacing its value.

The command parses its options into a :class:`kibitz.api.DistillConfig`
(:func:`distill_config`), runs :func:`kibitz.api.distill` (the run:
agents/training/distill_run.py) with progress bars and prints its summary.
"""

from __future__ import annotations

import contextlib
import signal

import click
from click.core import ParameterSource

from kibitz.api import ConfigError, DistillConfig
from kibitz.commands._paths import NETWORK_KINDS, NumberRange, refuse_to_replace
from kibitz.commands.solve import parse_duration, solve_errors
from kibitz.commands.train import _hidden, _npz

#: the options of ``kibitz distill`` named otherwise in :class:`kibitz.api.DistillConfig`
DISTILL_FIELDS = {"data_dir": "data", "output_kind": "output", "init_file": "init", "anchor_dir": "anchor",
                  "replay_dir": "replay"}


def command_config(cls, ctx: click.Context, argument: str, fields: dict):
    """The ``cls`` config (:class:`kibitz.api.DistillConfig` or
    :class:`kibitz.api.ImproveConfig`) of the parsed command line ``ctx``:
    the parameter ``argument`` as its first field, the options as the others
    (``fields`` maps an option to a field named otherwise; ``--time``
    parsed as a duration; ``--overwrite`` and ``--progress`` are not the
    run's). With ``--preset NAME``, ``cls.preset`` builds it and only the
    options given on the command line replace the preset's values; without,
    every option is taken, a default too."""
    preset = ctx.params.get("preset")
    options = {}
    for name, value in ctx.params.items():
        if name in (argument, "preset", "overwrite", "progress"):
            continue
        if preset is not None and ctx.get_parameter_source(name) is ParameterSource.DEFAULT:
            continue
        options[fields.get(name, name)] = parse_duration(value) if name == "time_limit" else value
    if preset is not None:
        return cls.preset(preset, ctx.params[argument], **options)
    return cls(ctx.params[argument], **options)


def distill_config(ctx: click.Context):
    """The :class:`kibitz.api.DistillConfig` of a parsed ``kibitz distill``
    command line (:func:`command_config`); ConfigError naming ``--teacher``
    if neither it nor ``--preset`` is given."""
    if ctx.params["preset"] is None and ctx.params["teacher"] is None:
        raise ConfigError("give --teacher SPEC (or --preset NAME)", "--teacher")
    return command_config(DistillConfig, ctx, "game_string", DISTILL_FIELDS)


def preset_help(cls) -> str:
    """The help of the ``--preset`` option of ``cls``'s command (a config class): its preset names."""
    return ("The settings that made a shipped network (make trained uses them), any option given here replacing "
            f"its value: {', '.join(cls.PRESETS)}.")


@contextlib.contextmanager
def progress_bars(enabled: bool):
    """A ``progress`` callback for :func:`kibitz.api.distill` and
    :func:`kibitz.api.improve` that draws each stage's reports
    (:class:`kibitz.api.DistillProgress`) as a tqdm bar, a stage's bar
    closed when the next begins; None when not ``enabled``."""
    if not enabled:
        yield None
        return
    from tqdm import tqdm

    bars = {}

    def show(report):
        bar = bars.get(report.stage)
        if bar is None:
            for old in bars.values():
                old.close()
            bar = bars[report.stage] = tqdm(total=report.total, initial=report.done, unit=report.unit,
                                            desc=report.stage, dynamic_ncols=True, disable=None)
        else:
            bar.update(report.done - bar.n)
        if report.figures:
            bar.set_postfix(**report.figures)

    try:
        yield show
    finally:
        for bar in bars.values():
            bar.close()


def print_result(result) -> None:
    """Prints a run's summary; after a fit that a signal stopped, one line
    more and exit 130 (143 on SIGTERM)."""
    for line in result.lines():
        click.echo(line)
    if result.stopped is not None:
        click.echo(f"interrupted after epoch {len(result.history)} of {result.config.epochs}: the network of the "
                   "best epoch that ended is written", err=True)
        raise SystemExit(130 if result.stopped == signal.SIGINT else 143)


@click.command()
@click.argument("game_string", metavar="GAME")
@click.option("--preset", default=None, metavar="NAME", help=preset_help(DistillConfig))
@click.option("--teacher", default=None, metavar="SPEC",
              help="The agent whose moves are fitted, e.g. 'ismcts(one_step)' (kibitz agents lists them); "
                   "required unless --preset gives it.")
@click.option("--opponent", default="heuristic", show_default=True, metavar="SPEC",
              help="The agent in the seats the teacher does not hold (it holds 1..n-1 seats a game); "
                   "'none': the teacher holds every seat.")
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False), callback=_npz,
              help="Network file to write (.npz, solvers/network.py's format).")
@click.option("--data", "data_dir", type=click.Path(file_okay=False), default=None,
              help="Folder of the teacher's games (kept, and continued by a later run). Default: OUT.data/")
@click.option("--games", type=click.IntRange(min=1), default=200, show_default=True,
              help="Teacher games in the data (a later run plays only the missing ones).")
@click.option("--workers", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Processes playing the teacher games.")
@click.option("--chunk", type=click.IntRange(min=1), default=4, show_default=True,
              help="Games per data shard (the most an interruption loses per worker).")
@click.option("--time", "time_limit", metavar="LIMIT", default=None,
              help="End the collection after this long (90, 10m, 1h30m) and fit the games played.")
@click.option("--encoding", default="information_state_tensor", show_default=True,
              help="The network's input: one of the game's encodings (kibitz games GAME lists them).")
@click.option("--output", "output_kind", type=click.Choice(["dense", "factored"]), default=None,
              help="The network's output (as kibitz train). Default: factored for an encoding other than "
                   "information_state_tensor in a game with action factors, else dense.")
@click.option("--hidden", default="128,128", show_default=True, callback=_hidden, help="Hidden layer widths.")
@click.option("--epochs", type=click.IntRange(min=1), default=20, show_default=True, help="Passes over the data.")
@click.option("--lr", type=NumberRange(0, 1, min_open=True), default=1e-3, show_default=True,
              help="Adam step size.")
@click.option("--batch", type=click.IntRange(min=1), default=256, show_default=True, help="Decisions per minibatch.")
@click.option("--init", "init_file", type=click.Path(dir_okay=False, exists=True), default=None,
              help="Start the fit from this network file (the same encoding, output and hidden widths), "
                   "e.g. one distilled from a cheaper teacher.")
@click.option("--anchor", "anchor_dir", type=click.Path(file_okay=False, exists=True), default=None,
              help="Another teacher's data folder (same game and encoding, e.g. the heuristic's that --init "
                   "was fitted to) whose moves are fitted too, so the network stays near that play where "
                   "the teacher's games say nothing.")
@click.option("--anchor-games", type=click.IntRange(min=1), default=None,
              help="Use the anchor's games 0..N-1 (the shards holding them). Default: all.")
@click.option("--anchor-weight", type=NumberRange(0, 1000, min_open=True), default=1.0, show_default=True,
              help="Weight of each anchor decision in the loss (a teacher decision weighs 1).")
@click.option("--replay", "replay_dir", type=click.Path(file_okay=False, exists=True), default=None,
              help="Another data folder of the same teacher games (same game, teacher, opponent, seed and "
                   "chunk; another encoding): the games it holds are replayed from their recorded moves, "
                   "with no search, and written in this run's --encoding.")
@click.option("--behaviour", default=None, metavar="SPEC",
              help="The agent that plays the teacher's seats while the teacher only labels their decisions "
                   "(DAgger: the data comes from the states this agent reaches), e.g. 'trained' or "
                   "'net(FILE)' (an agent file: kibitz export makes one from a network file). "
                   "Default: the teacher plays its own moves.")
@click.option("--target", type=click.Choice(["moves", "visits"]), default="moves", show_default=True,
              help="Fit the teacher's moves (one-hot) or its search's root visit shares.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the games (with their index) and of the fit.")
@click.option("--overwrite", is_flag=True,
              help="Replace the network file of an earlier run at --out (never any other file).")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Show progress bars (only on a terminal).")
@click.pass_context
def distill(ctx, out, overwrite, progress, **_options):
    """Fit a network policy for GAME to a teacher's moves (policy distillation) and save it.

    \b
    Examples:
      kibitz distill over_under --teacher 'ismcts(one_step)' --encoding compact --games 2000 -j 2 --out ou.npz
      kibitz distill 'pub(players=3,suits=2,ranks=3,removed=0,hand=1)' --teacher 'ismcts(sims=200)' --out pub.npz
      kibitz distill pub --preset pub --games 100 --out pub.npz
    """
    from kibitz.api import distill as run_distill

    refuse_to_replace({out: NETWORK_KINDS}, overwrite=overwrite)
    with solve_errors(), progress_bars(progress) as bars:
        config = distill_config(ctx)
        result = run_distill(config, progress=bars)
    print_result(result)
