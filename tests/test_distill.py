"""Distillation: teacher games (agents/training/distill.py), the fit (solvers/distill.py)
and `kibitz distill`: the data does not depend on workers or interruptions,
the fit learns the teacher and is deterministic, bad input is one line."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from kibitz.agents.training import distill as teacher_games
from kibitz.agents.registry import make_agent
from kibitz.cli import main
from kibitz.games import load_game
from kibitz.solvers import distill, network, train
from helpers import data_shards as _shards

GAME = "underdog(players=3,cards=5,bank=2)"
TEACHER = "ismcts(sims=30)"


def _same_data(a, b):
    assert a.keys() == b.keys()
    for key in a:
        assert a[key].keys() == b[key].keys()
        for name in a[key]:
            np.testing.assert_array_equal(a[key][name], b[key][name], err_msg=f"{key} {name}")


def test_teacher_games_do_not_depend_on_workers_or_interruption(tmp_path):
    one, two, staged = tmp_path / "one", tmp_path / "two", tmp_path / "staged"
    assert teacher_games.collect(GAME, TEACHER, "heuristic", "information_state_tensor", 3, 6, one, chunk=2) == 6
    teacher_games.collect(GAME, TEACHER, "heuristic", "information_state_tensor", 3, 6, two, chunk=2, workers=2)
    # an interrupted run (stopped after its first shard) continued by a second one
    teacher_games.collect(GAME, TEACHER, "heuristic", "information_state_tensor", 3, 6, staged, chunk=2,
                          should_stop=lambda: True)
    assert len(teacher_games.done_shards(staged)) == 1
    assert teacher_games.collect(GAME, TEACHER, "heuristic", "information_state_tensor", 3, 6, staged, chunk=2) == 6
    data = _shards(one)
    _same_data(data, _shards(two))
    _same_data(data, _shards(staged))
    rows = sum(len(d["taken"]) for d in data.values())
    assert rows > 10
    for d in data.values():
        counts = np.diff(d["offset"])
        assert (counts >= 2).all()  # forced moves are not examples
        assert len(d["legal"]) == len(d["policy"]) == len(d["visits"]) == d["offset"][-1]
        assert ((0 <= d["taken"]) & (d["taken"] < counts)).all()
        for i in range(len(counts)):
            visits = d["visits"][d["offset"][i]:d["offset"][i + 1]]
            assert visits.sum() == pytest.approx(1.0, abs=1e-5)
        assert ((0 <= d["ret"]) & (d["ret"] <= 1)).all()  # win shares


def test_a_replay_writes_what_playing_would_in_any_encoding(tmp_path):
    """Replaying a folder's games from their recorded moves (no search) gives,
    in its own encoding and in another, the very shards that playing them
    writes; games the source lacks are played."""
    ist, obs, same, other = (tmp_path / d for d in ("ist", "obs", "same", "other"))
    args = (GAME, TEACHER, "heuristic")
    teacher_games.collect(*args, "information_state_tensor", 3, 4, ist, chunk=2)
    teacher_games.collect(*args, "observation_tensor", 3, 6, obs, chunk=2)
    searched = []
    original = teacher_games._teacher_move
    teacher_games._teacher_move = lambda *a: searched.append(1) or original(*a)
    try:
        teacher_games.collect(*args, "information_state_tensor", 3, 4, same, chunk=2, replay=ist)
        assert not searched  # every game came from the recorded moves
        teacher_games.collect(*args, "observation_tensor", 3, 6, other, chunk=2, replay=ist)
        assert searched  # games 4 and 5 are not in the source: played
    finally:
        teacher_games._teacher_move = original
    _same_data(_shards(same), _shards(ist))
    _same_data(_shards(other), _shards(obs))


def test_a_replay_of_other_games_is_refused(tmp_path):
    src = tmp_path / "src"
    teacher_games.collect(GAME, TEACHER, "heuristic", "information_state_tensor", 3, 2, src, chunk=2)
    with pytest.raises(teacher_games.ReplayMismatch, match="seed=3, not 4"):
        teacher_games.collect(GAME, TEACHER, "heuristic", "observation_tensor", 4, 2, tmp_path / "a", chunk=2,
                              replay=src)
    # recorded moves that the game does not reach
    shard = teacher_games.done_shards(src)[0][2]
    with np.load(shard) as z:
        arrays = {k: z[k] for k in z}
    arrays["legal"] = arrays["legal"] + 1
    np.savez(shard, **arrays)
    r = CliRunner().invoke(main, ["distill", GAME, "--teacher", TEACHER, "--games", "2", "--chunk", "2",
                                  "--seed", "3", "--encoding", "observation_tensor", "--replay", str(src),
                                  "--no-progress", "--out", str(tmp_path / "n.npz")])
    assert r.exit_code == 2 and "--replay" in r.output and "recorded decision 1" in r.output, r.output
    assert "Traceback" not in r.output


def test_a_replay_takes_every_game_the_folder_holds_whatever_its_shards(tmp_path):
    src, dst, direct = tmp_path / "src", tmp_path / "dst", tmp_path / "direct"
    args = (GAME, TEACHER, "heuristic", "information_state_tensor", 3)
    teacher_games.collect(*args, 5, src, chunk=2)  # shards 0-2, 2-4, 4-5
    teacher_games.collect(*args, 6, direct, chunk=2)
    searched = []
    original = teacher_games._teacher_move
    teacher_games._teacher_move = lambda *a: searched.append(1) or original(*a)
    try:
        teacher_games.collect(*args, 6, dst, chunk=2, replay=src)  # shard 4-6: game 4 replayed, 5 played
    finally:
        teacher_games._teacher_move = original
    with np.load(teacher_games.done_shards(direct)[-1][2]) as z:
        assert len(searched) == int((z["game"] == 5).sum()) > 0
    _same_data(_shards(dst), _shards(direct))


@pytest.mark.parametrize("damage, message", [
    ("ret", "ended with return"), ("x", "in another position"), ("truncate", "not a kibitz teacher-data shard"),
])
def test_a_replay_of_damaged_or_diverged_games_is_refused(tmp_path, damage, message):
    src = tmp_path / "src"
    teacher_games.collect(GAME, TEACHER, "heuristic", "information_state_tensor", 3, 2, src, chunk=2)
    shard = teacher_games.done_shards(src)[0][2]
    if damage == "truncate":
        shard.write_bytes(shard.read_bytes()[:100])
    else:
        with np.load(shard) as z:
            arrays = {k: z[k] for k in z}
        arrays[damage][0] = arrays[damage][0] + 0.5
        np.savez(shard, **arrays)
    r = CliRunner().invoke(main, ["distill", GAME, "--teacher", TEACHER, "--games", "2", "--chunk", "2",
                                  "--seed", "3", "--replay", str(src), "--no-progress",
                                  "--out", str(tmp_path / "n.npz")])
    assert r.exit_code == 2 and "--replay" in r.output and message in r.output, r.output
    assert "Traceback" not in r.output


def test_teacher_seats_and_labels_follow_the_game(tmp_path):
    """Every example is the acting teacher's tensor at a real decision: replaying game 0
    with the same generator gives the same seats, and each label's move is legal."""
    game = load_game(GAME)
    played = teacher_games.play_game(game, make_agent, TEACHER, "heuristic", "information_state_tensor", 5, 0)
    assert 1 <= sum(played["seats"]) <= 2
    again = teacher_games.play_game(game, make_agent, TEACHER, "heuristic", "information_state_tensor", 5, 0)
    assert played["returns"] == again["returns"] and len(played["rows"]) == len(again["rows"])
    for seat, x, legal, j, policy, visits in played["rows"]:
        assert played["seats"][seat] and len(x) == game.information_state_tensor_size()
        assert 0 <= j < len(legal) and policy[j] > 0
        # the move played is among the most visited (final = visits)
        assert visits[j] == pytest.approx(max(visits))
    alone = teacher_games.play_game(game, make_agent, TEACHER, "", "information_state_tensor", 5, 0)
    assert alone["seats"] == [True] * 3


