"""``kibitz train``: a network policy by self-play Magnetic Mirror Descent.

    kibitz train GAME --out FILE.npz [--steps N] [--time LIMIT] [--seed S]
                 [--encoding NAME] [--output dense|factored] [--hidden 128,128]
                 [--batch B] [--lr X] [--critic-lr X] [--alpha A]
                 [--magnet-every M] [--opponent SPEC [--opponent-share X] [--imitation-steps N]]
                 [--probe-every K] [--resume]

The trainer is :class:`solvers.train.MMDTrainer` (docs/solvers/training.md)
in the shared solve driver: a progress bar (steps/s, loss, the latest
strength probe), a checkpoint ``FILE.npz.ckpt.npz`` every
``--checkpoint-every`` seconds, at the end and on Ctrl-C/SIGTERM, and
``--resume`` ending with exactly the parameters an uninterrupted run would
have. The probe is the exact NashConv of the network's policy when the
game's tree compiles within ``--probe-nodes`` nodes, else the network's
mean return against random seats. The network is written to FILE with
:func:`solvers.network.save`.

``--encoding`` picks the network's input among the game's encodings
(``kibitz.games.encodings``; ``information_state_tensor`` by default);
``--output`` its output, ``dense`` (a logit per action) or ``factored``
(sums of the game's factor logits). The output's default is ``factored``
when the encoding is not ``information_state_tensor`` and the game offers
action factors (Doubt and Bet with ``--encoding compact``), else ``dense``,
so that a run without these options is the run it was before they existed.
"""

from __future__ import annotations

import math
import signal
import time

import click

from kibitz.commands._paths import NETWORK_KINDS, NumberRange, refuse_to_replace_run, run_options, writable_file
from kibitz.commands.solve import parse_duration, solve_errors
from kibitz.games import GameStringError, load_game

#: steps when neither --steps nor --time bounds a run
DEFAULT_STEPS = 1000
#: the node budget under which the probe is the exact NashConv
DEFAULT_PROBE_NODES = 200_000


#: the widest hidden layer, the most hidden layers, the most episodes a step
#: (a network or a batch past these does not fit in a laptop's memory)
MAX_WIDTH, MAX_LAYERS, MAX_BATCH = 4096, 8, 4096


def _hidden(ctx, param, value):
    try:
        widths = tuple(int(w) for w in value.split(","))
    except ValueError:
        widths = ()
    if not widths or min(widths) < 1 or max(widths) > MAX_WIDTH or len(widths) > MAX_LAYERS:
        raise click.BadParameter(f"{value!r}: allowed: 1 to {MAX_LAYERS} layer widths from 1 to {MAX_WIDTH} "
                                 "separated by commas, e.g. 128,128", ctx, param)
    return widths


def _npz(ctx, param, value):
    value = writable_file(ctx, param, value)
    if not value.endswith(".npz"):
        raise click.BadParameter(f"{value}: the network file must end in .npz", ctx, param)
    return value


def network_io(game, encoding: str, output_kind: str | None) -> str:
    """Checks that ``game`` can be learnt from ``encoding`` (one line naming
    GAME, --encoding or --output otherwise) and returns the output kind:
    ``output_kind``, or by default factored for an encoding other than the
    information-state tensor in a game with action factors, else dense."""
    from kibitz.games import check_encoding, output_kinds
    from kibitz.solvers import network
    from kibitz.solvers import train as train_mod

    try:
        train_mod.check_trainable(game)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="GAME") from None
    try:
        check_encoding(game, encoding)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="'--encoding'") from None
    if output_kind is None:
        output_kind = "factored" if encoding != network.ENCODING and "factored" in output_kinds(game) else "dense"
    if output_kind not in output_kinds(game):
        raise click.BadParameter(f"{game.get_type().short_name} has no action factors; allowed: "
                                 f"{', '.join(output_kinds(game))}", param_hint="'--output'")
    return output_kind


@click.command()
@click.argument("game_string", metavar="GAME")
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False), callback=_npz,
              help="Network file to write (.npz, solvers/network.py's format).")
@click.option("--steps", "-n", type=click.IntRange(min=1), default=None,
              help=f"Total training steps (a resumed run counts those done). Default: {DEFAULT_STEPS}, "
                   "or no limit when --time is given.")
@click.option("--time", "time_limit", metavar="LIMIT", default=None,
              help="Stop after this long (this run's wall time): 90, 90s, 10m, 1h30m.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Random seed.")
@click.option("--encoding", default="information_state_tensor", show_default=True,
              help="The network's input: one of the game's encodings (doubt_and_bet, over_under and pub also offer "
                   "compact).")
