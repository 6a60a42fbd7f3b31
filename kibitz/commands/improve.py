"""``kibitz improve``: one step of policy improvement of a network agent.

    kibitz improve AGENT_FILE --out FILE.npz [--opponent SPEC] [--games N]
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
"""

from __future__ import annotations

import time

import click

from kibitz.commands._paths import NETWORK_KINDS, NumberRange, refuse_to_replace
from kibitz.commands.distill import _agent, collect_with_progress, data_folder, fit_with_progress, \
    stopped_after_fit
from kibitz.commands.solve import parse_duration
from kibitz.commands.train import _npz


@click.command()
@click.argument("agent_file", type=click.Path(dir_okay=False, exists=True), metavar="AGENT_FILE")
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False), callback=_npz,
              help="Network file to write (.npz, solvers/network.py's format; export it with no temperature).")
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
def improve(agent_file, out, opponent, data_dir, games, rounds, moves, workers, chunk, time_limit, epochs, lr, batch, kl,
            seed, overwrite, progress):
    """One step of policy improvement of a network agent from rollouts of its moves.

    \b
    Examples:
      kibitz improve agents/trained/underdog.json.gz --rounds 1 --games 8000 -j 2 --out underdog-better.npz
      kibitz export underdog-better.npz -o underdog-better.json.gz
    """
    from kibitz.agents.training import distill as teacher_games
    from kibitz.agents.training import improve as rollouts
    from kibitz.agents.formats.export import network_of_agent_file
    from kibitz.agents.formats.kibitz_agent_loader import AgentFileError
    from kibitz.games import load_game
    from kibitz.solvers import distill as distill_mod
    from kibitz.solvers import network
    from kibitz.solvers import train as train_mod

    try:
        spec, params = network_of_agent_file(agent_file)
    except AgentFileError as e:
        raise click.BadParameter(str(e), param_hint="AGENT_FILE") from None
    game = load_game(spec.game)
    refuse_to_replace({out: NETWORK_KINDS}, overwrite=overwrite)
    _agent(opponent, game, "--opponent")
    try:
        rollouts.check_rounds(game, rounds, moves)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--rounds" if rounds else "--moves") from None
    parse_duration(time_limit)  # a bad --time is refused before anything is made
    folder = data_folder(data_dir, out)
    played, collect_seconds = collect_with_progress(
        folder, games, time_limit, progress, "rollout games",
        lambda on_shard, should_stop: rollouts.collect(
            agent_file, opponent, seed, games, folder, chunk=chunk, workers=workers, rounds=rounds, moves=moves,
            on_shard=on_shard, should_stop=should_stop))
    try:
        ex = distill_mod.load_rollouts(teacher_games.shards_for(folder, games))
        if (ex.game >= games).any():  # a shard of an earlier run with more games
            ex = ex.rows((ex.game < games).nonzero()[0])
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    inv = 1.0 / train_mod.input_scale(game, spec.encoding, seed)
    t1 = time.perf_counter()
    new, history, stopped = fit_with_progress(
        lambda on_epoch, should_stop: distill_mod.fit(
            game, spec, ex, epochs=epochs, lr=lr, batch=batch, seed=seed, inv_scale=inv, init=params,
            on_epoch=on_epoch, objective="improve", kl=kl, should_stop=should_stop),
        epochs, progress, lambda r: {"loss": f"{r['loss']:.4f}", "held_out_gain": f"{r['held_out_gain']:+.5f}"},
        f"the rollout labels are kept in {folder}")
    network.save(out, spec, new)
    gain, se, held_games = distill_mod.held_out_gain(game, spec, new, ex)
    best = max(history, key=lambda r: r["held_out_gain"], default=None)  # the first of the highest
    kept = best["epoch"] if best is not None and best["held_out_gain"] > 0 else None
    limits = ([f"{rounds} round{'s' if rounds > 1 else ''}"] if rounds else []) \
        + ([f"{moves} move{'s' if moves != 1 else ''}"] if moves >= 0 else [])
    click.echo(f"game:        {game}")
    click.echo(f"network:     {agent_file} (its policy as played) against {opponent}")
    click.echo(f"data:        {folder}: {played:,} games, {len(ex):,} decisions "
               f"({int(distill_mod.held_out(ex).sum()):,} held out), every legal move rolled out "
               f"{' and '.join(limits) or 'to the end'}; collection {collect_seconds:.1f} s this run")
    click.echo(f"fit:         {epochs} epochs, batch {batch}, lr {lr:g}, KL weight {kl:g}, seed {seed}: "
               f"{time.perf_counter() - t1:.1f} s")
    for r in history:
        click.echo(f"  epoch {r['epoch']:>3}: loss {r['loss']:+.5f}, held-out gain {r['held_out_gain']:+.5f} "
                   "a decision")
    click.echo("kept:        " + (f"epoch {kept}" if kept else "the played network (no epoch gained on the "
                                                                  "held-out games)")
               + (f": held-out gain {gain:+.5f} ({se:.5f}) a decision over {held_games:,} games"
                  if held_games else ""))
    click.echo(f"written:     {out}; export it with: kibitz export {out} -o AGENT.json.gz")
    stopped_after_fit(stopped, len(history), epochs)
