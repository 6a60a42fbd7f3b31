"""The network policy's shape, forward pass, masking and file."""

import numpy as np
import pyspiel
import pytest

from kibitz.solvers import network as net


def test_spec_from_the_game_and_parameter_shapes():
    game = pyspiel.load_game("kuhn_poker")
    spec = net.NetworkSpec.for_game(game, hidden=(8, 4))
    params = net.init_params(spec, np.random.default_rng(0))
    assert spec.sizes == (11, 8, 4, 2)
    assert [p.shape for p in params] == [(11, 8), (8,), (8, 4), (4,), (4, 2), (2,)]
    assert all(p.dtype == np.float32 for p in params)


def test_masked_policy_is_a_distribution_over_the_legal_actions_only():
    spec = net.NetworkSpec("x", 5, 6, hidden=(7,))
    params = net.init_params(spec, np.random.default_rng(1))
    params[-1][:] = np.arange(6, dtype=np.float32) * 3  # strongly prefers the illegal high actions
    x = np.random.default_rng(2).random(5).astype(np.float32)
    probs = net.probabilities(params, x, [0, 2])
    assert set(probs) == {0, 2} and sum(probs.values()) == pytest.approx(1.0)
    mask = np.array([1, 0, 1, 0, 0, 0], np.float32)
    p = net.masked_softmax(net.forward(params, x[None, :]), mask)[0]
    assert p[[1, 3, 4, 5]].max() < 1e-12 and p[[0, 2]].sum() == pytest.approx(1.0)
    assert p[2] / p[0] == pytest.approx(probs[2] / probs[0], rel=1e-5)


def test_the_first_policy_is_near_uniform():
    game = pyspiel.load_game("kuhn_poker")
    spec = net.NetworkSpec.for_game(game)
    params = net.init_params(spec, np.random.default_rng(0))
    state = game.new_initial_state()
    state.apply_action(0)
    state.apply_action(1)
    probs = net.probabilities(params, state.information_state_tensor(0), state.legal_actions())
    assert max(abs(p - 0.5) for p in probs.values()) < 0.05


def test_save_and_load_round_trip_and_bad_files(tmp_path):
    spec = net.NetworkSpec("kuhn_poker()", 11, 2, hidden=(3,))
    params = net.init_params(spec, np.random.default_rng(3))
    net.save(tmp_path / "n.npz", spec, params)
    spec2, params2 = net.load(tmp_path / "n.npz")
    assert spec2 == spec and all(np.array_equal(a, b) for a, b in zip(params, params2))
    (tmp_path / "bad.npz").write_bytes(b"nonsense")
    with pytest.raises(ValueError, match="not a kibitz network file"):
        net.load(tmp_path / "bad.npz")
    with pytest.raises(ValueError, match="hidden must be"):
        net.NetworkSpec("g", 3, 2, hidden=())


DB_SMALL = "doubt_and_bet(players=3,chips=2,slots=2,colours=2)"


def _factored(seed=0, hidden=(6,)):
    from kibitz.games import load_game

    game = load_game(DB_SMALL)
    spec = net.NetworkSpec.for_game(game, hidden, encoding="compact", output="factored")
    rng = np.random.default_rng(seed)
    params = [rng.normal(0, 1, p.shape).astype(np.float32) for p in net.init_params(spec, rng)]
    return game, spec, params, net.action_index(spec, game)


