"""``kibitz replay``: one recorded tournament game, move by move."""

from __future__ import annotations

import click

from kibitz.api import ConfigError
from kibitz.api import replay as run_replay


@click.command("replay")
@click.argument("path", metavar="GAMES_JSONL", type=click.Path(exists=True, dir_okay=False))
@click.option("--game", "index", type=int, required=True, help="Game number (the record's index).")
@click.option("--rerun", is_flag=True,
              help="Play the game again from its seeds with the same agents and check every move.")
def replay(path, index, rerun):
    """Replay game number --game of a tournament's games.jsonl.

    Prints every move (chance included), the final state and the returns.
    With --rerun the agents play again from the recorded seeds and the moves
    must equal the record.
    """
    try:
        replayed = run_replay(path, index, rerun=rerun)
    except ConfigError as e:  # no such game
        raise click.BadParameter(str(e), param_hint=e.param) from None
    except ValueError as e:  # RecordsError: not a games.jsonl; or a record that does not replay
        raise click.ClickException(str(e)) from None
    rec = replayed.record
    click.echo(f"game {index} of {path}: {rec['game']}, deal {rec['deal']}, "
               f"seats {', '.join(f'p{s} {spec}' for s, spec in enumerate(rec['seats']))}")
    for player, move in replayed.moves:
        who = "chance" if player is None else f"p{player} ({rec['seats'][player]})"
        click.echo(f"{who}: {move}")
    click.echo("")
    click.echo(str(replayed.final))
    click.echo("returns: " + "  ".join(f"p{i} {r:g}" for i, r in enumerate(replayed.final.returns())))
    if rerun:
        click.echo("rerun: every move equals the record")
