"""One step of policy improvement: rollout labels (agents/training/improve.py), the
"improve" fit (solvers/distill.py) and `kibitz improve`: the labels are the
information sets' action values, the data does not depend on workers or
interruptions, the fit moves towards the better moves under its leash,
bad input is one line."""

import json
from collections import defaultdict

import numpy as np
import pytest
from click.testing import CliRunner

from kibitz.agents.training import distill as teacher_games
from kibitz.agents.training import improve
from kibitz.agents.formats.export import export_network, network_of_agent_file
from kibitz.agents.formats.kibitz_agent_loader import read_document
from kibitz.agents.formats.kibitz_net_loader import KibitzNetAgent
from kibitz.agents.registry import make_agent
from kibitz.cli import main
from kibitz.games import encoding_tensor, load_game
from kibitz.solvers import distill, network
from helpers import data_shards as _shards

GAME = "underdog(players=3,cards=5,bank=2)"


def _agent_file(tmp_path, game_string, seed=0, encoding="information_state_tensor", output="dense",
                temperature=1.0, name="net"):
    """A network agent file of a fresh (untrained) network for the game."""
    game = load_game(game_string)
    spec = network.NetworkSpec.for_game(game, hidden=(16,), encoding=encoding, output=output)
    params = network.init_params(spec, np.random.default_rng(seed))
    params[-2] = params[-2] * 50  # not near uniform: a policy with preferences
    npz = tmp_path / f"{name}.npz"
    network.save(npz, spec, params)
    out = tmp_path / f"{name}.json.gz"
    export_network(str(npz), str(out), temperature=temperature)
    return out, spec, params


@pytest.mark.parametrize("game_string,encoding,output", [
    (GAME, "information_state_tensor", "dense"),
    ("doubt_and_bet(players=2,chips=2,slots=1,colours=1,copies=2,single_bet=true)", "compact", "factored"),
])
def test_an_agent_files_network_is_read_back_as_it_plays(tmp_path, game_string, encoding, output):
    path, spec, params = _agent_file(tmp_path, game_string, encoding=encoding, output=output, temperature=0.5)
    spec2, params2 = network_of_agent_file(path)
    assert spec2 == spec
    np.testing.assert_array_equal(params2[0], params[0])
    np.testing.assert_array_equal(params2[-1], (params[-1] / np.float32(0.5)).astype(np.float32))
    game = load_game(game_string)
    onnx_agent = KibitzNetAgent(read_document(path))
    index = network.action_index(spec2, game)
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(20):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(outcomes[rng.choice(len(outcomes), p=probs)])
                continue
            p = state.current_player()
            mine = network.probabilities(params2, encoding_tensor(state, p, encoding), state.legal_actions(), index)
            theirs = onnx_agent.probabilities(encoding_tensor(state, p, encoding), state.legal_actions())
            assert mine.keys() == theirs.keys()
            for a in mine:
                assert mine[a] == pytest.approx(theirs[a], abs=1e-5)
            checked += 1
            state.apply_action(rng.choice(state.legal_actions()))
    assert checked > 20


def test_a_tabular_agent_file_is_refused(tmp_path):
    doc = {"format": "kibitz-agent"}
    (tmp_path / "t.json").write_text(json.dumps(doc))
    result = CliRunner().invoke(main, ["improve", str(tmp_path / "t.json"), "--out", str(tmp_path / "o.npz")])
    assert result.exit_code == 2 and "AGENT_FILE" in result.output and "Traceback" not in result.output


def test_a_damaged_model_is_one_line(tmp_path):
    import base64
    import gzip
    import hashlib

    path, _, _ = _agent_file(tmp_path, GAME)
    doc = json.loads(gzip.decompress(path.read_bytes()))
    junk = b"\x08\x07not an onnx model"
    doc["model"].update(base64=base64.b64encode(junk).decode(), sha256=hashlib.sha256(junk).hexdigest(),
                        bytes=len(junk))
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    result = CliRunner().invoke(main, ["improve", str(tmp_path / "bad.json"), "--out", str(tmp_path / "o.npz")])
    assert result.exit_code == 2 and "AGENT_FILE" in result.output and "Traceback" not in result.output


