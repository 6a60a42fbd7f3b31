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

import click

from kibitz.commands._paths import NETWORK_KINDS, NumberRange, refuse_to_replace_run, run_options, writable_file
from kibitz.commands.solve import parse_duration, solve_errors
from kibitz.api import DEFAULT_PROBE_NODES, DEFAULT_STEPS, ConfigError


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
    """:func:`kibitz.api.output_kind`, its errors as one line naming GAME,
    --encoding or --output."""
    from kibitz.api import output_kind as check

    with solve_errors():
        return check(game, encoding, output_kind)


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
    from kibitz.api import TrainConfig, TrainRun
    from kibitz.api import train as run_train

    refuse_to_replace_run(out, NETWORK_KINDS, resume=resume, overwrite=overwrite)
    limit = parse_duration(time_limit)
    if opponent_share is None:
        opponent_share = 0.5 if opponent else 0.0
    with solve_errors():
        try:
            config = TrainConfig(hidden=hidden, encoding=encoding, output=output_kind, batch=batch, lr=lr,
                                 critic_lr=critic_lr, alpha=alpha, magnet_every=magnet_every, opponent=opponent,
                                 opponent_share=opponent_share, imitation_steps=imitation_steps,
                                 explore=explore, imitation_lr=imitation_lr)
        except ConfigError:
            raise
        except ValueError as e:
            raise ConfigError(str(e)) from None
        run = TrainRun(game_string, out=out, steps=steps, time_limit=limit, seed=seed, config=config,
                       probe_every=probe_every, probe_nodes=probe_nodes, resume=resume,
                       checkpoint_every=checkpoint_every, progress=progress)
        result = run_train(run, log=lambda line: click.echo(line, err=True))
    for line in result.lines():
        click.echo(line)
