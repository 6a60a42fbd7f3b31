"""The kibitz command line: help, games, play (people and bots), demo."""

import re

import pytest
from click.testing import CliRunner

from kibitz import games as games_pkg
from kibitz.cli import main


def run(args, input=None):
    return CliRunner().invoke(main, args, input=input, catch_exceptions=False)


def test_help_lists_every_command_with_a_line():
    out = run(["--help"]).output
    for command in ("games", "play", "demo"):
        assert command in out
    assert "Show this message" in out


def test_games_lists_parameters_defaults_and_allowed_values():
    out = run(["games"]).output
    assert "underdog" in out
    for text in ("players", "3..6", "last_round_stake", "win, chips", "max_rounds"):
        assert text in out
    # the network inputs, as --encoding names them, with their sizes
    assert "network inputs (--encoding) at the defaults: information_state_tensor (5,723 floats), " \
           "observation_tensor (588 floats), compact (185 floats)" in out


def test_games_unknown_name():
    result = CliRunner().invoke(main, ["games", "poker"])
    assert result.exit_code == 2 and "no kibitz game 'poker'" in result.output


def test_bot_game_is_reproducible_and_shows_moves():
    args = ["play", "underdog(players=3)", "--seats", "heuristic,random,random", "--seed", "4"]
    first, second = run(args).output, run(args).output
    assert first == second
    assert "p0 (heuristic):" in first and "chance: card" in first and "returns:" in first
    other = run(["play", "underdog(players=3)", "--seats", "heuristic,random,random",
                 "--seed", "5"]).output
    assert other != first


def test_human_sees_only_own_view_and_bad_input_is_asked_again():
    # The human (seat 0) types junk first, then always the first listed move.
    answers = "\n".join(["nonsense", "99"] + ["1"] * 200) + "\n"
    result = run(["play", "underdog(players=3,bank=2)", "--seats", "human,random,random",
                  "--seed", "2"], input=answers)
    out = result.output
    assert "'nonsense' is not a legal move here" in out
    assert "'99' is not a legal move here" in out
    assert "you are dealt" in out
    # Bot moves are not narrated: a swapping bot's kept card ("keep 9") is private.
    assert "(random): keep" not in out and "chance: card" not in out
    assert "returns:" in out


def test_human_can_answer_by_move_name():
    answers = "\n".join(["new underdog", "pass"] * 50) + "\n"
    out = run(["play", "underdog(players=3,bank=2)", "--seats", "human,random,random",
               "--seed", "3"], input=answers).output
    assert "p0 new underdog" in out and "p0 passes" in out


def test_end_of_input_abandons_the_game_with_an_error():
    """Input that ends before the game (a script's, or /dev/null) is not a
    finished game: exit status 1 and one line saying so."""
    result = run(["play", "underdog(players=3)", "--seats", "human,random,random", "--seed", "1"], input="")
    assert result.exit_code == 1, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert errors == ["Error: end of input at player 0's move: game abandoned"], result.output
    assert "returns:" not in result.output


def test_quit_abandons_the_game():
    result = run(["play", "underdog(players=3)", "--seats", "human,random,random", "--seed", "1"],
                 input="quit\n")
    assert result.exit_code == 0 and result.output.endswith("\ngame abandoned\n"), result.output


@pytest.mark.parametrize("name", sorted(games_pkg.REGISTRY))
def test_games_shows_each_parameter_in_columns(name):
    """Name, default, allowed values and help two spaces apart or more, each
    whole (a long allowed value puts the help on the next line)."""
    lines = run(["games", name]).output.splitlines()
    for p in games_pkg.REGISTRY[name].params:
        default = str(p.default).lower() if isinstance(p.default, bool) else str(p.default)
        i = next(i for i, line in enumerate(lines) if line.startswith(f"  {p.name} "))
        row = re.fullmatch(r"  (\S+) {2,}default (\S+) {2,}allowed (.+?)(?: {2,}(.+))?", lines[i])
        assert row, lines[i]
        helptext = row[4] if row[4] is not None else lines[i + 1].strip()
        assert (row[1], row[2], row[3], helptext) == (p.name, default, p.allowed, p.help), lines[i:i + 2]


@pytest.mark.parametrize("args,message", [
    (["play", "underdog(players=9)", "--seats", "random"], "players=9 is out of range"),
    (["play", "underdog(cardz=3)"], "cardz"),
    (["play", "nogame"], "unknown game 'nogame'"),
    (["play", "underdog(players=3)", "--seats", "random,random"], "has 3 players but 2 seats"),
    (["play", "underdog(players=3)", "--seats", "random,random,wizard"], "unknown agent 'wizard'"),
    (["play", "underdog(players=3)", "--seats", "random,random,random(x=1)"], "takes no options"),
])
def test_bad_input_is_a_clear_error(args, message):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert message in result.output


