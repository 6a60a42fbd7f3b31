"""``kibitz export`` and ``kibitz inspect``: portable agent files."""

from __future__ import annotations

import click

from kibitz.agents.export import check_against_game, export_agent
from kibitz.agents.kibitz_agent_loader import AgentFileError, document_problems, parse_json, read_bytes


@click.command("export")
@click.argument("source", type=click.Path(exists=True, dir_okay=False))
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False),
              help="The agent file to write (.json, or .json.gz for gzip).")
@click.option("--unseen", type=click.Choice(["uniform", "error"]), default=None,
              help="What the agent does on an information state that is not in the file "
                   "(default uniform; an MCCFR fallback agent is kept for kibitz as well).")
@click.option("--name", default=None, help="A name for the agent (default GAME-ALGORITHM).")
def export(source, out, unseen, name):
    """Export a solve result (policy file) or checkpoint (.ckpt.npz) as an agent file.

    The agent file is versioned JSON (docs/formats/agent-file.md); a frontend
    reads it with agents/kibitz_agent_loader.py (standard library only), and
    kibitz plays it as policy(FILE).
    """
    try:
        doc = export_agent(source, out, unseen=unseen, name=name)
    except ValueError as e:  # AgentFileError, PolicyFileError, CheckpointError
        raise click.ClickException(f"cannot export: {e}") from None
    click.echo(f"wrote {out}: {doc['name']}, {doc['game']}, {len(doc['policy']):,} information states, "
               f"unseen={doc['unseen']['behaviour']}"
               + (f" (kibitz: {doc['unseen']['kibitz_fallback']})" if "kibitz_fallback" in doc["unseen"] else ""))


@click.command("inspect")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--games", type=click.IntRange(min=0, max=1_000_000), default=200, show_default=True,
              help="Random games played to check the file against its game.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
def inspect(path, games, seed):
    """Summarise an agent file (or policy file) and check that it matches its game.

    Exits with status 1 if the file is malformed or does not match the game.
    """
    try:
        doc = parse_json(read_bytes(path), path)
    except AgentFileError as e:
        raise click.ClickException(str(e)) from None
    problems = document_problems(doc)
    if not isinstance(doc, dict):
        raise click.ClickException(f"{path}: {problems[0]}")
    for key in ("format", "format_version", "name", "kibitz_version", "created", "game", "num_players",
                "algorithm", "settings", "iterations", "nash_conv", "expected_returns"):
        if key in doc:
            click.echo(f"{key + ':':18}{doc[key]}")
    unseen = doc.get("unseen") if isinstance(doc.get("unseen"), dict) else {}
    click.echo(f"{'unseen:':18}{unseen.get('behaviour', 'error (policy file)')}"
               + (f" (kibitz fallback: {unseen['kibitz_fallback']})" if "kibitz_fallback" in unseen else ""))
    if isinstance(doc.get("policy"), dict):
        click.echo(f"information states: {len(doc['policy']):,}")
    if not problems:
        try:
            report = check_against_game(doc, games=games, seed=seed)
        except AgentFileError as e:
            problems.append(str(e))
        else:
            problems += report["mismatches"]
            if games:
                click.echo(f"check: {games} random games visited {report['visited']:,} information "
                           f"states, {report['found']:,} in the file")
            if report["visited"] and report["found"] == 0:
                problems.append("none of the visited information states is in the file")
    if problems:
        click.echo("problems:")
        for p in problems:
            click.echo(f"  {p}")
        raise SystemExit(1)
    click.echo("ok: the file matches its game")
