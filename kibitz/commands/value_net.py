"""``kibitz value-net``: the value network AIVAT corrects payoffs with.

    kibitz value-net GAME --out FILE.npz [--objective variance|mse|state] [--agents trained,heuristic] [--games N]
                     [--keep X] [--seed S] [--time LIMIT] [--epochs E] [--hidden 64] [--encoding NAME]
                     [--overwrite]

Parses the options into a :class:`kibitz.api.ValueNetConfig`, runs it
(:func:`kibitz.api.value_net`: the games, the fit and the file are
``agents/training/value_run.py``'s), draws its progress bars and prints its
summary: the data, the seconds and the fit on the held-out games
(docs/solvers/value_net.md).
"""

from __future__ import annotations

import click

from kibitz.api import ConfigError, ValueNetConfig
from kibitz.api import value_net as run_value_net
from kibitz.commands._paths import VALUE_NETWORK_KINDS, NumberRange, refuse_to_replace, writable_file
from kibitz.commands.solve import parse_duration
from kibitz.commands.train import MAX_LAYERS, MAX_WIDTH, _hidden


def _npz(ctx, param, value):
    value = writable_file(ctx, param, value)
    if not value.endswith(".npz"):
        raise click.BadParameter(f"{value}: the value network file must end in .npz", ctx, param)
    return value


class _Bars:
    """The progress bars of a run, drawn from its ``progress`` reports: play
    (games) then fit (epochs), or fit (seconds) with --objective state."""

    def __init__(self, config: ValueNetConfig):
        self.config, self.bar = config, None

    def __call__(self, stage: str, record: dict | None) -> None:
        if record is None:
            from tqdm import tqdm

            self.close()
            total, unit = ((self.config.games, "game") if stage == "play" else
                           (round(self.config.time_limit), "s") if self.config.objective == "state" else
                           (self.config.epochs, "epoch"))
            self.bar = tqdm(total=total, unit=unit, desc=stage, dynamic_ncols=True, disable=None)
        elif stage == "play":
            self.bar.update()
        elif self.config.objective == "state":
            self.bar.set_postfix(r2=f"{record['r2']:.4f}", games=f"{record['games']:,}")
            self.bar.update(min(round(record["seconds"]), self.bar.total) - self.bar.n)
        else:
            if self.config.objective == "variance":
                self.bar.set_postfix(variance=f"{record['variance']:.4g}", plain=f"{record['variance_plain']:.4g}")
            else:
                self.bar.set_postfix(mse=f"{record['mse']:.4g}", mean=f"{record['mse_mean']:.4g}")
            self.bar.update(0.25)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


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
                   "batched form: random, trained, net(FILE), heuristic in Pub, Over/Under, Underdog and Doubt and Bet).")
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
    limit = parse_duration(time_limit)
    try:
        config = ValueNetConfig(game_string, objective=objective, agents=agents_text, games=games, keep=keep,
                                seed=seed, time_limit=limit, epochs=epochs, hidden=hidden, encoding=encoding,
                                out=out)
    except ConfigError as e:
        raise click.BadParameter(str(e), param_hint=e.param) from None
    refuse_to_replace({out: VALUE_NETWORK_KINDS}, overwrite=overwrite)
    bars = _Bars(config) if progress else None
    result = run_value_net(config, progress=bars)
    if bars is not None:
        bars.close()
    for line in result.lines():
        click.echo(line)
