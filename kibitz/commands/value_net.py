"""``kibitz value-net``: the value network AIVAT corrects payoffs with.

    kibitz value-net GAME --out FILE.npz [--objective variance|mse] [--agents trained,heuristic] [--games N]
                     [--keep X] [--seed S] [--time LIMIT] [--epochs E] [--hidden 64] [--encoding NAME]
                     [--overwrite]

Plays N games with the agent specs rotated over the seats and fits the
afterstate value network of :mod:`kibitz.solvers.value_net`. With
``--objective variance`` (the default) it records the nodes AIVAT corrects
(:func:`kibitz.agents.training.value_data.collect_nodes`, deals from seed words
``10**6 + S``) and minimises the variance of the AIVAT estimate over the
games; with ``mse`` it takes every node (or a share ``--keep``) as an
example and fits the games' final returns. Writes FILE and prints the data,
the seconds and the fit on the held-out games (docs/solvers/value_net.md).
"""

from __future__ import annotations

import time

import click
import numpy as np

from kibitz.commands._paths import VALUE_NETWORK_KINDS, NumberRange, refuse_to_replace, writable_file
from kibitz.commands.solve import parse_duration
from kibitz.commands.train import MAX_LAYERS, MAX_WIDTH, _hidden
from kibitz.games import GameStringError, load_game


def _npz(ctx, param, value):
    value = writable_file(ctx, param, value)
    if not value.endswith(".npz"):
        raise click.BadParameter(f"{value}: the value network file must end in .npz", ctx, param)
    return value


def _specs(text: str, game) -> list[str]:
    """The agent specs of --agents, each made once for seat 0; one line naming the option otherwise."""
    from kibitz.agents.registry import make_agent, parse_spec, split_specs

    try:
        specs = split_specs(text)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--agents") from None
    for spec in specs:
        try:
            if parse_spec(spec)[0] == "human":
                raise ValueError("a human cannot play the games; allowed: an automatic agent (kibitz agents "
                                 "lists them)")
            make_agent(spec, game, 0, 0)
        except (ValueError, FileNotFoundError) as e:
            raise click.BadParameter(f"{spec!r}: {e}", param_hint="--agents") from None
    return specs


@click.command("value-net")
@click.argument("game_string", metavar="GAME")
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False), callback=_npz,
              help="Value network file to write (.npz, solvers/value_net.py's format).")
@click.option("--objective", type=click.Choice(["variance", "mse", "state"]), default="variance", show_default=True,
              help="What the network is fitted for: the variance of AIVAT's estimate over games, or the mean "
                   "squared error to the final returns; state: a state-value network on the compiled rules, "
                   "fitted to the returns of games streamed from the batched environment "
                   "(kibitz.solvers.state_value). The mean "
                   "squared error to the final returns.")
@click.option("--agents", "agents_text", default=None, metavar="SPEC,SPEC",
              help="The agents whose games are the data, rotated over the seats (those whose matches AIVAT "
                   "evaluates). Default trained,heuristic; with --objective state trained (agents with a "
                   "batched form: random, trained, net(FILE), heuristic in Pub).")
@click.option("--games", type=click.IntRange(min=10), default=None,
              help="Games to play (every tenth is held out to measure the fit). Default 2000; with --objective "
                   "state the most games streamed (default: as many as --time allows).")
@click.option("--keep", type=NumberRange(0, 1, min_open=True), default=1.0, show_default=True,
              help="Share of each game's nodes kept as examples (fewer examples a game, less memory; "
                   "--objective mse only).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Random seed.")
@click.option("--time", "time_limit", metavar="LIMIT", default=None,
              help="Stop fitting after this long (90, 90s, 10m): the best epoch so far is kept.")
@click.option("--epochs", type=click.IntRange(min=1), default=20, show_default=True,
              help="Most passes over the training examples.")
@click.option("--hidden", default=None, callback=lambda ctx, param, value: None if value is None
              else _hidden(ctx, param, value),
              help=f"Hidden layer widths (1 to {MAX_LAYERS}, each at most {MAX_WIDTH}); default 64, with "
                   "--objective state 256,256.")
@click.option("--encoding", default="observation_tensor", show_default=True,
              help="The features: this encoding of the state for every player, concatenated.")
