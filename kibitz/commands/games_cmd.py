"""``kibitz games``: the registered games and their parameters."""

import click

from kibitz.api import ConfigError, registered_games


@click.command("games")
@click.argument("name", required=False)
def games_command(name):
    """List the kibitz games: parameters, defaults, allowed values and network inputs."""
    try:
        listed = registered_games(name)
    except ConfigError as e:
        raise click.BadParameter(str(e), param_hint=e.param) from None
    for short, game in listed.items():
        click.echo(f"{short}: {game['long_name']}. {game['summary']}")
        click.echo(f"  small configuration: {game['small']}")
        for line in _parameter_rows(game["parameters"]):
            click.echo(line)
        sizes = ", ".join(f"{e} ({size:,} floats)" for e, size in game["encodings"].items())
        click.echo(f"  network inputs (--encoding) at the defaults: {sizes}")
        click.echo()


games = games_command

#: the widest "allowed" value kept in its column; a wider one puts the help on the next line
ALLOWED_COLUMN = 24


def _parameter_rows(params: dict) -> list[str]:
    """One row per parameter (``params``: as :func:`kibitz.api.registered_games`
    gives them, by name): name, default, allowed values and help in
    columns two spaces apart, as wide as the game's values need (an allowed
    value wider than :data:`ALLOWED_COLUMN` puts its help on the next
    line, under the help column)."""
    defaults = [str(p["default"]).lower() if isinstance(p["default"], bool) else str(p["default"])
                for p in params.values()]
    name_width = max(len(name) for name in params)
    default_width = max(len(d) for d in defaults)
    allowed_width = max((len(p["allowed"]) for p in params.values() if len(p["allowed"]) <= ALLOWED_COLUMN),
                        default=0)
    rows = []
    for (name, p), default in zip(params.items(), defaults):
        allowed = p["allowed"]
        row = f"  {name:<{name_width}}  default {default:<{default_width}}  allowed {allowed:<{allowed_width}}"
        if len(allowed) > allowed_width:
            rows += [row, " " * (len(row) - len(allowed) + allowed_width + 2) + p["help"]]
        else:
            rows.append(f"{row}  {p['help']}")
    return rows
