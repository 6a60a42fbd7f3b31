"""``kibitz serve``: agents over HTTP and JSON (see docs/serving.md)."""

from __future__ import annotations

import click

from kibitz.agents.serve import make_server


@click.command("serve")
@click.option("--agent", "specs", multiple=True, required=True,
              help="An agent spec to serve, e.g. heuristic or 'ismcts(sims=500)'; repeat for more.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (127.0.0.1: this machine only).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port (0 picks a free one).")
@click.option("--log", is_flag=True, help="Log every request to stderr.")
def serve(specs, host, port, log):
    """Serve agents over HTTP: POST /act, GET /agents, GET /health.

    An agent acts from the acting seat's information state only (the server
    resamples the hidden cards before asking it).
    """
    try:
        server = make_server(list(specs), host, port, quiet=not log)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--agent") from None
    except OSError as e:
        raise click.ClickException(f"cannot listen on {host}:{port}: {e}") from None
    h, p = server.server_address[:2]
    click.echo(f"kibitz serve: {', '.join(specs)} on http://{h}:{p} (Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("stopped")
    finally:
        server.server_close()