@click.option("--overwrite", is_flag=True, help="Replace the value network file of an earlier run at --out.")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Show the progress bars (only on a terminal).")
def value_net(game_string, out, objective, agents_text, games, keep, seed, time_limit, epochs, hidden, encoding,
              overwrite, progress):
    """Train the value network that AIVAT's corrections read for GAME.

    \b
    Examples:
      kibitz value-net underdog --games 4000 --out underdog.value.npz
      kibitz value-net underdog --objective mse --games 12000 --keep 0.25 --out underdog.value.npz
      kibitz value-net 'pub(players=3,suits=2,ranks=3,removed=0,hand=1)' --agents random --games 500 --out v.npz
    """
    from kibitz.agents.training import value_data
    from kibitz.games import check_encoding
    from kibitz.solvers import value_net as vn

    try:
        game = load_game(game_string)
    except GameStringError as e:
        raise click.BadParameter(str(e), param_hint="GAME") from None
    try:
        check_encoding(game, encoding)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--encoding") from None
    limit = parse_duration(time_limit)
    if objective == "state":
        if keep != 1.0:
            raise click.BadParameter(f"{keep:g}: --objective state streams a fixed number of positions a game; "
                                     "--keep is for --objective mse", param_hint="--keep")
        if encoding != "observation_tensor":
            raise click.BadParameter(f"{encoding}: --objective state reads every player's observation tensor "
                                     "(allowed: observation_tensor)", param_hint="--encoding")
        refuse_to_replace({out: VALUE_NETWORK_KINDS}, overwrite=overwrite)
        _state_value(game, out, agents_text or "trained", games, seed, 600.0 if limit is None else limit,
                     hidden or (256, 256), progress)
        return
    agents_text = agents_text or "trained,heuristic"
    games = games or 2000
    hidden = hidden or (64,)
    if objective == "variance" and keep != 1.0:
        raise click.BadParameter(f"{keep:g}: the variance objective needs every corrected node of a game; "
                                 "--keep is for --objective mse", param_hint="--keep")
    refuse_to_replace({out: VALUE_NETWORK_KINDS}, overwrite=overwrite)
    specs = _specs(agents_text, game)
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=games, unit="game", desc="play", dynamic_ncols=True, disable=None)
    if objective == "variance":
        data, play_seconds = value_data.collect_nodes(game, specs, games, seed=seed, encoding=encoding,
                                                      on_game=(lambda i, k: bar.update()) if bar else None)
    else:
        data, play_seconds = value_data.collect(game, specs, games, seed=seed, encoding=encoding, keep=keep,
                                                on_game=(lambda i, k: bar.update()) if bar else None)
    if bar:
        bar.close()
        from tqdm import tqdm
        bar = tqdm(total=epochs, unit="epoch", desc="fit", dynamic_ncols=True, disable=None)

    def on_epoch(record):
        if bar:
            if objective == "variance":
                bar.set_postfix(variance=f"{record['variance']:.4g}", plain=f"{record['variance_plain']:.4g}")
            else:
                bar.set_postfix(mse=f"{record['mse']:.4g}", mean=f"{record['mse_mean']:.4g}")
            bar.update(0.25)

    settings = {"agents": specs, "games": games, "data_seconds": round(play_seconds, 1)}
    t0 = time.perf_counter()
    if objective == "variance":
        settings["deal_seed_words"] = [value_data.SEED_OFFSET + seed, 43]
        net = vn.train_for_variance(game, data, hidden=hidden, encoding=encoding, epochs=epochs, seed=seed,
                                    time_limit=limit, on_epoch=on_epoch, settings=settings)
    else:
        settings["keep"] = keep
        net = vn.train_value_net(game, data, hidden=hidden, encoding=encoding, epochs=epochs, seed=seed,
                                 time_limit=limit, on_epoch=on_epoch, settings=settings)
    fit_seconds = time.perf_counter() - t0
    if bar:
        bar.close()
    vn.save(out, net)
    fit, data = net.meta["fit"], net.meta["data"]
    click.echo(f"game:      {game}")
    click.echo(f"agents:    {', '.join(specs)} (rotated over the seats), seed {seed}")
    click.echo(f"features:  {encoding} of each of {game.num_players()} players ({net.spec.input_size:,} floats)")
    click.echo(f"network:   hidden {','.join(map(str, net.spec.hidden))}, actions "
               + (f"factored ({net.spec.action_rows - 1} factors)" if net.spec.factored
                  else f"{net.spec.num_actions:,}") + f", chance outcomes {net.spec.chance_outcomes}")
    if objective == "variance":
        click.echo(f"data:      {games:,} games, {data['nodes']:,} corrected nodes ({data['chance_nodes']:,} chance "
                   f"nodes), {data['candidates']:,} children, {play_seconds:.1f} s")
        click.echo(f"fit:       held-out variance of the estimate {fit['variance']:.5f} against "
                   f"{fit['variance_plain']:.5f} plain (ratio per player "
                   f"{', '.join(f'{r:.3f}' for r in fit['ratio'])}), {data['held_out_games']:,} held-out games, "
                   f"epoch {fit['epoch']} of {fit['epochs']}, {fit_seconds:.1f} s")
    else:
        click.echo(f"data:      {games:,} games, {data['examples']:,} examples ({data['chance_examples']:,} at "
                   f"chance nodes; keep {keep:g}), {play_seconds:.1f} s")
        click.echo(f"fit:       held-out MSE {fit['mse']:.5f} against {fit['mse_mean']:.5f} for the mean returns "
                   f"(R^2 {fit['r2']:.4f}), epoch {fit['epoch']} of {fit['epochs']}, {fit_seconds:.1f} s")
    click.echo(f"written:   {out}")


