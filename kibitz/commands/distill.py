"""``kibitz distill``: a network policy fitted to a teacher's moves.

    kibitz distill GAME --teacher SPEC --out FILE.npz [--opponent SPEC|none]
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
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import click

from kibitz.commands._paths import NETWORK_KINDS, NumberRange, refuse_to_replace
from kibitz.commands.solve import parse_duration
from kibitz.commands.train import _hidden, _npz, network_io
from kibitz.games import GameStringError, load_game


def _share(x: float) -> str:
    """A share as a percentage; 'n/a' where no held-out game measured it."""
    return "n/a (no held-out games)" if x != x else f"{x:.1%}"


def _held_out(record: dict, digits: int = 4) -> str:
    """The held-out loss of an epoch's record; 'n/a' where no game was held
    out (the fit then keeps the epoch of the lowest training loss)."""
    return "n/a" if record["agreement"] != record["agreement"] else f"{record['held_out_loss']:.{digits}f}"


def data_folder(data_dir, out: str) -> Path:
    """The ``--data`` folder (default ``OUT.data``), made if missing; a
    BadParameter naming ``--data`` if it cannot be."""
    folder = Path(data_dir) if data_dir else Path(out + ".data")
    if folder.exists() and not folder.is_dir():
        raise click.BadParameter(f"{folder} is not a folder", param_hint="--data")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise click.BadParameter(f"{folder}: {e.strerror}", param_hint="--data") from None
    return folder


def collect_with_progress(folder: Path, games: int, time_limit, progress: bool, desc: str, collect):
    """Runs ``collect(on_shard, should_stop)`` (a data collection of
    ``agents/training/distill.py``'s kind into ``folder``) with a progress bar of the
    games and decisions, stopped after ``time_limit``; a data folder of
    other settings is one line naming the option, Ctrl-C exits 130 keeping
    the finished shards. Returns ``(games the folder holds, seconds)``."""
    from kibitz.agents.training import distill as teacher_games

    limit = parse_duration(time_limit)
    t0 = time.perf_counter()
    have = sum(hi - lo for lo, hi, _ in teacher_games.done_shards(folder))
    bar = None
    if progress and have < games:
        from tqdm import tqdm
        bar = tqdm(total=games, initial=min(have, games), unit="game", desc=desc, dynamic_ncols=True, disable=None)
    examples = [0]

    def on_shard(lo, hi, count):
        examples[0] += count
        if bar is not None:
            bar.update(hi - lo)
            bar.set_postfix(decisions=f"{examples[0]:,}")

    try:
        played = collect(on_shard, (lambda: time.perf_counter() - t0 > limit) if limit else None)
    except teacher_games.DataMismatch as e:
        hint = "--replay" if isinstance(e, teacher_games.ReplayMismatch) else "--data"
        raise click.BadParameter(str(e), param_hint=hint) from None
    except KeyboardInterrupt:
        click.echo(f"\ninterrupted: the finished games are kept in {folder}; the same command continues",
                   err=True)
        raise SystemExit(130) from None
    finally:
        if bar is not None:
            bar.close()
    return played, time.perf_counter() - t0


def fit_with_progress(fit, epochs: int, progress: bool, postfix, kept: str):
    """Runs ``fit(on_epoch, should_stop)`` (:func:`solvers.distill.fit`)
    with a progress bar of the epochs (``postfix(record)``: its figures);
    Ctrl-C or SIGTERM ends it with the best epoch so far. Returns ``(params,
    history, signal or None)``; before any epoch ended, says that nothing is
    written (and what is ``kept``) and exits 130 (143 on SIGTERM)."""
    from kibitz.solvers import driver

    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=epochs, unit="epoch", desc="fit", dynamic_ncols=True, disable=None)

    def on_epoch(record):
        if bar is not None:
            bar.update(1)
            bar.set_postfix(**postfix(record))

    try:
        with driver.stop_on_signals() as stop:  # Ctrl-C ends the fit with the best epoch so far
            params, history = fit(on_epoch, lambda: stop["signal"] is not None)
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    finally:
        if bar is not None:
            bar.close()
    if params is None:
        click.echo(f"\ninterrupted before the first epoch ended: no network written; {kept}, and the same "
                   "command fits again", err=True)
        raise SystemExit(130 if stop["signal"] == signal.SIGINT else 143)
    return params, history, stop["signal"]


def stopped_after_fit(stopped, done: int, epochs: int) -> None:
    """After the summary of a fit that a signal ``stopped``: one line and exit 130 (143 on SIGTERM)."""
    if stopped is not None:
        click.echo(f"interrupted after epoch {done} of {epochs}: the network of the best epoch that "
                   "ended is written", err=True)
        raise SystemExit(130 if stopped == signal.SIGINT else 143)


def _agent(spec: str, game, what: str) -> None:
    from kibitz.agents.registry import make_agent, parse_spec

    try:
        if parse_spec(spec)[0] == "human":
            raise ValueError("a human cannot play teacher games; allowed: an automatic agent (kibitz agents lists them)")
        make_agent(spec, game, 0, 0)
    except (ValueError, FileNotFoundError) as e:
        raise click.BadParameter(f"{spec!r}: {e}", param_hint=what) from None


@click.command()
@click.argument("game_string", metavar="GAME")
@click.option("--teacher", required=True, metavar="SPEC",
              help="The agent whose moves are fitted, e.g. 'ismcts(one_step)' (kibitz agents lists them).")
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
def distill(game_string, teacher, opponent, out, data_dir, games, workers, chunk, time_limit, encoding, output_kind,
            hidden, epochs, lr, batch, init_file, anchor_dir, anchor_games, anchor_weight, replay_dir, behaviour, target,
            seed, overwrite, progress):
    """Fit a network policy for GAME to a teacher's moves (policy distillation) and save it.

    \b
    Examples:
      kibitz distill over_under --teacher 'ismcts(one_step)' --encoding compact --games 2000 -j 2 --out ou.npz
      kibitz distill 'pub(players=3,suits=2,ranks=3,removed=0,hand=1)' --teacher 'ismcts(sims=200)' --out pub.npz
    """
    from kibitz.agents.training import distill as teacher_games
    from kibitz.solvers import distill as distill_mod
    from kibitz.solvers import network
    from kibitz.solvers import train as train_mod

    try:
        game = load_game(game_string)
    except GameStringError as e:
        raise click.BadParameter(str(e), param_hint="GAME") from None
    refuse_to_replace({out: NETWORK_KINDS}, overwrite=overwrite)
    output_kind = network_io(game, encoding, output_kind)
    _agent(teacher, game, "--teacher")
    opponent = "" if opponent == "none" else opponent
    if opponent:
        _agent(opponent, game, "--opponent")
    if behaviour is not None:
        _agent(behaviour, game, "--behaviour")
        if replay_dir:
            raise click.UsageError("--replay takes no --behaviour: a behaviour agent's games are not replayed "
                                   "from the teacher's labels")
    spec = network.NetworkSpec.for_game(game, hidden=hidden, encoding=encoding, output=output_kind)
    init = None
    if init_file:
        try:
            init_spec, init = network.load(init_file)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--init") from None
        if init_spec != spec:
            raise click.BadParameter(f"{init_file} is a network of {init_spec.encoding} input, {init_spec.output} "
                                     f"output, hidden {init_spec.hidden} for {init_spec.game}; this fit needs "
                                     f"{spec.encoding}, {spec.output}, {spec.hidden} for {spec.game}",
                                     param_hint="--init")
    if (anchor_games is not None or anchor_weight != 1.0) and not anchor_dir:
        raise click.UsageError("--anchor-games and --anchor-weight need --anchor DIR")
    anchor_paths = None
    if anchor_dir:
        try:
            anchor_paths = teacher_games.anchor_shards(Path(anchor_dir), str(game), encoding, anchor_games)
        except teacher_games.DataMismatch as e:
            raise click.BadParameter(str(e), param_hint="--anchor") from None
    parse_duration(time_limit)  # a bad --time is refused before anything is made
    folder = data_folder(data_dir, out)
    played, collect_seconds = collect_with_progress(
        folder, games, time_limit, progress, "teacher games",
        lambda on_shard, should_stop: teacher_games.collect(
            str(game), teacher, opponent, encoding, seed, games, folder, chunk=chunk, workers=workers,
            on_shard=on_shard, should_stop=should_stop, replay=replay_dir, behaviour=behaviour))
    shards = teacher_games.shards_for(folder, games)
    try:
        ex = distill_mod.load_examples(shards, target)
        if (ex.game >= games).any():  # a shard of an earlier run with more games
            ex = ex.rows((ex.game < games).nonzero()[0])
        anchor = distill_mod.load_examples(anchor_paths, "moves") if anchor_paths else None
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    inv = 1.0 / train_mod.input_scale(game, encoding, seed)
    t1 = time.perf_counter()
    params, history, stopped = fit_with_progress(
        lambda on_epoch, should_stop: distill_mod.fit(
            game, spec, ex, epochs=epochs, lr=lr, batch=batch, seed=seed, inv_scale=inv, init=init,
            on_epoch=on_epoch, anchor=anchor, anchor_weight=anchor_weight, should_stop=should_stop),
        epochs, progress, lambda r: {"loss": f"{r['loss']:.3f}", "held_out": _held_out(r, 3),
                                     "agree": _share(r['agreement'])},
        f"the teacher's games are kept in {folder}")
    network.save(out, spec, params)
    best = min(history, key=lambda r: r["held_out_loss"])
    click.echo(f"game:        {game}")
    click.echo(f"teacher:     {teacher}" + (f" against {opponent}" if opponent else " in every seat")
               + (f", labelling the moves of {behaviour}" if behaviour else ""))
    click.echo(f"data:        {folder}: {played:,} games, {len(ex):,} decisions "
               f"({int(distill_mod.held_out(ex).sum()):,} held out); collection {collect_seconds:.1f} s this run"
               + (f", replaying {replay_dir} where it has the games" if replay_dir else ""))
    if anchor is not None:
        click.echo(f"anchor:      {anchor_dir}: {len(set(anchor.game.tolist())):,} games, {len(anchor):,} decisions, "
                   f"weight {anchor_weight:g} each")
    click.echo(f"encoding:    {encoding} input, {output_kind} output; hidden {','.join(map(str, hidden))}; "
               f"target {target}")
    click.echo(f"fit:         {epochs} epochs, batch {batch}, lr {lr:g}, seed {seed}"
               + (f", from {init_file}" if init_file else "") + f": {time.perf_counter() - t1:.1f} s")
    for r in history:
        click.echo(f"  epoch {r['epoch']:>3}: loss {r['loss']:.4f}, held-out loss {_held_out(r)}, "
                   f"agreement {_share(r['agreement'])}"
                   + (f", anchor agreement {_share(r['anchor_agreement'])}" if "anchor_agreement" in r else ""))
    click.echo(f"kept:        epoch {best['epoch']} (held-out loss {_held_out(best)}, "
               f"agreement with the teacher {_share(best['agreement'])})")
    click.echo(f"network:     {out} ({spec.input_size:,} inputs, {spec.num_actions:,} actions)")
    stopped_after_fit(stopped, len(history), epochs)