def test_more_or_fewer_games_reuse_the_shards_and_play_no_game_twice(tmp_path):
    folder, direct = tmp_path / "data", tmp_path / "direct"
    args = (GAME, "heuristic", "random", "information_state_tensor", 0)
    assert teacher_games.collect(*args, 5, folder, chunk=2) == 5  # shards 0-2, 2-4, 4-5
    assert teacher_games.collect(*args, 7, folder, chunk=2) == 7  # adds 5-6 and 6-7, not 4-6
    assert [(lo, hi) for lo, hi, _ in teacher_games.done_shards(folder)] == [(0, 2), (2, 4), (4, 5), (5, 6), (6, 7)]
    assert teacher_games.collect(*args, 3, folder, chunk=2) == 3  # all held already: nothing played
    assert len(teacher_games.done_shards(folder)) == 5
    teacher_games.collect(*args, 7, direct, chunk=2)

    def rows_by_game(shards):
        ex = distill.load_examples(shards)
        return {int(g): ex.x[ex.game == g].tolist() for g in np.unique(ex.game)}

    assert rows_by_game(teacher_games.shards_for(folder, 7)) == rows_by_game(teacher_games.shards_for(direct, 7))
    # `kibitz distill --games 3` fits games 0..2 only, though shard 2-4 holds game 3 too
    r = CliRunner().invoke(main, ["distill", GAME, "--teacher", "heuristic", "--opponent", "random", "--games", "3",
                                  "--chunk", "2", "--data", str(folder), "--hidden", "8", "--epochs", "1",
                                  "--no-progress", "--out", str(tmp_path / "n.npz")])
    assert r.exit_code == 0, r.output
    decisions = sum(len(v) for g, v in rows_by_game(teacher_games.shards_for(folder, 3)).items() if g < 3)
    assert f"3 games, {decisions:,} decisions" in r.output, r.output