def _exact_q(game, net, net_seat):
    """Q(I, a) of every information set of ``net_seat`` under ``net`` there
    and uniform play in the other seat: sum over the histories h in I of
    (chance x opponent reach of h) x v(h a), over the sum of the reaches."""
    num = defaultdict(float)
    den = defaultdict(float)

    def value(state):
        if state.is_terminal():
            return state.returns()[net_seat]
        if state.is_chance_node():
            return sum(p * value(state.child(a)) for a, p in state.chance_outcomes())
        legal = state.legal_actions()
        probs = net(state, net_seat) if state.current_player() == net_seat else {a: 1 / len(legal) for a in legal}
        return sum(probs[a] * value(state.child(a)) for a in legal)

    def walk(state, reach):
        if state.is_terminal():
            return
        if state.is_chance_node():
            for a, p in state.chance_outcomes():
                walk(state.child(a), reach * p)
            return
        legal = state.legal_actions()
        if state.current_player() == net_seat:
            key = state.information_state_string(net_seat)
            for a in legal:
                num[key, a] += reach * value(state.child(a))
            den[key] += reach
            for a in legal:
                walk(state.child(a), reach)  # the seat's own reach is the same across its information set
        else:
            for a in legal:
                walk(state.child(a), reach / len(legal))

    walk(game.new_initial_state(), 1.0)
    return {(key, a): v / den[key] for (key, a), v in num.items()}


def test_the_mean_rollout_label_is_the_information_sets_action_value(tmp_path):
    # kuhn_poker, the network in one seat and `random` in the other: the mean
    # of R_a over the decisions of an information set must be its exact Q(I, a)
    path, spec, params = _agent_file(tmp_path, "kuhn_poker", seed=4)
    game = load_game("kuhn_poker")
    net = improve.network_policy(spec, params, game)
    sums, counts = defaultdict(float), defaultdict(int)
    keys = {}
    games = 3000
    for i in range(games):
        record = improve.play_game(game, spec, params, "random", 5, i, make_agent)
        for p, x, legal, probs, values, taken in record["rows"]:
            keys.setdefault(tuple(x), None)
            for a, v in zip(legal, values):
                sums[tuple(x), a] += v
                counts[tuple(x), a] += 1
    # the information-state tensor names the information set: map it to the string
    exact = {}
    for seat in (0, 1):
        q = _exact_q(game, net, seat)
        state_of = {}

        def visit(state):
            if state.is_terminal():
                return
            if not state.is_chance_node() and state.current_player() == seat:
                state_of[tuple(np.float32(state.information_state_tensor(seat)))] = \
                    state.information_state_string(seat)
            for a in (state.legal_actions() if not state.is_chance_node() else
                      [o for o, _ in state.chance_outcomes()]):
                visit(state.child(a))
        visit(game.new_initial_state())
        for x, key in state_of.items():
            for a in (0, 1):
                exact[x, a] = q[key, a]
    checked = 0
    for (x, a), n in counts.items():
        if n >= 200:
            mean = sums[x, a] / n
            # returns in [-2, 2]: the standard error of a mean of n is at most 2 / sqrt(n)
            assert abs(mean - exact[x, a]) < 4.5 * 2 / np.sqrt(n), (x, a, mean, exact[x, a], n)
            checked += 1
    assert checked >= 8


def test_rollout_labels_do_not_depend_on_workers_or_interruption(tmp_path):
    path, spec, _ = _agent_file(tmp_path, GAME)
    one, two, staged = tmp_path / "one", tmp_path / "two", tmp_path / "staged"
    assert improve.collect(path, "heuristic", 3, 6, one, chunk=2, rounds=1) == 6
    improve.collect(path, "heuristic", 3, 6, two, chunk=2, workers=2, rounds=1)
    improve.collect(path, "heuristic", 3, 6, staged, chunk=2, rounds=1, should_stop=lambda: True)
    assert len(teacher_games.done_shards(staged)) == 1
    assert improve.collect(path, "heuristic", 3, 6, staged, chunk=2, rounds=1) == 6
    data = _shards(one)
    for other in (_shards(two), _shards(staged)):
        assert other.keys() == data.keys()
        for key in data:
            for name in data[key]:
                np.testing.assert_array_equal(data[key][name], other[key][name])
    rows = 0
    for d in data.values():
        counts = np.diff(d["offset"])
        assert (counts >= 2).all()  # forced moves are not labelled
        assert len(d["legal"]) == len(d["policy"]) == len(d["value"]) == d["offset"][-1]
        for i in range(len(counts)):
            assert d["policy"][d["offset"][i]:d["offset"][i + 1]].sum() == pytest.approx(1.0, abs=1e-5)
        assert ((0 <= d["value"]) & (d["value"] <= 1)).all()  # standings and win shares
        rows += len(counts)
    assert rows > 10
    # other settings in the same folder are refused, naming the setting
    with pytest.raises(teacher_games.DataMismatch, match="rounds=1, not 0"):
        improve.collect(path, "heuristic", 3, 6, one, chunk=2, rounds=0)


