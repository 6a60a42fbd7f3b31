"""Doc check: every `kibitz ...` command in the README and docs runs.

Found and run: in README.md and docs/*.md, every `kibitz ...` line of any
fenced block (a ``$ kibitz`` prompt line too) and every inline
`` `kibitz ...` `` span; in the deeper docs (docs/rules/, docs/solvers/,
...), the lines of fenced ```sh blocks. The commands of one file run in
document order, in one temporary folder, so a later command may use a file
an earlier one wrote. A human seat is answered 'quit' and abandons its game.

A command runs as written unless it is in SMALL (run in a smaller form,
with the reason) or NOT_RUN (with the reason); a bare command name in prose
(`kibitz solve`) is checked with --help. Every SMALL and NOT_RUN entry must
still occur in the docs.
"""

import pathlib
import re
import shlex
import subprocess

import pytest
from click.testing import CliRunner

from kibitz.cli import main

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOP = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DEEP = sorted(p for p in (ROOT / "docs").rglob("*.md") if p.parent != ROOT / "docs")

CONVERGENCE_SMALL = ("kibitz experiment run experiments/convergence --out conv --set 'games=[\"kuhn_poker\"]' "
                     "--set iterations=50 --set openspiel_iterations=10 --set points=4")
#: a documented command -> (the form the test runs, why it is smaller)
SMALL = {
    "kibitz demo": ("kibitz demo --iterations 20 --games 12 --workers 1", "2,000 iterations and 240 games"),
    "kibitz solve GAME --time 60s --out policy.json.gz": (
        "kibitz solve kuhn_poker --time 0.3s --out policy.json.gz --no-progress", "a minute per game"),
    "kibitz experiment run experiments/NAME": (CONVERGENCE_SMALL, "NAME stands for a folder"),
    "kibitz experiment run experiments/convergence": (CONVERGENCE_SMALL, "minutes"),
    "kibitz experiment run experiments/strength": (
        "kibitz experiment run experiments/strength --out str --set 'games=[\"kuhn_poker\"]' "
        "--set 'agents=[\"random\"]' --set games_per_match=2 --set workers=1", "hours"),
    "kibitz experiment run experiments/mccfr_convergence": (
        "kibitz experiment run experiments/mccfr_convergence --out mcc --set 'games=[\"kuhn_poker\"]' "
        "--set iterations=100 --set points=2", "20,000 iterations on three games: minutes"),
    "kibitz experiment run experiments/training": (
        "kibitz experiment run experiments/training --out trn --set 'games=[\"kuhn_poker\"]' --set seconds=1 "
        "--set points=1", "150 s on each of four games"),
    "kibitz experiment run experiments/ismcts_strength_campaign": (
        "kibitz experiment run experiments/ismcts_strength_campaign --out ism --set only=pub_vs_random "
        "--set games=1 --set sims=5 --set jobs=1", "13 matches of 1,000 games: hours"),
    "kibitz experiment run experiments/mccfr_convergence --out OUT": (
        "kibitz experiment run experiments/mccfr_convergence --out mcc --set 'games=[\"kuhn_poker\"]' "
        "--set iterations=100 --set points=2", "OUT stands for a folder; minutes"),
    "kibitz experiment run experiments/ismcts_strength_campaign --out results --set only=over_under_m0": (
        "kibitz experiment run experiments/ismcts_strength_campaign --out results --set only=over_under_m0_vs_random "
        "--set games=1 --set sims=5 --set jobs=1", "two matches of 1,000 games: hours"),
    "kibitz train doubt_and_bet --encoding compact --batch 32 --time 150s --probe-every 0 --out db.npz": (
        "kibitz train doubt_and_bet --encoding compact --batch 1 --steps 1 --hidden 8 --probe-nodes 1 "
        "--probe-every 0 --no-progress --out db.npz", "150 s at the default size"),
    "kibitz train underdog --time 2h --out NET.npz": (
        "kibitz train underdog --steps 1 --hidden 8 --batch 1 --no-progress --out NET.npz", "two hours"),
    "kibitz exploit GAME --agent SPEC --out DIR": (
        "kibitz exploit kuhn_poker --agent random --games 4 --sims 5 --out ex-readme --no-progress",
        "GAME, SPEC and DIR stand for a game, an agent spec and a folder"),
    "kibitz replay DIR/games.jsonl --game K": ("kibitz replay t7/games.jsonl --game 3",
                                              "DIR and K stand for a folder and a game"),
    "kibitz tournament \"underdog(players=3)\" --agents random,heuristic --games 300 --seed 1 "
    "--workers 2 --out tdoc": (
        "kibitz tournament \"underdog(players=3)\" --agents random,heuristic --games 12 --seed 1 "
        "--workers 1 --out tdoc --no-progress", "300 games"),
}
#: a documented command -> why it is not run
NOT_RUN = {
    "kibitz serve": "runs until stopped: tests/test_serve.py serves over a real socket",
    "kibitz serve --agent heuristic --agent 'ismcts(sims=500)'": "runs until stopped (tests/test_serve.py)",
    "kibitz serve --agent heuristic --agent 'ismcts(sims=200)' --port 8000": "runs until stopped",
    "kibitz serve --agent heuristic --agent 'ismcts(sims=200)' --port 8765": "runs until stopped",
    "kibitz serve: heuristic, ismcts(sims=200) on http://127.0.0.1:8765 (Ctrl-C stops); the web table is "
    "http://127.0.0.1:8765/": "output, not a command",
    "kibitz serve --agent 'policy(nofile.json)'": "exits 2 on purpose (tests/test_serve.py checks it)",
    "kibitz serve --agent 'ismcts(sims=-5)'": "exits 2 on purpose (tests/test_serve.py checks it)",
    "kibitz serve --port 8000": "runs until stopped (tests/test_browser.py plays at the table it serves)",
    "kibitz COMMAND --help": "COMMAND stands for each command; `kibitz --help` lists them",
    "kibitz tournament GAME --agents a,b,c --games N [--seed S] [--workers W | --ray [--ray-address A]] "
    "[--out DIR] [--resume] [--aivat VALUE] [--no-progress]": "a synopsis; the example below it runs",
    "kibitz solve -a mccfr-es --ray --workers K": "Ray runs only in a loopback namespace here: tests/test_ray.py",
    "kibitz tournament underdog --agents 'ismcts(sims=1000),heuristic' --games 1008 --ray --out ud-ray":
        "hours, on Ray: tests/test_ray.py runs tournaments on Ray in a loopback namespace",
    "kibitz solve leduc_poker -a mccfr-es --ray --workers 2 --time 10m --out leduc-es.json":
        "ten minutes, on Ray: tests/test_ray.py runs solve --ray in a loopback namespace",
    "kibitz tournament underdog --agents 'ismcts(sims=1000),heuristic' --games 1008 --ray-address HEAD:6379 "
    "--out ud-ray": "needs a cluster at HEAD",
    "kibitz solve leduc_poker -a mccfr-es --ray-address HEAD:6379 --workers 16 --time 10m --out leduc-es.json":
        "needs a cluster at HEAD",
    "kibitz tournament ... --ray": "a synopsis in a table",
    "kibitz experiment run SPEC --ray": "a synopsis in a table",
    "kibitz solve GAME -a mccfr-es\\|mccfr-os --ray --workers K [--batch B]": "a synopsis in a table",
    "kibitz replay DIR/games.jsonl --game K [--rerun]": "a synopsis; the example below it runs",
    "kibitz export SOURCE -o FILE [--unseen uniform|error] [--name NAME]": "a synopsis; docs/cli.md's export runs",
    "kibitz inspect FILE [--games N]": "a synopsis; docs/cli.md's inspect runs",
    "kibitz solve GAME --algorithm {cfr,cfr+,lcfr,dcfr} --iterations N": "a synopsis; docs/cli.md's solves run",
    "kibitz solve --out FILE": "an option named in prose; docs/cli.md's solves run it",
    "kibitz train GAME --out NET.npz": "a synopsis; the block below it runs",
    "kibitz export NET.npz -o AGENT.json.gz": "a synopsis; the block below it runs",
    "kibitz train GAME --out FILE.npz": "a synopsis; docs/cli.md's train runs",
    "kibitz distill GAME --teacher SPEC --out FILE.npz": "a synopsis; docs/cli.md's distill runs",
    "kibitz improve AGENT_FILE --out FILE.npz": "a synopsis; docs/cli.md's improve runs",
    "kibitz compare DIR_A DIR_B": "a synopsis; docs/tournaments.md's compare runs",
    "kibitz solve --resume": "an option named in prose; docs/cli.md's solves run it",
}