def test_a_data_folder_of_other_settings_is_refused(tmp_path):
    teacher_games.collect(GAME, TEACHER, "heuristic", "information_state_tensor", 0, 2, tmp_path, chunk=2)
    with pytest.raises(teacher_games.DataMismatch, match="teacher='ismcts\\(sims=30\\)'"):
        teacher_games.collect(GAME, "heuristic", "heuristic", "information_state_tensor", 0, 2, tmp_path, chunk=2)
    r = CliRunner().invoke(main, ["distill", GAME, "--teacher", "heuristic", "--data", str(tmp_path),
                                  "--games", "2", "--chunk", "2", "--out", str(tmp_path / "n.npz")])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "--data" in r.output and "teacher='ismcts(sims=30)'" in r.output
    # shards whose data.json is gone are not adopted under this run's settings
    (tmp_path / "data.json").unlink()
    with pytest.raises(teacher_games.DataMismatch, match="holds data shards but no data.json"):
        teacher_games.collect(GAME, "heuristic", "heuristic", "information_state_tensor", 0, 2, tmp_path, chunk=2)
    assert not (tmp_path / "data.json").exists()


def _heuristic_examples(tmp_path, games=60):
    folder = tmp_path / "h"
    teacher_games.collect(GAME, "heuristic", "", "information_state_tensor", 0, games, folder, chunk=20)
    return distill.load_examples([p for _, _, p in teacher_games.done_shards(folder)])