def _synthetic(rows=400, seed=0):
    """Decisions between actions 0 and 1 of a 4-input game where action 1
    is better by 0.1 when input 0 is 1, worse by 0.1 otherwise; the played
    policy is uniform."""
    rng = np.random.default_rng(seed)
    x = np.zeros((rows, 4), np.float32)
    x[:, 0] = rng.integers(0, 2, rows)
    x[:, 1] = 1.0
    adv = np.where(x[:, 0] == 1, 0.05, -0.05)
    target = np.stack([-adv, adv], axis=1).ravel().astype(np.float32)
    return distill.Examples(x, np.tile([0, 1], rows).astype(np.int32), np.arange(0, 2 * rows + 1, 2),
                            target, np.zeros(rows, np.int32), np.arange(rows) // 4,
                            np.full(2 * rows, 0.5, np.float32))


class _TwoActions:
    def num_distinct_actions(self):
        return 2


def test_the_improve_fit_moves_to_the_better_moves_within_its_leash():
    ex = _synthetic()
    spec = network.NetworkSpec(game="two", input_size=4, num_actions=2, hidden=(8,))
    init = network.init_params(spec, np.random.default_rng(0))
    init[-2][:] = 0.0  # the played policy: uniform
    shares = {}
    for kl in (0.0, 1.0):
        params, history = distill.fit(_TwoActions(), spec, ex, epochs=30, lr=1e-2, batch=64, init=init,
                                      objective="improve", kl=kl)
        assert history[-1]["held_out_gain"] > 0
        probs = network.masked_softmax(network.forward(params, ex.x), np.ones((len(ex), 2), np.float32))
        better = np.where(ex.x[:, 0] == 1, probs[:, 1], probs[:, 0])
        shares[kl] = better.mean()
    assert shares[0.0] > 0.95  # without a leash: the better move almost always
    assert 0.5 < shares[1.0] < shares[0.0]  # the leash holds it nearer the played policy
    # the same data, settings and seed: the same parameters
    again, _ = distill.fit(_TwoActions(), spec, ex, epochs=30, lr=1e-2, batch=64, init=init, objective="improve",
                           kl=1.0)
    probs = network.masked_softmax(network.forward(again, ex.x), np.ones((len(ex), 2), np.float32))
    assert np.where(ex.x[:, 0] == 1, probs[:, 1], probs[:, 0]).mean() == shares[1.0]


def test_no_held_out_gain_keeps_the_played_network():
    ex = _synthetic()
    held = ex.game % 10 == 9
    counts = np.diff(ex.offset)
    flip = np.repeat(held, counts)
    ex.target[flip] = -ex.target[flip]  # the held-out games say the opposite of the training games
    spec = network.NetworkSpec(game="two", input_size=4, num_actions=2, hidden=(8,))
    init = network.init_params(spec, np.random.default_rng(0))
    init[-2][:] = 0.0
    params, history = distill.fit(_TwoActions(), spec, ex, epochs=5, lr=1e-2, batch=64, init=init,
                                  objective="improve", kl=0.0)
    assert history[-1]["loss"] < history[0]["loss"] < 0  # the fit moved on the training games
    assert all(r["held_out_gain"] < 0 for r in history)  # and lost on the held-out ones
    for a, b in zip(params, init):
        np.testing.assert_array_equal(a, b)


