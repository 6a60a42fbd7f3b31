"""Tournaments: seatings, duplicate deals, exact chance, statistics, files, resume, replay."""

import collections
import json
import math
import signal

import numpy as np
import pyspiel
import pytest
from click.testing import CliRunner

import kibitz.agents.matches.tournament as tour
from kibitz.agents.matches.tournament import DealChance, arrangements, compute_results, run_tournament
from kibitz.commands.replay import replay
from kibitz.commands.tournament import tournament
from conftest import stop_tournament_at
from helpers import kill_session, left_behind

SMALL = "underdog(players=3,cards=5,bank=2)"


# ------------------------------------------------------------ seatings
@pytest.mark.parametrize("agents,seats,count", [(4, 4, 4), (2, 3, 6), (3, 3, 3), (4, 3, 12), (1, 3, 1)])
def test_every_agent_plays_every_seat_equally(agents, seats, count):
    arrs = arrangements(agents, seats)
    assert len(arrs) == count and len(set(arrs)) == count
    for a in range(agents):
        per_seat = [sum(arr[s] == a for arr in arrs) for s in range(seats)]
        assert min(per_seat) >= 1 and len(set(per_seat)) == 1


def test_fewer_agents_than_seats_plays_every_arrangement():
    arrs = set(arrangements(2, 4))
    # every assignment of 2 agents to 4 seats in which both agents sit
    assert arrs == {a for a in np.ndindex(2, 2, 2, 2) if len(set(a)) == 2}


# ------------------------------------------------------------ chance
def test_deck_draws_are_exactly_uniform_deals():
    game = pyspiel.load_game("kuhn_poker")
    counts = collections.Counter()
    n = 3000
    for deal in range(n):
        chance, state = DealChance((7, deal)), game.new_initial_state()
        while state.is_chance_node():
            state.apply_action(chance(state.chance_outcomes()))
        counts[tuple(state.history())] += 1
    assert len(counts) == 6  # the 6 ordered deals of 3 cards to 2 players
    for c in counts.values():  # each 1/6: 500 expected, sd ~20
        assert abs(c - n / 6) < 5 * math.sqrt(n / 6 * 5 / 6)


def test_repeated_uniform_nodes_are_independent_not_stuck():
    # a die rolled twice: outcomes do not shrink, so each roll is a new deck
    counts = collections.Counter()
    for deal in range(1200):
        chance = DealChance((1, deal))
        die = [(a, 1 / 3) for a in range(3)]
        counts[(chance(die), chance(die))] += 1
    assert len(counts) == 9
    assert all(abs(c - 1200 / 9) < 5 * math.sqrt(1200 / 9) for c in counts.values())


def test_weighted_nodes_follow_their_probabilities():
    outcomes = [(0, 0.2), (1, 0.8)]
    draws = [DealChance((3, d))(outcomes) for d in range(4000)]
    share = draws.count(0) / 4000
    assert abs(share - 0.2) < 5 * math.sqrt(0.2 * 0.8 / 4000)


def test_every_seating_of_a_deal_sees_the_same_cards():
    plan = tour.Plan("kuhn_poker", ("random", "random"), 5, 2)
    recs = [tour.play_one(plan, g) for g in range(6)]
    for deal in range(3):
        a, b = [r for r in recs if r["deal"] == deal]
        assert a["moves"][:2] == b["moves"][:2]
    assert len({tuple(r["moves"][:2]) for r in recs}) > 1  # deals differ


# ------------------------------------------------------------ statistics
def test_results_from_records():
    recs = [
        {"index": 0, "seat_agents": [0, 1], "returns": [1.0, -1.0]},
        {"index": 1, "seat_agents": [1, 0], "returns": [-1.0, 1.0]},
        {"index": 2, "seat_agents": [0, 1], "returns": [0.0, 0.0]},
    ]
    res = compute_results(["strong", "weak"], 2, recs)
    strong, weak = res["agents"]
    assert strong["games"] == 3 and strong["mean_payoff"] == pytest.approx(2 / 3)
    assert weak["mean_payoff"] == pytest.approx(-2 / 3)
    # win shares: 1, 1, and a tie shared 1/2
    assert strong["win_rate"] == pytest.approx(2.5 / 3) and weak["win_rate"] == pytest.approx(0.5 / 3)
    half = 4.302653 * np.std([1, 1, 0], ddof=1) / math.sqrt(3)  # t(0.975, 2 df)
    assert strong["ci95_low"] == pytest.approx(2 / 3 - half, rel=1e-5)
    assert strong["ci95_high"] == pytest.approx(2 / 3 + half, rel=1e-5)
    assert strong["rating"] > 25 > weak["rating"]
    assert strong["seats"][1] == {"seat": 1, "games": 1, "mean_payoff": 1.0, "win_rate": 1.0}


