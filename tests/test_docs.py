"""Doc check: every `kibitz ...` command in the README and docs runs.

Commands are taken from fenced ```sh blocks only (```console/```text blocks
are illustrations). The commands of one file run in order, in one temporary
folder, so a later command may use a file an earlier one wrote. A human seat
gets end of input and abandons its game. `kibitz serve` runs until stopped,
so it is exercised over a real socket in tests/test_serve.py instead.
"""

import pathlib
import re
import shlex

import pytest
from click.testing import CliRunner

from kibitz.cli import main

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
NOT_RUN = {"serve"}


def commands(path):
    out, in_sh, pending = [], False, ""
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            in_sh = line.strip() == "```sh"
            continue
        if not in_sh:
            continue
        line = pending + line.split(" #", 1)[0].rstrip()
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        if line.startswith("kibitz "):
            out.append(line)
    return out


DOC_COMMANDS = [(p, commands(p)) for p in DOCS if commands(p)]


@pytest.mark.parametrize("path,lines", DOC_COMMANDS, ids=[str(p.relative_to(ROOT)) for p, _ in DOC_COMMANDS])
def test_documented_commands_run(path, lines, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "experiments").symlink_to(ROOT / "experiments")  # docs run from the repo root
    runner = CliRunner()
    for line in lines:
        args = shlex.split(line)[1:]
        if args and args[0] in NOT_RUN:
            continue
        result = runner.invoke(main, args, input="", catch_exceptions=False)
        assert result.exit_code == 0, f"{path.name}: `{line}` failed:\n{result.output}"


def test_readme_has_the_two_setup_commands():
    text = (ROOT / "README.md").read_text()
    assert re.search(r"^make demo", text, re.M) and re.search(r"^make test", text, re.M)
    assert "make test" in (ROOT / ".ci" / "run").read_text()
