"""``kibitz games``: the registered games and their parameters."""

import click

from kibitz import games as games_pkg


@click.command("games")
@click.argument("name", required=False)
def games_command(name):
    """List the kibitz games: parameters, defaults, allowed values and network inputs."""
    specs = games_pkg.REGISTRY
    if name is not None and name not in specs:
        hint = ("; give the name alone, without parameters" if "(" in name else
                "; other OpenSpiel games (e.g. kuhn_poker) are played by their game strings but not listed here")
        raise click.BadParameter(f"no kibitz game {name!r}; kibitz games: {', '.join(sorted(specs))}{hint}",
                                 param_hint="NAME")
    for short in sorted(specs) if name is None else [name]:
        spec = specs[short]
        click.echo(f"{spec.short_name}: {spec.long_name}. {spec.summary}")
        click.echo(f"  small configuration: {spec.small}")
        width = max(len(p.name) for p in spec.params)
        for p in spec.params:
            default = str(p.default).lower() if isinstance(p.default, bool) else p.default
            click.echo(f"  {p.name:<{width}}  default {default!s:<6} allowed {p.allowed:<16} {p.help}")
        game = games_pkg.load_game(short)
        sizes = ", ".join(f"{e} ({games_pkg.encoding_size(game, e):,} floats)" for e in games_pkg.encodings(game))
        click.echo(f"  network inputs (--encoding) at the defaults: {sizes}")
        click.echo()


games = games_command
