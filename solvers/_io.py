"""File helpers: atomic writes (a temporary file beside the target, then a
rename), and bounded reads (a file, gunzipped if it is gzip, refused as soon
as it passes :data:`MAX_BYTES` decompressed: a gzip bomb costs no more)."""

from __future__ import annotations

import gzip
import io
import json
import os
import tempfile
import zlib
from pathlib import Path


def atomic_write(path, write) -> None:
    """Calls ``write(binary_file)`` on a temporary file in ``path``'s folder,
    then renames it over ``path`` (``os.replace``), so that a reader (or a
    run killed half-way) never sees a partial file. The file gets the mode
    a plainly created file would have."""
    path = Path(path)
    if path.exists() and not path.is_file():
        raise IsADirectoryError(f"{path} exists and is not a regular file; it is not replaced")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class FileReadError(ValueError):
    """A file that cannot be read as what it should be; the message names the
    file and what is wrong with it."""


#: the most bytes a file may hold once decompressed (256 MiB) ...
MAX_BYTES = 256 * 2**20
#: ... unless this environment variable gives another number of MiB
MAX_BYTES_VARIABLE = "KIBITZ_MAX_FILE_MB"
_CHUNK = 2**20


def max_bytes() -> int:
    """The decompressed size limit of kibitz's file readers: :data:`MAX_BYTES`,
    or the MiB that the environment variable :data:`MAX_BYTES_VARIABLE` gives.
    (agents/formats/kibitz_agent_loader.py, which must run without kibitz, keeps the
    same limit under the same name.)"""
    text = os.environ.get(MAX_BYTES_VARIABLE)
    if text is None:
        return MAX_BYTES
    try:
        mib = float(text)
    except ValueError:
        mib = -1.0
    if not 0 < mib < float("inf"):
        raise FileReadError(f"{MAX_BYTES_VARIABLE}={text!r}: expected a positive number of MiB")
    return int(mib * 2**20)


def _bounded(stream, what, packed: bool) -> bytes:
    """What ``stream`` holds, refused as soon as it passes :func:`max_bytes`."""
    limit = max_bytes()
    chunks, size = [], 0
    while chunk := stream.read(_CHUNK):
        size += len(chunk)
        if size > limit:
            raise FileReadError(f"{what}: more than {limit / 2**20:g} MiB{' decompressed' if packed else ''}, "
                                f"the limit (the environment variable {MAX_BYTES_VARIABLE} sets another)")
        chunks.append(chunk)
    return b"".join(chunks)


def gunzip(data: bytes, what: str) -> bytes:
    """``data`` decompressed, refused (:class:`FileReadError`) as soon as more
    than :func:`max_bytes` come out or if it is not complete gzip data."""
    try:
        return _bounded(gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb"), what, True)
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise FileReadError(f"{what}: truncated or damaged gzip data ({e})") from None


def read_limited(path) -> bytes:
    """The bytes of the file ``path``, gunzipped when it starts with the gzip
    magic bytes, at most :func:`max_bytes` of them; every failure (missing,
    a directory, unreadable, truncated gzip, too large) is a
    :class:`FileReadError` naming the file."""
    try:
        with open(path, "rb") as f:
            packed = f.read(2) == b"\x1f\x8b"
            f.seek(0)
            return _bounded(gzip.GzipFile(fileobj=f, mode="rb") if packed else f, path, packed)
    except FileNotFoundError:
        raise FileReadError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise FileReadError(f"{path}: a directory, not a file") from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise FileReadError(f"{path}: a truncated or damaged gzip file ({e})") from None
    except OSError as e:
        raise FileReadError(f"{path}: cannot be read ({e.strerror or e})") from None


def read_json(path):
    """The JSON value of the UTF-8 file ``path`` (see :func:`read_limited`);
    :class:`FileReadError` if it is not JSON."""
    raw = read_limited(path)
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        why = f"{path}: not UTF-8 text ({e.reason} at byte {e.start})" + ("" if _is_gzip(path) else ", nor a gzip file")
        raise FileReadError(_not_gzip(path) or why) from None
    except RecursionError:
        raise FileReadError(f"{path}: JSON nested too deeply") from None
    except ValueError as e:  # JSONDecodeError, and integers of more than 4300 digits
        if not raw.strip():
            raise FileReadError(f"{path}: empty file") from None
        raise FileReadError(_not_gzip(path) or f"{path}: not JSON ({e})") from None


def _is_gzip(path) -> bool:
    """Whether the file ``path`` begins with gzip's magic bytes."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"\x1f\x8b"
    except OSError:
        return False


def _not_gzip(path) -> str | None:
    """For a file named ``*.gz`` that is not JSON and does not begin with
    gzip's magic bytes: the message that it is not gzip either (None
    otherwise: the caller says what is wrong)."""
    if not str(path).endswith(".gz") or _is_gzip(path):
        return None
    return (f"{path}: not a gzip file (its name ends in .gz, but it does not begin with gzip's bytes 1f 8b), "
            "nor JSON text")
