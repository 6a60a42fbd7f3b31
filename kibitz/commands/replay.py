"""``kibitz replay``: one recorded tournament game, move by move."""

from __future__ import annotations

import click

from kibitz.agents.tournament import RecordsError, read_records, replay_record


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
        records = read_records(path)
    except RecordsError as e:
        raise click.ClickException(str(e)) from None
    matches = [r for r in records if r["index"] == index]
    if not matches:
        raise click.BadParameter(f"no game {index} in {path}", param_hint="--game")
    rec = matches[0]
    try:
        final = replay_record(rec, rerun=rerun)
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    game = final.get_game()
    click.echo(f"game {index} of {path}: {rec['game']}, deal {rec['deal']}, "
               f"seats {', '.join(f'p{s} {spec}' for s, spec in enumerate(rec['seats']))}")
    state = game.new_initial_state()
    for a in rec["moves"]:
        p = state.current_player()
        who = "chance" if state.is_chance_node() else f"p{p} ({rec['seats'][p]})"
        click.echo(f"{who}: {state.action_to_string(p, a)}")
        state.apply_action(a)
    click.echo("")
    click.echo(str(final))
    click.echo("returns: " + "  ".join(f"p{i} {r:g}" for i, r in enumerate(final.returns())))
    if rerun:
        click.echo("rerun: every move equals the record")
