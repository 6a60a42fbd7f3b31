"""``kibitz experiment``: run the experiment specs in experiments/."""

from __future__ import annotations

import tomllib

import click

from kibitz.api import (ConfigError, ExperimentInterrupted, ExperimentSpecError, MatchesFailed, RayUnavailable,
                        experiment as run_experiment)
from kibitz.commands._paths import check_ray, ray_options


@click.group("experiment")
def experiment():
    """Run experiments (experiments/NAME/spec.toml): CSV, PNG plots and a markdown table."""


@experiment.command("run")
@click.argument("folder", type=click.Path(exists=True, file_okay=True))
@click.option("--out", default=None, help="Output folder (default: runs/NAME).")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE",
              help="Override a spec key (TOML value), e.g. --set iterations=100.")
@ray_options("kinds strength and ismcts_match: their games as Ray tasks in batches; the same results")
def run_command(folder, out, settings, ray, ray_address):
    """Run the experiment in FOLDER and write its results."""
    ray = check_ray(ray, ray_address, 1)
    if out is not None and not out.strip():
        raise click.BadParameter("an empty folder name; give a folder, or leave --out out for runs/NAME",
                                 param_hint="--out")
    overrides = {}
    for item in settings:
        if "=" not in item:
            raise click.BadParameter(f"{item!r}: expected KEY=VALUE", param_hint="--set")
        key, value = item.split("=", 1)
        try:
            overrides[key.strip()] = tomllib.loads(f"v = {value}")["v"]
        except tomllib.TOMLDecodeError:
            overrides[key.strip()] = value
    try:
        run_experiment(folder, out=out, overrides=overrides, ray=ray, ray_address=ray_address, log=click.echo)
    except ExperimentSpecError as e:
        if overrides and str(e).startswith("--set"):
            raise click.BadParameter(str(e).split(": ", 1)[1], param_hint="--set") from None
        raise click.ClickException(str(e)) from None
    except ConfigError as e:  # --ray with a kind that runs in one process
        raise click.UsageError(f"{e.param}: {e}") from None
    except RayUnavailable as e:
        raise click.UsageError(str(e)) from None
    except ExperimentInterrupted as e:
        click.echo(f"\n{e}", err=True)
        raise SystemExit(130) from None
    except (ValueError, FileNotFoundError, MatchesFailed) as e:
        raise click.ClickException(str(e)) from None
    except OSError as e:  # --out names a file, or a folder that cannot be written
        raise click.ClickException(f"--out: {e.filename or out}: {e.strerror or e}") from None