def test_the_fit_learns_the_teacher_and_is_deterministic(tmp_path):
    """Fitted to the heuristic (a near-deterministic teacher), the network agrees with
    it on most held-out decisions, far above the untrained network; same seed, same params."""
    game = load_game(GAME)
    ex = _heuristic_examples(tmp_path)
    spec = network.NetworkSpec.for_game(game, hidden=(32, 32))
    inv = 1.0 / train.input_scale(game, spec.encoding, 0)
    params, history = distill.fit(game, spec, ex, epochs=12, batch=64, lr=3e-3, inv_scale=inv)
    assert history[-1]["loss"] < history[0]["loss"]
    best = min(r["held_out_loss"] for r in history)
    assert history[0]["agreement"] < 0.9 and max(r["agreement"] for r in history) > 0.8, history
    again, _ = distill.fit(game, spec, ex, epochs=12, batch=64, lr=3e-3, inv_scale=inv)
    for a, b in zip(params, again):
        np.testing.assert_array_equal(a, b)
    # the saved parameters read the raw tensor: their held-out loss is the best epoch's
    test = ex.rows(np.flatnonzero(distill.held_out(ex)))
    ce = 0.0
    for i in range(len(test)):
        legal = test.legal[test.offset[i]:test.offset[i + 1]]
        p = network.probabilities(params, test.x[i], legal)
        ce -= np.log(p[int(legal[test.taken[i]])])
    assert ce / len(test) == pytest.approx(best, rel=1e-3)
    # starting from the fitted network, one epoch starts where it left off
    _, more = distill.fit(game, spec, ex, epochs=1, batch=64, lr=1e-4, inv_scale=inv, init=params)
    assert more[0]["held_out_loss"] < history[0]["held_out_loss"]
    # a stop (Ctrl-C) after epoch 3 keeps the first 3 epochs exactly; one before any epoch ends, nothing
    ended = []
    cut, cut_history = distill.fit(game, spec, ex, epochs=12, batch=64, lr=3e-3, inv_scale=inv,
                                   on_epoch=ended.append, should_stop=lambda: len(ended) >= 3)
    assert cut_history == history[:3]
    first3, _ = distill.fit(game, spec, ex, epochs=3, batch=64, lr=3e-3, inv_scale=inv)
    for a, b in zip(cut, first3):
        np.testing.assert_array_equal(a, b)
    assert distill.fit(game, spec, ex, epochs=12, batch=64, inv_scale=inv, should_stop=lambda: True) == (None, [])


def test_visit_targets_are_the_search_shares(tmp_path):
    folder = tmp_path / "v"
    teacher_games.collect(GAME, TEACHER, "heuristic", "information_state_tensor", 0, 4, folder, chunk=4)
    paths = [p for _, _, p in teacher_games.done_shards(folder)]
    moves, visits = distill.load_examples(paths, "moves"), distill.load_examples(paths, "visits")
    assert np.array_equal(moves.legal, visits.legal)
    with np.load(paths[0]) as z:
        np.testing.assert_array_equal(visits.target, z["visits"])
    for i in range(len(moves)):
        row = moves.target[moves.offset[i]:moves.offset[i + 1]]
        assert row.sum() == 1.0 and row[moves.taken[i]] == 1.0
    with pytest.raises(ValueError, match="allowed: moves, visits"):
        distill.load_examples(paths, "value")