def test_demo_solves_exports_and_plays_a_tournament(tmp_path):
    out = run(["demo", "--out", str(tmp_path), "--iterations", "50", "--games", "24",
               "--workers", "1"]).output
    assert "NashConv" in out and "2. Export" in out
    for agent in ("policy(", "ismcts(sims=100)", "heuristic", "random"):
        assert agent in out
    assert (tmp_path / "agent.json.gz").exists()
    assert (tmp_path / "tournament" / "results.json").exists()
    # NashConv falls between the first and the last row of the convergence table.
    rows = [line.split() for line in out.splitlines() if line.strip()[:1].isdigit()
            and len(line.split()) == 3]
    first, last = float(rows[0][1]), float(rows[-1][1])
    assert last < first / 10


def test_demo_play_shows_a_bot_game():
    out = run(["demo", "--play", "--seed", "1"]).output
    assert "kibitz demo: underdog" in out and "returns:" in out


def test_demo_twice_in_a_row_replaces_only_its_own_output(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    small = ["demo", "--iterations", "5", "--games", "12", "--workers", "1"]
    first = CliRunner().invoke(main, small)
    assert first.exit_code == 0, first.output
    assert "\r" not in first.stderr  # no progress bar drawn into a pipe
    (tmp_path / "demo-output" / "notes.txt").write_text("mine\n")
    games = (tmp_path / "demo-output" / "tournament" / "games.jsonl").read_text()
    second = CliRunner().invoke(main, small)
    assert second.exit_code == 0, second.output
    assert (tmp_path / "demo-output" / "tournament" / "games.jsonl").read_text() == games
    assert (tmp_path / "demo-output" / "notes.txt").read_text() == "mine\n"


def test_demo_refusing_a_foreign_out_leaves_it_as_it_was(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "policy.json.gz").write_text("not the demo's\n")
    result = CliRunner().invoke(main, ["demo", "--iterations", "5", "--games", "12", "--out", str(out)])
    assert result.exit_code == 1 and "which kibitz demo did not write" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["policy.json.gz"]  # no tournament/ folder, no marker


def test_ctrl_c_where_a_command_does_not_handle_it_exits_130_with_one_line(monkeypatch):
    from kibitz.commands import play

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(play, "play_game", interrupted)
    result = CliRunner().invoke(main, ["play", "kuhn_poker", "--seats", "random,random"])
    assert result.exit_code == 130 and result.output.strip().splitlines()[-1] == "interrupted"
    assert "Aborted" not in result.output


def test_ctrl_c_while_train_starts_exits_130_and_writes_nothing(tmp_path, monkeypatch):
    import os
    import signal

    from kibitz.solvers import train as train_mod

    made = train_mod.MMDTrainer.__init__

    def signalled(self, *args, **kwargs):  # Ctrl-C while JAX is starting
        os.kill(os.getpid(), signal.SIGINT)
        made(self, *args, **kwargs)

    monkeypatch.setattr(train_mod.MMDTrainer, "__init__", signalled)
    out = tmp_path / "k.npz"
    result = CliRunner().invoke(main, ["train", "kuhn_poker", "--steps", "50", "--hidden", "4", "--batch", "2",
                                       "--no-progress", "--out", str(out)])
    assert result.exit_code == 130, result.output
    assert "interrupted while starting: nothing was trained or written" in result.output
    assert list(tmp_path.iterdir()) == []


def test_play_prints_the_returns_once():
    out = run(["play", "pub", "--seats", "random,random,random,random", "--seed", "1"]).output
    assert out.count("returns") == 1 and "returns: p0" in out


def test_solve_time_alone_runs_that_long(tmp_path):
    result = CliRunner().invoke(main, ["solve", "kuhn_poker", "--time", "0.5s", "--no-progress",
                                       "--out", str(tmp_path / "k.json")])
    assert result.exit_code == 0, result.output
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("iterations:"))
    assert "(time limit)" in line and int(line.split()[1].replace(",", "")) > 1000


def test_ctrl_c_while_compiling_exits_130_and_writes_nothing(tmp_path, monkeypatch):
    from kibitz.solvers import tree as tree_mod

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tree_mod, "compile_tree", interrupted)
    result = CliRunner().invoke(main, ["solve", "kuhn_poker", "--no-progress", "--out", str(tmp_path / "k.json")])
    assert result.exit_code == 130 and "interrupted while compiling the tree" in result.output
    assert "Aborted" not in result.output and not list(tmp_path.iterdir())
