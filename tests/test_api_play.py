"""The Python API of kibitz play, replay, serve, games and agents (issue 46)."""

import pytest

from kibitz import api
from helpers import call


def test_play_returns_the_final_state_and_writes_the_same_game_for_the_same_seed():
    first, second = [], []
    state = api.play("kuhn_poker", "random,random", seed=3, write=first.append)
    api.play("kuhn_poker", ["random", "random"], seed=3, write=second.append)
    assert state.is_terminal() and first == second
    assert first[-1] == "returns: " + "  ".join(f"p{i} {r:g}" for i, r in enumerate(state.returns()))
    with pytest.raises(api.ConfigError) as bad:
        api.play("kuhn_poker", ["random"])
    assert bad.value.param == "--seats"
    with pytest.raises(api.ConfigError) as bad:
        api.play("matrix_rps")
    assert bad.value.param == "GAME"


def test_seat_agents_seats_a_person_who_reads_and_writes_through_the_callables():
    game = api.load_game("kuhn_poker")
    seen = []
    agents = api.seat_agents(game, ["human", "random"], seed=1, read=lambda prompt: "1", write=seen.append)
    assert [a.name for a in agents] == ["human", "random"]
    state = api.play(game, agents, seed=1, write=seen.append)
    assert state.is_terminal() and any(line.startswith("You are player 0.") for line in seen)
    with pytest.raises(api.Quit):
        api.play(game, ["human", "random"], seed=1, read=lambda prompt: "quit", write=seen.append)


def test_replay_names_every_move_of_a_recorded_game(tmp_path):
    api.tournament("kuhn_poker", ["random", "random"], games=2, out=str(tmp_path))
    replayed = api.replay(tmp_path / "games.jsonl", 1, rerun=True)
    assert replayed.record["index"] == 1 and replayed.rerun
    assert len(replayed.moves) == len(replayed.record["moves"]) and replayed.moves[0][0] is None  # the deal
    assert list(replayed.final.returns()) == replayed.record["returns"]
    with pytest.raises(api.ConfigError) as bad:
        api.replay(tmp_path / "games.jsonl", 7)
    assert bad.value.param == "--game"


def test_serve_answers_from_a_background_thread_and_names_a_bad_option():
    with pytest.raises(api.ConfigError) as bad:
        api.ServeConfig(port=70000)
    assert bad.value.param == "--port"
    with pytest.raises(api.ConfigError) as bad:
        api.serve(agents=["nosuch"], port=0, db=":memory:")
    assert bad.value.param == "--agent"
    server = api.serve(agents="random", port=0, db=":memory:").start()
    try:
        assert call(server.url, "/agents")[0] == 200
        assert call(server.url, "/health")[1]["agents"] == 1
    finally:
        server.stop()


def test_the_lists_of_games_and_agents():
    games = api.registered_games()
    assert "pub" in games and games == dict(sorted(games.items()))
    pub = api.registered_games("pub")["pub"]
    assert pub["parameters"]["players"]["default"] == 4 and pub["encodings"]["information_state_tensor"] > 0
    with pytest.raises(api.ConfigError, match="without parameters") as bad:
        api.registered_games("pub(players=3)")
    assert bad.value.param == "NAME"
    kinds = api.agent_kinds()
    assert {"random", "heuristic", "ismcts"} <= set(kinds)
    assert "sims" in kinds["ismcts"]["options"] and kinds["random"]["positional"] is None