def test_kibitz_distill_end_to_end(tmp_path):
    """The command collects, fits, writes a network that exports and plays; a second run
    with more games plays only the missing ones."""
    out = tmp_path / "net.npz"
    args = ["distill", GAME, "--teacher", "heuristic", "--opponent", "random", "--games", "20", "--chunk", "10",
            "--hidden", "16", "--epochs", "3", "--no-progress", "--out", str(out)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert "20 games" in r.output and "agreement with the teacher" in r.output
    assert json.loads((tmp_path / "net.npz.data" / "data.json").read_text())["opponent"] == "random"
    spec, params = network.load(out)
    assert spec.hidden == (16,) and spec.game == str(load_game(GAME))
    r = CliRunner().invoke(main, args)
    assert r.exit_code != 0 and "--overwrite" in r.output
    r = CliRunner().invoke(main, [*args[:-2], "--games", "30", "--overwrite", "--out", str(out)])
    assert r.exit_code == 0 and "30 games" in r.output, r.output
    agent = tmp_path / "net.json"
    r = CliRunner().invoke(main, ["export", str(out), "--out", str(agent)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["play", GAME, "--seats", f"net({agent}),heuristic,random", "--seed", "1"])
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("extra, where", [
    (["--teacher", "ismcts(sims=-1)"], "--teacher"),
    (["--teacher", "human"], "--teacher"),
    (["--teacher", "heuristic", "--opponent", "nobody"], "--opponent"),
    (["--teacher", "heuristic", "--encoding", "bogus"], "--encoding"),
    (["--teacher", "heuristic", "--output", "factored"], "--output"),
    (["--teacher", "heuristic", "--target", "value"], "--target"),
    (["--teacher", "heuristic", "--games", "0"], "--games"),
])
def test_bad_input_is_one_line(tmp_path, extra, where):
    r = CliRunner().invoke(main, ["distill", GAME, *extra, "--out", str(tmp_path / "n.npz")])
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and where in r.output


def test_init_of_another_shape_is_refused(tmp_path):
    game = load_game(GAME)
    other = network.NetworkSpec.for_game(game, hidden=(8,))
    network.save(tmp_path / "other.npz", other, network.init_params(other, np.random.default_rng(0)))
    r = CliRunner().invoke(main, ["distill", GAME, "--teacher", "heuristic", "--games", "2", "--no-progress",
                                  "--init", str(tmp_path / "other.npz"), "--out", str(tmp_path / "n.npz")])
    assert r.exit_code == 2 and "--init" in r.output and "Traceback" not in r.output, r.output


def test_time_ends_the_collection_and_fits_what_was_played(tmp_path):
    out = tmp_path / "net.npz"
    # a shard of 10 games of the search takes far longer than the limit (heuristic games could finish within it)
    r = CliRunner().invoke(main, ["distill", GAME, "--teacher", "ismcts(sims=100)", "--games", "400", "--chunk", "10",
                                  "--time", "0.01s", "--hidden", "8", "--epochs", "1", "--no-progress",
                                  "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "data:        " in r.output and " 10 games," in r.output, r.output
    assert len(teacher_games.done_shards(tmp_path / "net.npz.data")) == 1 and out.exists()


def test_an_anchor_is_fitted_beside_the_teacher_with_its_weight(tmp_path):
    """The anchor's rows join the training minibatches with their weight: at weight 1
    the training losses are those of fitting the two data sets as one; a heavier
    anchor pulls the network towards the anchor's moves; the epoch is chosen on
    the teacher's held-out decisions alone. Here the teacher is the random agent
    (nothing to learn) and the anchor the heuristic (near deterministic)."""
    game = load_game(GAME)
    anchor = _heuristic_examples(tmp_path, games=40)
    folder = tmp_path / "r"
    teacher_games.collect(GAME, "random", "", "information_state_tensor", 0, 40, folder, chunk=20)
    anchor_paths = [p for _, _, p in teacher_games.done_shards(tmp_path / "h")]
    teacher = distill.load_examples([p for _, _, p in teacher_games.done_shards(folder)])
    spec = network.NetworkSpec.for_game(game, hidden=(16,))
    inv = 1.0 / train.input_scale(game, spec.encoding, 0)
    kw = dict(epochs=3, batch=64, lr=3e-3, inv_scale=inv)
    _, joint = distill.fit(game, spec, distill.concat(teacher, anchor), **kw)
    _, anchored = distill.fit(game, spec, teacher, anchor=anchor, **kw)
    assert [r["loss"] for r in joint] == pytest.approx([r["loss"] for r in anchored], rel=1e-6)
    # held out: the teacher's rows only (the joint fit's held-out rows mix both)
    assert [r["held_out_loss"] for r in joint] != [r["held_out_loss"] for r in anchored]
    _, light = distill.fit(game, spec, teacher, anchor=anchor, anchor_weight=0.05, **kw)
    _, heavy = distill.fit(game, spec, teacher, anchor=anchor, anchor_weight=20.0, **kw)
    assert heavy[-1]["anchor_agreement"] > light[-1]["anchor_agreement"] + 0.1, (light, heavy)
    with pytest.raises(ValueError, match="anchor_weight=0"):
        distill.fit(game, spec, teacher, anchor=anchor, anchor_weight=0, **kw)
    # the anchor folder must hold the same game and encoding, and enough games
    h = tmp_path / "h"
    assert teacher_games.anchor_shards(h, str(game), "information_state_tensor", 20) == anchor_paths[:1]
    assert teacher_games.anchor_shards(h, str(game), "information_state_tensor", None) == anchor_paths
    with pytest.raises(teacher_games.DataMismatch, match="encoding='information_state_tensor'"):
        teacher_games.anchor_shards(h, str(game), "observation_tensor", None)
    with pytest.raises(teacher_games.DataMismatch, match="holds 40 games; 50 needed"):
        teacher_games.anchor_shards(h, str(game), "information_state_tensor", 50)


def test_kibitz_distill_with_an_anchor(tmp_path):
    folder = tmp_path / "anchor"
    teacher_games.collect(GAME, "random", "", "information_state_tensor", 0, 20, folder, chunk=10)
    base = ["distill", GAME, "--teacher", "heuristic", "--games", "10", "--chunk", "10", "--epochs", "2",
            "--hidden", "8", "--no-progress", "--data", str(tmp_path / "d")]
    r = CliRunner().invoke(main, base + ["--anchor", str(folder), "--anchor-games", "10", "--anchor-weight", "0.5",
                                         "--out", str(tmp_path / "a.npz")])
    assert r.exit_code == 0, r.output
    assert f"anchor:      {folder}: 10 games" in r.output and "weight 0.5 each" in r.output
    assert "anchor agreement" in r.output
    for extra, hint, words in (
            (["--anchor", str(folder), "--encoding", "observation_tensor"], "--anchor", "encoding="),
            (["--anchor", str(folder), "--anchor-games", "30"], "--anchor", "holds 20 games; 30 needed"),
            (["--anchor-weight", "2"], "--anchor DIR", "need"),
            (["--anchor", str(folder), "--anchor-weight", "0"], "--anchor-weight", "0")):
        r = CliRunner().invoke(main, base + extra + ["--out", str(tmp_path / "b.npz")])
        assert r.exit_code == 2 and "Traceback" not in r.output, (extra, r.output)
        assert hint in r.output and words in r.output, (extra, r.output)


def test_a_behaviour_agent_plays_the_teacher_seats_and_the_teacher_labels(tmp_path):
    """DAgger data (--behaviour): the teacher's seats are played by another agent and
    the teacher labels the states that agent reaches. Labelled by the heuristic but
    played by random, the teacher seats win far less often than when the heuristic
    plays them; the labels are still the heuristic's (its policy puts them first);
    the data does not depend on workers, and a game without a behaviour is unchanged."""
    args = (GAME, "heuristic", "heuristic", "information_state_tensor", 0, 120)
    own, dagger, two = tmp_path / "own", tmp_path / "dagger", tmp_path / "two"
    teacher_games.collect(*args, own, chunk=40)
    teacher_games.collect(*args, dagger, chunk=40, behaviour="random")
    teacher_games.collect(*args, two, chunk=40, workers=2, behaviour="random")
    _same_data(_shards(dagger), _shards(two))
    assert json.loads((dagger / "data.json").read_text())["behaviour"] == "random"

    def win_share(folder):  # the teacher seats' final return, over their decisions
        return np.mean(np.concatenate([d["ret"] for d in _shards(folder).values()]))

    assert win_share(own) > win_share(dagger) + 0.1
    for d in _shards(dagger).values():
        for i in range(len(d["taken"])):
            policy = d["policy"][d["offset"][i]:d["offset"][i + 1]]
            assert policy[d["taken"][i]] == pytest.approx(max(policy))
    # a behaviour agent's seeds come from a generator of their own: the same seats and
    # cards as without one, so every game reaches the teacher's first decision alike
    game = load_game(GAME)
    for index in range(6):
        plain = teacher_games.play_game(game, make_agent, "heuristic", "heuristic", "information_state_tensor",
                                        5, index)
        other = teacher_games.play_game(game, make_agent, "heuristic", "heuristic", "information_state_tensor",
                                        5, index, behaviour="random")
        assert plain["seats"] == other["seats"]
        np.testing.assert_array_equal(plain["rows"][0][1], other["rows"][0][1])
    with pytest.raises(teacher_games.ReplayMismatch, match="--behaviour"):
        teacher_games.collect(*args[:5], 4, tmp_path / "r", chunk=2, replay=own, behaviour="random")


def test_kibitz_distill_with_a_behaviour(tmp_path):
    out = tmp_path / "net.npz"
    base = ["distill", GAME, "--teacher", "heuristic", "--games", "6", "--chunk", "3", "--hidden", "8",
            "--epochs", "1", "--no-progress", "--out", str(out)]
    r = CliRunner().invoke(main, [*base, "--behaviour", "random"])
    assert r.exit_code == 0, r.output
    assert "labelling the moves of random" in r.output and "6 games" in r.output
    assert "nan" not in r.output  # 6 games may hold out none: the agreement says n/a
    r = CliRunner().invoke(main, [*base, "--behaviour", "nobody", "--overwrite"])
    assert r.exit_code == 2 and "--behaviour" in r.output and "Traceback" not in r.output, r.output
    r = CliRunner().invoke(main, [*base, "--behaviour", "random", "--replay", str(tmp_path), "--overwrite"])
    assert r.exit_code == 2 and "--behaviour" in r.output and "Traceback" not in r.output, r.output


def test_the_api_distills_a_small_game_without_printing(tmp_path, capsys):
    """kibitz.api.distill runs what the command runs: the data, the fit, the network
    (written to out when given), its progress to a callback and nothing printed."""
    from kibitz import api

    reports = []
    result = api.distill("kuhn_poker", teacher="random", opponent="none", games=10, chunk=5, hidden=(8,), epochs=2,
                         out=str(tmp_path / "k.npz"), progress=reports.append)
    assert (result.played, len(result.history), result.stopped) == (10, 2, None)
    assert result.decisions > 10 and result.held_out > 0 and result.folder == tmp_path / "k.npz.data"
    spec, params = network.load(tmp_path / "k.npz")
    assert spec == result.spec and spec.hidden == (8,)
    for a, b in zip(params, result.params):
        np.testing.assert_array_equal(a, b)
    assert [(r.stage, r.done, r.total) for r in reports] == [
        ("teacher games", 0, 10), ("teacher games", 5, 10), ("teacher games", 10, 10),
        ("fit", 0, 2), ("fit", 1, 2), ("fit", 2, 2)]
    assert result.lines()[0] == "game:        kuhn_poker()" and capsys.readouterr().out == ""
    # the same run again from its config: the folder holds the games, the fit is the same
    again = api.distill(result.config, progress=reports.append)
    for a, b in zip(again.params, result.params):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="not both"):
        api.distill(result.config, games=20)
    with pytest.raises(api.ConfigError) as bad:
        api.distill("kuhn_poker", teacher="random", games=0, out=str(tmp_path / "b.npz"))
    assert bad.value.param == "--games"
    with pytest.raises(api.ConfigError) as bad:
        api.distill("kuhn_poker", teacher="nobody", data=str(tmp_path / "d"))
    assert bad.value.param == "--teacher" and not (tmp_path / "d").exists()


#: the Makefile's INIT_GAME and DISTILL_GAME before they became presets (the
#: flags that made the shipped networks), by preset name: (game, flags, the
#: options the recipe adds)
MAKEFILE_FLAGS = {
    "underdog-init": ("underdog", "--teacher heuristic --encoding observation_tensor --games 3000 --chunk 100 "
                      "--epochs 30", "init"),
    "underdog": ("underdog", "--teacher 'ismcts(belief_opponents,sims=400)' --encoding observation_tensor "
                 "--games 500 --chunk 4 --epochs 15 --lr 1e-3", "main"),
    "pub-init": ("pub", "--teacher heuristic --opponent none --encoding compact --games 4000 --chunk 100 --epochs 20",
                 "init"),
    "pub": ("pub", "--teacher ismcts --encoding compact --games 1404 --chunk 4 --epochs 15", "main"),
    "over_under": ("over_under", "--teacher 'ismcts(one_step)' --encoding compact --games 320 --chunk 8 --epochs 40",
                   "alone"),
    "doubt_and_bet-init": ("doubt_and_bet", "--teacher heuristic --opponent none --encoding compact --games 1500 "
                           "--chunk 50 --epochs 3", "init"),
    "doubt_and_bet": ("doubt_and_bet", "--teacher 'ismcts(shortlist_model,sims=300)' --encoding compact --games 724 "
                      "--chunk 4 --epochs 15 --lr 3e-4 --anchor build/distill/doubt_and_bet_heuristic "
                      "--anchor-games 150 --anchor-weight 0.25", "main"),
}


def _recipe_options(game, step):
    """The options ``make trained`` adds to a distill step: ``init`` (the
    first of two), ``main`` (the second, from the first's network) or
    ``alone``."""
    if step == "init":
        return (f"--seed 0 --workers 2 --no-progress --data build/distill/{game}_heuristic "
                f"--out build/trained/{game}_init.npz --overwrite")
    return ("--seed 0 --workers 2 --no-progress" + (f" --init build/trained/{game}_init.npz" if step == "main" else "")
            + f" --data build/distill/{game} --out build/trained/{game}.npz --overwrite")


def _distill_config(command_line):
    """The config that ``kibitz distill`` builds from ``command_line`` (without running it)."""
    import shlex

    from kibitz.commands.distill import distill as command, distill_config

    return distill_config(command.make_context("distill", shlex.split(command_line)))


@pytest.fixture
def recipe_folders(tmp_path, monkeypatch):
    """A folder like the repository's root after the first distillations,
    where the recipes' --init files and --anchor folder exist."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "build/distill/doubt_and_bet_heuristic").mkdir(parents=True)
    (tmp_path / "build/trained").mkdir()
    for game in ("underdog", "pub", "doubt_and_bet"):
        (tmp_path / f"build/trained/{game}_init.npz").write_bytes(b"")
    return tmp_path


@pytest.mark.parametrize("name", list(MAKEFILE_FLAGS))
def test_each_preset_is_the_makefile_flags_it_replaced(recipe_folders, name):
    from kibitz.agents.training.distill_run import PRESETS, DistillConfig

    game, flags, step = MAKEFILE_FLAGS[name]
    recipe = _recipe_options(game, step)
    config = _distill_config(f"{game} --preset {name} {recipe}")
    assert config == _distill_config(f"{game} {flags} {recipe}")
    assert config == DistillConfig.preset(name, game, seed=0, workers=2, data=config.data, out=config.out,
                                          init=config.init)
    assert set(MAKEFILE_FLAGS) == set(PRESETS["distill"])


def test_an_option_given_replaces_the_presets_value_and_a_default_does_not(recipe_folders):
    base = "underdog --preset underdog --out build/trained/n.npz"
    config = _distill_config(f"{base} --games 20 --lr 0.01 --opponent random")
    assert (config.games, config.lr, config.opponent, config.chunk) == (20, 0.01, "random", 4)
    assert config.teacher == "ismcts(belief_opponents,sims=400)" and config.encoding == "observation_tensor"
    # an option given at its default value is given: it replaces the preset's
    assert _distill_config(f"{base} --encoding information_state_tensor").encoding == "information_state_tensor"
    assert _distill_config("pub --preset pub-init --out build/trained/n.npz").opponent == ""


@pytest.mark.parametrize("extra, where", [
    (["--preset", "nobody"], "--preset"),
    ([], "--teacher"),  # neither --teacher nor --preset
])
def test_a_bad_preset_is_one_line(tmp_path, extra, where):
    r = CliRunner().invoke(main, ["distill", GAME, *extra, "--out", str(tmp_path / "n.npz")])
    assert r.exit_code == 2, r.output
    errors = [line for line in r.output.splitlines() if line.startswith("Error")]
    assert "Traceback" not in r.output and len(errors) == 1 and where in errors[0], r.output
    if where == "--preset":
        assert "allowed: underdog-init, underdog, pub-init, pub, over_under, doubt_and_bet-init" in errors[0]
    assert not (tmp_path / "n.npz.data").exists()


def test_the_api_takes_a_preset(tmp_path):
    from kibitz import api

    config = api.DistillConfig.preset("pub", "pub", games=3, out=str(tmp_path / "p.npz"))
    assert (config.teacher, config.encoding, config.games, config.epochs) == ("ismcts", "compact", 3, 15)
    with pytest.raises(api.ConfigError) as bad:
        api.distill("pub", preset="nobody", out=str(tmp_path / "p.npz"))
    assert bad.value.param == "--preset" and "doubt_and_bet-init" in str(bad.value)
    with pytest.raises(ValueError, match="not both"):
        api.distill(config, preset="pub")
    with pytest.raises(api.ConfigError) as bad:  # an override is checked as any option
        api.DistillConfig.preset("pub", "pub", games=0, out=str(tmp_path / "p.npz"))
    assert bad.value.param == "--games"
