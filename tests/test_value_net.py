"""AIVAT's value network (solvers/value_net.py), its data (agents/training/value_data.py)
and ``kibitz value-net``: feature and protocol shapes, every child's value
equal to the one-child reference, the file round trip, training on a
synthetic set, reproducible data, and the command's bad input."""

import numpy as np
import pytest
from click.testing import CliRunner

from kibitz import games
from kibitz.agents.training import value_data
from kibitz.cli import main
from kibitz.games import REGISTRY, load_game
from kibitz.solvers import value_net

NAMES = ("underdog", "pub", "over_under", "doubt_and_bet")


def small(name):
    return load_game(REGISTRY[name].small)


def random_net(game, seed=0, **kw):
    spec = value_net.ValueSpec.for_game(game, **kw)
    params = value_net.init_params(spec, np.random.default_rng(seed))
    rng = np.random.default_rng(seed + 1)  # weights of every size, so that each term shows in the values
    params = {k: (v + rng.normal(0, 0.3, v.shape)).astype(np.float32) for k, v in params.items()}
    if spec.factored:
        params["E_action"][-1] = 0.0
    return value_net.ValueNet(spec, params, game=game)


def nodes(game, seed=0):
    """Every state of one game played with uniform moves and chance drawn from its outcomes."""
    rng = np.random.default_rng(seed)
    state, out = game.new_initial_state(), []
    while not state.is_terminal():
        out.append(state.clone())
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(actions[rng.choice(len(actions), p=np.array(probs) / sum(probs))])
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return out