# ------------------------------------------------------------ runs and files
def test_workers_resume_and_files(tmp_path):
    args = dict(game_string=SMALL, specs=["random", "heuristic"], games=30, seed=2, progress=False)
    one = run_tournament(**args, workers=1, out_dir=str(tmp_path / "one"))
    two = run_tournament(**args, workers=2, out_dir=str(tmp_path / "two"))
    assert one.total == 30 and one.finished == 30 and not one.interrupted
    for name in ("games.jsonl", "results.json", "results.csv"):
        assert (tmp_path / "one" / name).read_text() == (tmp_path / "two" / name).read_text()
    res = json.loads((tmp_path / "one" / "results.json").read_text())
    for a in res["agents"]:
        assert set(a) >= {"name", "spec", "games", "mean_payoff", "ci95_low", "ci95_high",
                          "win_rate", "rating", "seats"}
        assert a["games"] == 30 and a["ci95_low"] <= a["mean_payoff"] <= a["ci95_high"]
    csv_lines = (tmp_path / "one" / "results.csv").read_text().splitlines()
    assert csv_lines[0].startswith("name,spec,games,mean_payoff") and len(csv_lines) == 3

    # an interrupted run: 11 games kept and a torn line; --resume finishes it identically
    lines = (tmp_path / "one" / "games.jsonl").read_text().splitlines(True)
    part = tmp_path / "part"
    part.mkdir()
    (part / "tournament.json").write_text((tmp_path / "one" / "tournament.json").read_text())
    (part / "games.jsonl").write_text("".join(lines[:11]) + lines[11][:20])
    with pytest.raises(ValueError, match="--resume"):
        run_tournament(**args, out_dir=str(part))
    calls = []
    real = tour.play_one
    tour.play_one = lambda plan, i: calls.append(i) or real(plan, i)
    try:
        done = run_tournament(**args, out_dir=str(part), resume=True)
    finally:
        tour.play_one = real
    assert sorted(calls) == list(range(11, 30))
    assert done.finished == 30
    assert (part / "games.jsonl").read_text() == (tmp_path / "one" / "games.jsonl").read_text()
    assert (part / "results.json").read_text() == (tmp_path / "one" / "results.json").read_text()


def test_ctrl_c_keeps_what_finished(tmp_path, monkeypatch):
    stop_tournament_at(monkeypatch, 7)
    out = run_tournament(SMALL, ["random", "heuristic"], 12, seed=1, out_dir=str(tmp_path), progress=False)
    assert out.interrupted and out.finished == 7 and out.total == 12
    assert len((tmp_path / "games.jsonl").read_text().splitlines()) == 7
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["games_played"] == 7 and res["complete"] is False
    assert res["agents"][0]["games"] == 7


def test_ctrl_c_with_workers_stops_the_pool(tmp_path, monkeypatch):
    import queue

    class Interrupting(queue.Queue):
        gets = 0

        def get(self, *a, **k):
            item = super().get(*a, **k)
            Interrupting.gets += 1
            if Interrupting.gets == 3:
                raise KeyboardInterrupt
            return item

    monkeypatch.setattr(tour.queue, "Queue", Interrupting)
    out = run_tournament(SMALL, ["random", "heuristic"], 120, seed=1, workers=2,
                         out_dir=str(tmp_path), progress=False)
    assert out.interrupted and out.total == 120
    kept = [json.loads(line) for line in (tmp_path / "games.jsonl").read_text().splitlines()]
    # chunks of min(64, 120 // (2 workers * 8)) = 7 games: the two that ended
    # before Ctrl-C, and the games that ended in the chunks still running
    assert len(kept) == out.finished >= 14
    assert len({r["index"] for r in kept}) == len(kept)
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["games_played"] == len(kept) and res["complete"] is False


