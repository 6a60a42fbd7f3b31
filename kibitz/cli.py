"""The ``kibitz`` command line."""

from __future__ import annotations

import click

from kibitz.commands import agents_cmd, demo, games_cmd, play
from kibitz.commands import solve
from kibitz.commands import tournament
from kibitz.commands import replay
from kibitz.commands import serve
from kibitz.commands import export
from kibitz.commands import experiment
from kibitz.commands import train
from kibitz.commands import distill
from kibitz.commands import improve
from kibitz.commands import exploit
from kibitz.commands import value_net
from kibitz.commands import iterate
from kibitz.commands._signals import exit_status, interrupt_on_signals


class _Group(click.Group):
    """The command group. While a command runs, SIGINT and SIGTERM both
    raise KeyboardInterrupt, even when SIGINT was inherited as ignored
    (``commands._signals``). Ctrl-C or SIGTERM anywhere a command does not
    handle it itself (a prompt, start-up, a phase without a checkpoint) ends
    the command with one line and exit status 130, or 143 after SIGTERM
    (click's own: "Aborted!", 1). Commands that keep work on a stop handle
    it themselves first and exit 130; that becomes 143 when SIGTERM stopped
    them."""

    def invoke(self, ctx):
        with interrupt_on_signals() as got:
            try:
                return super().invoke(ctx)
            except (KeyboardInterrupt, click.Abort):
                click.echo("\ninterrupted", err=True)
                ctx.exit(exit_status(got["signal"]))
            except SystemExit as e:
                if e.code == 130 and got["signal"] is not None:
                    raise SystemExit(exit_status(got["signal"])) from None
                raise


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kibitz")
def main():
    """kibitz: AI opponents for small bluffing card games, on OpenSpiel.

    GAME arguments are OpenSpiel game strings, e.g. 'underdog(players=3,cards=9)'.
    """


main.add_command(agents_cmd.agents_command)
main.add_command(demo.demo)
main.add_command(games_cmd.games)
main.add_command(play.play)
main.add_command(solve.solve)
main.add_command(tournament.tournament)
main.add_command(tournament.compare)
main.add_command(replay.replay)
main.add_command(serve.serve)
main.add_command(export.export)
main.add_command(export.inspect)
main.add_command(experiment.experiment)
main.add_command(train.train)
main.add_command(distill.distill)
main.add_command(improve.improve)
main.add_command(exploit.exploit)
main.add_command(value_net.value_net)
main.add_command(iterate.iterate)