def test_the_improve_fit_needs_held_out_games():
    ex = _synthetic(rows=36)  # games 0..8: none held out
    spec = network.NetworkSpec(game="two", input_size=4, num_actions=2, hidden=(8,))
    init = network.init_params(spec, np.random.default_rng(0))
    with pytest.raises(ValueError, match="at least 10 games"):
        distill.fit(_TwoActions(), spec, ex, epochs=1, init=init, objective="improve")


def test_the_held_out_gain_and_its_standard_error():
    # four held-out decisions in two games (9 and 19), played uniformly between actions 0 and 1
    x = np.zeros((6, 4), np.float32)
    x[:, 0] = [0, 1, 0, 1, 0, 0]
    adv = np.array([0.2, -0.2, 0.1, 0.3, 0.0, 0.0])  # advantage of action 1
    target = np.stack([-adv, adv], axis=1).ravel().astype(np.float32)
    ex = distill.Examples(x, np.tile([0, 1], 6).astype(np.int32), np.arange(0, 13, 2), target,
                          np.zeros(6, np.int32), np.array([9, 9, 19, 19, 0, 1]), np.full(12, 0.5, np.float32))
    spec = network.NetworkSpec(game="two", input_size=4, num_actions=2, hidden=(1,))
    # a network playing action 1 with probability p1(x0): logit 1 - logit 0 = ln 3 * (2 x0 - 1)
    params = [np.array([[1.0], [0], [0], [0]], np.float32), np.zeros(1, np.float32),
              np.array([[0.0, 2 * np.log(3)]], np.float32), np.array([0.0, -np.log(3)], np.float32)]
    gain, se, games = distill.held_out_gain(_TwoActions(), spec, params, ex)
    p1 = np.where(x[:4, 0] == 1, 0.75, 0.25)
    per = (p1 - 0.5) * adv[:4] * 2  # (pi(1) - 1/2) A_1 + (pi(0) - 1/2) A_0
    assert games == 2
    assert gain == pytest.approx(per.mean(), abs=1e-6)
    resid = np.array([per[:2].sum(), per[2:].sum()]) - per.mean() * 2
    assert se == pytest.approx(np.sqrt((resid ** 2).sum() * 2 / 1) / 4, abs=1e-6)


def test_the_moves_of_a_decision_share_one_stream(monkeypatch):
    path_spec = load_game(GAME)
    spec = network.NetworkSpec.for_game(path_spec, hidden=(8,))
    params = network.init_params(spec, np.random.default_rng(2))
    calls = []
    real = improve._rollout

    def spy(game, state, held, net, opponent, make_agent, stream, stop=0, moves=-1):
        calls.append((tuple(stream), state.history()[-1]))
        return real(game, state, held, net, opponent, make_agent, stream, stop, moves)

    monkeypatch.setattr(improve, "_rollout", spy)
    decisions = 0
    for index in range(6):
        calls.clear()
        record = improve.play_game(path_spec, spec, params, "heuristic", 1, index, make_agent)
        by_stream = {}
        for stream, move in calls:
            by_stream.setdefault(stream, []).append(move)
        assert len(by_stream) == len(record["rows"])  # one stream a decision
        for (p, x, legal, probs, values, taken), moves in zip(record["rows"], by_stream.values()):
            assert moves == legal  # every legal move rolled out once, on that decision's stream
        decisions += len(record["rows"])
    assert decisions > 10


@pytest.mark.parametrize("moves", [0, 1, 3])
def test_a_rollout_stops_before_its_next_kth_move(monkeypatch, moves):
    game = load_game("pub(players=3)")
    spec = network.NetworkSpec.for_game(game, hidden=(8,), encoding="compact")
    params = network.init_params(spec, np.random.default_rng(0))
    net = improve.network_policy(spec, params, game)
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    start = state.clone()
    start.apply_action(start.legal_actions()[0])
    seen = []
    cls = type(start)
    real = cls.standing

    def spy(self):
        seen.append(self.history()[len(start.history()):])
        return real(self)

    monkeypatch.setattr(cls, "standing", spy)
    improve._rollout(game, start.clone(), [True, False, False], net, "heuristic", make_agent, [1, 2], 0, moves)
    after = seen[-1]  # the rollout's own (its last) call of standing()
    replay, played = start.clone(), 0
    for a in after:  # count the players' moves the rollout made before its standing
        played += not replay.is_chance_node()
        replay.apply_action(a)
    assert played == moves and not replay.is_terminal()


