"""``kibitz export`` and ``kibitz inspect``: portable agent files."""

from __future__ import annotations

import click

from kibitz.api import AgentFileError, checkpoint_path, inspect_agent_file
from kibitz.api import export as export_agent
from kibitz.commands._paths import POLICY_KINDS, NumberRange, refuse_same_file, refuse_to_replace, writable_file


@click.command("export")
@click.argument("source", type=click.Path(exists=True, dir_okay=False))
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False), callback=writable_file,
              help="The agent file to write (.json, or .json.gz for gzip), in an existing folder; "
                   "not the source or its checkpoint.")
@click.option("--unseen", type=click.Choice(["uniform", "error"]), default=None,
              help="What the agent does on an information state that is not in the file "
                   "(default uniform; an MCCFR fallback agent is kept for kibitz as well).")
@click.option("--name", default=None, help="A name for the agent (default GAME-ALGORITHM).")
@click.option("--temperature", type=NumberRange(0, 1000, min_open=True), default=1.0, show_default=True,
              help="Networks only: divide the logits by this (below 1: closer to the most likely move).")
@click.option("--overwrite", is_flag=True,
              help="Replace the agent or policy file of an earlier run at --out (never any other file).")
def export(source, out, unseen, name, temperature, overwrite):
    """Export a solve result (policy file), checkpoint (.ckpt.npz) or trained network (.npz) as an agent file.

    The agent file is versioned JSON (docs/formats/agent-file.md). A tabular
    one (from kibitz solve) a frontend reads with agents/formats/kibitz_agent_loader.py
    (standard library only), and kibitz plays it as policy(FILE); a network
    one (from kibitz train, an ONNX model inside) a frontend runs with
    agents/formats/kibitz_net_loader.py (onnxruntime), and kibitz plays it as net(FILE).
    """
    refuse_same_file(out, {"the source": source, "the source's checkpoint": checkpoint_path(source)})
    refuse_to_replace({out: POLICY_KINDS}, overwrite=overwrite)
    try:
        doc = export_agent(source, out, unseen=unseen, name=name, temperature=temperature)
    except ValueError as e:  # AgentFileError, PolicyFileError, CheckpointError
        why = str(e)
        raise click.ClickException(f"cannot export: {why if str(source) in why else f'{source}: {why}'}") from None
    except OSError as e:
        raise click.ClickException(f"cannot write {out}: {e.strerror or e}") from None
    if doc.get("agent") == "network":
        net = doc["network"]
        factors = f"{net['factors']:,} factors -> " if net["output"] == "factored" else ""
        click.echo(f"wrote {out}: {doc['name']}, {doc['game']}, network ({net['encoding']}) {net['input_size']:,} "
                   f"-> {' -> '.join(str(h) for h in net['hidden'])} -> {factors}{net['num_actions']:,}, ONNX "
                   f"opset {doc['model']['opset']}, {doc['model']['bytes']:,} bytes"
                   + (f", logits / {temperature:g}" if temperature != 1.0 else ""))
        return
    click.echo(f"wrote {out}: {doc['name']}, {doc['game']}, {len(doc['policy']):,} information states, "
               f"unseen={doc['unseen']['behaviour']}"
               + (f" (kibitz: {doc['unseen']['kibitz_fallback']})" if "kibitz_fallback" in doc["unseen"] else ""))


@click.command("inspect")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--games", type=click.IntRange(min=0, max=1_000_000), default=None,
              help="Random games played to check the file against its game "
                   "[default: 200 for a tabular file, 5 for a network, played through its model].")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the random games (the same seed checks the same positions).")
def inspect(path, games, seed):
    """Summarise an agent file (or policy file) and check that it matches its game.

    A network file's model must pass onnx.checker, match its SHA-256 and the
    game's sizes, and play random games through onnxruntime. Exits with
    status 1 if the file is malformed or does not match the game.
    """
    try:
        result = inspect_agent_file(path, games=games, seed=seed)
    except AgentFileError as e:
        raise click.ClickException(str(e)) from None
    doc, report, games = result["document"], result["check"], result["games"]
    network = result["kind"] == "network"
    (_show_network if network else _show_tabular)(doc)
    if report is not None and network:
        click.echo(f"check: onnx.checker passed, the SHA-256 matches, the sizes are the game's; {games} "
                   f"random games played through the model ({report['decisions']:,} decisions)")
    elif report is not None and games:
        click.echo(f"check: {games} random games visited {report['visited']:,} information "
                   f"states, {report['found']:,} in the file")
    _verdict(result["problems"])


def _show_tabular(doc):
    _fields(doc, ("format", "format_version", "name", "kibitz_version", "created", "game", "num_players",
                  "algorithm", "settings", "iterations", "nash_conv", "expected_returns"))
    unseen = doc.get("unseen") if isinstance(doc.get("unseen"), dict) else {}
    click.echo(f"{'unseen:':18}{unseen.get('behaviour', 'error (policy file)')}"
               + (f" (kibitz fallback: {unseen['kibitz_fallback']})" if "kibitz_fallback" in unseen else ""))
    if isinstance(doc.get("policy"), dict):
        click.echo(f"information states: {len(doc['policy']):,}")


def _show_network(doc):
    _fields(doc, ("format", "format_version", "agent", "name", "kibitz_version", "created", "game", "num_players"))
    net, model = doc.get("network"), doc.get("model")
    if isinstance(net, dict):
        output = net.get("output", "dense")
        click.echo(f"{'network:':18}{net.get('input_size')} inputs, hidden {net.get('hidden')}, "
                   f"{net.get('num_actions')} actions, encoding {net.get('encoding')}, output {output}"
                   + (f" ({net.get('factors')} factor logits)" if output == "factored" else ""))
    if isinstance(model, dict):
        click.echo(f"{'model:':18}{model.get('format')} opset {model.get('opset')}, {model.get('bytes')} bytes, "
                   f"sha256 {model.get('sha256')}")


def _verdict(problems):
    """Lists the problems and exits 1, or says the file is fine."""
    if problems:
        click.echo("problems:")
        for p in problems:
            click.echo(f"  {p}")
        raise SystemExit(1)
    click.echo("ok: the file matches its game")


def _fields(doc, keys):
    for key in keys:
        if key in doc:
            click.echo(f"{key + ':':18}{doc[key]}")
