"""Options shared by commands: output paths and their checks, resumable runs, numbers."""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path

import click


def writable_file(ctx, param, value):
    """A click callback for a file option (--out): a file name in an existing
    folder this user may write to, and not something other than a regular
    file (a device, a pipe: replacing it would destroy it)."""
    if value is None:
        return value
    if not value.strip():
        raise click.BadParameter("an empty file name", ctx, param)
    path = Path(value)
    folder = path.parent
    if not folder.is_dir():
        raise click.BadParameter(f"{value}: {folder} is not an existing folder", ctx, param)
    if not os.access(folder, os.W_OK):
        raise click.BadParameter(f"{value}: the folder {folder} is not writable", ctx, param)
    if path.is_dir():
        raise click.BadParameter(f"{value} is a directory", ctx, param)
    if path.exists() and not path.is_file():
        raise click.BadParameter(f"{value} exists and is not a regular file", ctx, param)
    try:  # the file is written as a temporary file renamed over it: one must be creatable there
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".kibitz-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise click.BadParameter(f"{value}: cannot create files in {folder} ({e.strerror})", ctx, param) from None
    return value


class NumberRange(click.FloatRange):
    """A float range that also refuses nan (which every comparison lets through)."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a number; allowed: {self._describe_range()}", param, ctx)
        return number


def run_options(what: str):
    """The options of a resumable run writing ``what`` to --out (solve, train):
    --resume, --overwrite and --checkpoint-every, as one decorator."""
    def decorate(command):
        for option in reversed([
                click.option("--resume", is_flag=True, help="Continue from the checkpoint OUT.ckpt.npz."),
                click.option("--overwrite", is_flag=True,
                             help=f"Start afresh over the {what} and checkpoint of an earlier run at --out."),
                click.option("--checkpoint-every", type=NumberRange(min=0), default=60.0, show_default=True,
                             help="Seconds between checkpoints.")]):
            command = option(command)
        return command
    return decorate


def refuse_same_file(out, sources: dict, option="--out"):
    """A usage error if ``out`` is one of ``sources`` ({what: path}): writing
    it would destroy what the command reads or what a later --resume needs."""
    target = Path(out).resolve()
    for what, source in sources.items():
        if Path(source).resolve() == target:
            raise click.BadParameter(f"{out} is {what}; choose another file", param_hint=option)


def ray_options(what: str):
    """--ray and --ray-address (docs/scaling.md), as one decorator; ``what``
    says what --ray does in the command."""
    def decorate(command):
        command = click.option(
            "--ray-address", default=None, metavar="ADDRESS",
            help="The Ray cluster to run on (HOST:PORT of its head node); implies --ray. "
                 "Default: RAY_ADDRESS, else the cluster `ray start` left here, else a local Ray.")(command)
        return click.option("--ray", is_flag=True,
                            help=f"Run on Ray ({what}); needs pip install 'kibitz[ray]'.")(command)
    return decorate


def check_ray(ray: bool, ray_address, workers: int, workers_meaning: str = "processes") -> bool:
    """Whether the run uses Ray; --ray-address implies it. With ``workers_meaning``
    "processes", --workers above 1 and --ray are refused together."""
    ray = ray or ray_address is not None
    if ray_address is not None and not ray_address.strip():
        raise click.BadParameter("an empty address; give host:port of the head node", param_hint="--ray-address")
    if ray and workers > 1 and workers_meaning == "processes":
        raise click.UsageError("--workers W runs W local processes and --ray runs on Ray: give one")
    return ray
