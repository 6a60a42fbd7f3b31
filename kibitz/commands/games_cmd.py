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
        for line in _parameter_rows(spec.params):
            click.echo(line)
        game = games_pkg.load_game(short)
        sizes = ", ".join(f"{e} ({games_pkg.encoding_size(game, e):,} floats)" for e in games_pkg.encodings(game))
        click.echo(f"  network inputs (--encoding) at the defaults: {sizes}")
        click.echo()


games = games_command

#: the widest "allowed" value kept in its column; a wider one puts the help on the next line
ALLOWED_COLUMN = 24


def _parameter_rows(params) -> list[str]:
    """One row per parameter: name, default, allowed values and help in
    columns two spaces apart, as wide as the game's values need (an allowed
    value wider than :data:`ALLOWED_COLUMN` puts its help on the next
    line, under the help column)."""
    defaults = [str(p.default).lower() if isinstance(p.default, bool) else str(p.default) for p in params]
    name_width = max(len(p.name) for p in params)
    default_width = max(len(d) for d in defaults)
    allowed_width = max((len(p.allowed) for p in params if len(p.allowed) <= ALLOWED_COLUMN), default=0)
    rows = []
    for p, default in zip(params, defaults):
        row = f"  {p.name:<{name_width}}  default {default:<{default_width}}  allowed {p.allowed:<{allowed_width}}"
        if len(p.allowed) > allowed_width:
            rows += [row, " " * (len(row) - len(p.allowed) + allowed_width + 2) + p.help]
        else:
            rows.append(f"{row}  {p.help}")
    return rows