@click.option("--output", "output_kind", type=click.Choice(["dense", "factored"]), default=None,
              help="The network's output: a logit per action (dense) or sums of the game's factor logits "
                   "(factored). Default: factored for an encoding other than information_state_tensor in a "
                   "game with action factors, else dense.")
@click.option("--hidden", default="128,128", show_default=True, callback=_hidden,
              help="Hidden layer widths of the policy (and critic) network.")
@click.option("--batch", type=click.IntRange(1, MAX_BATCH), default=32, show_default=True,
              help="Self-play episodes per step.")
@click.option("--lr", type=NumberRange(0, 1, min_open=True), default=1e-3, show_default=True,
              help="Adam step size of the policy.")
@click.option("--critic-lr", type=NumberRange(0, 1, min_open=True), default=1e-3, show_default=True,
              help="Adam step size of the critic.")
@click.option("--alpha", type=NumberRange(0, 100), default=0.05, show_default=True,
              help="Weight of KL(policy || magnet).")
@click.option("--magnet-every", type=click.IntRange(min=0), default=0, show_default=True,
              help="Steps between moving the magnet to the current policy (0: never).")
@click.option("--opponent", default="", metavar="SPEC",
              help="An agent spec (e.g. heuristic) that holds some seats of a share of the episodes; "
                   "its moves are not training data. Default: self-play only.")
@click.option("--opponent-share", type=NumberRange(0, 1), default=None,
              help="Share of the episodes with --opponent seats (the network keeps 1..n-1 seats, drawn "
                   "uniformly). Default: 0.5 with --opponent, else 0.")
@click.option("--imitation-steps", type=click.IntRange(min=0), default=0, show_default=True,
              help="First steps that imitate --opponent playing every seat (its moves are the targets); "
                   "the imitated policy is then the magnet.")
@click.option("--imitation-lr", type=NumberRange(0, 1), default=0.0, show_default=True,
              help="Adam step size of the policy in the imitation steps (0: --lr); --lr applies after them.")
@click.option("--explore", type=NumberRange(0, 1, max_open=True), default=0.0, show_default=True,
              help="Chance that a network move in training is uniform over the legal moves (exploration: "
                   "the critic then sees the other moves too).")
@click.option("--probe-every", type=click.IntRange(min=0), default=100, show_default=True,
              help="Steps between strength probes (0: only at the end).")
@click.option("--probe-nodes", type=click.IntRange(min=1), default=DEFAULT_PROBE_NODES, show_default=True,
              help="Largest tree for the exact NashConv probe; larger games are probed against random.")
