"""The state-value network on the compiled rules (solvers/state_value.py),
its streamed data (agents/value_data.position_sample), `kibitz value-net
--objective state` and AIVAT's corrections deferred to a game's end with it."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from kibitz.agents.matches import tournament as tour
from kibitz.agents.net_agent import trained_games
from kibitz.agents.training import value_data
from kibitz.agents.registry import make_agent
from kibitz.cli import main
from kibitz.games import REGISTRY, load_game
from kibitz.solvers import state_value
from kibitz.solvers.aivat import Corrections, ZeroValue

GAMES = sorted(REGISTRY)


def random_net(game, seed=0, hidden=(16, 8)):
    """A network with random weights (every layer non-zero) and a non-trivial scale."""
    rng = np.random.default_rng(seed)
    sizes = (state_value.feature_size(game), *hidden, game.num_players())
    layers = [(rng.normal(0, 0.3, (a, b)).astype(np.float32), rng.normal(0, 0.1, b).astype(np.float32))
              for a, b in zip(sizes[:-1], sizes[1:])]
    scale = rng.uniform(1.0, 3.0, sizes[0]).astype(np.float32)
    return state_value.StateValueNet(game, layers, scale)


def reference_features(state):
    """Every player's observation tensor through pyspiel, then who moves (n + 2 flags)."""
    n = state.get_game().num_players()
    flags = np.zeros(n + 2, np.float32)
    flags[state.current_player() if state.current_player() >= 0 else (n if state.is_chance_node() else n + 1)] = 1
    return np.concatenate([np.asarray(state.observation_tensor(p), np.float32) for p in range(n)] + [flags])


def reference_values(net, x):
    """The network's dense forward pass in float64."""
    h = x.astype(np.float64) * net.inverse_scale
    for w, b in net.layers[:-1]:
        h = np.maximum(h @ w + b, 0.0)
    w, b = net.layers[-1]
    return h @ w + b