def _slow_tournament(out, log, ignore_sigint: bool):
    """The CLI playing a 2-worker tournament of slow games (chunks of 64
    games, a tenth to half a second a game) in a session of its own, its output
    in the file ``log``; ``ignore_sigint``: started with SIGINT ignored, as a
    job in the background of a script is (and as the test suite's CLI was
    when CI started it so: the cause of its timeouts)."""
    import subprocess
    import sys

    start = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
             "os.execv(sys.executable, [sys.executable] + sys.argv[1:])") if ignore_sigint else None
    cli = ["-c", "from kibitz.cli import main; main()", "tournament", "underdog(players=3,cards=5)",
           "--agents", "random,ismcts(sims=100)", "--games", "1500", "--workers", "2", "--no-progress",
           "--out", str(out)]
    with open(log, "w") as f:
        return subprocess.Popen([sys.executable] + (["-c", start] if start else []) + cli,
                                stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT,
                                start_new_session=True)


def _stop_after_two_games(proc, out, signals) -> int:
    """Waits for two games in ``out``/games.jsonl (4 minutes at most, on a
    loaded machine), sends ``signals`` (a list of (send, signal)), waits
    for the CLI (60 s at most) and for every process of its group to end;
    returns the games seen before the signal. Whatever is left of its
    session at the end is killed."""
    import subprocess
    import time

    games = out / "games.jsonl"
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            if games.exists() and len(games.read_text().splitlines()) >= 2:
                break
            time.sleep(0.1)
        seen = len(games.read_text().splitlines()) if games.exists() else 0
        assert seen >= 2 and proc.poll() is None
        for send, sig in signals:
            send(sig)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail("the CLI did not end within 60 s of the signal")
        assert left_behind(proc) == [], "a worker outlived the CLI"
        return seen
    finally:
        kill_session(proc)


def _kept_games(out, seen) -> list[dict]:
    kept = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(kept) >= seen and len({r["index"] for r in kept}) == len(kept)
    assert json.loads((out / "results.json").read_text())["games_played"] == len(kept)
    return kept


def test_ctrl_c_with_workers_keeps_each_game_as_it_ends(tmp_path):
    """A real SIGINT to a 2-worker tournament started with SIGINT ignored (a
    background job of a script; CI's test run): the games reach games.jsonl
    one by one, long before a chunk ends, the CLI stops anyway (it installs
    its handler), keeps every finished game and leaves no worker behind."""
    out, log = tmp_path / "t", tmp_path / "log"
    proc = _slow_tournament(out, log, ignore_sigint=True)
    seen = _stop_after_two_games(proc, out, [(proc.send_signal, signal.SIGINT)])
    text = log.read_text()
    assert proc.returncode == 130 and "interrupted:" in text and "Traceback" not in text, text
    _kept_games(out, seen)


@pytest.mark.parametrize("group", [False, True], ids=["cli", "cli-then-group"])
def test_sigterm_with_workers_stops_keeps_the_games_and_leaves_no_worker(tmp_path, group):
    """SIGTERM to the CLI alone (``kill``), or as ``timeout`` sends it (to
    the CLI, then to its whole group): exit 143 with the games kept, one
    line, no traceback, no worker left."""
    import os

    out, log = tmp_path / "t", tmp_path / "log"
    proc = _slow_tournament(out, log, ignore_sigint=False)
    signals = [(proc.send_signal, signal.SIGTERM)]
    if group:
        signals.append((lambda sig: os.killpg(proc.pid, sig), signal.SIGTERM))
    seen = _stop_after_two_games(proc, out, signals)
    text = log.read_text()
    assert proc.returncode == 143, text
    assert text.count("interrupted:") == 1 and "Traceback" not in text and "Error" not in text, text
    _kept_games(out, seen)


def test_stop_signals_raise_keyboard_interrupt_once_even_when_sigint_was_ignored():
    """The CLI's handlers (kibitz.commands._signals): installed over an
    inherited SIG_IGN, the first signal raises, a second during the
    clean-up does not, and the handlers before are put back."""
    import os

    from kibitz.commands._signals import exit_status, interrupt_on_signals

    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interrupt_on_signals() as got:
            with pytest.raises(KeyboardInterrupt):
                os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGINT)  # the second: recorded nowhere, raises nothing
        assert got["signal"] == signal.SIGTERM and exit_status(got["signal"]) == 143
        assert exit_status(None) == 130 == exit_status(signal.SIGINT)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGINT, before)


