"""Matches on the batched environment (agents/matches/batched_match.py)."""

from __future__ import annotations

import pyspiel
import pytest

import kibitz.games  # noqa: F401  (registers the games)
from kibitz.agents.matches.batched_match import batched_match
from kibitz.agents.matches.tournament import run_tournament
from kibitz.games import REGISTRY


def test_a_seed_gives_the_same_match_and_every_game_is_credited():
    game = pyspiel.load_game(REGISTRY["underdog"].small)
    a = batched_match(game, ["random", "random"], 300, seed=4)
    assert a == batched_match(game, ["random", "random"], 300, seed=4)
    assert a["games"] == 300 and all(x["games"] <= 300 for x in a["agents"])
    assert all(0 <= x["mean"] <= 1 for x in a["agents"])  # win shares
    assert a != batched_match(game, ["random", "random"], 300, seed=5)


def test_it_agrees_with_a_tournament_of_the_same_agents():
    """Underdog at its default size, the shipped network against random:
    the batched match's mean per agent lies within the two intervals'
    reach of the tournament's (different deals, the same game)."""
    game = pyspiel.load_game("underdog")
    fast = batched_match(game, ["trained", "random"], 1000, seed=0)
    slow = run_tournament("underdog", ["trained", "random"], 96, seed=0, workers=1, progress=False).results
    for f, s in zip(fast["agents"], slow["agents"]):
        half = (f["ci95"][1] - f["ci95"][0]) / 2 + 1.96 * s["se"]
        assert abs(f["mean"] - s["mean_payoff"]) <= half, (f, s)
    assert fast["agents"][0]["mean"] > fast["agents"][1]["mean"]  # the network beats random


def test_bad_input_names_what_is_allowed():
    game = pyspiel.load_game("underdog")
    with pytest.raises(ValueError, match=r"'ismcts' has no batched form; allowed: random, trained, "
                                         r"net\(FILE\), heuristic \(pub, over_under, underdog, doubt_and_bet\)"):
        batched_match(game, ["ismcts", "random"], 10)
    with pytest.raises(ValueError, match=r"'heuristic' has no batched form"):
        batched_match(pyspiel.load_game("showdown"), ["heuristic", "random"], 10)
    with pytest.raises(ValueError, match="games=0; allowed: a whole number >= 1"):
        batched_match(game, ["random"], 0)
    with pytest.raises(ValueError, match="specs: give at least one agent spec"):
        batched_match(game, [], 10)


@pytest.mark.parametrize("game_string", ["pub", REGISTRY["pub"].small, "pub(players=5)",
                                         "over_under", REGISTRY["over_under"].small,
                                         "over_under(variant=cutthroat,jokers=true,deck=standard)"])
def test_a_batched_heuristic_plays_the_python_heuristics_moves(game_string):
    """Games with the batched heuristic in some seats (random in the others),
    replayed through pyspiel: at every decision of a heuristic seat the move
    played is the one agents/heuristics/pub.py (over_under.py) chooses.
    Over/Under's cut-throat ties and jokers make its players give stacks away."""
    import numpy as np

    from kibitz.agents.matches.batched_match import _Batched
    from kibitz.agents.registry import make_agent
    from kibitz.games.batched import BatchedEnv

    game = pyspiel.load_game(game_string)
    heuristic, rand = _Batched("heuristic", game), _Batched("random", game)
    env = BatchedEnv(game, 64, seed=2, encoding=heuristic.encoding, record=True)
    rng = np.random.default_rng(0)
    seat_is_heuristic = (np.arange(64)[:, None] + np.arange(game.num_players())[None, :]) % 3 != 0
    env.reset()
    games, checked = [], 0
    while len(games) < 150:
        mine = seat_is_heuristic[np.arange(64), env.player]
        actions = np.where(mine, heuristic.choose(env.obs, env.mask, rng), rand.choose(env.obs, env.mask, rng))
        env.step(actions)
        games += [(b, env.final_history[b, :env.final_len[b]].copy()) for b in np.flatnonzero(env.ended)]
    agents = [make_agent("heuristic", game, p, 0) for p in range(game.num_players())]
    for b, history in games[:150]:
        state = game.new_initial_state()
        for a in history:
            p = state.current_player()
            if p >= 0 and seat_is_heuristic[b, p]:
                probs = agents[p].action_probabilities(state)
                assert probs[int(a)] == 1.0, (game_string, state.history(), probs, int(a))
                checked += 1
            state.apply_action(int(a))
    assert checked > 100


