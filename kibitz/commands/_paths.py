"""Options shared by commands: output paths and their checks, resumable runs, numbers."""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path

import click

from kibitz.api import checkpoint_path
from kibitz.api import file_kind as kibitz_file_kind


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


#: what may be replaced at the --out of a policy or agent file, and of a network file
POLICY_KINDS = ("policy file", "agent file")
NETWORK_KINDS = ("network file",)
VALUE_NETWORK_KINDS = ("value network file",)


def refuse_to_replace(files: dict, *, overwrite: bool, resume: bool = False, option: str = "--out",
                      resumable: bool = False) -> None:
    """Refuses (a click error) to write over what ``files`` ({path: the
    kinds of :func:`kibitz_file_kind` that may be replaced there}) hold,
    unless each is an earlier kibitz output of its kinds and ``--overwrite``
    (or, if ``resumable``, ``--resume``) says so. Something else there (a
    folder, a device, a file kibitz did not write, or wrote as another kind)
    is never replaced, --overwrite or not. A path whose kinds are None (a
    checkpoint that --resume reads) need only be a file: its reader judges it."""
    if resume and overwrite:
        raise click.UsageError("--resume continues the earlier run and --overwrite replaces it: give one")
    earlier = []
    for path, kinds in files.items():
        path = Path(path)
        if not os.path.lexists(path):
            continue
        if not path.is_file():  # found before the run, not when its first file is written
            raise click.BadParameter(f"{path} exists and is not a file (a folder?): it is never replaced; "
                                     f"choose another {option}", param_hint=option)
        if kinds is None:  # read, and judged, by the command
            continue
        kind = kibitz_file_kind(path)
        if kind not in kinds:
            what = f"a kibitz {kind}, not a {' or '.join(kinds)}" if kind else \
                f"not a kibitz {' or '.join(kinds)} (nor any file kibitz writes)"
            raise click.BadParameter(f"{path} is {what}: it is never replaced, --overwrite or not; "
                                     f"choose another {option}", param_hint=option)
        earlier.append(f"{path} (a kibitz {kind})")
    if earlier and not (overwrite or resume):
        if resumable:
            choices = "--resume continues that run, --overwrite starts afresh over it"
        else:
            choices = "--overwrite replaces it"
        raise click.UsageError(f"{' and '.join(earlier)} hold{'s' if len(earlier) == 1 else ''} an earlier "
                               f"run's output; {choices}, or choose another {option}")


def refuse_to_replace_run(out, kinds: tuple, *, resume: bool, overwrite: bool) -> None:
    """:func:`refuse_to_replace` for a resumable run (solve, train) writing
    ``out`` (of ``kinds``) and its checkpoint OUT.ckpt.npz, which --resume
    reads (and judges) first."""
    checkpoint = checkpoint_path(out)
    files = {out: kinds, checkpoint: None if resume else ("checkpoint",)}
    refuse_to_replace(files, overwrite=overwrite, resume=resume, resumable=checkpoint.is_file())


def refuse_foreign_folder(folder, *, marker: str, outputs: tuple, problem, what: str, option: str = "--out") -> None:
    """Refuses a ``folder`` that exists and is not a kibitz ``what``: one
    whose ``marker`` file ``problem(path)`` finds fault with (it returns
    None for kibitz's own), or that has no marker but holds one of the
    ``outputs`` the command would write there. Nothing in such a folder is
    ever written over."""
    folder = Path(folder)
    if not folder.is_dir():
        return
    path = folder / marker
    if os.path.lexists(path):
        why = problem(path)
        if why:
            raise click.BadParameter(f"{folder} is not a kibitz {what}: {why}; nothing in it is written over, "
                                     f"choose another {option}", param_hint=option)
        return
    clash = [name for name in outputs if os.path.lexists(folder / name)]
    if clash:
        raise click.BadParameter(f"{folder} is not a kibitz {what} (no {marker} in it) but holds "
                                 f"{', '.join(clash)}: never written over, choose another {option}",
                                 param_hint=option)


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
