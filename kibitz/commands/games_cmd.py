"""``kibitz games``: the registered games and their parameters."""

import click

from kibitz import games as games_pkg


@click.command("games")
@click.argument("name", required=False)
def games_command(name):
    """List the games with their parameters, defaults and allowed values."""
    specs = games_pkg.REGISTRY
    if name is not None and name not in specs:
        raise click.BadParameter(f"unknown game {name!r}; games: {', '.join(sorted(specs))}",
                                 param_hint="NAME")
    for short in sorted(specs) if name is None else [name]:
        spec = specs[short]
        click.echo(f"{spec.short_name}: {spec.long_name}. {spec.summary}")
        click.echo(f"  small configuration: {spec.small}")
        width = max(len(p.name) for p in spec.params)
        for p in spec.params:
            default = str(p.default).lower() if isinstance(p.default, bool) else p.default
            click.echo(f"  {p.name:<{width}}  default {default!s:<6} allowed {p.allowed:<16} {p.help}")
        click.echo()


games = games_command