def test_a_factored_network_is_the_dense_network_its_factors_sum_to():
    game, spec, params, index = _factored()
    assert spec.sizes == (game.compact_tensor_size(), 6, spec.factors) and spec.out_size == spec.factors
    # the explicit dense last layer: column a sums the factor columns index[a, :] (index F: a zero column)
    w, b = params[-2], params[-1]
    w_ext = np.concatenate([w, np.zeros((w.shape[0], 1), np.float32)], axis=1)
    b_ext = np.concatenate([b, np.zeros(1, np.float32)])
    dense = params[:-2] + [w_ext[:, index].sum(axis=2), b_ext[index].sum(axis=1)]
    x = np.random.default_rng(1).random((7, spec.input_size)).astype(np.float32)
    got = net.forward(params, x, index=index)
    assert got.shape == (7, game.num_distinct_actions())
    np.testing.assert_allclose(got, net.forward(dense, x), rtol=1e-5, atol=1e-5)
    # the logits of chosen actions only are the same numbers
    acts = np.random.default_rng(2).integers(0, game.num_distinct_actions(), size=(7, 5))
    np.testing.assert_array_equal(net.forward_at(params, x, acts, index=index), np.take_along_axis(got, acts, -1))
    legal = [0, 3, int(acts[0, 0])]
    probs = net.probabilities(params, x[0], legal, index)
    dense_probs = net.probabilities(dense, x[0], legal)
    assert max(abs(probs[a] - dense_probs[a]) for a in legal) < 1e-5


def test_factored_save_load_round_trip_and_bad_meta(tmp_path):
    import json
    import zipfile

    game, spec, params, index = _factored(hidden=(4,))
    net.save(tmp_path / "f.npz", spec, params)
    spec2, params2 = net.load(tmp_path / "f.npz")
    assert spec2 == spec and spec2.output == "factored" and spec2.factors == index.max() == 94
    assert all(np.array_equal(a, b) for a, b in zip(params, params2))
    with zipfile.ZipFile(tmp_path / "f.npz") as z:
        assert sorted(z.namelist()) == ["W0.npy", "W1.npy", "b0.npy", "b1.npy", "meta.npy"]  # no index stored

    def with_meta(name, **change):
        meta = {**json.loads(json.dumps(net.dataclasses.asdict(spec))), **change}
        arrays = {f"{'W' if i % 2 == 0 else 'b'}{i // 2}": p for i, p in enumerate(params)}
        np.savez(tmp_path / name, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8), **arrays)
        return tmp_path / name

    for change, words in [({"output": "sparse"}, "output must be one of dense, factored; got 'sparse'"),
                          ({"factors": 0}, "a factored output needs factors >= 1"),
                          ({"output": "dense", "factors": 0}, r"layer 1 has shape \(4, 94\), the spec says "
                                                              r"\(4, 526\) \(dense output, 526 logits\)"),
                          ({"factors": 50}, r"\(factored output, 50 logits\)"),
                          ({"factors": 1.5}, "factors must be a whole number")]:
        with pytest.raises(ValueError, match=words):
            net.load(with_meta("bad.npz", **change))
    # a file from before the output kinds (no output, no factors) is dense
    old = {k: v for k, v in net.dataclasses.asdict(net.NetworkSpec("kuhn_poker()", 11, 2, (3,))).items()
           if k not in ("output", "factors")}
    dense = net.init_params(net.NetworkSpec("kuhn_poker()", 11, 2, (3,)), np.random.default_rng(0))
    np.savez(tmp_path / "old.npz", meta=np.frombuffer(json.dumps({**old, "hidden": [3]}).encode(), np.uint8),
             **{f"{'W' if i % 2 == 0 else 'b'}{i // 2}": p for i, p in enumerate(dense)})
    assert net.load(tmp_path / "old.npz")[0].output == "dense"


def test_the_game_must_offer_the_encoding_and_the_factors():
    from kibitz.games import load_game

    game, spec, _, _ = _factored()
    with pytest.raises(ValueError, match="underdog has no encoding 'compact'"):
        net.NetworkSpec.for_game(load_game("underdog"), encoding="compact")
    with pytest.raises(ValueError, match="underdog has no output 'factored'; allowed: dense"):
        net.NetworkSpec.for_game(load_game("underdog"), output="factored")
    with pytest.raises(ValueError, match=r"the network has 49 factor logits over 48 actions; .* has 94 over 526"):
        net.action_index(net.NetworkSpec(spec.game, spec.input_size, 48, (4,), "compact", "factored", 49), game)
    assert net.action_index(net.NetworkSpec.for_game(game, (4,)), game) is None
