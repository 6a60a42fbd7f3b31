"""Checks of the output paths that commands are given."""

from __future__ import annotations

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


def refuse_same_file(out, sources: dict, option="--out"):
    """A usage error if ``out`` is one of ``sources`` ({what: path}): writing
    it would destroy what the command reads or what a later --resume needs."""
    target = Path(out).resolve()
    for what, source in sources.items():
        if Path(source).resolve() == target:
            raise click.BadParameter(f"{out} is {what}; choose another file", param_hint=option)