#: --objective state: games a chunk of the stream, positions kept a game, games held out to measure the fit
STATE_CHUNK, STATE_PER_GAME, STATE_HELD_OUT = 8192, 6, 4096


def _state_value(game, out, agents_text, games, seed, limit, hidden, progress):
    """--objective state: :func:`kibitz.solvers.state_value.train` on
    :func:`kibitz.agents.training.value_data.position_chunks`, for ``limit`` seconds
    or ``games`` games."""
    from kibitz.agents.training import value_data
    from kibitz.agents.matches.batched_match import BATCHED_KINDS
    from kibitz.agents.registry import split_specs
    from kibitz.solvers import state_value

    try:
        specs = split_specs(agents_text)
        state_value.compiled_features(game)
        held_out = value_data.position_sample(game, specs, STATE_HELD_OUT, STATE_PER_GAME,
                                              np.random.SeedSequence((seed, 46)))
    except ValueError as e:
        raise click.BadParameter(f"{e} (--objective state plays {', '.join(BATCHED_KINDS)})",
                                 param_hint="--agents") from None
    max_chunks = None if games is None else -(-games // STATE_CHUNK)
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=round(limit), unit="s", desc="fit", dynamic_ncols=True, disable=None)

    def on_check(record):
        if bar:
            bar.set_postfix(r2=f"{record['r2']:.4f}", games=f"{record['chunk'] * STATE_CHUNK:,}")
            bar.update(min(round(record["seconds"]), bar.total) - bar.n)

    chunks = value_data.position_chunks(game, specs, seed, chunk=STATE_CHUNK, per_game=STATE_PER_GAME)
    settings = {"objective": "state", "agents": specs, "chunk_games": STATE_CHUNK,
                "positions_per_game": STATE_PER_GAME, "held_out_games": STATE_HELD_OUT,
                "seed_words": {"chunks": [seed, 47], "held_out": [seed, 46]}}
    net = state_value.train(game, chunks, held_out, hidden=hidden, seed=seed, time_limit=limit,
                            max_chunks=max_chunks, on_check=on_check, settings=settings)
    if bar:
        bar.close()
    state_value.save(out, net)
    fit = net.meta["fit"]
    click.echo(f"game:      {game}")
    click.echo(f"agents:    {', '.join(specs)} (seated as batched_match seats them), seed {seed}")
    click.echo(f"features:  every player's observation tensor and who moves "
               f"({state_value.feature_size(game):,} floats), on the compiled rules")
    click.echo(f"network:   state values, hidden {','.join(map(str, hidden))}")
    click.echo(f"data:      {fit['chunks'] * STATE_CHUNK:,} games streamed, {fit['positions']:,} positions "
               f"({STATE_PER_GAME} a game), each used once")
    click.echo(f"fit:       held-out MSE {fit['mse']:.5f} against {fit['mse_mean']:.5f} for the mean returns "
               f"(R^2 {fit['r2']:.4f}) on {fit['held_out_positions']:,} positions of {STATE_HELD_OUT:,} other "
               f"games, best at chunk {fit['check']} of {fit['chunks']}, {fit['seconds']:.1f} s")
    click.echo(f"written:   {out}")