def _strip(line):
    line = line.strip()
    if line.startswith("$ "):
        line = line[2:]
    return line.split(" #", 1)[0].rstrip()


def commands(path, everything):
    """The `kibitz ...` commands of ``path`` in document order: lines of fenced
    blocks (every block if ``everything``, else ```sh ones) and, if
    ``everything``, inline spans."""
    out, fence, pending = [], None, ""
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fence = None if fence is not None else line.strip()[3:]
            continue
        if fence is None:
            if everything:
                out += [span for span in re.findall(r"`(kibitz [^`]+)`", line)]
            continue
        if fence != "sh" and not everything:
            continue
        line = pending + _strip(line)
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        if line.startswith("kibitz ") or line == "kibitz":
            out.append(line)
    return list(dict.fromkeys(out))


def to_run(command):
    """The argument list the test runs for a documented command, or None."""
    if command in NOT_RUN:
        return None
    if command in SMALL:
        command = SMALL[command][0]
    args = shlex.split(command)[1:]
    if len(args) == 1 and args[0] in main.commands:
        return args + ["--help"]  # a command named in prose
    return args


DOC_COMMANDS = [(p, commands(p, True)) for p in TOP + DEEP]
DOC_COMMANDS = [(p, lines) for p, lines in DOC_COMMANDS if lines]


