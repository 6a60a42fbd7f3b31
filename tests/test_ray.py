"""--ray: tournaments, experiment matches and MCCFR actors on Ray, each Ray
in a network namespace of its own that holds only loopback.

Every Ray here runs in ``tests/ray_child.py``, started under ``unshare -n``
(``solvers.ray_cluster.loopback_argv``) with a home and session folder of
its own, so the two pytest-xdist workers' Rays share no port and no file.
One child per fixture and module: ``local`` is ``ray.init(num_cpus=2)``,
``two_nodes`` a simulated two-node cluster (``ray.cluster_utils.Cluster``,
one CPU slot per node). The results are compared with runs made here,
without Ray.
"""

from __future__ import annotations

import csv
import filecmp
import io
import ipaddress
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from kibitz.agents.matches.tournament import run_tournament
from kibitz.cli import main
from kibitz.experiments import runner
from kibitz.solvers.ray_cluster import loopback_argv, loopback_env

CHILD = Path(__file__).with_name("ray_child.py")
FILES = ("tournament.json", "games.jsonl", "results.json", "results.csv")
ROOT = Path(__file__).resolve().parent.parent


class RayChild:
    """The test side of tests/ray_child.py: requests in, answers out."""

    def __init__(self, cluster: bool):
        # short paths: Ray's sockets live under the session folder (108 bytes at most)
        self.home = tempfile.mkdtemp(prefix="kzray-", dir="/tmp")
        self.log = open(Path(self.home) / "child.log", "w")
        argv = [sys.executable, str(CHILD)] + (["--cluster"] if cluster else [])
        self.proc = subprocess.Popen(loopback_argv(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, text=True, env=loopback_env(self.home),
                                     start_new_session=True)
        assert self._answer() == "ready"

    def _answer(self):
        for line in self.proc.stdout:
            if line.startswith("@@kz "):
                answer = json.loads(line[5:])
                if "error" in answer:
                    raise AssertionError("in the Ray child:\n" + answer["error"])
                return answer["ok"]
        raise AssertionError(f"the Ray child ended (rc {self.proc.wait()}); its log: "
                             f"{Path(self.home, 'child.log').read_text()[-3000:]}")

    def __call__(self, op: str, **req):
        self.proc.stdin.write(json.dumps({"op": op, **req}) + "\n")
        self.proc.stdin.flush()
        return self._answer()

    def close(self):
        try:
            self.proc.stdin.write('{"op": "quit"}\n')
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            import os
            import signal
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.log.close()
        subprocess.run(["rm", "-rf", self.home], check=False)


@pytest.fixture(scope="module")
def local():
    child = RayChild(cluster=False)
    yield child
    child.close()


@pytest.fixture(scope="module")
def two_nodes():
    child = RayChild(cluster=True)
    yield child
    child.close()


def reference(tmp_path, game, agents, games, seed):
    out = tmp_path / "one"
    run_tournament(game, agents, games, seed=seed, workers=1, out_dir=str(out), progress=False)
    return out


def same_files(a: Path, b: Path):
    for name in FILES:
        assert filecmp.cmp(a / name, b / name, shallow=False), f"{name} differs"


MATCH = dict(game="underdog(players=3)", agents=["random", "heuristic", "ismcts(sims=8)"], games=12, seed=5)


def test_tournament_on_local_ray_is_byte_identical(local, tmp_path):
    ref = reference(tmp_path, **MATCH)
    got = local("tournament", **MATCH, out=str(tmp_path / "ray"))
    assert got["finished"] == got["total"] == 12
    assert "per-task overhead" in got["log"][-1]
    same_files(ref, tmp_path / "ray")


def test_tournament_on_two_nodes_is_byte_identical_and_uses_both(two_nodes, tmp_path):
    game = dict(MATCH, agents=["random", "ismcts(sims=20)"], games=24)
    ref = reference(tmp_path, **game)
    got = two_nodes("tournament", **game, out=str(tmp_path / "ray"))
    assert "on 2 node(s)" in got["log"][-1], got["log"]
    same_files(ref, tmp_path / "ray")


@pytest.mark.parametrize("where", ["local", "two_nodes"])
def test_a_worker_killed_mid_run_is_retried_with_the_same_results(where, request, tmp_path):
    ray = request.getfixturevalue(where)
    game = dict(MATCH, agents=["random", "ismcts(sims=20)"], games=12)
    ref = reference(tmp_path, **game)
    got = ray("tournament", **game, out=str(tmp_path / "ray"), kill_worker=True)
    assert len(got["killed"]) == 1  # a process playing a batch, killed while it played
    assert got["finished"] == 12
    same_files(ref, tmp_path / "ray")


@pytest.mark.parametrize("where", ["local", "two_nodes"])
def test_resume_after_the_driver_is_killed(where, request, tmp_path):
    """The CLI on Ray, SIGKILLed with its processes after 3 games;
    ``--resume --ray-address`` on the child's Ray finishes it, with every
    file as ``--workers 1`` writes it. The first run: on ``local``,
    ``--ray`` alone (no ``ray start`` cluster there, no RAY_ADDRESS: it
    starts a local Ray of its own); on ``two_nodes``, ``--ray-address``
    of the cluster."""
    ray = request.getfixturevalue(where)
    game = dict(MATCH, agents=["random", "ismcts(sims=15)"], games=12)
    ref = reference(tmp_path, **game)
    out = tmp_path / "ray"
    args = ["tournament", game["game"], "--agents", ",".join(game["agents"]), "--games", "12",
            "--seed", "5", "--out", str(out), "--no-progress"]
    address = ray("address")
    start = ["--ray"] if where == "local" else ["--ray-address", address]
    first = ray("cli", args=args + start, kill_when=str(out / "games.jsonl"), kill_lines=3)
    assert first["killed"], first
    lines = (out / "games.jsonl").read_text().count("\n")
    assert 3 <= lines < 12
    second = ray("cli", args=args + ["--resume", "--ray-address", address])
    assert second["rc"] == 0, second["stderr"]
    assert "12 of 12 games" in second["stdout"]
    same_files(ref, out)


def test_a_game_that_raises_stops_the_run_with_its_own_error(local):
    got = local("failing")
    assert got["raised"] == "GameFailed" and got["message"].startswith("game 3 ")  # not retried, not wrapped
    assert 3 not in got["kept"]


def test_ray_binds_and_talks_loopback_only(local):
    got = local("network")
    assert got["node_ips"] == ["127.0.0.1"]
    assert got["sockets"]
    for fields in got["sockets"]:
        for address in fields[4:6]:  # local and peer address:port
            host = address.rsplit(":", 1)[0].strip("[]").split("%")[0]
            if host in ("*", "0.0.0.0", "::"):
                assert address is fields[5], f"a socket listening on every address: {fields}"
                continue
            ip = ipaddress.ip_address(host)
            ip = getattr(ip, "ipv4_mapped", None) or ip
            assert ip.is_loopback, fields


def _without_seconds(path: Path) -> list[dict]:
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    for r in rows:
        r.pop("seconds")
    return rows


def test_experiment_matches_and_strength_on_ray(local, tmp_path):
    """``experiment run`` on Ray: an ismcts_match spec gives the games of a
    run without Ray (the CSV's rows, seconds aside), a strength spec the
    same tournament files."""
    spec = str(ROOT / "experiments" / "ismcts_strength_campaign")
    sets = {"only": "pub_vs_random", "games": 6, "sims": 5, "jobs": 1}
    runner.run(spec, out=tmp_path / "plain", log=lambda *_: None, overrides=sets)
    lines = local("experiment", spec=spec, out=str(tmp_path / "ray"), overrides=sets)
    assert any("per-task overhead" in line for line in lines), lines
    assert _without_seconds(tmp_path / "ray" / "pub_vs_random.csv") == \
        _without_seconds(tmp_path / "plain" / "pub_vs_random.csv")
    assert (tmp_path / "ray" / "table.md").read_text().splitlines()[2].split("|")[1:-2] == \
        (tmp_path / "plain" / "table.md").read_text().splitlines()[2].split("|")[1:-2]
    spec = str(ROOT / "experiments" / "strength")
    sets = {"games": ["underdog(players=3,cards=5,bank=2)"], "agents": ["random", "heuristic"],
            "games_per_match": 12, "progress": False, "aivat": "rollout(1)"}  # AIVAT's terms on Ray too
    runner.run(spec, out=tmp_path / "splain", log=lambda *_: None, overrides=sets)
    local("experiment", spec=spec, out=str(tmp_path / "sray"), overrides=sets)
    tour = "tournament_underdog_players_3_cards_5_bank_2"
    same_files(tmp_path / "splain" / tour, tmp_path / "sray" / tour)
    assert "aivat" in (tmp_path / "sray" / tour / "games.jsonl").read_text()


MCCFR = dict(game="kuhn_poker", sampling="es", iterations=400, batch=100)


@pytest.mark.parametrize("where", ["local", "two_nodes"])
def test_mccfr_actors_are_reproducible_for_a_fixed_k(where, request):
    ray = request.getfixturevalue(where)
    a = ray("mccfr", **MCCFR, seed=3, actors=2)
    b = ray("mccfr", **MCCFR, seed=3, actors=2)
    assert a["digest"] == b["digest"] and a["policy"] == b["policy"]
    assert a["iteration"] == 400 and a["infostates"] == 12
    assert ray("mccfr", **MCCFR, seed=4, actors=2)["digest"] != a["digest"]
    assert ray("mccfr", **MCCFR, seed=3, actors=1)["digest"] != a["digest"]


def test_mccfr_on_ray_from_the_cli_converges_and_resumes(local, tmp_path):
    """``kibitz solve -a mccfr-os --ray --workers 2``: stopped at 1,200
    iterations and resumed to 2,400, the same policy as a run straight to
    2,400 (in the Ray child); and NashConv well below the uniform policy's 0.917."""
    address = local("address")
    base = ["solve", "kuhn_poker", "-a", "mccfr-os", "--seed", "1", "--ray-address", address, "--workers", "2",
            "--batch", "300", "--no-progress"]
    whole = local("mccfr", game="kuhn_poker", sampling="os", iterations=2400, batch=300, seed=1, actors=2)
    half = local("cli", args=base + ["-n", "1200", "--out", str(tmp_path / "half.json")])
    assert half["rc"] == 0, half["stderr"]
    assert "2 actor(s)" in half["stdout"]
    rest = local("cli", args=base + ["-n", "2400", "--out", str(tmp_path / "half.json"), "--resume"])
    assert rest["rc"] == 0, rest["stderr"]
    doc = json.loads((tmp_path / "half.json").read_text())
    assert doc["iterations"] == whole["iteration"] == 2400
    assert {k: {str(a): p for a, p in zip(e["actions"], e["probs"])} for k, e in doc["policy"].items()} == \
        whole["policy"]
    assert doc["nash_conv"] < 0.3


@pytest.mark.parametrize("args,message", [
    (["tournament", "kuhn_poker", "--agents", "random", "--ray", "--workers", "2"], "give one"),
    (["tournament", "kuhn_poker", "--agents", "random", "--ray-address", " "], "--ray-address"),
    (["solve", "kuhn_poker", "-a", "cfr+", "--ray", "--out", "p.json"], "MCCFR on Ray"),
    (["solve", "kuhn_poker", "-a", "mccfr-es", "--workers", "2", "--out", "p.json"], "give --ray too"),
    (["experiment", "run", str(ROOT / "experiments" / "convergence"), "--ray"], "runs in one process"),
])
def test_bad_ray_options_are_one_line_and_exit_2(args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and message in result.output
    assert "Traceback" not in result.output


def test_ray_missing_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails, as without the extra
    result = CliRunner().invoke(main, ["tournament", "kuhn_poker", "--agents", "random", "--games", "2", "--ray",
                                       "--no-progress"])
    assert result.exit_code == 2 and "pip install 'kibitz[ray]'" in result.output
