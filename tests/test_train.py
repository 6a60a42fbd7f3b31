"""The MMD trainer (solvers/train.py) and `kibitz train`: it learns, it is
deterministic under a seed, a resumed run equals an uninterrupted one."""

import numpy as np
import pytest
from click.testing import CliRunner

from kibitz.cli import main
from kibitz.games import load_game
from kibitz.solvers import driver, network, train
from kibitz.solvers.tree import compile_tree

SMALL = dict(hidden=(32, 32), batch=16)


def _run(game, steps, seed=0, **config):
    trainer = train.MMDTrainer(game, train.TrainConfig(**{**SMALL, **config}), seed=seed)
    for _ in range(steps):
        trainer.iterate()
    return trainer


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_probe_of_uniform_network_is_the_uniform_nash_conv():
    """A network with zero last layer plays uniformly: Kuhn's uniform NashConv 11/12."""
    game = load_game("kuhn_poker")
    spec = network.NetworkSpec.for_game(game, hidden=(8,))
    params = network.init_params(spec, np.random.default_rng(0))
    params[-2][:] = 0.0
    assert train.network_policy_nash_conv(game, params) == pytest.approx(11 / 12)


def test_probe_tensors_match_the_game():
    """The probe's tensor of each information state is the one the game gives on a sampled path."""
    game = load_game("kuhn_poker")
    tree = compile_tree(game)
    probe = train.TreeProbe(game, tree)
    index = tree.infoset_index()
    rng = np.random.default_rng(1)
    for _ in range(20):
        s = game.new_initial_state()
        while not s.is_terminal():
            if not s.is_chance_node():
                k = index[s.information_state_string()]
                np.testing.assert_array_equal(probe.x[k], np.float32(s.information_state_tensor()))
            s.apply_action(int(rng.choice(s.legal_actions())))


@pytest.mark.parametrize("game_string, steps, lr, bar", [
    ("kuhn_poker", 1200, 3e-4, 0.25),
    ("pub(players=3,suits=2,ranks=3,removed=0,hand=1)", 400, 3e-3, 0.5),
])
def test_training_cuts_the_uniform_nash_conv(game_string, steps, lr, bar):
    """The issue's bar is 1/4 of the uniform policy's NashConv. kuhn_poker reaches it in a few
    seconds; pub's small configuration reaches 1/2 here (and 1/4 in the timed CLI runs of
    docs/solvers/training.md)."""
    game = load_game(game_string)
    tree = compile_tree(game)
    probe = train.TreeProbe(game, tree)
    trainer = _run(game, steps, batch=32, lr=lr, critic_lr=max(lr, 1e-3))
    assert probe.nash_conv(trainer.policy_params()) < bar * probe.uniform_nash_conv()


def test_same_seed_same_parameters_other_seed_other():
    game = load_game("kuhn_poker")
    a, b, c = _run(game, 30), _run(game, 30), _run(game, 30, seed=1)
    _same(a.policy_params(), b.policy_params())
    assert not np.array_equal(a.policy_params()[0], c.policy_params()[0])


def test_resume_equals_uninterrupted(tmp_path):
    game = load_game("kuhn_poker")
    straight = _run(game, 40)
    half = _run(game, 20)
    meta = driver.checkpoint_meta("kuhn_poker()", "mmd", {})
    driver.save_checkpoint(tmp_path / "c.npz", half, meta, 1.0)
    resumed = train.MMDTrainer(game, train.TrainConfig(**SMALL), seed=0)
    assert driver.load_checkpoint(tmp_path / "c.npz", resumed, meta) == 1.0
    assert resumed.iteration == 20
    for _ in range(20):
        resumed.iterate()
    _same(straight.policy_params(), resumed.policy_params())
    _same(straight.state_dict().values(), resumed.state_dict().values())


