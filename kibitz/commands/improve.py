"""``kibitz improve``: one step of policy improvement of a network agent.

    kibitz improve AGENT_FILE --out FILE.npz [--preset NAME] [--opponent SPEC] [--games N]
                   [--rounds K] [--moves K] [--data DIR] [--workers W] [--chunk C] [--time LIMIT]
                   [--epochs E] [--lr X] [--batch B] [--kl BETA] [--seed S]

Two stages (docs/solvers/training.md, "One step of policy improvement"):
the network of AGENT_FILE (a network agent file, e.g. a shipped
``agents/trained/GAME.json.gz``: its policy as played) plays ``--games``
games against ``--opponent``, and every move of each of its decisions is
rolled out once from the true state with common random numbers
(agents/training/improve.py; the labels go to ``--data``, a folder of shards that a
later run with the same settings continues); then a copy of the network is
moved towards the better moves under a KL leash (solvers/distill.py,
``objective="improve"``), keeping the epoch with the highest held-out gain
(or the network itself if none gains), and written to FILE with
:func:`solvers.network.save`. Its logits are the policy as played: export
it with ``kibitz export FILE -o AGENT.json.gz`` (no temperature).

``--preset NAME`` takes the settings of a shipped network's step
(``PRESETS`` in agents/training/distill_run.py; ``make trained`` uses
them), any option given on the command line replacing its value.

The command parses its options into a :class:`kibitz.api.ImproveConfig`
(:func:`improve_config`), runs :func:`kibitz.api.improve` (the run:
agents/training/distill_run.py) with progress bars and prints its summary.
"""

from __future__ import annotations

import click

from kibitz.api import ImproveConfig
from kibitz.commands._paths import NETWORK_KINDS, NumberRange, refuse_to_replace
from kibitz.commands.distill import command_config, preset_help, print_result, progress_bars
from kibitz.commands.solve import solve_errors
from kibitz.commands.train import _npz


def improve_config(ctx: click.Context):
    """The :class:`kibitz.api.ImproveConfig` of a parsed ``kibitz improve``
    command line (:func:`kibitz.commands.distill.command_config`)."""
    return command_config(ImproveConfig, ctx, "agent_file", {"data_dir": "data"})


@click.command()
@click.argument("agent_file", type=click.Path(dir_okay=False, exists=True), metavar="AGENT_FILE")
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False), callback=_npz,
              help="Network file to write (.npz, solvers/network.py's format; export it with no temperature).")
@click.option("--preset", default=None, metavar="NAME", help=preset_help(ImproveConfig))
@click.option("--opponent", default="heuristic", show_default=True, metavar="SPEC",
              help="The agent in the seats the network does not hold (it holds 1..n-1 seats a game).")
@click.option("--data", "data_dir", type=click.Path(file_okay=False), default=None,
              help="Folder of the rollout labels (kept, and continued by a later run). Default: OUT.data/")
@click.option("--games", type=click.IntRange(min=1), default=4000, show_default=True,
              help="Games whose decisions are labelled (a later run plays only the missing ones).")
@click.option("--rounds", type=click.IntRange(min=0), default=0, show_default=True,
              help="0: roll each move out to the end of the game; K: stop when the K-th next round begins and "
                   "take the game's standing there (the kibitz games; Pub is one round, so its rollouts go "
                   "to the end).")
@click.option("--moves", type=click.IntRange(min=-1), default=-1, show_default=True,
              help="-1: no limit; K >= 0: stop a rollout before its (K+1)-th move by a player and take the game's "
                   "standing there (the kibitz games; with --rounds too, the first limit reached).")
@click.option("--workers", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Processes playing the games.")
@click.option("--chunk", type=click.IntRange(min=1), default=20, show_default=True,
              help="Games per data shard (the most an interruption loses per worker).")
@click.option("--time", "time_limit", metavar="LIMIT", default=None,
              help="End the collection after this long (90, 10m, 1h30m) and fit the games played.")
@click.option("--epochs", type=click.IntRange(min=1), default=8, show_default=True, help="Passes over the data.")
@click.option("--lr", type=NumberRange(0, 1, min_open=True), default=3e-4, show_default=True,
              help="Adam step size.")
@click.option("--batch", type=click.IntRange(min=1), default=512, show_default=True,
              help="Decisions per minibatch.")
@click.option("--kl", type=NumberRange(0, 1000), default=0.01, show_default=True,
              help="Weight of the KL divergence from the played policy (the leash).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the games (with their index) and of the fit.")
@click.option("--overwrite", is_flag=True,
              help="Replace the network file of an earlier run at --out (never any other file).")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Show progress bars (only on a terminal).")
@click.pass_context
def improve(ctx, out, overwrite, progress, **_options):
    """One step of policy improvement of a network agent from rollouts of its moves.

    \b
    Examples:
      kibitz improve agents/trained/underdog.json.gz --preset underdog --games 2000 -j 2 --out underdog-2000.npz
      kibitz improve agents/trained/underdog.json.gz --rounds 1 --games 8000 -j 2 --out underdog-better.npz
      kibitz export underdog-better.npz -o underdog-better.json.gz
    """
    from kibitz.api import improve as run_improve

    refuse_to_replace({out: NETWORK_KINDS}, overwrite=overwrite)
    with solve_errors(), progress_bars(progress) as bars:
        config = improve_config(ctx)
        result = run_improve(config, progress=bars)
    print_result(result)