def children(state):
    return [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()


@pytest.mark.parametrize("name", NAMES)
def test_features_are_every_players_encoding(name):
    """The observer's fast path writes exactly encoding_tensor's numbers, player after player."""
    game = small(name)
    features = value_net.Features(game)
    assert features._observer is not None  # the kibitz games have a Python observer
    for state in nodes(game)[::3]:
        want = np.concatenate([games.encoding_tensor(state, p, value_net.ENCODING)
                               for p in range(game.num_players())])
        np.testing.assert_array_equal(features(state), want)
    compact = value_net.Features(game, "compact") if "compact" in games.encodings(game) else None
    if compact is not None:  # no observer: encoding_tensor itself
        state = nodes(game)[-1]
        assert compact(state).shape == (game.num_players() * games.encoding_size(game, "compact"),)


@pytest.mark.parametrize("name", NAMES)
def test_child_values_equal_each_childs_value(name):
    """At chance and decision nodes: float64 (children, players), the state
    untouched, each row the one-child forward pass (dense, unbatched)."""
    game = small(name)
    net = random_net(game)
    kinds = set()
    for state in nodes(game, seed=1):
        actions = children(state)
        before = (state.history(), str(state))
        values = net.child_values(state, actions)
        assert (state.history(), str(state)) == before
        assert values.dtype == np.float64 and values.shape == (len(actions), game.num_players())
        want = np.array([net.q(state, a) for a in actions])
        np.testing.assert_allclose(values, want, rtol=1e-5, atol=1e-5)
        kinds.add(state.is_chance_node())
    assert kinds == {True, False}


def test_factored_action_embeddings(monkeypatch):
    """Doubt and Bet's actions embedded by their factors: the table expanded
    at load equals the sum of each action's factor rows in the reference."""
    monkeypatch.setattr(value_net, "FACTOR_ABOVE", 0)
    game = small("doubt_and_bet")
    net = random_net(game)
    index, count = games.action_factors(game)
    assert net.spec.factored and net.spec.action_rows == count + 1
    for state in nodes(game, seed=2):
        if not state.is_chance_node():
            actions = state.legal_actions()
            want = np.array([net.q(state, a) for a in actions])
            np.testing.assert_allclose(net.child_values(state, actions), want, rtol=1e-5, atol=1e-5)


def test_save_load_gives_the_same_values(tmp_path):
    game = small("pub")
    net = random_net(game, hidden=(16, 8))
    net.params = {k: v.astype(np.float16).astype(np.float32) for k, v in net.params.items()}  # as trained
    net = value_net.ValueNet(net.spec, net.params, game=game, meta={"fit": {"r2": 0.5}})
    path = tmp_path / "v.npz"
    value_net.save(path, net)
    back = value_net.load(path)
    assert back.name == f"net({path})" and back.spec == net.spec and back.meta == {"fit": {"r2": 0.5}}
    for state in nodes(game)[::2]:
        np.testing.assert_array_equal(back.child_values(state, children(state)),
                                      net.child_values(state, children(state)))
    bad = tmp_path / "bad.npz"
    np.savez(bad, meta=np.frombuffer(b'{"game": "pub"}', np.uint8))
    with pytest.raises(ValueError, match="not a kibitz value network file"):
        value_net.load(bad)


def test_training_fits_a_synthetic_value():
    """Returns that are a function of the features and the action: the fit
    ends far below the error of predicting the mean, on held-out games."""
    game = small("pub")
    spec = value_net.ValueSpec.for_game(game)
    rng = np.random.default_rng(0)
    n = 4000
    x = (rng.random((n, spec.input_size)) < 0.2).astype(np.float16)
    action = rng.integers(0, 4, n).astype(np.int32)
    kind = rng.integers(0, 2, n).astype(np.int8)
    value = 0.3 * x[:, 0] + 0.2 * (action == 1) * (kind == 1) + 0.1 * x[:, 5] * (action == 2)
    returns = np.stack([value, 1 - value, 0.5 * value], axis=1).astype(np.float32)
    ex = value_net.Examples(x=x, action=action, kind=kind, returns=returns, game=np.arange(n, dtype=np.int32) // 4)
    net = value_net.train_value_net(game, ex, epochs=15, batch=128, lr=3e-3, seed=0)
    fit = net.meta["fit"]
    assert fit["mse"] < 0.1 * fit["mse_mean"] and fit["r2"] > 0.9
    assert net.meta["data"]["examples"] == n and net.meta["data"]["held_out_examples"] == ex.held_out().sum() > 300
    held = np.flatnonzero(ex.held_out())
    assert value_net.mse(net, net.spec, ex, held) == pytest.approx(fit["mse"])


def test_data_is_every_node_and_reproducible():
    game = small("pub")
    ex, _ = value_data.collect(game, ["random", "heuristic"], 4, seed=3)
    again, _ = value_data.collect(game, ["random", "heuristic"], 2, seed=3, start=2)
    for field in ("x", "action", "kind", "returns", "game"):
        np.testing.assert_array_equal(getattr(ex, field)[ex.game >= 2], getattr(again, field))
    assert value_data.seat_specs(["a", "b"], 1, 3) == ["b", "a", "b"]
    first = ex.game == 0  # replaying game 0's actions gives its kinds, features and returns
    state = game.new_initial_state()
    features = value_net.Features(game)
    for x, a, k in zip(ex.x[first], ex.action[first], ex.kind[first]):
        assert k == (value_net.CHANCE if state.is_chance_node() else value_net.DECISION)
        np.testing.assert_array_equal(x, features(state).astype(np.float16))
        state.apply_action(int(a))
    assert state.is_terminal()
    np.testing.assert_array_equal(ex.returns[first], np.tile(state.returns(), (first.sum(), 1)))
    part, _ = value_data.collect(game, ["random"], 4, seed=3, keep=0.3)
    assert 0 < len(part) < len(ex)


def run(args):
    return CliRunner().invoke(main, ["value-net", *args])


@pytest.mark.parametrize("args, option, words", [
    (["nogame"], "GAME", "nogame"),
    (["--agents", "nosuch"], "--agents", "nosuch"),
    (["--agents", "random,"], "--agents", "empty agent spec"),
    (["--agents", "human"], "--agents", "human"),
    (["--encoding", "pixels"], "--encoding", "allowed: information_state_tensor"),
    (["--games", "5"], "--games", "5"),
    (["--games", "12"], "--games", "at least 22 for the variance objective"),
    (["--keep", "0", "--objective", "mse"], "--keep", "0"),
    (["--time", "soon"], "--time", "soon"),
    (["--hidden", "0"], "--hidden", "allowed"),
])
def test_cli_bad_input(tmp_path, args, option, words):
    game = [] if args[0] == "nogame" else [REGISTRY["pub"].small]
    result = run([*game, *args, "--out", str(tmp_path / "v.npz")])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.startswith("Error")]
    assert len(lines) == 1 and option in lines[0] and words in lines[0], result.output
    assert not (tmp_path / "v.npz").exists()


def test_cli_writes_and_refuses_to_overwrite(tmp_path):
    out = tmp_path / "v.npz"
    args = [REGISTRY["pub"].small, "--objective", "mse", "--agents", "random", "--games", "20", "--epochs", "1",
            "--out", str(out)]
    result = run(args)
    assert result.exit_code == 0, result.output
    assert "held-out MSE" in result.output and value_net.load(out).meta["data"]["games"] == 20
    again = run(args)
    assert again.exit_code == 2 and "--overwrite replaces it" in again.output
    assert run([*args, "--overwrite"]).exit_code == 0
    other = tmp_path / "other.npz"
    other.write_bytes(b"not mine")
    refused = run([*args[:-1], str(other), "--overwrite"])
    assert refused.exit_code == 2 and "never replaced" in refused.output
    assert run([*args[:-1], str(tmp_path / "v.txt")]).exit_code == 2


def test_api_builds_a_small_value_network(tmp_path):
    """kibitz.api.value_net: the defaults filled in the config, progress
    reported by stage, the network returned and written; a bad option
    raises ConfigError naming it."""
    from kibitz import api

    out, seen = tmp_path / "v.npz", []
    result = api.value_net(REGISTRY["pub"].small, objective="mse", agents="random", games=20, epochs=1,
                           out=str(out), progress=lambda stage, record: seen.append((stage, record is None)))
    assert result.config.agents == ("random",) and result.config.hidden == value_net.HIDDEN
    assert seen[0] == ("play", True) and seen.count(("play", False)) == 20 and ("fit", True) in seen
    assert result.net.meta["data"]["games"] == 20 and result.lines()[-1] == f"written:   {out}"
    assert value_net.load(out).meta["fit"]["mse"] == result.net.meta["fit"]["mse"]
    with pytest.raises(ValueError, match="not both"):
        api.value_net(result.config, games=30)
    with pytest.raises(api.ConfigError) as e:
        api.ValueNetConfig(REGISTRY["pub"].small, keep=0.5)
    assert e.value.param == "--keep"


# ---------------------------------------------------------------- the variance objective
def test_node_data_terms_are_the_tournaments_and_the_loss_is_the_variance():
    """The recorded nodes give each game exactly the terms Corrections adds
    in play_recorded, and the loss is the empirical mean squared deviation
    of returns + terms, summed over the players, for any mean."""
    from kibitz.agents.registry import make_agent
    from kibitz.agents.matches.tournament import DealChance, play_recorded
    from kibitz.solvers.aivat import Corrections

    game = small("underdog")
    specs = ["random", "heuristic"]
    data, _ = value_data.collect_nodes(game, specs, 6, seed=2)
    assert len(data) == 6 and (data.cand_kind == value_net.CHANCE).any() and (data.cand_kind == 1).any()
    net = random_net(game)
    terms = value_net.aivat_terms(net.params, net.spec, data, chunk=4)
    words = value_data.SEED_OFFSET + 2
    for i in range(6):
        agents = [make_agent(s, game, k, seed=value_data.agent_seed(words, i, k))
                  for k, s in enumerate(value_data.seat_specs(specs, i, game.num_players()))]
        corrections = Corrections(net, game.num_players())
        _, returns = play_recorded(game, agents, DealChance((words, 43, i)), corrections)
        np.testing.assert_allclose(terms[i], corrections.chance + corrections.action, rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(data.returns[i], returns)
    mean = np.array([0.1, 0.3, 0.2])
    batch = value_net.variance_batch(data, np.arange(6), 8)  # two empty game slots: masked
    loss = value_net.variance_loss(net.params, net.spec, batch, mean)
    want = ((data.returns - mean + terms) ** 2).sum(axis=1).mean()
    assert loss == pytest.approx(want, rel=1e-4)
    sub = data.subset([4, 1])
    np.testing.assert_allclose(value_net.aivat_terms(net.params, net.spec, sub), terms[[4, 1]], rtol=1e-5)


def test_variance_training_lowers_the_held_out_variance():
    game = small("underdog")
    data, _ = value_data.collect_nodes(game, ["random", "heuristic"], 300, seed=0)
    net = value_net.train_for_variance(game, data, epochs=6, batch=16, lr=3e-3, seed=0)
    fit = net.meta["fit"]
    assert fit["variance"] < 0.9 * fit["variance_plain"] and min(fit["ratio"]) > 1.05
    assert net.meta["training"]["objective"] == "variance" and net.meta["data"]["games"] == 300
    held = data.subset(np.flatnonzero(data.held_out()))
    ratio = value_net.variance_ratio(held.returns, value_net.aivat_terms(net.params, net.spec, held))
    np.testing.assert_allclose(ratio, fit["ratio"], rtol=1e-6)


def test_cli_variance_objective(tmp_path):
    out = tmp_path / "v.npz"
    result = run([REGISTRY["underdog"].small, "--agents", "random,heuristic", "--games", "40", "--epochs", "1",
                  "--out", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "held-out variance of the estimate" in result.output
    meta = value_net.load(out).meta
    assert meta["training"]["objective"] == "variance" and meta["training"]["deal_seed_words"] == [10 ** 6, 43]


@pytest.mark.parametrize("args, option, words", [
    (["--objective", "bias"], "--objective", "bias"),
    (["--keep", "0.5"], "--keep", "--objective mse"),
])
def test_cli_objective_bad_input(tmp_path, args, option, words):
    result = run([REGISTRY["underdog"].small, *args, "--out", str(tmp_path / "v.npz")])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.startswith("Error")]
    assert len(lines) == 1 and option in lines[0] and words in lines[0], result.output
    assert not (tmp_path / "v.npz").exists()


def test_node_loss_is_the_variance_less_its_cross_terms():
    """node_variance_loss = variance_loss - mean ||R - mean||^2 less the
    terms of zero expectation: sum_{n != m} t_n . t_m and 2 sum_n t_n . (b_n - mean)."""
    game = small("underdog")
    data, _ = value_data.collect_nodes(game, ["random", "heuristic"], 5, seed=1)
    net = random_net(game)
    nodes = dict(vars(data), node_game=np.arange(len(data.node_game), dtype=np.int32),
                 returns=np.zeros((len(data.node_game), game.num_players()), np.float32),
                 game=np.arange(len(data.node_game), dtype=np.int32))
    t = value_net.aivat_terms(net.params, net.spec, value_net.NodeGames(**nodes))  # one "game" a node
    prob = np.where(data.cand_weight > 0, data.cand_weight, data.cand_weight + 1).astype(np.float32)
    b = value_net.aivat_terms(net.params, net.spec, value_net.NodeGames(**{**nodes, "cand_weight": prob}))
    mean = data.returns.mean(axis=0)
    batch = value_net.variance_batch(data, np.arange(5), 5)
    full = value_net.variance_loss(net.params, net.spec, batch, mean)
    node = value_net.node_variance_loss(net.params, net.spec, batch, mean)
    per_game = np.zeros_like(data.returns, dtype=np.float64)
    np.add.at(per_game, data.node_game, t)
    cross = sum((per_game[g] @ per_game[g] - (t[data.node_game == g] ** 2).sum()) for g in range(5)) \
        + 2 * (t * (b - mean)).sum()
    plain = ((data.returns - mean) ** 2).sum(axis=1).mean()
    assert node == pytest.approx(full - plain - cross / 5, rel=1e-3, abs=1e-4)
