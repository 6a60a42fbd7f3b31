"""What kibitz output a file is, from its contents alone: policy and agent
files (JSON, gzip or not), checkpoints and (value) network files (NumPy
.npz). The commands use it to refuse to write over anything else."""

from __future__ import annotations

import gzip
import json
import os
import re
import zipfile
import zlib

from kibitz.solvers._io import read_json

#: the JSON files kibitz writes (policy and agent files), by their "format"
JSON_KINDS = {"kibitz-policy": "policy file", "kibitz-agent": "agent file"}
#: what a file kibitz writes begins with: its "format" first (solvers/policy_file.py, agents/formats/export.py)
_JSON_HEAD = re.compile(rb'\A\s*\{\s*"format"\s*:\s*"([^"]*)"')
#: a JSON file whose head does not say is read whole up to this size (kibitz's own readers take any key order)
_WHOLE_JSON_BYTES = 16 * 2**20


def file_kind(path) -> str | None:
    """What kibitz output the regular file ``path`` is, from its contents:
    "policy file" or "agent file" (JSON, gzip or not, whose "format" says
    so), "checkpoint", "network file" or "value network file" (a NumPy .npz
    whose 'meta' entry is the JSON that solvers/driver.py, solvers/network.py
    or solvers/value_net.py writes); None for
    any other file. Only the head of a file is read (a JSON file of another
    key order whole, up to 16 MiB)."""
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
            if magic.startswith(b"PK\x03\x04"):
                return _npz_kind(path)
            f.seek(0)
            stream = gzip.GzipFile(fileobj=f, mode="rb") if magic[:2] == b"\x1f\x8b" else f
            m = _JSON_HEAD.match(stream.read(4096))
        if m:
            return JSON_KINDS.get(m.group(1).decode("utf-8", "replace"))
        if os.path.getsize(path) > _WHOLE_JSON_BYTES:
            return None
        doc = read_json(path)
    except (OSError, ValueError, EOFError, zlib.error):  # unreadable, not JSON, damaged gzip
        return None
    return JSON_KINDS.get(doc.get("format")) if isinstance(doc, dict) and isinstance(doc.get("format"), str) else None


def _npz_kind(path) -> str | None:
    """"checkpoint", "network file" or "value network file" for a kibitz .npz, from its 'meta' entry alone."""
    import numpy as np

    try:
        with zipfile.ZipFile(path) as z:
            if z.getinfo("meta.npy").file_size > 2**20:
                return None
            with z.open("meta.npy") as f:
                meta = json.loads(np.lib.format.read_array(f, allow_pickle=False).tobytes().decode("utf-8"))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error, RecursionError):
        return None
    if not isinstance(meta, dict) or not isinstance(meta.get("game"), str):
        return None
    if isinstance(meta.get("algorithm"), str) and isinstance(meta.get("settings"), dict):
        return "checkpoint"
    if meta.get("format") in ("kibitz-value-net", "kibitz-state-value"):  # solvers/value_net.py, state_value.py
        return "value network file"
    if "input_size" in meta and "num_actions" in meta:
        return "network file"
    return None