def test_a_round_limit_stops_where_the_next_round_begins(monkeypatch):
    game = load_game("underdog")  # (the small one often ends within the round)
    spec = network.NetworkSpec.for_game(game, hidden=(8,))
    params = network.init_params(spec, np.random.default_rng(0))
    net = improve.network_policy(spec, params, game)
    state = game.new_initial_state()
    rng = np.random.default_rng(3)
    while state.is_chance_node() or state.current_player() != 0:
        legal = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        state.apply_action(rng.choice(legal))
    cls = type(state)
    real = cls.standing
    rounds = []

    def spy(self):
        rounds.append((self.round_number(), self.is_chance_node()))
        return real(self)

    monkeypatch.setattr(cls, "standing", spy)
    stop = state.round_number() + 1
    after = state.clone()
    after.apply_action(after.legal_actions()[0])
    improve._rollout(game, after, [True, False, False, False], net, "heuristic", make_agent, [4, 5], stop)
    assert rounds[-1] == (stop, True)  # the rollout's own call: at the first chance move of the next round


def test_kibitz_improve_end_to_end_and_reproducible(tmp_path):
    path, _, _ = _agent_file(tmp_path, GAME)
    runs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.npz"
        result = CliRunner().invoke(main, ["improve", str(path), "--games", "40", "--rounds", "1", "--epochs", "3",
                                           "--out", str(out), "--data", str(tmp_path / "data"), "--no-progress"])
        assert result.exit_code == 0, result.output
        assert "40 games" in result.output and "held-out gain" in result.output
        assert "kept:        epoch" in result.output or "kept:        the played network" in result.output
        runs.append(network.load(out))
    assert runs[0][0] == runs[1][0]
    for a, b in zip(runs[0][1], runs[1][1]):
        np.testing.assert_array_equal(a, b)
    result = CliRunner().invoke(main, ["export", str(tmp_path / "a.npz"), "-o", str(tmp_path / "a.json.gz")])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(main, ["tournament", GAME, "--agents", f"net({tmp_path / 'a.json.gz'}),heuristic",
                                       "--games", "6", "--no-progress", "--out", str(tmp_path / "t")])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("args,where", [
    (["--rounds", "1", "--opponent", "random"], "--rounds"),  # kuhn_poker has no standing
    (["--moves", "3", "--opponent", "random"], "--moves"),
    (["--opponent", "nosuch"], "--opponent"),
    (["--lr", "0"], "--lr"),
])
def test_bad_input_is_one_line(tmp_path, args, where):
    path, _, _ = _agent_file(tmp_path, "kuhn_poker")
    result = CliRunner().invoke(main, ["improve", str(path), "--out", str(tmp_path / "o.npz"), *args])
    assert result.exit_code == 2 and where in result.output and "Traceback" not in result.output


def test_too_few_games_to_hold_one_out_is_one_line(tmp_path):
    path, _, _ = _agent_file(tmp_path, GAME)
    result = CliRunner().invoke(main, ["improve", str(path), "--games", "9", "--no-progress",
                                       "--out", str(tmp_path / "o.npz")])
    assert result.exit_code == 1 and "at least 10 games" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "o.npz").exists()


def test_an_existing_output_or_another_networks_data_is_refused(tmp_path):
    path, _, _ = _agent_file(tmp_path, GAME)
    other, _, _ = _agent_file(tmp_path, GAME, seed=1, name="other")
    (tmp_path / "o.npz").write_bytes(b"")
    result = CliRunner().invoke(main, ["improve", str(path), "--out", str(tmp_path / "o.npz"), "--overwrite"])
    assert result.exit_code == 2 and "o.npz is not a kibitz network file" in result.output, result.output
    assert (tmp_path / "o.npz").read_bytes() == b""
    args = ["--games", "10", "--chunk", "10", "--epochs", "1", "--data", str(tmp_path / "d"), "--no-progress"]
    assert CliRunner().invoke(main, ["improve", str(path), "--out", str(tmp_path / "p.npz"), *args]).exit_code == 0
    result = CliRunner().invoke(main, ["improve", str(other), "--out", str(tmp_path / "q.npz"), *args])
    assert result.exit_code == 2 and "--data" in result.output and "network=" in result.output


