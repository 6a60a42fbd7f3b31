"""Bad input through every command: one clear line, the right exit status.

Each case is a command line (run in a temporary folder holding ``afile.txt``,
a text file, and ``sub/``, a folder), the exit status it must end with (2: a
usage error, 1: a failure at run time) and words the error line must
contain (the option or parameter at fault and what is allowed). No case
may end in a traceback or an uncaught exception, and the error is one line.
(Broken files -- agent files, policy files, checkpoints, games.jsonl -- are
tests/test_bad_files.py's.)
"""

import os
import shlex

import numpy as np

import pytest
from click.testing import CliRunner

from kibitz.cli import main

#: the repository's experiment specs
EXPERIMENTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "experiments")

CASES = [
    # kibitz games / agents
    ("games poker", 2, ["no kibitz game 'poker'", "underdog", "other OpenSpiel games"]),
    ("games ''", 2, ["no kibitz game ''", "pub"]),
    ("games 'pub(players=3)'", 2, ["no kibitz game 'pub(players=3)'", "the name alone"]),
    ("agents extra", 2, ["unexpected extra argument"]),
    # game strings (every command loads them the same way)
    ("play 'underdog(players=3))'", 2, ["GAME", "unexpected ')' after the closing parenthesis"]),
    ("play 'underdog(players=3)x'", 2, ["GAME", "unexpected 'x'"]),
    ("play 'underdog(players=3,players=4)'", 2, ["GAME", "'players' is given twice"]),
    ("play 'underdog(players=3'", 2, ["GAME", "never closed"]),
    ("play 'underdog(players=3.0)'", 2, ["players=3.0 must be an integer", "allowed: 3..6"]),
    ("play 'underdog(players=abc)'", 2, ["players=abc must be an integer", "3..6"]),
    ("play 'underdog(players=1e3)'", 2, ["must be an integer", "3..6"]),
    ("play 'underdog(players=99999999999999999999)'", 2, ["beyond OpenSpiel's integers"]),
    ("play 'underdog(players=-3)'", 2, ["players=-3 is out of range", "3..6"]),
    ("play 'underdog(players=9)' --seats random", 2, ["players=9 is out of range"]),
    ("play 'underdog(payoff=1)'", 2, ["payoff=1 must be a string", "win, chips"]),
    ("play 'underdog(payoff=)'", 2, ["'payoff' has no value"]),
    ("play 'over_under(jokers=2)'", 2, ["jokers=2 must be true or false"]),
    ("play 'underdog(players=3, cards=9)'", 2, ["spaces are not allowed", "underdog(players=3,cards=9)"]),
    ("play 'underdog(=3)'", 2, ["'=3' is not KEY=VALUE"]),
    ("play 'kuhn_poker(players=2,)'", 2, ["an empty parameter"]),
    ("play ''", 2, ["GAME", "it is empty"]),
    ("play ' underdog'", 2, ["spaces are not allowed"]),
    ("play 'ündérdog'", 2, ["unknown game 'ündérdog'", "underdog"]),
    ("play 'underdog(cardz=3)'", 2, ["cardz", "Available parameters"]),
    ("play", 2, ["Missing argument 'GAME'"]),
    # kibitz play: seats and seeds
    ("play 'underdog(players=3)' --seats random,,random", 2, ["--seats", "empty agent spec", "number 2 of 3"]),
    ("play kuhn_poker --seats ,", 2, ["--seats", "empty agent spec"]),
    ("play kuhn_poker --seats ''", 2, ["--seats", "empty agent spec"]),
    ("play kuhn_poker --seats random,random --seed -5", 2, ["--seed", "-5", "x>=0"]),
    ("play kuhn_poker --seats random,random --seed abc", 2, ["--seed", "abc"]),
    ("play kuhn_poker --seats 'random,ismcts(sims=10,random'", 2, ["--seats", "unclosed parenthesis"]),
    ("play kuhn_poker --seats 'random),random('", 2, ["--seats", "')' at position 7 closes no '('"]),
    ("play kuhn_poker --seats 'random,ismcts(sims=abc)'", 2,
     ["--seats", "agent 'ismcts'", "sims='abc'", "must be an integer"]),
    ("play kuhn_poker --seats 'random,ismcts(sims=1e99)'", 2, ["sims=1e+99 must be an integer"]),
    ("play kuhn_poker --seats 'random,ismcts(uct_c=nan)'", 2, ["uct_c=nan must be a finite number"]),
    ("play kuhn_poker --seats 'random,ismcts(sims=5,sims=6)'", 2, ["option 'sims' is given twice"]),
    ("play kuhn_poker --seats 'random,ismcts(sims=5,)'", 2, ["empty option"]),
    ("play kuhn_poker --seats 'random,ismcts(sims=5)x'", 2, ["bad agent spec"]),
    ("play kuhn_poker --seats 'random,ismcts(wizardry=1)'", 2, ["no option 'wizardry'", "sims"]),
    ("play kuhn_poker --seats 'ｒａｎｄｏｍ,random'", 2, ["bad agent spec 'ｒａｎｄｏｍ'"]),
    ("play kuhn_poker --seats random,wizard", 2, ["unknown agent 'wizard'", "heuristic"]),
    ("play goofspiel --seats human,random", 2,
     ["GAME", "simultaneous-move game", "turn_based_simultaneous_game(game=goofspiel())"]),
    ("play kuhn_poker --seats random,heuristic", 2, ["no heuristic agent for game 'kuhn_poker'"]),
    ("play kuhn_poker --seats 'random,human(x=1)'", 2, ["agent 'human' takes no options"]),
    ("play kuhn_poker --seats random", 2, ["2 players but 1 seats"]),
    ("play kuhn_poker --seats 'policy(sub),random'", 2, ["--seats", "sub", "directory"]),
    ("play kuhn_poker --seats 'policy(nofile.json),random'", 2,
     ["--seats", "does not exist (a relative path is read from the current folder, /"]),
    ("play kuhn_poker --seats 'net(/nonexistent/n.json.gz),random'", 2, ["'/nonexistent/n.json.gz' does not exist"]),
    ("play kuhn_poker --seats random,random --iterations 5", 2, ["No such option '--iterations'"]),
    # kibitz solve
    ("solve goofspiel --out g.json", 2, ["GAME", "only sequential games", "kuhn_poker",
                                         "turn_based_simultaneous_game(game=goofspiel"]),
    ("solve goofspiel -a mccfr-es --out g.json", 2, ["GAME", "sequential", "kuhn_poker"]),
    ("solve kuhn_poker -a dcfr --gamma nan --out k.json", 2, ["gamma=nan", "[0, 10]"]),
    ("solve kuhn_poker -a dcfr --alpha inf --out k.json", 2, ["alpha=inf", "[0, 10]"]),
    ("solve kuhn_poker -a dcfr --alpha -1 --out k.json", 2, ["alpha=-1.0 is out of range"]),
    ("solve kuhn_poker -a dcfr --beta -1e400 --out k.json", 2, ["beta=-inf", "[-10, 10]"]),
    ("solve kuhn_poker -a dcfr --gamma abc --out k.json", 2, ["--gamma", "'abc' is not a valid float"]),
    ("solve kuhn_poker --alpha 1 --out k.json", 2, ["apply to dcfr only"]),
    ("solve kuhn_poker --time abc --out k.json", 2, ["--time", "not a duration", "1h30m"]),
    ("solve kuhn_poker --time -1s --out k.json", 2, ["--time", "not a duration"]),
    ("solve kuhn_poker --time 0 --out k.json", 2, ["--time", "more than 0"]),
    ("solve kuhn_poker -n 0 --out k.json", 2, ["--iterations", "x>=1"]),
    ("solve kuhn_poker -n -5 --out k.json", 2, ["--iterations", "x>=1"]),
    ("solve kuhn_poker --max-nodes 0 --out k.json", 2, ["--max-nodes", "x>=1"]),
    ("solve kuhn_poker --eval-every -1 --out k.json", 2, ["--eval-every", "x>=0"]),
    ("solve kuhn_poker --target-nashconv nan --out k.json", 2, ["--target-nashconv", "not a number"]),
    ("solve kuhn_poker --target-nashconv -1 --out k.json", 2, ["--target-nashconv", "x>=0"]),
    ("solve kuhn_poker --checkpoint-every nan --out k.json", 2, ["--checkpoint-every", "not a number"]),
    ("solve kuhn_poker -a mccfr-os --epsilon 0 --out k.json", 2, ["--epsilon", "0<x<=1"]),
    ("solve kuhn_poker -a mccfr-os --epsilon nan --out k.json", 2, ["--epsilon", "not a number"]),
    ("solve kuhn_poker -a mccfr-os --epsilon 2 --out k.json", 2, ["--epsilon", "0<x<=1"]),
    ("solve kuhn_poker -a mccfr-es --epsilon 0.5 --out k.json", 2, ["--epsilon", "mccfr-os"]),
    ("solve kuhn_poker -a mccfr-es --seed -1 --out k.json", 2, ["--seed", "x>=0"]),
    ("solve kuhn_poker -a mccfr-es --fallback wizard --out k.json", 2, ["--fallback", "unknown agent"]),
    ("solve kuhn_poker -a mccfr-es --fallback 'random,' --out k.json", 2, ["--fallback", "bad agent spec"]),
    ("solve kuhn_poker -a mccfr-es --target-nashconv 0.1 --out k.json", 2, ["--target-nashconv",
                                                                            "not used by mccfr-es"]),
    ("solve kuhn_poker --seed 3 --out k.json", 2, ["--seed", "MCCFR options"]),
    ("solve kuhn_poker -a cfr++ --out k.json", 2, ["--algorithm", "cfr+"]),
    ("solve kuhn_poker", 2, ["Missing option '--out'"]),
    ("solve kuhn_poker --out ''", 2, ["--out", "an empty file name"]),
    ("solve kuhn_poker --out afile.txt/k.json", 2, ["--out", "afile.txt is not an existing folder"]),
    ("solve kuhn_poker --out nodir/k.json", 2, ["--out", "nodir is not an existing folder"]),
    ("solve kuhn_poker --out sub", 2, ["--out", "is a directory"]),
    ("solve kuhn_poker --out k.json --resume", 2, ["--resume", "no checkpoint"]),
    ("solve kuhn_poker --out k.json --games 3", 2, ["No such option '--games'"]),
    ("solve 'kuhn_poker(players=3))' --out k.json", 2, ["GAME", "unexpected ')'"]),
    ("solve tic_tac_toe --max-nodes 10 --out t.json", 1, ["node budget of 10", "--max-nodes"]),
    ("play 'kuhn_poker(players=2.5)' --seats random,random", 2, ["players=2.5 must be an integer (default 2)"]),
    # an --out that kibitz did not write is never replaced, --overwrite or not (its earlier outputs are
    # test_export.py's)
    ("solve kuhn_poker -n 2 --out done.json", 2, ["--out", "done.json is not a kibitz policy file",
                                                  "never replaced", "choose another --out"]),
    ("solve kuhn_poker -n 2 --out afile.txt --overwrite", 2, ["afile.txt is not a kibitz policy file",
                                                              "never replaced, --overwrite or not"]),
    ("export done.json --out afile.txt", 2, ["--out", "afile.txt is not a kibitz policy file or agent file"]),
    ("export done.json --out afile.txt --overwrite", 2, ["--out", "afile.txt is not a kibitz",
                                                         "never replaced, --overwrite or not"]),
    ("export done.json --out clash/agent.json.gz --overwrite", 2, ["clash/agent.json.gz is not a kibitz"]),
    ("train kuhn_poker --steps 2 --out net.npz --overwrite", 2, ["--out", "net.npz is not a kibitz network file"]),
    ("distill kuhn_poker --teacher random --games 2 --out net.npz --overwrite", 2,
     ["--out", "net.npz is not a kibitz network file"]),
    ("tournament kuhn_poker --agents random,random --games 2 --out notes", 2,
     ["--out", "notes is not a kibitz tournament folder (no tournament.json in it) but holds results.csv"]),
    ("tournament kuhn_poker --agents random,random --games 2 --out forged", 2,
     ["--out", "forged is not a kibitz tournament folder", "not a tournament plan"]),
    ("solve kuhn_poker -n 2 --out done.json --resume --overwrite", 2, ["give one"]),
    ("solve kuhn_poker -n 2 --out /dev/null", 2, ["--out", "/dev/null exists and is not a regular file"]),
    # kibitz export / inspect / replay (missing files; broken ones are test_bad_files.py's)
    ("export nofile.json --out a.json", 2, ["SOURCE", "does not exist"]),
    ("export afile.txt", 2, ["Missing option '--out'"]),
    ("export sub --out a.json", 2, ["SOURCE", "is a directory"]),
    ("export afile.txt --out afile.txt", 2, ["--out", "afile.txt is the source"]),
    ("export done.json --out done.json.ckpt.npz", 2, ["--out", "is the source's checkpoint"]),
    ("export afile.txt --out ''", 2, ["--out", "an empty file name"]),
    ("export afile.txt --out nodir/a.json", 2, ["--out", "nodir is not an existing folder"]),
    ("export afile.txt --out /proc/a.json", 2, ["--out", "cannot create files in /proc"]),
    ("solve kuhn_poker -n 2 --out /proc/k.json", 2, ["--out", "cannot create files in /proc"]),
    ("inspect nofile.json", 2, ["PATH", "does not exist"]),
    ("inspect afile.txt --games -1", 2, ["--games", "0<=x<=1000000"]),
    ("inspect afile.txt --games 99999999999", 2, ["--games", "0<=x<=1000000"]),
    ("inspect afile.txt --seed -1", 2, ["--seed", "x>=0"]),
    ("play kuhn_poker --seats 'ismcts(sims=1000000000000),random'", 2, ["sims", "0..1,000,000,000"]),
    ("replay nofile.jsonl --game 0", 2, ["GAMES_JSONL", "does not exist"]),
    ("replay afile.txt", 2, ["Missing option '--game'"]),
    ("replay afile.txt --game x", 2, ["--game", "'x' is not a valid integer"]),
    # kibitz tournament
    ("tournament kuhn_poker --agents '' --out t", 2, ["--agents", "empty agent spec"]),
    ("tournament 'kuhn_poker(players=1)' --agents random,random --out t", 2,
     ["GAME", "kuhn_poker(players=1): players must be 2..10 for kuhn_poker"]),
    ("tournament matrix_rps --agents random,random --out t", 2,
     ["GAME", "simultaneous-move game", "turn_based_simultaneous_game(game=matrix_rps())"]),
    ("tournament kuhn_poker --agents 'random,(' --out t", 2, ["--agents", "unclosed parenthesis"]),
    ("tournament kuhn_poker --agents random,wizard --out t", 2, ["unknown agent 'wizard'"]),
    ("tournament kuhn_poker --agents random,human --out t", 2, ["human agent is only available"]),
    ("tournament kuhn_poker --agents random,random --games 0 --out t", 2, ["--games", "1<=x<=10000000"]),
    ("tournament kuhn_poker --agents random,random --games -3 --out t", 2, ["--games", "1<=x"]),
    ("tournament kuhn_poker --agents random,random --games 99999999999 --out t", 2, ["--games", "x<=10000000"]),
    ("tournament kuhn_poker --agents random,random --workers 0 --out t", 2, ["--workers", "1<=x<=64"]),
    ("tournament kuhn_poker --agents random,random --workers 1000 --out t", 2, ["--workers", "1<=x<=64"]),
    ("tournament kuhn_poker --agents random,random --seed -1 --out t", 2, ["--seed", "x>=0"]),
    ("tournament kuhn_poker --agents random,random --out afile.txt", 2, ["--out", "'afile.txt' is a file"]),
    ("tournament kuhn_poker --agents random,random --games 2 --no-progress --out /proc/kibitz", 1,
     ["/proc/kibitz"]),
    ("tournament kuhn_poker --agents 'random,policy(sub)' --games 2 --out t", 2, ["sub", "directory"]),
    ("tournament kuhn_poker --seats random,random", 2, ["No such option '--seats'", "--agents"]),
    ("tournament 'underdog(players=3' --agents random", 2, ["GAME", "never closed"]),
    ("tournament kuhn_poker", 2, ["Missing option '--agents'"]),
    ("tournament kuhn_poker --agents random,random --games 2 --out t --resume", 2,
     ["--resume", "holds no tournament"]),
    # kibitz serve (refused before it listens)
    ("serve --agent wizard", 2, ["--agent", "unknown agent 'wizard'"]),
    ("serve --agent ''", 2, ["--agent", "bad agent spec"]),
    ("serve --agent random --port 99999", 2, ["--port", "0<=x<=65535"]),
    ("serve --agent random --port -1", 2, ["--port", "0<=x<=65535"]),
    ("serve --agent 'policy(nofile.json)'", 2, ["--agent", "policy file 'nofile.json' does not exist"]),
    ("serve --agent 'ismcts(sims=-5)'", 2, ["--agent", "sims must be 0..1,000,000,000; got -5"]),
    ("serve --bot-delay -1", 2, ["--bot-delay", "0<=x<=60"]),
    ("serve --max-tables 0", 2, ["--max-tables", "1<=x<=10000"]),
    # kibitz experiment (its --set and spec files: tests/test_bad_files.py)
    ("experiment run nofolder", 2, ["FOLDER", "does not exist"]),
    ("experiment run", 2, ["Missing argument 'FOLDER'"]),
    ("experiment walk experiments", 2, ["No such command 'walk'"]),
    ("inspect net.npz", 1, ["net.npz: a NumPy .npz file", "kibitz export"]),
    ("distill kuhn_poker --teacher random --opponent random --games 2 --init afile.txt --out k.npz", 2,
     ["--init", "afile.txt: not a kibitz network file (not a NumPy .npz of arrays)"]),
    ("play kuhn_poker --seats 'random,net(net.npz)'", 2, ["net.npz: a NumPy .npz file", "kibitz export"]),
    ("tournament kuhn_poker --agents 'random,policy(net.npz)' --out t", 2, ["net.npz: a NumPy .npz file"]),
    (f"experiment run {EXPERIMENTS}/convergence --out afile.txt", 1, ["--out: afile.txt", "File exists"]),
    (f"experiment run {EXPERIMENTS}/convergence --out ' '", 2, ["--out", "an empty folder name"]),
    (f"experiment run {EXPERIMENTS}/training --out tr --set 'games=[\"tic_tac_toe\"]'", 2,
     ["--set", "tic_tac_toe(): the game has no information-state tensor to train on"]),
    # options checked when the agent is made, not at its first move
    ("play kuhn_poker --seats 'ismcts(one_step),random'", 2,
     ["--seats", "need a game with a standing", "'kuhn_poker' has none"]),
    ("solve kuhn_poker -a mccfr-es -n 3 --fallback 'ismcts(one_step)' --out k.json", 2,
     ["--fallback", "need a game with a standing"]),
    ("play kuhn_poker --seats 'policy(afile.txt,path=sub),random'", 2,
     ["--seats", "path is given twice ('afile.txt' first, then path='sub')"]),
    # a checkpoint path that is a folder is found before the run, not after it
    ("train kuhn_poker --steps 2 --out sub.npz --overwrite", 2,
     ["--out", "sub.npz.ckpt.npz exists and is not a file"]),
    ("solve kuhn_poker -n 2 --out sub.json --overwrite", 2, ["--out", "sub.json.ckpt.npz exists and is not a file"]),
    (f"experiment run {EXPERIMENTS}/convergence --out afile.txt/sub", 1, ["--out: afile.txt/sub", "Not a directory"]),
    # kibitz demo
    ("demo --iterations 0", 2, ["--iterations", "x>=1"]),
    ("demo --games 0", 2, ["--games", "x>=1"]),
    ("demo --workers 0", 2, ["--workers", "1<=x<=64"]),
    ("demo --seed -1", 2, ["--seed", "x>=0"]),
    ("demo --out afile.txt", 2, ["--out", "'afile.txt' is a file"]),
    ("demo --out /proc/kibitz-demo --iterations 2 --games 12 --workers 1", 1, ["/proc/kibitz-demo"]),
    ("demo --out clash --iterations 2 --games 12 --workers 1", 1,
     ["--out clash holds agent.json.gz", "kibitz demo did not write"]),
    # the group
    ("nosuchcommand", 2, ["No such command 'nosuchcommand'"]),
    ("--nosuchoption", 2, ["No such option"]),
    # kibitz train
    ("train kuhn_poker --out k.json", 2, ["--out", "must end in .npz"]),
    ("train kuhn_poker --out nodir/k.npz", 2, ["--out", "not an existing folder"]),
    ("train kuhn_poker --out k.npz --hidden 128,x", 2, ["--hidden", "widths from 1 to 4096", "128,128"]),
    ("train kuhn_poker --out k.npz --hidden 0", 2, ["--hidden", "widths from 1 to 4096"]),
    ("train kuhn_poker --out k.npz --hidden 100000000", 2, ["--hidden", "widths from 1 to 4096"]),
    ("train kuhn_poker --out k.npz --hidden 8,8,8,8,8,8,8,8,8", 2, ["--hidden", "1 to 8 layer widths"]),
    ("train kuhn_poker --out k.npz --batch 0", 2, ["--batch", "1<=x<=4096"]),
    ("train kuhn_poker --out k.npz --batch 100000000", 2, ["--batch", "1<=x<=4096"]),
    ("train kuhn_poker --out k.npz --lr 0", 2, ["--lr", "0<x<=1"]),
    ("train kuhn_poker --out k.npz --lr nan", 2, ["--lr", "not a number"]),
    ("train kuhn_poker --out k.npz --critic-lr 2", 2, ["--critic-lr", "0<x<=1"]),
    ("train kuhn_poker --out k.npz --alpha -1", 2, ["--alpha", "0<=x<=100"]),
    ("train kuhn_poker --out k.npz --magnet-every -1", 2, ["--magnet-every", "x>=0"]),
    ("train kuhn_poker --out k.npz --steps 0", 2, ["--steps", "x>=1"]),
    ("train kuhn_poker --out k.npz --time 0", 2, ["--time", "more than 0"]),
    ("train kuhn_poker --out k.npz --resume", 2, ["--resume", "no checkpoint"]),
    ("train goofspiel --out k.npz", 2, ["GAME", "sequential game"]),
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("bad")
    (path / "afile.txt").write_text("not an agent file\n")
    (path / "sub").mkdir()
    (path / "sub.npz.ckpt.npz").mkdir()
    (path / "sub.json.ckpt.npz").mkdir()
    (path / "clash").mkdir()
    (path / "clash" / "agent.json.gz").write_text("the user's own file\n")
    (path / "done.json").write_text("an earlier run's policy\n")
    (path / "done.json.ckpt.npz").write_text("its checkpoint\n")
    (path / "notes").mkdir()
    (path / "notes" / "results.csv").write_text("the user's own results\n")
    (path / "forged").mkdir()
    (path / "forged" / "tournament.json").write_text('{"plan": "the user\'s own"}\n')
    np.savez(path / "net.npz", W0=np.zeros((2, 2), np.float32))  # a network file, not an agent file
    return path


@pytest.mark.parametrize("line,status,words", CASES, ids=[c[0][:60] for c in CASES])
def test_bad_input_gets_one_clear_line(line, status, words, folder, monkeypatch):
    monkeypatch.chdir(folder)
    result = CliRunner().invoke(main, shlex.split(line), input="")
    out = result.output
    assert "Traceback" not in out
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == status, out
    errors = [ln for ln in out.splitlines() if ln.startswith("Error:")]
    assert len(errors) == 1, out
    for word in words:
        assert word in errors[0], errors[0]
    # a refused command leaves nothing behind and touches nothing it did not write
    assert not any((folder / name).exists() for name in ("k.json", "g.json", "t.json", "a.json"))
    assert (folder / "clash" / "agent.json.gz").read_text() == "the user's own file\n"
    assert (folder / "afile.txt").read_text() == "not an agent file\n"
    assert (folder / "done.json").read_text() == "an earlier run's policy\n"
    assert (folder / "done.json.ckpt.npz").read_text() == "its checkpoint\n"
    assert np.load(folder / "net.npz")["W0"].shape == (2, 2)
    assert sorted(os.listdir(folder / "notes")) == ["results.csv"]
    assert (folder / "notes" / "results.csv").read_text() == "the user's own results\n"
    assert sorted(os.listdir(folder / "forged")) == ["tournament.json"]