@run_options("network")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Show the progress bar (only on a terminal).")
def train(game_string, out, steps, time_limit, seed, encoding, output_kind, hidden, batch, lr, critic_lr, alpha,
          magnet_every, opponent, opponent_share, imitation_steps, imitation_lr, explore, probe_every, probe_nodes, resume, overwrite, checkpoint_every, progress):
    """Train a network policy for GAME by self-play (Magnetic Mirror Descent) and save it.

    \b
    Examples:
      kibitz train kuhn_poker --steps 2000 --out kuhn-net.npz
      kibitz train 'pub(players=3,suits=2,ranks=3,removed=0,hand=1)' --time 5m --out pub-net.npz
      kibitz train doubt_and_bet --encoding compact --time 1h --out db-net.npz
    """
    from kibitz.solvers import driver, network
    from kibitz.solvers import train as train_mod
    from kibitz.solvers import tree as tree_mod
    from kibitz.solvers.solve import drive

    try:
        game = load_game(game_string)
    except GameStringError as e:
        raise click.BadParameter(str(e), param_hint="GAME") from None
    refuse_to_replace_run(out, NETWORK_KINDS, resume=resume, overwrite=overwrite)
    output_kind = network_io(game, encoding, output_kind)
    factory = None
    if opponent_share is None:
        opponent_share = 0.5 if opponent else 0.0
    if opponent_share > 0 and not opponent:
        raise click.BadParameter(f"{opponent_share:g} needs --opponent SPEC (e.g. heuristic)",
                                 param_hint="--opponent-share")
    if imitation_steps and not opponent:
        raise click.BadParameter(f"{imitation_steps} needs --opponent SPEC to imitate (e.g. heuristic)",
                                 param_hint="--imitation-steps")
    if opponent:
        from kibitz.agents.registry import make_agent, parse_spec

        try:
            if parse_spec(opponent)[0] == "human":
                raise ValueError("a human cannot hold seats in training; allowed: an automatic agent "
                                 "(kibitz agents lists them)")
            make_agent(opponent, game, 0, 0)
        except (ValueError, FileNotFoundError) as e:
            raise click.BadParameter(f"{opponent!r}: {e}", param_hint="--opponent") from None

        def factory(g, seat, agent_seed):
            return make_agent(opponent, g, seat, agent_seed)
    limit = parse_duration(time_limit)
    if steps is None:
        steps = math.inf if limit is not None else DEFAULT_STEPS
    config = train_mod.TrainConfig(hidden=hidden, encoding=encoding, output=output_kind, batch=batch, lr=lr,
                                   critic_lr=critic_lr, alpha=alpha, magnet_every=magnet_every, opponent=opponent,
                                   opponent_share=opponent_share, imitation_steps=imitation_steps,
                                   explore=explore, imitation_lr=imitation_lr)
    # Ctrl-C while JAX starts would land in its callbacks, which drop it:
    # it is held as a flag until the trainer and the probe are made
    with driver.stop_on_signals() as early:
        trainer = train_mod.MMDTrainer(game, config, seed=seed, opponent=factory)
        try:
            tree = tree_mod.compile_tree(game, max_nodes=probe_nodes)
            probe = train_mod.TreeProbe(game, tree, trainer.spec)
        except (tree_mod.TreeTooLarge, ValueError):
            probe = None
    if early["signal"] is not None:
        click.echo("\ninterrupted while starting: nothing was trained or written", err=True)
        raise SystemExit(130 if early["signal"] == signal.SIGINT else 143)

    def measure(params):
        if probe is not None:
            return "NashConv", probe.nash_conv(params)
        return "vs random", train_mod.mean_return_against_random(game, params, games=10, seed=seed,
                                                                 spec=trainer.spec)

    meta = driver.checkpoint_meta(str(game), "mmd", {**config.as_dict(), "seed": seed})
    shown = {}

    def postfix(t):
        if probe_every and t.iteration % probe_every == 0:
            name, value = measure(t.policy_params())
            shown[name] = f"{value:.3g}"
        return {"loss": f"{t.last['policy_loss'] + t.last['critic_loss']:.3g}", **shown}

    t0 = time.perf_counter()
    try:
        with solve_errors():
            reason, seconds, _ = drive(trainer, meta, out, resume, lambda line: click.echo(line, err=True),
                                       iterations=steps, time_limit=limit, eval_every=0,
                                       checkpoint_every=checkpoint_every, progress=progress,
                                       postfix=postfix, desc="train", unit="step")
    except (SystemExit, click.ClickException) as e:  # interrupted or out of memory: the network so far is kept
        if trainer.iteration and not isinstance(e, click.UsageError):
            network.save(out, trainer.spec, trainer.policy_params())
            click.echo(f"the network after step {trainer.iteration:,} is in {out}", err=True)
        raise
    params = trainer.policy_params()
    network.save(out, trainer.spec, params)
    name, value = measure(params)
    rate = f" ({trainer.iteration / seconds:,.1f} steps/s)" if trainer.iteration and seconds > 0 else ""
    click.echo(f"game:        {game}")
    click.echo(f"encoding:    {encoding} input, {output_kind} output"
               + (f" ({trainer.spec.factors} factor logits)" if output_kind == "factored" else ""))
    click.echo(f"method:      mmd (hidden {','.join(map(str, hidden))}, batch {batch}, lr {lr:g}, "
               f"critic lr {critic_lr:g}, alpha {alpha:g}, magnet every {magnet_every or 'never'}, "
               f"seed {seed})")
    if opponent:
        click.echo(f"opponent:    {opponent} in {opponent_share:.0%} of the episodes"
                   + (f", imitated in the first {imitation_steps:,} steps (lr {imitation_lr or lr:g})"
                      if imitation_steps else ""))
    if explore:
        click.echo(f"exploration: {explore:.0%} of the network's moves in training are uniform")
    click.echo(f"steps:       {trainer.iteration:,} ({driver.STOPPED[reason]})")
    click.echo(f"seconds:     {seconds:.2f} training, all runs{rate}; this run's wall time {time.perf_counter() - t0:.2f} "
               "(strength probes included)")
    if math.isnan(trainer.last['policy_loss']):
        click.echo("loss:        - (no step in this run)")
    else:
        click.echo(f"loss:        policy {trainer.last['policy_loss']:.4g}, critic {trainer.last['critic_loss']:.4g}")
    if probe is not None:
        click.echo(f"NashConv:    {value:.6g} (uniform policy {probe.uniform_nash_conv():.6g})")
    else:
        click.echo(f"vs random:   mean return {value:+.4g} over {10 * game.num_players()} games "
                   f"(tree over {probe_nodes:,} nodes: no exact NashConv)")
    click.echo(f"network:     {out} ({trainer.spec.input_size:,} inputs, {trainer.spec.num_actions:,} actions)")
