"""The Ray side of tests/test_ray.py: one Ray instance serving a test module.

Started by the tests inside a network namespace of its own that has only
loopback (``solvers.ray_cluster.loopback_argv``), this process starts one
Ray (``ray.init(num_cpus=2)``, or with ``--cluster`` a simulated two-node
cluster, ``ray.cluster_utils.Cluster``, of one CPU slot per node) and then
runs the requests the test process writes to its stdin, one JSON object a
line: ``{"op": NAME, ...}``. Each answer is one line on stdout starting
with ``@@kz `` and holding ``{"ok": value}`` or ``{"error": traceback}``
(Ray's workers print to the same stdout; other lines are not answers).
The tests compare what comes back with runs they make without Ray.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

PREFIX = "@@kz "


def descendants(root: int) -> list[int]:
    """Pids of every process below ``root``."""
    parent = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, frontier = [], [root]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        frontier += kids
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def op_tournament(req):
    """run_tournament on this Ray; with ``kill_worker``, a thread SIGKILLs
    the first worker process it finds playing a batch, mid-run."""
    from kibitz.agents.matches.tournament import run_tournament

    killed = []
    stop = threading.Event()

    def killer():
        while not stop.is_set() and not killed:
            for pid in descendants(os.getpid()):
                if cmdline(pid).startswith("ray::_play_batch"):
                    try:
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
                    except ProcessLookupError:
                        continue
                    break
            time.sleep(0.005)

    thread = threading.Thread(target=killer, daemon=True) if req.get("kill_worker") else None
    if thread:
        thread.start()
    lines = []
    outcome = run_tournament(req["game"], req["agents"], req["games"], seed=req["seed"], out_dir=req["out"],
                             progress=False, log=lines.append, ray=True)
    stop.set()
    if thread:
        thread.join()
    return {"finished": outcome.finished, "total": outcome.total, "log": lines, "killed": killed}


def op_cli(req):
    """A kibitz command in a process of its own (this namespace), killed
    (SIGKILL, with every process it started) once ``kill_when`` holds
    ``kill_lines`` lines."""
    kibitz = str(Path(sys.executable).with_name("kibitz"))
    proc = subprocess.Popen([kibitz, *req["args"]], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, cwd=req.get("cwd"))
    killed = False
    if req.get("kill_when"):
        path = Path(req["kill_when"])
        deadline = time.time() + 300
        while proc.poll() is None and time.time() < deadline:
            if path.exists() and path.read_text().count("\n") >= req["kill_lines"]:
                os.killpg(proc.pid, signal.SIGKILL)
                killed = True
                break
            time.sleep(0.01)
    out, err = proc.communicate(timeout=600)
    return {"rc": proc.returncode, "stdout": out, "stderr": err, "killed": killed}


def op_network(req):
    """The node IPs and every listening or connected socket address of this namespace."""
    import ray

    sockets = subprocess.run(["ss", "-H", "-tuna"], capture_output=True, text=True, check=True).stdout
    return {"node_ips": sorted({n["NodeManagerAddress"] for n in ray.nodes()}),
            "sockets": [line.split() for line in sockets.splitlines() if line.strip()]}


def op_address(req):
    import ray
    return ray.get_runtime_context().gcs_address


def op_mccfr(req):
    """RayMCCFR on this Ray: the policy and the tables' digest after ``iterations``."""
    import hashlib

    import numpy as np

    from kibitz.games import load_game
    from kibitz.solvers.mccfr_ray import RayMCCFR

    solver = RayMCCFR(load_game(req["game"]), seed=req["seed"], sampling=req["sampling"],
                      actors=req["actors"], batch=req["batch"])
    try:
        while solver.iteration < req["iterations"]:
            solver.iterate()
        table = solver.table
        digest = hashlib.sha256(json.dumps(table, sort_keys=False).encode()).hexdigest()
        state = solver.state_dict()
        return {"digest": digest, "iteration": solver.iteration, "infostates": len(table),
                "policy": {k: {str(a): p for a, p in v.items()} for k, v in solver.average_policy().items()}, "state": bytes(state["mccfr_ray"]).hex()}
    finally:
        solver.close()


def failing_play(payload, batch):
    """A batch that raises on game 3, as a game whose agent raises does."""
    from kibitz.agents.matches.tournament import GameFailed

    if 3 in batch:
        raise GameFailed("game 3 (deal 1, seats x, y) failed: ValueError: no move")
    return [payload for _ in batch]


def op_failing(req):
    """run_batches over a batch function that raises: what the driver gets."""
    import ray

    from kibitz.agents.matches.ray_pool import run_batches

    kept = []
    try:
        run_batches(ray, failing_play, "ok", list(range(8)), lambda i, r: kept.append(i))
    except Exception as e:
        return {"raised": type(e).__name__, "message": str(e), "kept": kept}
    return {"raised": None, "kept": kept}


def op_experiment(req):
    """``runner.run`` with ``--ray`` (this Ray), in this process."""
    from kibitz.experiments import runner

    lines = []
    runner.run(req["spec"], out=req["out"], log=lines.append, overrides=req["overrides"], ray={"address": None})
    return lines


OPS = {"experiment": op_experiment, "failing": op_failing, "tournament": op_tournament, "cli": op_cli, "network": op_network, "address": op_address,
       "mccfr": op_mccfr}


def main():
    import ray

    cluster = None
    if "--cluster" in sys.argv:
        from ray.cluster_utils import Cluster
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, include_dashboard=False, logging_level="warning")
    else:
        ray.init(num_cpus=2, include_dashboard=False, logging_level="warning")
    print(PREFIX + json.dumps({"ok": "ready"}), flush=True)
    try:
        for line in sys.stdin:
            req = json.loads(line)
            if req["op"] == "quit":
                break
            try:
                answer = {"ok": OPS[req["op"]](req)}
            except Exception:
                answer = {"error": traceback.format_exc()}
            print(PREFIX + json.dumps(answer), flush=True)
    finally:
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()


if __name__ == "__main__":
    main()