def _underdog_decisions(game, rng, games):
    """(state, position) at every decision of ``games`` random games."""
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
                continue
            yield state, state.position()
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])


@pytest.mark.parametrize("game_string", ["underdog", REGISTRY["underdog"].small, "underdog(players=6,cards=15)"])
def test_underdogs_batched_heuristic_sees_what_the_python_heuristic_sees(game_string):
    """At every decision of random games the batched heuristic's view read
    from the compiled position (agents/heuristics/underdog_batched.py) is the
    Python heuristic's, read from the log: the unseen cards, the rivals, who
    of them fought and who is before the mover; the draw step's move is the
    Python heuristic's."""
    import numpy as np

    from kibitz.agents.heuristics import underdog_batched as ub
    from kibitz.agents.heuristics.underdog import _RoundView
    from kibitz.agents.registry import make_agent
    from kibitz.games import underdog as ud

    game = pyspiel.load_game(game_string)
    n, cards = game.num_seats, game.num_cards
    python = make_agent("heuristic", game, 0, 0)
    unseen, rivals, first, fought = (np.zeros(cards if i == 0 else n, np.int64) for i in range(4))
    draws = decisions = 0
    for state, s in _underdog_decisions(game, np.random.default_rng(3), 60):
        me = state.current_player()
        view = _RoundView(state, me)
        k, r = ub.view(s, n, cards, unseen, rivals, first, fought)
        assert unseen[:k].tolist() == [v for v in range(1, cards + 1) if v not in view.seen]
        expected = view.fought + view.undecided
        assert sorted(rivals[:r].tolist()) == sorted(expected)
        for seat, f, fo in zip(rivals[:r].tolist(), first[:r].tolist(), fought[:r].tolist()):
            assert f == (view.order_index[seat] < view.order_index[me])
            assert fo == (seat in view.fought)
        if state.legal_actions() == [ud.SWAP, ud.NEW_UNDERDOG]:
            assert ub.move(s, n, cards, game.last_round_stake) == python._choose(state, state.legal_actions())
            draws += 1
        decisions += 1
    assert draws >= 40 and decisions >= 200


def test_underdogs_batched_chances_of_winning_are_the_python_heuristics():
    """Both estimates of a card's chance to win the showdown (200 random
    deals each) averaged over 40 calls, at keep and fight decisions of random
    default-size games: equal within 0.03 (each mean's standard error is at
    most 0.006). numba's generator is seeded first, so the draws do not
    depend on what ran before in the process."""
    import numba
    import numpy as np

    from kibitz.agents.heuristics import underdog_batched as ub
    from kibitz.agents.heuristics.underdog import _RoundView
    from kibitz.agents.registry import make_agent
    from kibitz.games import underdog as ud

    game = pyspiel.load_game("underdog")
    n, cards = game.num_seats, game.num_cards
    python = make_agent("heuristic", game, 0, 0)
    unseen, rivals, first, fought = (np.zeros(cards if i == 0 else n, np.int64) for i in range(4))
    buf, fights = np.zeros(cards, np.int64), np.zeros(n, np.bool_)
    checked = 0
    numba.njit(lambda k: np.random.seed(k))(4)
    for state, s in _underdog_decisions(game, np.random.default_rng(4), 12):
        if state.legal_actions() == [ud.SWAP, ud.NEW_UNDERDOG]:
            continue
        me = state.current_player()
        view = _RoundView(state, me)
        py_unseen = np.array([v for v in range(1, cards + 1) if v not in view.seen], dtype=int)
        k, r = ub.view(s, n, cards, unseen, rivals, first, fought)
        card = view.hand
        ours = np.mean([ub.win_chance(card, view.underdog, unseen, k, r, first, fought, buf, fights)
                        for _ in range(40)])
        theirs = np.mean([python._win_probability(view, card, py_unseen) for _ in range(40)])
        assert abs(ours - theirs) <= 0.03, (state.history(), ours, theirs)
        checked += 1
    assert checked > 30


def test_underdogs_batched_heuristic_plays_the_same_under_a_seed():
    game = pyspiel.load_game("underdog")
    a = batched_match(game, ["heuristic", "random"], 200, seed=1)
    assert a == batched_match(game, ["heuristic", "random"], 200, seed=1)
    assert a["agents"][0]["mean"] > a["agents"][1]["mean"]
