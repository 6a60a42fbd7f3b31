"""``kibitz iterate``: expert iteration, generations of search distilled into the next network.

    kibitz iterate GAME --out DIR [--start FILE] [--generations K] [--sims S] [--search OPTIONS]
                   [--games N] [--epochs E] [--lr X] [--hidden 128,128] [--chunk C]
                   [--match-games M] [--opponent SPEC] [--seed S] [--time LIMIT] [--workers W]

Each generation (docs/solvers/training.md, "Expert iteration"): IS-MCTS on
the best network's prior plays ``--games`` teacher games, a network is
distilled from them and exported, and a paired match against
``--opponent`` (the new network's tournament and the best's, same seed)
keeps it only if the 95% interval of the difference is above 0. Every file
goes to ``--out``; ``iterate.json`` records the settings, the seconds and
each generation's figures; the same command continues a stopped run.

The command parses its options into a :class:`kibitz.api.IterateConfig`,
runs :func:`kibitz.api.iterate` (agents/training/iterate.py) with its
progress on stderr and prints a line a generation.
"""

from __future__ import annotations

import click

from kibitz.api import IterateConfig
from kibitz.commands._paths import NumberRange
from kibitz.commands.solve import parse_duration, solve_errors
from kibitz.commands.train import _hidden


@click.command()
@click.argument("game_string", metavar="GAME")
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False),
              help="Folder of the run's files (made if missing; an earlier run's folder is continued).")
@click.option("--start", default=None, type=click.Path(dir_okay=False, exists=True),
              help="Generation 0: a network agent file (kibitz export). Default: the game's shipped network "
                   "(agents/trained/GAME.json.gz).")
@click.option("--generations", "-k", type=click.IntRange(min=1), default=3, show_default=True,
              help="Generations to run (a continued run runs only the missing ones).")
@click.option("--sims", type=click.IntRange(min=1), default=200, show_default=True,
              help="The teacher's IS-MCTS simulations a move.")
@click.option("--search", default="", metavar="OPTIONS",
              help="More IS-MCTS options of the teacher, e.g. 'belief_opponents' or 'puct_c=2' "
                   "(docs/solvers/ismcts.md).")
@click.option("--games", type=click.IntRange(min=1), default=200, show_default=True,
              help="Teacher games a generation.")
@click.option("--epochs", type=click.IntRange(min=1), default=10, show_default=True,
              help="Passes over a generation's data.")
@click.option("--lr", type=NumberRange(0, 1, min_open=True), default=1e-3, show_default=True,
              help="Adam step size.")
@click.option("--hidden", default=None, callback=lambda ctx, param, value: None if value is None
              else _hidden(ctx, param, value), help="Hidden layer widths. Default: the start network's.")
@click.option("--chunk", type=click.IntRange(min=1), default=4, show_default=True,
              help="Teacher games per data shard (the most an interruption loses per worker).")
@click.option("--match-games", type=click.IntRange(min=2), default=400, show_default=True,
              help="Games of each of the acceptance match's two tournaments.")
@click.option("--opponent", default="heuristic", show_default=True, metavar="SPEC",
              help="The agent in the other seats of the teacher games and of the acceptance match.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the run (generation g's games and match use seed + g).")
@click.option("--time", "time_limit", metavar="LIMIT", default=None,
              help="Stop after this long (90, 10m, 8h), checked between steps; the same command continues.")
@click.option("--workers", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Processes playing the teacher games and the matches.")
def iterate(game_string, time_limit, **options):
    """Expert iteration for GAME: search on the best network, distil it, keep it if it wins a paired match.

    \b
    Examples:
      kibitz iterate pub --out build/iterate/pub --generations 3 --sims 200 --games 300 -j 2
      kibitz iterate kuhn_poker --start agent.json.gz --opponent random --out iter --sims 20 --games 20
    """
    from kibitz.api import iterate as run_iterate

    with solve_errors():
        config = IterateConfig(game_string, time_limit=parse_duration(time_limit), **options)
        result = run_iterate(config, log=lambda line: click.echo(line, err=True))
    for line in result.lines():
        click.echo(line)
