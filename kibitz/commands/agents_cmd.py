"""``kibitz agents``: the agent kinds, their options and presets."""

import click

from kibitz.api import agent_kinds


@click.command("agents")
def agents_command():
    """List the agent specs (random, heuristic, ismcts(...), ...) with their options."""
    for name, kind in agent_kinds().items():
        click.echo(f"{name}: {kind['help']}")
        for opt, option in kind["options"].items():
            mark = " (positional)" if opt == kind["positional"] else ""
            click.echo(f"    {opt}={option['default']}{mark}  {option['help']}")
        for preset, spelled in kind["presets"].items():
            click.echo(f"    preset {preset}: {spelled}")
