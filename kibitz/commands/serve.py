"""``kibitz serve``: agents over HTTP and JSON, and the web table (see docs/serving.md)."""

from __future__ import annotations

import click

from kibitz.api import ConfigError, ServeConfig
from kibitz.api import serve as open_server


@click.command("serve")
@click.option("--agent", "specs", multiple=True,
              help="An agent spec to serve at POST /act, e.g. heuristic or 'ismcts(sims=500)'; repeat for more "
                   "(default: heuristic and random). Each is checked at start.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (127.0.0.1: this machine only).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port (0 picks a free one).")
@click.option("--bot-delay", type=click.FloatRange(0, 60), default=1.0, show_default=True,
              help="Seconds between the bots' moves at the web table.")
@click.option("--max-tables", type=click.IntRange(1, 10_000), default=64, show_default=True,
              help="Web tables kept at once (the least recently used is closed first).")
@click.option("--table-idle", type=click.FloatRange(1, None), default=1800, show_default=True,
              help="Seconds after which an unused web table is closed.")
@click.option("--db", default=None, show_default="$XDG_DATA_HOME/kibitz/table-records.sqlite, or "
              "~/.local/share/kibitz/table-records.sqlite", type=click.Path(dir_okay=False),
              help="SQLite file that keeps every finished web-table game (made if missing; ':memory:' keeps "
                   "them until the server stops).")
@click.option("--policy-dir", type=click.Path(exists=True, file_okay=False),
              help="Folder whose agent files a web table may seat as policy(FILE) or net(FILE), FILE relative "
                   "to it (default: none; the --agent specs are always seated).")
@click.option("--log", is_flag=True, help="Log every request to stderr.")
def serve(specs, host, port, bot_delay, max_tables, table_idle, db, policy_dir, log):
    """Serve agents over HTTP (POST /act, GET /agents, GET /health,
    GET /openapi.json) and the web table at / (play the bots in a browser).

    An agent acts from the acting seat's information state only (the server
    resamples the hidden cards before asking it); a page at the web table is
    sent only its seat's view.
    """
    try:
        server = open_server(ServeConfig(agents=tuple(specs) or ServeConfig.agents, host=host, port=port,
                                         bot_delay=bot_delay, max_tables=max_tables, table_idle=table_idle, db=db,
                                         policy_dir=policy_dir, log=log))
    except ConfigError as e:
        raise click.BadParameter(str(e), param_hint=e.param) from None
    except OSError as e:
        raise click.ClickException(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    click.echo(f"kibitz serve: {', '.join(server.app.state.service.specs.values())} on {server.url} (Ctrl-C "
               f"stops); the web table is {server.url}/")
    try:
        server.run()
    except KeyboardInterrupt:  # uvicorn shuts down, then raises the signal again
        pass
    click.echo("stopped")