def test_cli_train_resume_and_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    common = ["train", "kuhn_poker", "--hidden", "16", "--batch", "8", "--no-progress"]
    r = runner.invoke(main, [*common, "--steps", "20", "--out", "a.npz"])
    assert r.exit_code == 0, r.output
    assert "NashConv:" in r.output and "uniform policy 0.916667" in r.output
    r = runner.invoke(main, [*common, "--steps", "10", "--out", "b.npz"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, [*common, "--steps", "20", "--out", "b.npz", "--resume"])
    assert r.exit_code == 0, r.output
    spec_a, params_a = network.load("a.npz")
    spec_b, params_b = network.load("b.npz")
    assert spec_a == spec_b and spec_a.hidden == (16,)
    _same(params_a, params_b)
    r = runner.invoke(main, [*common, "--steps", "20", "--out", "b.npz", "--resume", "--batch", "9"])
    assert r.exit_code == 2 and "batch" in r.output
    # a count the checkpoint has reached: said, nothing run, the network unchanged
    r = runner.invoke(main, [*common, "--steps", "5", "--out", "b.npz", "--resume"])
    assert r.exit_code == 0, r.output
    assert "already at step 20, the count asked for is 5: no step is run" in r.output
    assert "loss:        - (no step in this run)" in r.output and "nan" not in r.output
    _same(params_a, network.load("b.npz")[1])


def test_probe_against_random_for_big_trees(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["train", "kuhn_poker", "--hidden", "8", "--batch", "4", "--steps", "3",
                                  "--probe-nodes", "5", "--no-progress", "--out", "k.npz"])
    assert r.exit_code == 0, r.output
    assert "vs random:   mean return" in r.output


def test_sigterm_writes_a_checkpoint_that_resumes(tmp_path, monkeypatch):
    """A training run stopped by SIGTERM exits 143 with its checkpoint; --resume finishes it."""
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    kibitz = str(Path(sys.executable).parent / "kibitz")
    args = [kibitz, "train", "kuhn_poker", "--hidden", "8", "--batch", "4", "--no-progress",
            "--checkpoint-every", "0", "--out", "k.npz"]
    proc = subprocess.Popen([*args, "--time", "5m"], cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    ckpt = tmp_path / "k.npz.ckpt.npz"
    deadline = time.monotonic() + 60
    while not ckpt.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "interrupted at step" in err and "--resume" in err
    done = int(driver.read_checkpoint(ckpt)[1]["iteration"])
    # the network so far is written too, and it is what export takes (the checkpoint is refused, saying so)
    assert f"the network after step {done:,} is in k.npz" in err
    # what follows the stop runs in this process (the same checks, without three more CLI start-ups)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["export", "k.npz.ckpt.npz", "--out", "x.json.gz"])
    assert r.exit_code == 1 and "a checkpoint of kibitz train; export the network file it is beside (k.npz)" \
        in r.stderr, r.output
    r = CliRunner().invoke(main, ["export", "k.npz", "--out", "x.json.gz"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, [*args[1:], "--steps", str(done + 3), "--resume"])
    assert r.exit_code == 0, r.output
    assert f"steps:       {done + 3:,}" in r.stdout


DB_SMALL = "doubt_and_bet(players=2,chips=2,slots=1,colours=1,copies=2,single_bet=true)"


def test_compact_factored_training_cuts_doubt_and_bets_uniform_nash_conv():
    game = load_game(DB_SMALL)
    trainer = _run(game, 150, encoding="compact", output="factored")
    assert trainer.spec.input_size == game.compact_tensor_size() and trainer.spec.factors == 39
    probe = train.TreeProbe(game, compile_tree(game), trainer.spec)
    assert probe.x.shape[1] == game.compact_tensor_size()
    assert probe.nash_conv(trainer.policy_params()) < 0.25 * probe.uniform_nash_conv()


def test_chunks_group_decisions_by_their_legal_actions():
    # a factored network: the width is the count rounded up to a power of two (64 at least)
    got = train.chunks([3, 1, 5000, 70, 2, 4100], 29_896, dense=False)
    assert [(rows, width, list(which)) for rows, width, which in got] == [
        (64, 64, [0, 1, 4]), (64, 128, [3]), (64, 8192, [2, 5])]
    # a dense network computes every logit: at most CHUNK_LOGITS / num_actions rows per chunk
    got = train.chunks([3] * 200, 29_896, dense=True)
    assert [(rows, width, len(which)) for rows, width, which in got] == [(64, 64, 64)] * 3 + [(64, 64, 8)]
    # a game with few actions: one chunk, as wide as the game
    assert [(r, w, len(x)) for r, w, x in train.chunks([2, 1, 2] * 30, 2, dense=True)] == [(128, 2, 90)]


def test_cli_encoding_and_output_options(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    r = runner.invoke(main, ["train", "doubt_and_bet", "--encoding", "tiny", "--out", "a.npz"])
    assert r.exit_code == 2 and "doubt_and_bet has no encoding 'tiny'; allowed: information_state_tensor, " \
                                "observation_tensor, compact" in r.output and "Traceback" not in r.output
    r = runner.invoke(main, ["train", "kuhn_poker", "--output", "factored", "--out", "a.npz"])
    assert r.exit_code == 2 and "kuhn_poker has no action factors; allowed: dense" in r.output
    common = ["train", DB_SMALL, "--hidden", "8", "--batch", "4", "--steps", "3", "--no-progress"]
    r = runner.invoke(main, [*common, "--encoding", "compact", "--out", "c.npz"])
    assert r.exit_code == 0, r.output
    assert "encoding:    compact input, factored output (39 factor logits)" in r.output
    spec, _ = network.load("c.npz")
    assert (spec.encoding, spec.output, spec.factors) == ("compact", "factored", 39)
    assert driver.read_checkpoint("c.npz.ckpt.npz")[0]["settings"]["encoding"] == "compact"
    r = runner.invoke(main, [*common, "--encoding", "compact", "--output", "dense", "--out", "d.npz"])
    assert r.exit_code == 0, r.output
    assert network.load("d.npz")[0].output == "dense"
    # the defaults: the information-state tensor, dense, and a meta without them (older checkpoints resume)
    r = runner.invoke(main, [*common, "--out", "i.npz"])
    assert r.exit_code == 0, r.output
    assert "encoding:    information_state_tensor input, dense output" in r.output
    settings = driver.read_checkpoint("i.npz.ckpt.npz")[0]["settings"]
    assert "encoding" not in settings and "output" not in settings
    r = runner.invoke(main, [*common, "--encoding", "compact", "--out", "i.npz", "--resume"])
    assert r.exit_code == 2 and "encoding" in r.output


class _Recorder:
    """An opponent that plays the first legal action and records where it was asked."""

    asked: list = []

    def __init__(self, game, seat, seed):
        self.seat, self.seed = seat, seed

    def action_probabilities(self, state):
        assert state.current_player() == self.seat
        _Recorder.asked.append(self.seat)
        legal = state.legal_actions()
        return {a: float(a == legal[0]) for a in legal}


def test_opponent_seats_share_and_network_keeps_a_seat():
    game = load_game("underdog(players=3,cards=5,bank=2)")
    rng = np.random.Generator(np.random.PCG64(3))
    seats = train.opponent_seats(game, rng, 400, _Recorder, 0.5)
    held = [s for s in seats if s]
    assert 150 < len(held) < 250  # about half the episodes
    assert all(1 <= len(s) <= 2 for s in held)  # the network keeps 1..n-1 of the 3 seats
    assert {len(s) for s in held} == {1, 2} and {p for s in held for p in s} == {0, 1, 2}
    before = rng.bit_generator.state
    assert train.opponent_seats(game, rng, 5, _Recorder, 0.0) == [{}] * 5
    assert rng.bit_generator.state == before  # self-play only draws nothing


def test_opponent_moves_are_played_but_not_trained_on():
    """With share 1 every episode has opponent seats: the network's decisions are
    only its own seats', and the opponent was asked at its seats."""
    game = load_game("underdog(players=3,cards=5,bank=2)")
    spec = network.NetworkSpec.for_game(game, hidden=(8,))
    params = network.init_params(spec, np.random.default_rng(0))
    _Recorder.asked = []
    x, _, _, _ = train.play_episodes(game, params, np.random.Generator(np.random.PCG64(1)), 20,
                                     opponent=_Recorder, share=1.0)
    all_net, _, _, _ = train.play_episodes(game, params, np.random.Generator(np.random.PCG64(1)), 20)
    assert _Recorder.asked and 0 < len(x) < len(all_net)


def test_cli_train_with_heuristic_opponent_is_reproducible(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    common = ["train", "underdog(players=3,cards=5,bank=2)", "--hidden", "16", "--batch", "8", "--steps", "6",
              "--opponent", "heuristic", "--no-progress"]
    for out in ("a.npz", "b.npz"):
        r = runner.invoke(main, [*common, "--out", out])
        assert r.exit_code == 0, r.output
        assert "opponent:    heuristic in 50% of the episodes" in r.output
    _same(network.load("a.npz")[1], network.load("b.npz")[1])
    for args, words in ([["--opponent", "nobody"], "unknown agent 'nobody'"],
                        [["--opponent", "human"], "a human cannot hold seats"],
                        [["--opponent-share", "0.2"], "needs --opponent"],
                        [["--opponent", "random", "--opponent-share", "1.5"], "1.5"]):
        r = runner.invoke(main, ["train", "underdog", "--out", "c.npz", *args])
        assert r.exit_code == 2 and words in r.output, r.output


def test_imitation_steps_learn_the_opponent_then_make_it_the_magnet():
    """Imitation steps fit the policy to the heuristic's moves (held-out games
    agree on most decisions); the policy then becomes the magnet."""
    from kibitz.agents.registry import make_agent

    game = load_game("underdog(players=3,cards=5,bank=2)")

    def heuristic(g, seat, seed):
        return make_agent("heuristic", g, seat, seed)

    config = train.TrainConfig(hidden=(64,), batch=16, lr=3e-3, opponent="heuristic", opponent_share=0.5,
                               imitation_steps=60)
    trainer = train.MMDTrainer(game, config, seed=0, opponent=heuristic)
    for _ in range(60):
        trainer.iterate()
    _same([np.asarray(p) for p in trainer.magnet], trainer.policy_params())
    x, legal, taken, _ = train.play_episodes(game, None, np.random.Generator(np.random.PCG64(99)), 30,
                                             opponent=heuristic, imitate=True)
    probs = train._legal_probabilities(trainer.policy_params(), x, legal)
    choices = [len(la) > 1 for la in legal]  # decisions with more than one legal move
    agree = np.mean([np.argmax(p) == j for p, j, c in zip(probs, taken, choices) if c])
    assert agree > 0.8, agree
    magnet = [np.asarray(p) for p in trainer.magnet]
    trainer.iterate()  # an MMD step after the imitation steps moves the policy, not the magnet
    _same([np.asarray(p) for p in trainer.magnet], magnet)
    assert not np.array_equal(trainer.policy_params()[0], magnet[0])


def test_exploration_plays_uniform_moves_in_training_only():
    """With a policy that puts (almost) all its mass on one move, explore=0.5
    plays other moves too; explore=0 draws no extra numbers (the episodes of
    a run without it are those of before)."""
    game = load_game("underdog(players=3,cards=5,bank=2)")
    spec = network.NetworkSpec.for_game(game, hidden=(4,))
    params = [np.zeros_like(p) for p in network.init_params(spec, np.random.default_rng(0))]
    params[-1][:] = np.arange(spec.num_actions, dtype=np.float32) * 50.0  # the highest legal action, always
    x0, legal0, taken0, _ = train.play_episodes(game, params, np.random.Generator(np.random.PCG64(5)), 20)
    assert all(j == len(la) - 1 for la, j in zip(legal0, taken0))
    _, legal, taken, _ = train.play_episodes(game, params, np.random.Generator(np.random.PCG64(5)), 20,
                                             explore=0.5)
    others = [j != len(la) - 1 for la, j in zip(legal, taken) if len(la) > 1]
    assert 0.1 < np.mean(others) < 0.5  # about half the moves are uniform, some of them the same move
    with pytest.raises(ValueError, match="explore=1.0 is out of range"):
        train.TrainConfig(explore=1.0)


def test_resume_with_opponent_imitation_and_exploration_equals_uninterrupted(tmp_path, monkeypatch):
    """The shipped networks were trained in stages (--resume); the same
    settings in one run give the same parameters."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    common = ["train", "underdog(players=3,cards=5,bank=2)", "--encoding", "observation_tensor", "--hidden", "16",
              "--batch", "4", "--opponent", "heuristic", "--opponent-share", "0.75", "--imitation-steps", "3",
              "--imitation-lr", "3e-3", "--lr", "1e-4", "--explore", "0.05", "--no-progress"]
    for args in (["--steps", "8", "--out", "a.npz"], ["--steps", "2", "--out", "b.npz"],
                 ["--steps", "5", "--out", "b.npz", "--resume"], ["--steps", "8", "--out", "b.npz", "--resume"]):
        r = runner.invoke(main, [*common, *args])
        assert r.exit_code == 0, r.output
    _same(network.load("a.npz")[1], network.load("b.npz")[1])


def test_the_python_api_trains_and_names_bad_options(tmp_path):
    import kibitz
    from kibitz.solvers.solve import ConfigError
    from kibitz.solvers.train import TrainConfig

    out = tmp_path / "k.npz"
    result = kibitz.train("kuhn_poker", steps=20, out=str(out), config=TrainConfig(output=None, batch=8))
    assert out.is_file() and result.trainer.iteration == 20 and result.measure[0] == "NashConv"
    assert any(line.startswith("network:     ") for line in result.lines())
    with pytest.raises(ConfigError, match="needs --opponent") as e:
        kibitz.train("kuhn_poker", config=TrainConfig(opponent_share=0.3))
    assert e.value.param == "--opponent-share"
    with pytest.raises(ConfigError, match="'wizard'") as e:
        kibitz.train("kuhn_poker", config=TrainConfig(opponent="wizard", opponent_share=0.5))
    assert e.value.param == "--opponent"