def test_a_move_limit_backs_up_the_standing():
    game = load_game("pub(players=3,suits=2,ranks=3,removed=0,hand=1)")
    spec = network.NetworkSpec.for_game(game, hidden=(8,), encoding="compact")
    params = network.init_params(spec, np.random.default_rng(0))
    full = [v for i in range(30) for row in improve.play_game(game, spec, params, "heuristic", 1, i, make_agent)["rows"]
            for v in row[4]]
    cut = [v for i in range(30) for row in improve.play_game(game, spec, params, "heuristic", 1, i, make_agent,
                                                             moves=0)["rows"] for v in row[4]]
    assert len(full) == len(cut) > 20  # the same games: the labels do not steer the play
    assert set(full) <= {0.0, 1.0, 0.5, 1 / 3}  # win shares at the end (ties split)
    assert cut != full  # standings one move on, not the ends of the games
    assert all(0 <= v <= 1 for v in cut)


def test_the_api_improves_a_network_agent_without_printing(tmp_path, capsys):
    from kibitz import api

    path, spec, _ = _agent_file(tmp_path, GAME)
    reports = []
    result = api.improve(str(path), data=str(tmp_path / "d"), games=10, chunk=5, rounds=1, epochs=2,
                         progress=reports.append)
    assert (result.played, len(result.history), result.stopped, result.spec) == (10, 2, None, spec)
    assert result.gain_games == 1 and result.kept in (None, 1, 2)
    assert [(r.stage, r.done) for r in reports] == [("rollout games", 0), ("rollout games", 5),
                                                   ("rollout games", 10), ("fit", 0), ("fit", 1), ("fit", 2)]
    assert result.lines()[-1] == "written:     not written" and capsys.readouterr().out == ""
    assert [p.name for p in tmp_path.glob("*.npz")] == ["net.npz"]  # no out: the network is only in the result
    with pytest.raises(api.ConfigError) as bad:
        api.improve(str(path), data=str(tmp_path / "d"), kl=-1)
    assert bad.value.param == "--kl"


def _improve_config(command_line):
    """The config that ``kibitz improve`` builds from ``command_line`` (without running it)."""
    import shlex

    from kibitz.commands.improve import improve as command, improve_config

    return improve_config(command.make_context("improve", shlex.split(command_line)))


def test_the_preset_is_the_makefile_flags_it_replaced_and_options_replace_its_values(tmp_path, monkeypatch):
    """IMPROVE_underdog before it became a preset, with the options the recipe adds."""
    from kibitz.agents.training.distill_run import PRESETS, ImproveConfig

    monkeypatch.chdir(tmp_path)
    (tmp_path / "build/trained").mkdir(parents=True)
    (tmp_path / "build/trained/underdog_distilled.json.gz").write_bytes(b"")
    recipe = ("build/trained/underdog_distilled.json.gz {} --seed 0 --workers 2 --no-progress "
              "--data build/improve/underdog --out build/trained/underdog_improved.npz --overwrite")
    config = _improve_config(recipe.format("--preset underdog"))
    assert config == _improve_config(recipe.format("--rounds 1 --games 8000 --chunk 20 --epochs 8 --lr 3e-4 --kl 0.01"))
    assert config == ImproveConfig.preset("underdog", config.agent_file, seed=0, workers=2, data=config.data,
                                          out=config.out)
    assert list(PRESETS["improve"]) == ["underdog"]
    given = _improve_config(recipe.format("--preset underdog --games 40 --kl 0.5"))
    assert (given.games, given.kl, given.rounds, given.epochs) == (40, 0.5, 1, 8)
    r = CliRunner().invoke(main, ["improve", "build/trained/underdog_distilled.json.gz", "--preset", "nobody",
                                  "--out", "n.npz"])
    errors = [line for line in r.output.splitlines() if line.startswith("Error")]
    assert r.exit_code == 2 and len(errors) == 1 and "--preset" in errors[0] and "allowed: underdog" in errors[0]
