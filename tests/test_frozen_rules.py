"""The four games play exactly as they did at the frozen commit
(``kibitz.experiments.frozen_rules.COMMIT``, issue 47), compared in two
processes: the games of this checkout and the games of that commit, read
from git into the cache folder (``$KIBITZ_CACHE/frozen/COMMIT`` or
``~/.cache/kibitz/frozen/COMMIT``). For each game: its attributes at the
default size and at its small configuration, ``GAMES[name]`` seeded random
games at the default size and 50 at the small configuration, and the small
configuration's whole tree, every node's legal actions or chance outcomes
and probabilities, action strings, every player's information-state and
observation strings and tensors and further encodings, ``str(state)`` and
the returns (docs/frozen-rules.md). The full count, 10,000 games a game, is
``python -m kibitz.experiments.frozen_rules``.

The comparison itself is checked on a copy of the frozen games with one
information-state line changed: it must name the changed field; and the
command's table on one small run.

Without git or the commit (a shallow clone) the tests fail with one line,
never skip. Measured on the 2 shared cores (load 3 to 4): the file takes
about 40 s of CPU (39.7 s user, 1.7 s system, the two processes of each
comparison included).
"""

from __future__ import annotations

import re
import shutil

import pytest

from kibitz.experiments import frozen_rules as fr

#: random games at the default size, about 1 s of CPU a side each
GAMES = {"underdog": 10, "pub": 10, "over_under": 5, "doubt_and_bet": 3}
SMALL_GAMES = 50


@pytest.fixture(scope="module")
def frozen():
    try:
        return fr.frozen_games()
    except fr.FrozenRulesError as e:
        pytest.fail(str(e), pytrace=False)


@pytest.mark.parametrize("name", fr.GAMES)
def test_same_game_as_frozen_commit(name, frozen):
    jobs = fr.jobs_for(name, GAMES[name], SMALL_GAMES)
    try:
        outcomes = fr.compare(jobs, frozen=frozen)
    except fr.FrozenRulesError as e:
        pytest.fail(str(e), pytrace=False)
    assert [o.job for o in outcomes] == jobs
    differences = [o.difference for o in outcomes if o.difference is not None]
    assert not differences, "\n".join(differences)
    walked = {o.job["kind"]: o for o in outcomes if o.job["kind"] != "game"}
    assert sum(o.games for o in outcomes if o.job["kind"] == "random") == GAMES[name] + SMALL_GAMES
    assert walked["tree"].nodes > 400  # the small trees have 439 to 6,379 nodes
    assert all(o.nodes > o.games for o in outcomes if o.job["kind"] == "random")


def test_a_changed_information_state_is_named(frozen, tmp_path):
    changed = tmp_path / "games"
    shutil.copytree(frozen, changed, ignore=shutil.ignore_patterns("__pycache__"))
    source = changed / "doubt_and_bet.py"
    text = source.read_text()
    old = 'return f"p{e.player} doubt"'
    assert text.count(old) == 1
    source.write_text(text.replace(old, 'return f"p{e.player} doubts"'))
    small = fr.SMALL["doubt_and_bet"]
    jobs = [{"kind": "game", "game": small}, *fr.random_jobs(small, 20), {"kind": "tree", "game": small}]
    attributes, games, tree = fr.compare(jobs, frozen=changed)
    assert attributes.difference is None
    for outcome, where in ((games, r"random game \d+ of seed 47"), (tree, "the small tree walked depth first")):
        assert outcome.difference is not None
        assert re.search(rf"{where}, step \d+ \(history \[[\d, ]+\]\), information_state_string\[\d\]: "
                         r"current '.*doubt.*', frozen '.*doubts.*'", outcome.difference), outcome.difference


def test_an_unknown_commit_is_one_clear_line(tmp_path, monkeypatch):
    monkeypatch.setenv("KIBITZ_CACHE", str(tmp_path))
    with pytest.raises(fr.FrozenRulesError, match=r"^commit 0{40} is not in the git history of .*\(a shallow clone\?"):
        fr.frozen_games("0" * 40)


def test_the_command_prints_a_row_for_each_comparison(frozen, capsys):
    code = fr.main(["--games", "1", "--small-games", "2", "--only", "doubt_and_bet", "--seed", "3"])
    out = capsys.readouterr().out
    assert code == 0, out
    rows = [line for line in out.splitlines() if line.startswith("| `")]
    small = fr.SMALL["doubt_and_bet"]
    assert [row.split(" | ")[:3] for row in rows] == [
        ["| `doubt_and_bet`", "attributes", "-"], [f"| `{small}`", "attributes", "-"],
        ["| `doubt_and_bet`", "random games", "1"], [f"| `{small}`", "random games", "2"],
        [f"| `{small}`", "whole tree", "-"]]
    assert all(" | identical | " in row for row in rows)
    assert "| 439 | identical |" in rows[-1]
    assert out.rstrip().splitlines()[-1].startswith("all identical; wall ")
