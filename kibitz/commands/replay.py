"""``kibitz replay``: one recorded tournament game, move by move."""

from __future__ import annotations

import click

from kibitz.agents.matches.tournament import RecordsError, read_records_and_tail, replay_record


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
        records, torn = read_records_and_tail(path)
    except RecordsError as e:
        raise click.ClickException(str(e)) from None
    matches = [r for r in records if r["index"] == index]
    if not matches and torn:  # perhaps the game asked for
        raise click.ClickException(f"{path}, {torn}, as a run killed while writing a game leaves its last "
                                   f"line; game {index} is not among the {len(records)} games before it")
    if not matches:
        held = sorted(r["index"] for r in records)
        raise click.BadParameter(f"no game {index} in {path} ("
                                 + (f"it holds {len(held)} games, numbered {held[0]}..{held[-1]})" if held
                                    else "it holds no games)"), param_hint="--game")
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