def test_drain_after_a_stop_waits_a_bounded_time_in_all():
    """After Ctrl-C the workers go on playing until terminated: records that
    keep coming every 0.05 s must not keep the drain (wait 0.5 s) going, as a
    wait renewed after each record did, for as long as the chunks in flight."""
    import queue
    import time

    class Steady:  # a record every 0.05 s; 200 of them (10 s) at most
        sent = 0

        def get(self, timeout):
            if timeout < 0.05 or self.sent >= 200:
                time.sleep(max(timeout, 0))
                raise queue.Empty
            time.sleep(0.05)
            self.sent += 1
            return {"index": self.sent}

        def get_nowait(self):
            raise queue.Empty

    kept = []
    start = time.monotonic()
    tour._drain(Steady(), kept.append, wait=0.5)
    assert time.monotonic() - start < 2.0 and 5 <= len(kept) <= 10


def test_cli_tournament_and_replay(tmp_path):
    out = tmp_path / "t"
    r = CliRunner().invoke(tournament, [SMALL, "--agents", "random,heuristic", "--games", "6",
                                        "--seed", "4", "--out", str(out), "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "6 of 6 games" in r.output and "heuristic" in r.output and "per seat:" in r.output
    rec = json.loads((out / "games.jsonl").read_text().splitlines()[3])
    r = CliRunner().invoke(replay, [str(out / "games.jsonl"), "--game", "3", "--rerun"])
    assert r.exit_code == 0, r.output
    assert "rerun: every move equals the record" in r.output
    assert "returns: " + "  ".join(f"p{i} {x:g}" for i, x in enumerate(rec["returns"])) in r.output
    # a tampered record is caught
    rec["moves"][-1] = 3 if rec["moves"][-1] != 3 else 2
    (tmp_path / "bad.jsonl").write_text(json.dumps(rec) + "\n")
    r = CliRunner().invoke(replay, [str(tmp_path / "bad.jsonl"), "--game", "3", "--rerun"])
    assert r.exit_code != 0 and "differs from the record" in r.output
    bad = CliRunner().invoke(tournament, [SMALL, "--agents", "random,nosuch", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "unknown agent 'nosuch'" in bad.output


@pytest.mark.parametrize("game", ["pub(players=3,suits=2,ranks=4,removed=1,hand=1)",
                                  "doubt_and_bet(players=2,chips=2,slots=2,colours=2,single_bet=true)",
                                  "over_under(players=2,copies=1,stacks=1,rounds=1)"])
def test_other_games_replay_exactly(game):
    plan = tour.Plan(game, ("random", "heuristic"), 9, pyspiel.load_game(game).num_players())
    for g in range(3):
        rec = tour.play_one(plan, g)
        state = tour.replay_record(rec, rerun=True)
        assert state.returns() == rec["returns"]


def test_repeated_cards_are_drawn_without_replacement_exactly():
    # a deck of 2 A (0) and 2 B (1): the chance node gives the counts left
    def node(left):
        total = sum(left)
        return [(a, c / total) for a, c in enumerate(left) if c]

    counts = collections.Counter()
    n = 3000
    for deal in range(n):
        chance, left, seq = DealChance((5, deal)), [2, 2], []
        while sum(left):
            a = chance(node(left))
            left[a] -= 1
            seq.append(a)
        counts[tuple(seq)] += 1
    # 6 orders of AABB, each 1/6 (the first node alone cannot tell 1+1 from 2+2)
    assert len(counts) == 6
    for c in counts.values():
        assert abs(c - n / 6) < 5 * math.sqrt(n / 6 * 5 / 6)


def test_weighted_decks_give_every_seating_the_same_cards():
    # Over/Under's cash deck repeats each bill; every round is a new deck. All
    # seatings of a deal see the same bills in the same order in each round
    # (a round may end sooner in one seating than in the other).
    game = "over_under(players=2,copies=2,stacks=2,rounds=2)"
    plan = tour.Plan(game, ("random", "heuristic"), 3, 2)
    g = pyspiel.load_game(game)

    def cards_by_round(rec):
        state, out = g.new_initial_state(), collections.defaultdict(list)
        for a in rec["moves"]:
            if state.is_chance_node():
                rounds = [ln for ln in state.information_state_string(0).split("\n") if ln.startswith("round ")]
                out[rounds[-1].split(":")[0] if rounds else "round 1"].append(a)
            state.apply_action(a)
        return out

    compared = 0
    for deal in range(4):
        a, b = (cards_by_round(tour.play_one(plan, 2 * deal + r)) for r in range(2))
        assert set(a) == set(b) == {"round 1 of 2", "round 2 of 2"}
        for rnd in a:
            k = min(len(a[rnd]), len(b[rnd]))
            assert a[rnd][:k] == b[rnd][:k]
            compared += k
    assert compared >= 30


def test_resume_with_a_smaller_or_larger_games_keeps_every_finished_game(tmp_path):
    out = tmp_path / "t"
    base = [SMALL, "--agents", "random,heuristic", "--seed", "3", "--out", str(out), "--no-progress"]
    assert CliRunner().invoke(tournament, base + ["--games", "12"]).exit_code == 0
    before = (out / "games.jsonl").read_bytes()
    assert len(before.splitlines()) == 12
    # smaller: refused, naming the count; the folder is untouched
    r = CliRunner().invoke(tournament, base + ["--games", "4", "--resume"])
    assert r.exit_code == 2 and "holds 12 finished games" in r.output and "--games 12" in r.output
    assert "Traceback" not in r.output
    assert (out / "games.jsonl").read_bytes() == before
    # larger: the 12 games kept byte for byte, the new ones after them
    r = CliRunner().invoke(tournament, base + ["--games", "24", "--resume"])
    assert r.exit_code == 0, r.output
    after = (out / "games.jsonl").read_bytes()
    assert after.startswith(before) and len(after.splitlines()) == 24
    assert "24 of 24 games" in r.output


def test_rounding_up_is_said_and_no_bar_reaches_a_pipe(tmp_path):
    r = CliRunner().invoke(tournament, ["underdog", "--agents", "heuristic,random", "--games", "8",
                                        "--out", str(tmp_path / "t")])
    assert r.exit_code == 0, r.output
    assert "--games 8 rounded up to 14" in r.stderr and "14 seatings" in r.stderr
    assert "\r" not in r.stderr and "14 of 14 games" in r.stdout


def test_resume_accepts_the_same_game_spelled_otherwise(tmp_path):
    first = run_tournament(SMALL, ["random", "heuristic"], 6, seed=2, out_dir=str(tmp_path), progress=False)
    again = run_tournament("underdog(bank=2,cards=5,players=3)", ["random", "heuristic"], 12, seed=2,
                           out_dir=str(tmp_path), resume=True, progress=False)
    assert first.finished == 6 and again.finished == 12 and not again.interrupted
    whole = run_tournament(SMALL, ["random", "heuristic"], 12, seed=2, progress=False)
    assert again.results["agents"] == whole.results["agents"]
    with pytest.raises(ValueError, match="holds a tournament with game="):
        run_tournament("underdog(players=3,cards=6,bank=2)", ["random", "heuristic"], 12, seed=2,
                       out_dir=str(tmp_path), resume=True, progress=False)


def test_resume_refuses_an_agent_file_that_changed(tmp_path, monkeypatch):
    from kibitz.cli import main

    monkeypatch.chdir(tmp_path)
    solve = ["solve", "kuhn_poker", "--no-progress", "--out", "p.json"]
    assert CliRunner().invoke(main, [*solve, "-n", "5"]).exit_code == 0
    specs = ["random", "policy(p.json)"]
    run_tournament("kuhn_poker", specs, 4, out_dir="t", progress=False)
    plan = json.loads((tmp_path / "t" / "tournament.json").read_text())
    assert list(plan["agent_files"]) == ["p.json"] and len(plan["agent_files"]["p.json"]) == 64
    assert run_tournament("kuhn_poker", specs, 8, out_dir="t", resume=True, progress=False).finished == 8
    assert CliRunner().invoke(main, [*solve, "-n", "50", "--overwrite"]).exit_code == 0
    with pytest.raises(tour.ResumeError, match="the agent file p.json is not the one the tournament in t"):
        run_tournament("kuhn_poker", specs, 12, out_dir="t", resume=True, progress=False)


def test_two_tournaments_of_one_plan_are_compared_game_by_game(tmp_path):
    from kibitz.cli import main

    dirs = {}
    for name, agents in (("a", "heuristic,random"), ("b", "random,random"), ("c", "heuristic,random")):
        dirs[name] = tmp_path / name
        result = CliRunner().invoke(main, ["tournament", SMALL, "--agents", agents, "--games", "24", "--seed", "3",
                                           "--no-progress", "--out", str(dirs[name])])
        assert result.exit_code == 0, result.output
    out = tour.paired_comparison(str(dirs["a"]), str(dirs["b"]))
    records = [{r["index"]: r for r in tour.read_records(str(dirs[k] / "games.jsonl"))} for k in "ab"]
    # slot 0 by hand: per game, the mean return of slot 0's seats in A minus in B
    diffs, deals = [], []
    for i in sorted(records[0]):
        seats = [s for s, a in enumerate(records[0][i]["seat_agents"]) if a == 0]
        diffs.append(np.mean([records[0][i]["returns"][s] for s in seats])
                     - np.mean([records[1][i]["returns"][s] for s in seats]))
        deals.append(records[0][i]["deal"])
    slot = out["slots"][0]
    assert (slot["a"], slot["b"], slot["games"], slot["deals"]) == ("heuristic", "random", 24, len(set(deals)))
    assert slot["difference"] == pytest.approx(np.mean(diffs))
    assert slot["ci95_low"] < slot["difference"] < slot["ci95_high"]
    # a tournament against itself (the same agents, replayed from the same seeds): a difference of exactly 0
    same = tour.paired_comparison(str(dirs["a"]), str(dirs["c"]))
    assert all(s["difference"] == 0 and s["se"] == 0 for s in same["slots"])
    result = CliRunner().invoke(main, ["compare", str(dirs["a"]), str(dirs["b"])])
    assert result.exit_code == 0 and "heuristic (A) vs random (B)" in result.output
    import kibitz
    assert kibitz.compare(dirs["a"], dirs["b"]) == out  # the Python API, as the command calls it


def test_tournaments_of_other_plans_are_not_compared(tmp_path):
    from kibitz.cli import main

    for name, seed in (("a", "3"), ("b", "4")):
        result = CliRunner().invoke(main, ["tournament", SMALL, "--agents", "heuristic,random", "--games", "12",
                                           "--seed", seed, "--no-progress", "--out", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
    result = CliRunner().invoke(main, ["compare", str(tmp_path / "a"), str(tmp_path / "b")])
    assert result.exit_code == 1 and "differ in seed (3 against 4)" in result.output
    assert "Traceback" not in result.output
    result = CliRunner().invoke(main, ["compare", str(tmp_path / "a"), str(tmp_path)])
    assert result.exit_code == 1 and "tournament.json" in result.output and "Traceback" not in result.output


def test_the_python_api_plays_a_config_and_names_bad_options(tmp_path):
    import kibitz
    from kibitz.agents.matches.tournament import TournamentConfig
    from kibitz.solvers.solve import ConfigError

    config = TournamentConfig("kuhn_poker", "random,random", 8, seed=3, out=str(tmp_path / "t"))
    assert config.agents == ("random", "random")
    outcome = kibitz.tournament(config)
    assert outcome.finished == 8 and (tmp_path / "t" / "results.json").is_file()
    again = kibitz.tournament("kuhn_poker", ["random", "random"], 8, seed=3)  # no files
    assert again.results["agents"] == outcome.results["agents"]
    for kwargs, param in ((dict(game="nope"), "GAME"), (dict(agents="random,"), "--agents"),
                          (dict(games=0), "--games"), (dict(aivat="psychic"), "--aivat"),
                          (dict(resume=True), "--resume")):
        args = {"game": "kuhn_poker", "agents": "random,random", **kwargs}
        with pytest.raises(ConfigError) as e:
            TournamentConfig(**args)
        assert e.value.param == param, (kwargs, e.value)
