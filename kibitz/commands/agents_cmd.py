"""``kibitz agents``: the agent kinds, their options and presets."""

import click

from kibitz.agents.registry import agent_kinds


@click.command("agents")
def agents_command():
    """List the agent specs (random, heuristic, ismcts(...), ...) with their options."""
    for name, kind in sorted(agent_kinds().items()):
        click.echo(f"{name}: {kind.help}")
        for opt, (default, help_text) in kind.options.items():
            mark = " (positional)" if opt == kind.positional else ""
            click.echo(f"    {opt}={default}{mark}  {help_text}")
        for preset, spelled in kind.presets.items():
            click.echo(f"    preset {preset}: {spelled}")