@pytest.mark.parametrize("name", GAMES)
def test_child_values_are_the_networks_values_of_the_children(name):
    """At chance nodes and decisions of random games (default size), each
    child's value is the network's on pyspiel's features of that child, and
    a child that ends the game gets its returns."""
    game = load_game(name)
    net = random_net(game)
    rng = np.random.default_rng(1)
    checked = ended = 0
    for _ in range(3 if game.max_game_length() > 10 else 30):  # a short game (showdown): more games, 50 checks
        state = game.new_initial_state()
        while not state.is_terminal():
            actions = ([a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions())
            if rng.random() < 0.15 or len(actions) < 40:
                picked = actions if len(actions) <= 12 else list(rng.choice(actions, 12, replace=False))
                values = net.child_values(state, picked)
                for a, v in zip(picked, values):
                    child = state.child(int(a))
                    want = (np.asarray(child.returns()) if child.is_terminal()
                            else reference_values(net, reference_features(child)[None])[0])
                    np.testing.assert_allclose(v, want, rtol=1e-4, atol=1e-5 * max(1.0, np.abs(want).max()))  # float32 sums
                    checked += 1
                    ended += child.is_terminal()
            state.apply_action(int(rng.choice(actions)))
    assert checked > 50 and ended >= 1


def test_save_load_round_trip_and_wrong_files(tmp_path):
    game = load_game(REGISTRY["pub"].small)
    net = random_net(game, seed=4)
    path = tmp_path / "v.npz"
    state_value.save(path, net)
    assert state_value.is_state_value_file(path)
    again = state_value.load(path, game)
    for (w, b), (w2, b2) in zip(net.layers, again.layers):  # stored as float16
        np.testing.assert_array_equal(w.astype(np.float16).astype(np.float32), w2)
        np.testing.assert_array_equal(b.astype(np.float16).astype(np.float32), b2)
    state_value.save(tmp_path / "again.npz", again)
    x = np.random.default_rng(0).integers(0, 3, (5, state_value.feature_size(game))).astype(np.float32)
    np.testing.assert_array_equal(state_value.load(tmp_path / "again.npz", game).values(x), again.values(x))
    assert again.name == f"net({path})"
    with pytest.raises(ValueError, match="not for"):
        state_value.load(path, load_game("pub"))
    (tmp_path / "other.npz").write_bytes(b"not a zip")
    assert not state_value.is_state_value_file(tmp_path / "other.npz")
    with pytest.raises(ValueError, match="not a kibitz state-value network file"):
        state_value.load(tmp_path / "other.npz", game)


def test_position_sample_is_reproducible_and_replays_real_positions():
    """The same seed gives the same examples; each row's features are those
    of a position of a real game (who-moves flags one-hot, returns a win
    share summing to 1)."""
    game = load_game("underdog")
    a = value_data.position_sample(game, ["random", "trained"], 40, 3, np.random.SeedSequence(5), batch=16)
    b = value_data.position_sample(game, ["random", "trained"], 40, 3, np.random.SeedSequence(5), batch=16)
    c = value_data.position_sample(game, ["random", "trained"], 40, 3, np.random.SeedSequence(6), batch=16)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert a[0].shape == (120, state_value.feature_size(game)) and a[1].shape == (120, 4)
    assert not np.array_equal(a[0], c[0])
    n = game.num_players()
    assert (a[0][:, -(n + 2):].sum(axis=1) == 1).all()
    np.testing.assert_allclose(a[1].sum(axis=1), 1.0)


def test_training_learns_something_and_keeps_the_best_check():
    """A few streamed chunks on Underdog's small configuration among random
    players: the held-out error falls below the mean predictor's."""
    game = load_game(REGISTRY["underdog"].small)
    held = value_data.position_sample(game, ["random"], 400, 6, np.random.SeedSequence(9), batch=128)
    chunks = value_data.position_chunks(game, ["random"], 0, chunk=1024, per_game=6, batch=256)
    records = []
    net = state_value.train(game, chunks, held, hidden=(32,), max_chunks=6, batch=256, lr=3e-3,
                            on_check=records.append)
    fit = net.meta["fit"]
    assert len(records) == 6 and fit["chunks"] == 6 and records[-1]["positions"] == fit["positions"] > 6000
    assert fit["mse"] == min([fit["mse_mean"]] + [r["mse"] for r in records])
    assert fit["r2"] > 0.05, fit


def test_cli_state_objective_and_tournament(tmp_path):
    small = REGISTRY["pub"].small
    out = tmp_path / "v.npz"
    r = CliRunner().invoke(main, ["value-net", small, "--objective", "state", "--agents", "random", "--games", "20",
                                  "--time", "60s", "--hidden", "16", "--out", str(out), "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "state values, hidden 16" in r.output and out.is_file()
    result = tour.run_tournament(small, ["random", "random"], 12, seed=1, out_dir=str(tmp_path / "t"),
                                 progress=False, value=f"net({out})")
    assert all("aivat_mean" in a for a in result.results["agents"])
    rec = json.loads((tmp_path / "t" / "games.jsonl").read_text().splitlines()[0])
    assert any(v != 0 for v in rec["aivat"]["chance"])


@pytest.mark.parametrize("args, words", [
    (["--agents", "ismcts"], ["--agents", "random, trained, net(FILE)"]),
    (["--keep", "0.5"], ["--keep"]),
    (["--encoding", "compact"], ["--encoding", "observation_tensor"]),
])
def test_cli_state_objective_bad_input_is_one_line(tmp_path, args, words):
    r = CliRunner().invoke(main, ["value-net", "pub", "--objective", "state", "--out", str(tmp_path / "v.npz"),
                                  "--no-progress", *args])
    assert r.exit_code == 2 and "Traceback" not in r.output
    for w in words:
        assert w in r.output, r.output


# ---------------------------------------------------------------- AIVAT's deferred corrections
# Corrections.finish and game_child_values: the same terms as the corrections
# evaluated at every node, in every game, and the same tournament records for
# any number of workers. The network computes in float32, the whole game's
# first layer adds each child's differences to its node's sum and BLAS rounds
# a product of a game's ~2,000 rows unlike one of a node's few, so the terms
# agree to float32 rounding, not bit for bit (the random networks' values
# reach tens to hundreds: both ways are 1e-6 of that from a float64 pass).


class Eager:
    """The network without its whole-game evaluation: Corrections calls it at every node."""

    def __init__(self, net):
        self.name, self.net = net.name, net
        self.largest = 0.0  # the largest magnitude of a value given

    def child_values(self, state, actions):
        values = self.net.child_values(state, actions)
        self.largest = max(self.largest, float(np.abs(values).max()))
        return values


def both_ways(game, specs, net, games, seed):
    """Each game played twice, corrections deferred and eager: (moves, returns, terms) of each."""
    out = []
    for i in range(games):
        runs = []
        for value in (net, Eager(net)):
            agents = [make_agent(s, game, p, seed=seed * 1000 + 10 * i + p) for p, s in enumerate(specs)]
            c = Corrections(value, game.num_players())
            moves, returns = tour.play_recorded(game, agents, tour.DealChance((seed, i)), c)
            runs.append((moves, returns, c.chance.copy(), c.action.copy(), c.nodes, getattr(value, "largest", 0)))
        out.append(runs)
    return out


@pytest.mark.parametrize("size", ["small", "default"])
@pytest.mark.parametrize("name", GAMES)
def test_deferred_terms_are_the_eager_terms(name, size):
    """Random (small) and trained against random (default size) agents,
    whose policies are known: every decision and chance node corrected."""
    game = load_game(REGISTRY[name].small) if size == "small" else load_game(name)
    # at the default size a trained agent, where a network ships for the game (not showdown's: it has none)
    first = "trained" if name in trained_games() else "random"
    specs = ["random"] * game.num_players() if size == "small" else \
        [first] + ["random"] * (game.num_players() - 1)
    net = random_net(game, hidden=(32, 16))
    nodes = 0
    for deferred, eager in both_ways(game, specs, net, games=3 if size == "small" else 2, seed=7):
        assert deferred[0] == eager[0] and deferred[1] == eager[1]  # the same moves and returns
        assert deferred[4] == eager[4] > 0
        tolerance = 1e-5 * (1.0 + eager[5])  # float32 rounding of values this large
        np.testing.assert_allclose(deferred[2], eager[2], rtol=0, atol=tolerance)
        np.testing.assert_allclose(deferred[3], eager[3], rtol=0, atol=tolerance)
        assert np.any(deferred[2] != 0) and np.any(deferred[3] != 0)
        nodes += deferred[4]
    assert nodes > 6


def test_game_child_values_are_child_values_node_by_node():
    """Over/Under with the shipped network: each row of the whole game's
    pass is the node's child_values row, ended children their returns."""
    game = load_game("over_under")
    net = state_value.load("agents/trained/over_under.value.npz", game)
    rng = np.random.default_rng(3)
    state, moves, steps, acts, expected = game.new_initial_state(), [], [], [], []
    while not state.is_terminal():
        actions = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        if len(actions) > 1:
            steps.append(len(moves))
            acts.append(actions)
            expected.append(net.child_values(state, actions))
        moves.append(int(actions[rng.integers(len(actions))]))
        state.apply_action(moves[-1])
    first = np.cumsum([0] + [len(a) for a in acts])
    got = net.game_child_values(moves, np.array(steps), first, np.concatenate(acts))
    np.testing.assert_allclose(got, np.concatenate(expected), rtol=1e-5, atol=1e-5)


def test_unfinished_deferred_terms_raise_and_eager_ones_need_no_finish():
    game = load_game(REGISTRY["pub"].small)
    state = game.new_initial_state()
    outcomes = state.chance_outcomes()
    c = Corrections(random_net(game), game.num_players())
    c.at_node(state, outcomes, outcomes[0][0], chance=True)
    with pytest.raises(RuntimeError, match="finish"):
        c.chance
    c.finish([outcomes[0][0]])
    assert c.nodes == 1 and np.any(c.chance != 0) and not np.any(c.action)
    z = Corrections(ZeroValue(game.num_players()), game.num_players())
    z.at_node(state, outcomes, outcomes[0][0], chance=True)
    assert z.nodes == 1 and not np.any(z.chance)


def test_tournament_records_are_the_same_for_any_workers(tmp_path):
    game = REGISTRY["underdog"].small
    path = tmp_path / "v.npz"
    state_value.save(path, random_net(load_game(game)))
    records = []
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        tour.run_tournament(game, ["random", "heuristic"], 12, seed=3, workers=workers, out_dir=str(out),
                            progress=False, value=f"net({path})")
        lines = (out / "games.jsonl").read_text().splitlines()
        records.append(sorted((json.loads(x) for x in lines), key=lambda r: r["index"]))
    assert records[0] == records[1]
    assert all(any(r["aivat"]["chance"]) for r in records[0])