@pytest.mark.parametrize("path,lines", DOC_COMMANDS, ids=[str(p.relative_to(ROOT)) for p, _ in DOC_COMMANDS])
def test_documented_commands_run(path, lines, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "experiments").symlink_to(ROOT / "experiments")  # docs run from the repo root
    runner, ran = CliRunner(), set()
    for line in lines:
        args = to_run(line)
        if args is None or tuple(args) in ran:
            continue
        ran.add(tuple(args))
        result = runner.invoke(main, args, input="quit\n", catch_exceptions=False)
        assert result.exit_code == 0, f"{path.name}: `{line}` (run as {args}) failed:\n{result.output}"


def test_every_small_or_skipped_command_is_in_the_docs():
    found = {c for _, lines in DOC_COMMANDS for c in lines}
    assert not set(SMALL) - found, "SMALL lists commands the docs no longer have"
    assert not set(NOT_RUN) - found, "NOT_RUN lists commands the docs no longer have"
    assert all(reason for _, reason in SMALL.values()) and all(NOT_RUN.values())


def test_readme_has_the_two_setup_commands():
    text = (ROOT / "README.md").read_text()
    assert re.search(r"^make demo", text, re.M) and re.search(r"^make test", text, re.M)
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_readme_is_short_and_results_live_in_docs_results():
    """The README is read in five minutes (at most 150 lines); the games
    runs played are not kept in docs (their commands and seeds replay them)."""
    assert len((ROOT / "README.md").read_text().splitlines()) <= 150
    tracked = subprocess.run(["git", "ls-files", "docs"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    assert [f for f in tracked if f.endswith("games.jsonl")] == []


def scripts(path):
    """The ``python benchmarks/...`` and ``python experiments/...`` command lines of ``path``."""
    out = []
    for line in path.read_text().splitlines():
        line = _strip(line)
        m = re.match(r"python ((?:benchmarks|experiments)/\w+\.py)(.*)", line)
        if m:
            out.append((m[1], m[2]))
    return out


DOC_SCRIPTS = [(p, s) for p in TOP + DEEP for s in scripts(p)]


@pytest.mark.parametrize("path,script", DOC_SCRIPTS, ids=[f"{p.name}:{s[0]}" for p, s in DOC_SCRIPTS])
def test_documented_scripts_exist_and_take_the_options_shown(path, script):
    """Scripts run for minutes, so the check is that each exists and that its
    --help lists every option the documented line gives."""
    import subprocess
    import sys

    name, args = script
    assert (ROOT / name).is_file(), f"{path.name}: {name} does not exist"
    shown = subprocess.run([sys.executable, str(ROOT / name), "--help"], capture_output=True, text=True,
                           timeout=120, cwd=ROOT)
    assert shown.returncode == 0, shown.stderr
    for option in re.findall(r"(?<![\w-])(--[\w-]+)", args):
        assert option in shown.stdout, f"{path.name}: {name} has no option {option}"


def test_the_readme_python_example_runs(tmp_path, monkeypatch):
    """README.md's Python example, as written (run as tests/test_batched.py
    runs docs/batched.md's): it solves, exports an agent and plays a
    tournament, in a temporary folder."""
    blocks = [part.split("```", 1)[0] for part in (ROOT / "README.md").read_text().split("```python\n")[1:]]
    assert len(blocks) == 1
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), scope)
    assert scope["result"].nash_conv < 1e-3 and scope["result"].iterations == 200
    assert (tmp_path / "ud.json.gz").is_file()
    assert (tmp_path / "ud-agent.json.gz").is_file()
    agents = scope["outcome"].results["agents"]
    assert [a["name"] for a in agents] == ["policy(ud-agent.json.gz)", "heuristic", "random"]
    assert all(a["games"] == 12 for a in agents)


def test_the_api_doc_example_runs(tmp_path, monkeypatch):
    """docs/api.md's example: a solve with a time limit, then resumed to
    100 iterations more (the resumed run starts where the first stopped)."""
    blocks = [part.split("```", 1)[0] for part in (ROOT / "docs" / "api.md").read_text().split("```python\n")[1:]]
    assert len(blocks) == 1
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(blocks[0].replace("time_limit=5.0", "time_limit=0.5"), "docs/api.md", "exec"), scope)
    assert scope["again"].iterations == scope["result"].iterations + 100
    assert scope["again"].nash_conv < 0.01  # DCFR on Kuhn poker: 0.0033 after 100 iterations
    assert (tmp_path / "kuhn.json").is_file()
