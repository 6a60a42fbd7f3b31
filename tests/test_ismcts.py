"""IS-MCTS (solvers/ismcts.py) and the ``ismcts`` agent kind."""

import dataclasses
import math

import numpy as np
import pyspiel
import pytest
from helpers import random_play_decisions

from kibitz import games
from kibitz.games import search as game_search
import kibitz.solvers.ismcts as _ismcts
from kibitz.agents.ismcts import heuristic_policies, make_search
from kibitz.agents.registry import agent_kinds, make_agent
from kibitz.solvers.ismcts import ISMCTS

SMALL_UD = "underdog(players=3,cards=5,bank=2)"
SMALL_OU = "over_under(players=2,copies=1,stacks=1,rounds=1)"


def chance_step(state, rng):
    outcomes = state.chance_outcomes()
    probs = np.array([p for _, p in outcomes])
    return outcomes[int(rng.choice(len(outcomes), p=probs / probs.sum()))][0]


def _claim_decision(game, rng, pick, answering=False):
    """The first claim decision (with ``answering``: one that answers a
    claim) of a game whose players make ``pick(state, legal)``."""
    state = game.new_initial_state()
    while state.is_chance_node() or state.phase != "claim" or (answering and state.claim is None):
        if state.is_chance_node():
            state.apply_action(chance_step(state, rng))
        else:
            state.apply_action(pick(state, state.legal_actions()))
    return state


def _answering_two_claims(game):
    """Heuristic play of a 3-player Doubt and Bet game until seat 2 answers
    two claims of this round."""
    from kibitz.agents.heuristics import doubt_and_bet as dh

    rng = np.random.default_rng(2)
    state = game.new_initial_state()
    while True:
        if state.is_chance_node():
            state.apply_action(chance_step(state, rng))
            continue
        if state.current_player() == 2 and state.phase == "claim" and state.claim is not None \
                and sum(e[0] == "claim" for e in state.log()[-3:]) == 2:
            return state
        state.apply_action(dh.choose(state, state.legal_actions()))


class _UncachedNode(_ismcts._Node):
    """A tree node that never keeps a shortlist (to compare with the cache)."""

    moves = property(lambda self: None, lambda self, value: None)


def play(game, bots, seed):
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(chance_step(state, rng))
        else:
            action = bots[state.current_player()].step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
    return state


def first_decision(game, seed, skip=0):
    """A decision point with two or more legal moves, ``skip`` of them in."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    while True:
        if state.is_terminal():  # the game ended first: the next one
            state = game.new_initial_state()
        if state.is_chance_node():
            state.apply_action(chance_step(state, rng))
            continue
        legal = state.legal_actions()
        if len(legal) > 1:
            if skip == 0:
                return state
            skip -= 1
        state.apply_action(legal[int(rng.integers(len(legal)))])


@pytest.mark.parametrize("name", sorted(games.REGISTRY))
def test_plays_complete_games_of_every_kibitz_game(name):
    game = pyspiel.load_game(name)
    n = game.num_players()
    bots = [make_agent("ismcts(sims=8)" if p % 2 == 0 else "random", game, p, seed=p) for p in range(n)]
    state = play(game, bots, seed=1)
    assert state.is_terminal()
    assert sum(state.returns()) == pytest.approx(game.utility_sum())  # payoff=win (1) or zero-sum (showdown)


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker"])
def test_plays_openspiel_games_that_resample(name):
    game = pyspiel.load_game(name)
    bots = [make_agent("ismcts(sims=30)", game, p, seed=p) for p in range(2)]
    state = play(game, bots, seed=3)
    assert sum(state.returns()) == pytest.approx(0.0)


def test_same_seed_same_search_and_moves():
    game = pyspiel.load_game(SMALL_UD)
    state = first_decision(game, seed=5, skip=2)
    me = state.current_player()
    a = ISMCTS(game, me, np.random.default_rng(11), sims=200).search(state)
    b = ISMCTS(game, me, np.random.default_rng(11), sims=200).search(state)
    c = ISMCTS(game, me, np.random.default_rng(12), sims=200).search(state)
    assert a == b
    assert sum(a.values()) == 200
    assert a != c  # another seed explores differently
    n = game.num_players()
    runs = []
    for _ in range(2):
        bots = [make_agent("ismcts(sims=20)", game, p, seed=40 + p) for p in range(n)]
        runs.append(play(game, bots, seed=9).history())
    assert runs[0] == runs[1]


def test_search_leaves_the_root_state_unchanged():
    game = pyspiel.load_game("pub")
    state = first_decision(game, seed=2, skip=3)
    before = (state.history(), state.information_state_string(state.current_player()))
    ISMCTS(game, state.current_player(), np.random.default_rng(0), sims=30).search(state)
    assert (state.history(), state.information_state_string(state.current_player())) == before


def test_final_visits_and_distribution():
    game = pyspiel.load_game(SMALL_OU)
    state = first_decision(game, seed=4)
    me = state.current_player()
    legal = state.legal_actions()
    dist = ISMCTS(game, me, np.random.default_rng(3), sims=120, final="distribution")
    probs = dist.policy(state)
    visits = ISMCTS(game, me, np.random.default_rng(3), sims=120).search(state)
    assert sorted(probs) == legal
    assert sum(probs.values()) == pytest.approx(1.0)
    assert probs == pytest.approx({a: v / 120 for a, v in visits.items()})
    greedy = ISMCTS(game, me, np.random.default_rng(3), sims=120, final="visits").policy(state)
    best = max(visits, key=visits.get)
    assert greedy[best] > 0 and all(greedy[a] == 0 for a in legal if visits[a] < visits[best])


def test_seconds_budget_and_world_samples():
    game = pyspiel.load_game("underdog")
    state = first_decision(game, seed=8, skip=1)
    timed = ISMCTS(game, state.current_player(), np.random.default_rng(0), sims=0, seconds=0.1)
    visits = timed.search(state)
    assert timed.last_simulations == sum(visits.values()) > 0
    pooled = ISMCTS(game, state.current_player(), np.random.default_rng(0), sims=40, max_world_samples=3)
    assert sum(pooled.search(state).values()) == 40


def test_heuristic_rollouts():
    game = pyspiel.load_game(SMALL_UD)
    state = first_decision(game, seed=6)
    search = make_search(game, state.current_player(), np.random.default_rng(0), sims=10, rollout="heuristic")
    assert sum(search.search(state).values()) == 10
    with pytest.raises(ValueError, match="no heuristic agent"):
        make_search(pyspiel.load_game("kuhn_poker"), 0, np.random.default_rng(0), rollout="heuristic")


def test_fast_heuristic_rollout_hook_is_used_where_a_game_offers_it():
    game = pyspiel.load_game("over_under")
    state = first_decision(game, seed=2)
    search = make_search(game, state.current_player(), np.random.default_rng(0), sims=20, rollout="heuristic")
    assert search._rollout_fn is not None
    assert sum(search.search(state).values()) == 20
    assert search._rollout_agents is None  # no agent objects were built
    # expand=heuristic alone keeps random rollouts
    random_rollouts = make_search(game, state.current_player(), np.random.default_rng(0), sims=5,
                             expand="heuristic")
    assert random_rollouts._rollout_fn is None


@pytest.mark.parametrize("game_string", ["underdog", "over_under", "doubt_and_bet(players=3)", "pub"])
def test_standing_is_the_return_at_the_end(game_string):
    """``standing()`` (what a round-limited rollout backs up) equals the
    returns on terminal states, and the round number never goes down."""
    game = pyspiel.load_game(game_string)
    last = 0
    for state in random_play_decisions(game, np.random.default_rng(0), 3):
        assert len(state.standing()) == game.num_players()
        if state.is_terminal():
            assert state.standing() == pytest.approx(state.returns())
            last = 0
        else:
            assert state.round_number() >= last
            last = state.round_number()


def test_widening_keeps_wide_nodes_narrow_and_expand_heuristic_tries_its_move_first():
    game = pyspiel.load_game("doubt_and_bet")
    rng = np.random.default_rng(0)
    state = first_decision(game, seed=0)
    while len(state.legal_actions()) < 100:  # a claim with many stakes and quantities
        if state.is_chance_node():
            state.apply_action(chance_step(state, rng))
        else:
            state.apply_action(make_agent("heuristic", game, state.current_player(), 0).step(state))
    me = state.current_player()
    plain = ISMCTS(game, me, np.random.default_rng(1), sims=200, rollout_rounds=1)
    assert sum(v > 0 for v in plain.search(state).values()) == 200  # every move once
    wide = make_search(game, me, np.random.default_rng(1), sims=200, rollout_rounds=1, widen=1.0,
                  expand="heuristic")
    visits = wide.search(state)
    assert sum(visits.values()) == 200
    assert sum(v > 0 for v in visits.values()) <= math.ceil(math.sqrt(200))
    # the first move tried at the root is the heuristic's choice (in the first
    # world drawn; Doubt and Bet's heuristic reads only the seat's own view)
    first = next(iter(wide.root.children))
    assert first == make_agent("heuristic", game, me, 0).step(state)
    with pytest.raises(ValueError, match="expand, belief or opponents=heuristic"):
        make_search(pyspiel.load_game("kuhn_poker"), 0, np.random.default_rng(0), expand="heuristic")


@pytest.mark.parametrize("rollout", ["random", "heuristic"])
def test_move_limited_rollouts_stop_at_a_decision_and_back_up_the_standing(rollout):
    import random
    game = pyspiel.load_game("over_under")
    state = first_decision(game, seed=4)
    me = state.current_player()
    for k in (0, 3):
        search = make_search(game, me, np.random.default_rng(0), sims=30, rollout_moves=k, rollout=rollout)
        assert sum(search.search(state).values()) == 30
        world = state.resample_from_infostate(me, random.Random(k).random, internal=True)
        moves = len(world.log())
        world.apply_action(world.legal_actions()[0])
        returns = search._playout(world, random.Random(1).random)
        assert returns == world.standing()
        if not world.is_terminal():
            assert not world.is_chance_node()
            made = sum(1 for e in world.log()[moves + 1:] if e[0] in ("predict", "give"))
            assert made == k


def test_public_chance_edges_are_keyed_by_the_outcomes():
    game = pyspiel.load_game("over_under")
    state = first_decision(game, seed=1)
    search = ISMCTS(game, state.current_player(), np.random.default_rng(0), sims=200, engine="python")
    search.search(state)
    below = [k for child in search.root.children.values() for k in child.children]
    assert below and all(isinstance(k, tuple) and all(isinstance(a, int) for a in k) for k in below)
    assert all(k[0] in range(game.rules.KC) for k in below)  # a flipped card


def test_round_limited_rollouts():
    game = pyspiel.load_game("underdog")
    state = first_decision(game, seed=3)
    me = state.current_player()
    limited = ISMCTS(game, me, np.random.default_rng(5), sims=60, rollout_rounds=1)
    visits = limited.search(state)
    assert sum(visits.values()) == 60
    assert limited._stop_round == state.round_number() + 1
    again = ISMCTS(game, me, np.random.default_rng(5), sims=60, rollout_rounds=1)
    assert again.search(state) == visits  # seeded: the same tree
    # one rollout by hand: it stops as the next round begins, on its standing
    import random
    world = state.resample_from_infostate(me, random.Random(1).random, internal=True)
    returns = limited._playout(world, random.Random(2).random)
    if not world.is_terminal():
        assert world.round_number() == limited._stop_round and world.is_chance_node()
    assert returns == world.standing()
    kuhn = pyspiel.load_game("kuhn_poker")
    state = kuhn.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    for option in ({"rollout_rounds": 1}, {"rollout_moves": 0}):
        with pytest.raises(ValueError, match="rollout_rounds"):
            ISMCTS(kuhn, 0, np.random.default_rng(0), sims=5, **option).search(state)


@pytest.mark.parametrize("options, message", [
    ({"sims": -1}, "sims"), ({"sims": 0, "seconds": 0}, "budget"), ({"uct_c": -1}, "uct_c"),
    ({"rollout": "greedy"}, "rollout"), ({"final": "value"}, "final"),
    ({"max_world_samples": 0}, "max_world_samples"), ({"rollout_rounds": -1}, "rollout_rounds"),
    ({"widen": -0.5}, "widen"), ({"expand": "greedy"}, "expand"), ({"rollout_moves": -2}, "rollout_moves"),
    ({"belief": "bayes"}, "belief"), ({"belief_eps": 0}, "belief_eps"), ({"belief_eps": 1.5}, "belief_eps"),
    ({"belief_tries": 0}, "belief_tries"), ({"opponents": "model"}, "opponents")])
def test_bad_options_are_rejected(options, message):
    with pytest.raises(ValueError, match=message):
        ISMCTS(pyspiel.load_game("kuhn_poker"), 0, np.random.default_rng(0), **options)


def test_agent_spec_options():
    kind = agent_kinds()["ismcts"]
    assert set(kind.options) == {"preset", "sims", "seconds", "uct_c", "rollout", "final", "max_world_samples",
                                 "rollout_rounds", "widen", "expand", "rollout_moves", "belief", "belief_eps",
                                 "belief_tries", "opponents", "playouts", "engine", "moves", "model", "prior",
                                 "puct_c"}
    game = pyspiel.load_game(SMALL_UD)
    agent = make_agent("ismcts(sims=7,uct_c=1.5,final=distribution,rollout=heuristic)", game, 1, seed=0)
    config = agent.search.config
    assert (config.sims, config.uct_c, config.final, config.rollout) == (
        7, 1.5, "distribution", "heuristic")
    with pytest.raises(ValueError, match="no option 'simulations'"):
        make_agent("ismcts(simulations=5)", game, 0)


def test_search_refuses_another_seat():
    game = pyspiel.load_game(SMALL_UD)
    state = first_decision(game, seed=1)
    other = (state.current_player() + 1) % game.num_players()
    with pytest.raises(ValueError, match="seat"):
        ISMCTS(game, other, np.random.default_rng(0), sims=5).search(state)


@pytest.mark.parametrize("name, games_played, bound", [(SMALL_UD, 30, 0.45), (SMALL_OU, 30, 0.65)])
def test_beats_random_on_a_seeded_sample(name, games_played, bound):
    # win shares: an even seat gets 1/n (1/3 and 1/2 here)
    game = pyspiel.load_game(name)
    n = game.num_players()
    total = 0.0
    for i in range(games_played):
        seat = i % n
        bots = [make_agent("ismcts(sims=50)" if p == seat else "random", game, p, seed=100 * i + p)
                for p in range(n)]
        total += play(game, bots, seed=i).returns()[seat]
    assert total / games_played > bound


def test_chance_below_the_root_is_keyed_by_what_the_searcher_sees():
    # Underdog deals and draws hidden cards below the root. The edge below a
    # run of chance moves is keyed by what the searcher saw since the root
    # (the game's view_since: in a search's anchored worlds its compiled
    # tokens), never by the outcome itself, so outcomes the searcher cannot
    # tell apart share one subtree (that these keys give the same search as
    # information-state strings: test_view_keys_give_the_same_search_...).
    game = pyspiel.load_game("underdog(players=3,cards=7,bank=4)")
    keys = []
    for seed in range(4):
        state = first_decision(game, seed=seed, skip=3)
        me = state.current_player()
        search = ISMCTS(game, me, np.random.default_rng(seed), sims=200, engine="python")
        search.search(state)
        stack = [search.root]
        while stack:
            node = stack.pop()
            for key, child in node.children.items():
                if not isinstance(key, int):
                    keys.append(key)
                stack.append(child)
    assert keys, "no chance move below a root was met"
    assert all(isinstance(k, tuple) and all(isinstance(t, int) and t >= 0 for t in k) for k in keys)
    # fewer edges than outcomes: cards the searcher does not see do not split them
    assert len(set(keys)) < len(keys)


@pytest.mark.parametrize("game_string", ["underdog(players=3,cards=7,bank=4)", "underdog", "doubt_and_bet(players=3)",
                                         "pub", "pub(players=5,payoff=score)"])
def test_view_since_the_root_partitions_states_as_information_strings_do(game_string):
    """Within one search (worlds drawn from one root), two states have equal
    view_since(me, root mark) exactly when their information-state strings
    for the searcher are equal."""
    import random as _random

    game = pyspiel.load_game(game_string)
    seen = {}
    for seed in range(3):
        root = first_decision(game, seed=seed, skip=4)
        me = root.current_player()
        mark = root.log_mark()
        views, strings = {}, {}
        rand = _random.Random(seed).random
        for w in range(60):
            world = root.resample_from_infostate(me, rand)
            for _ in range(int(rand() * 12)):  # a few random moves and chance outcomes on
                if world.is_terminal():
                    break
                if world.is_chance_node():
                    world.apply_action(chance_step(world, np.random.default_rng(w)))
                else:
                    legal = world.legal_actions()
                    world.apply_action(legal[int(rand() * len(legal))])
            view, string = world.view_since(me, mark), world.information_state_string(me)
            assert views.setdefault(view, string) == string
            assert strings.setdefault(string, view) == view
        seen[seed] = len(views)
    assert max(seen.values()) > 5  # the worlds did reach different views


@pytest.mark.parametrize("game_string", ["underdog(players=3,cards=7,bank=4)", "underdog", "doubt_and_bet(players=3)",
                                         "pub", "pub(players=5,payoff=score)"])
def test_anchored_views_partition_worlds_as_information_strings_do(game_string):
    """A search's own worlds, anchored at the root (``anchor_view``): their
    views since the root (the compiled tokens of the moves since) are equal
    exactly when the searcher's information-state strings are, also after
    the log was written in between (the moves since the root are kept)."""
    import random as _random

    game = pyspiel.load_game(game_string)
    seen = {}
    for seed in range(3):
        root = first_decision(game, seed=seed, skip=4)
        me, mark = root.current_player(), root.log_mark()
        views, strings = {}, {}
        rand = _random.Random(seed).random
        for w in range(60):
            world = root.resample_from_infostate(me, rand, internal=True)
            world.anchor_view(mark)
            for k in range(int(rand() * 12)):
                if world.is_terminal():
                    break
                if k == 3:
                    world.information_state_string(me)  # the log written midway
                if world.is_chance_node():
                    world.chance_step(rand())
                else:
                    legal = world.legal_actions()
                    world._apply_action(legal[int(rand() * len(legal))])
            view = world.view_since(me, mark)
            string = world.information_state_string(me)
            assert world.view_since(me, mark) == view  # the same once the whole log is written
            assert views.setdefault(view, string) == string
            assert strings.setdefault(string, view) == view
        seen[seed] = len(views)
    assert max(seen.values()) > 5


def test_games_it_cannot_search_are_refused_clearly():
    from open_spiel.python.games import kuhn_poker  # noqa: F401  (python_kuhn_poker: no resampling)

    game = pyspiel.load_game("python_kuhn_poker")
    state = first_decision(game, seed=0)
    with pytest.raises(ValueError, match="resample_from_infostate"):
        ISMCTS(game, state.current_player(), np.random.default_rng(0), sims=5).search(state)
    with pytest.raises(ValueError, match="sequential"):
        ISMCTS(pyspiel.load_game("goofspiel(players=2)"), 0, np.random.default_rng(0))


def _hearts_stuck_position():
    """A hearts position (random play, seed 0) where OpenSpiel's
    resample_from_infostate draws a world some player cannot continue, with
    the seed of such a draw; None if no draw in the first 12 decisions is."""
    game = pyspiel.load_game("hearts")
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    for _ in range(12):
        while state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(actions, p=probs)))
        for k in range(30):
            draw = np.random.default_rng(k)
            world = state.resample_from_infostate(state.current_player(), draw.random)
            while not world.is_terminal():
                if world.is_chance_node():
                    actions, probs = zip(*world.chance_outcomes())
                    world.apply_action(int(draw.choice(actions, p=probs)))
                elif not world.legal_actions():
                    return game, state
                else:
                    world.apply_action(int(draw.choice(world.legal_actions())))
        state.apply_action(int(rng.choice(state.legal_actions())))
    return game, None


def test_a_resampler_that_draws_a_stuck_world_is_a_clear_error_not_an_index_error():
    game, state = _hearts_stuck_position()
    if state is None:  # OpenSpiel's hearts resampler is consistent (fixed): the search just runs
        game = pyspiel.load_game("hearts")
        state = first_decision(game, seed=0)
        probs = ISMCTS(game, state.current_player(), np.random.default_rng(0), sims=100).policy(state)
        assert sum(p for _, p in probs) == pytest.approx(1.0)
        return
    with pytest.raises(ValueError, match="hearts: a state drawn by its resample_from_infostate has player "
                                         r"\d to move with no legal move"):
        ISMCTS(game, state.current_player(), np.random.default_rng(0), sims=3000).policy(state)


def _random_moves(game, moves: int, rng):
    """A state after up to ``moves`` uniform moves and chance outcomes
    (fewer at the end of the game), then chance's first outcomes up to a
    decision or the end."""
    state = game.new_initial_state()
    for _ in range(moves):
        if state.is_terminal():
            break
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.integers(len(outcomes))][0])
        else:
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    return state


@pytest.mark.parametrize("game_string, moves", [
    ("underdog", 40), ("underdog", 90), ("underdog(players=3,cards=5,bank=2)", 6), ("pub", 40),
    ("over_under", 40), ("doubt_and_bet(players=3)", 40), ("doubt_and_bet(players=3)", 150),
    ("doubt_and_bet", 200)])
def test_internal_resample_draws_the_same_world(game_string, moves):
    """IS-MCTS asks kibitz games for ``resample_from_infostate(..., internal=True)``
    (a replay without pyspiel's history bookkeeping): with the same random
    stream it must give the same world as the public call."""
    import random as _random

    game = pyspiel.load_game(game_string)
    state = _random_moves(game, moves, np.random.default_rng(4))
    me = state.current_player()
    for seed in range(5):
        a = state.resample_from_infostate(me, _random.Random(seed).random)
        b = state.resample_from_infostate(me, _random.Random(seed).random, internal=True)
        assert str(a) == str(b)
        for p in range(game.num_players()):
            assert a.information_state_string(p) == b.information_state_string(p)
        assert a.legal_actions() == b.legal_actions()
        assert a._c.__getstate__() == b._c.__getstate__()  # every field of the rules' state


def _kuhn_after_bet(observer_card):
    """Kuhn poker: the observer (seat 1) holds ``observer_card``; seat 0 bet."""
    state = pyspiel.load_game("kuhn_poker").new_initial_state()
    other = 2 if observer_card != 2 else 0
    state.apply_action(other)
    state.apply_action(observer_card)
    state.apply_action(1)  # seat 0 bets
    return state


class _BetsOnlyWithTheKing:
    """A stand-in heuristic for Kuhn poker: bets with the king (2), else passes."""

    def __init__(self, game, player, seed):
        self.player = player

    def step(self, state):
        card = int(state.information_state_string(self.player)[0])
        return 1 if card == 2 else 0


def test_heuristic_belief_keeps_the_worlds_the_opponent_model_explains(monkeypatch):
    """Seat 0 bet; under a model that bets only with the king, the kept
    determinizations give seat 0 the king (OpenSpiel game: history replay)."""
    from kibitz.agents import heuristics
    monkeypatch.setitem(heuristics.HEURISTICS, "kuhn_poker", _BetsOnlyWithTheKing)
    state = _kuhn_after_bet(observer_card=0)
    game = state.get_game()
    search = make_search(game, 1, np.random.default_rng(0), sims=5, belief="heuristic", belief_eps=1e-9)
    rand = np.random.default_rng(1).random
    worlds = [search._believed_world(state, rand) for _ in range(40)]
    assert {w.history()[0] for w in worlds} == {2}
    # about half the uniform draws (queen or king for seat 0) are thrown away
    assert 40 < search.belief_drawn < 160 and search.belief_kept == 40
    drawn = {state.resample_from_infostate(1, np.random.default_rng(k).random).history()[0] for k in range(40)}
    assert drawn == {1, 2}
    # belief_eps=1 keeps every draw; and the search runs with the filter
    loose = make_search(game, 1, np.random.default_rng(0), sims=30, belief="heuristic", belief_eps=1.0)
    loose.search(state)
    assert loose.belief_drawn == loose.belief_kept == 30


def test_heuristic_belief_when_every_draw_is_rejected_falls_back_to_a_consistent_world(monkeypatch):
    from kibitz.agents import heuristics

    class NeverBets(_BetsOnlyWithTheKing):
        def step(self, state):
            return 0

    monkeypatch.setitem(heuristics.HEURISTICS, "kuhn_poker", NeverBets)
    state = _kuhn_after_bet(observer_card=1)
    search = make_search(state.get_game(), 1, np.random.default_rng(0), sims=5, belief="heuristic",
                    belief_eps=1e-12, belief_tries=3)
    world = search._believed_world(state, np.random.default_rng(2).random)
    assert (search.belief_drawn, search.belief_kept) == (3, 0)
    assert world.history()[1:] == [1, 1] and world.history()[0] in (0, 2)


def test_heuristic_belief_in_underdog_conditions_on_the_fights_seen():
    """Underdog, 3 players: the observer (last to act) saw the others fight.
    With belief=heuristic every kept world gives them cards with which the
    heuristic fights (the check runs inside the game's own replay), and
    their cards are higher on average than in uniform draws."""
    from kibitz.agents.heuristics import HEURISTICS
    from kibitz.games import underdog as ud

    game = pyspiel.load_game("underdog(players=3)")
    heur = [HEURISTICS["underdog"](game, p, p) for p in range(3)]
    rng = np.random.default_rng(3)
    for attempt in range(200):
        state = game.new_initial_state()
        while not state.is_terminal() and state.current_player() != 2 or state.is_chance_node() or \
                state.legal_actions() != [ud.FIGHT, ud.PASS]:
            if state.is_chance_node():
                state.apply_action(chance_step(state, rng))
            else:
                state.apply_action(heur[state.current_player()].step(state))
        if all(e[0] == "fight" for e in state.log()[-2:]):
            break
    else:
        pytest.fail("no position where seats 0 and 1 both fought")
    search = make_search(game, 2, np.random.default_rng(0), sims=5, belief="heuristic", belief_eps=1e-9)
    rand = np.random.default_rng(5).random
    believed = [search._believed_world(state, rand) for _ in range(60)]
    uniform = [state.resample_from_infostate(2, rand) for _ in range(60)]
    assert search.belief_kept == 60 and search.belief_drawn > 60
    from kibitz.agents.heuristics.underdog import policy_key
    checked = 0
    for world in believed:
        # replay the world's log: each other seat's move this round is the
        # heuristic's (cached by its policy_key) in that world
        moves = []
        state._replay(world.log(), observer=2,
                      check=lambda s, player, action: moves.append(
                          (player, s.round_number(), policy_key(s, player), action)))
        for player, rnd, key, action in moves:
            if rnd == state.round_number():
                assert search._belief_cache[(player, key)] == action
                checked += 1
    assert checked >= 2 * 60  # both fights (and their draw steps) in every world

    # the cards the model explains are fewer than the cards left unseen
    for p in (0, 1):
        assert {w.hands[p] for w in believed} < {w.hands[p] for w in uniform}


def test_underdog_resample_memo_draws_earlier_rounds_once_and_stays_a_valid_world():
    """With a memo (one search's), Underdog's internal resample draws the
    earlier rounds once: the first world is the one drawn without it, later
    worlds share its earlier rounds and draw this round afresh, and each is
    the world a full replay of its own log gives, in the searcher's
    information state."""
    import random as _random

    game = pyspiel.load_game("underdog")
    state = _random_moves(game, 90, np.random.default_rng(7))
    me, begun = state.current_player(), state.round_mark()
    assert begun > 0  # earlier rounds to redraw
    plain = state.resample_from_infostate(me, _random.Random(0).random, internal=True)
    memo = {}
    first = state.resample_from_infostate(me, _random.Random(0).random, internal=True, memo=memo)
    assert first._c.__getstate__() == plain._c.__getstate__()
    now = set()
    for seed in range(1, 9):
        world = state.resample_from_infostate(me, _random.Random(seed).random, internal=True, memo=memo)
        assert world.log()[:begun] == first.log()[:begun]
        assert world._c.__getstate__() == state._replay(world.log())._c.__getstate__()
        assert world.information_state_string(me) == state.information_state_string(me)
        now.add(tuple(world.log()[begun:]))
    assert len(now) > 1  # this round is drawn again each time
    others = {tuple(state.resample_from_infostate(me, _random.Random(s).random, internal=True).log()[:begun])
              for s in range(1, 9)}
    assert len(others) > 1  # and without the memo the earlier rounds change from world to world


def test_pub_resample_memo_keeps_only_what_every_draw_shares():
    """Pub's memo keeps the history, the hidden places and the unseen cards:
    with it every world is the one drawn without it from the same stream."""
    import random as _random

    game = pyspiel.load_game("pub")
    state = _random_moves(game, 30, np.random.default_rng(3))
    me, memo = state.current_player(), {}
    for seed in range(6):
        plain = state.resample_from_infostate(me, _random.Random(seed).random, internal=True)
        kept = state.resample_from_infostate(me, _random.Random(seed).random, internal=True, memo=memo)
        assert kept._c.__getstate__() == plain._c.__getstate__()
        assert kept.information_state_string(me) == state.information_state_string(me)
    assert len(memo) == 1


def test_doubt_and_bet_internal_resample_matches_the_full_replay_through_a_long_game():
    """Doubt and Bet's internal resample starts from a snapshot of the
    current round's start (made once per round, shared by clones) and
    replays only that round; through a heuristic game of many rounds, at
    every kind of decision, it gives the same world as the full replay."""
    import random as _random

    game = pyspiel.load_game("doubt_and_bet(players=3)")
    bots = [make_agent("heuristic", game, p, p) for p in range(3)]
    rng = np.random.default_rng(11)
    state = game.new_initial_state()
    compared, phases, k = 0, set(), 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(chance_step(state, rng))
            continue
        k += 1
        if k % 7 == 0:
            me = state.current_player()
            root = state.clone()  # a clone at the same position shares the round-start snapshot
            for seed in range(2):
                a = state.resample_from_infostate(me, _random.Random(seed).random)
                b = root.resample_from_infostate(me, _random.Random(seed).random, internal=True)
                assert a._c.__getstate__() == b._c.__getstate__()
            # the fast path ran, also before this round's deal (exchange)
            assert "round start" in root._c.derived  # kept until the next move, shared by clones
            compared += 1
            phases.add(state.phase)
        state.apply_action(bots[state.current_player()].step(state))
    assert compared > 20 and state.round > 5 and len(phases) >= 3


def test_heuristic_belief_in_doubt_and_bet_explains_the_claims_seen():
    """Doubt and Bet's heuristic has a fast rollout_action, which the belief
    filter calls directly: every kept world makes each other player's move
    of this round the heuristic's move there."""
    from kibitz.agents.heuristics import doubt_and_bet as dh

    game = pyspiel.load_game("doubt_and_bet(players=3)")
    state = _answering_two_claims(game)
    search = make_search(game, 2, np.random.default_rng(0), sims=5, belief="heuristic", belief_eps=1e-9,
                    belief_tries=5000)
    rand = np.random.default_rng(3).random
    worlds = [search._believed_world(state, rand) for _ in range(10)]
    assert search.belief_kept == 10 and search.belief_drawn > 10
    assert not search._belief_cache  # the fast hook is not cached
    assert any(k[0] == "db-belief" for k in search._memo["memo"])  # the game's own draw
    checked = 0
    for world in worlds:
        # the world's deal, replayed with its moves: the other seats' moves this round are the heuristic's
        replay = game.new_initial_state()
        cards = iter(e[2] for e in world.log() if e[0] == "deal")
        for action in state.history():
            if replay.is_chance_node() and replay.phase == "deal":
                replay.apply_action(next(cards))
                continue
            player = replay.current_player()
            if player in (0, 1) and replay.round == state.round:
                assert dh.choose(replay, replay.legal_actions()) == action
                checked += 1
            replay.apply_action(action)
        assert next(cards, None) is None  # every card of the world was dealt
    assert checked >= 2 * 10  # the two claims before seat 2's turn, in every world


@pytest.mark.parametrize("game_string", ["underdog", "doubt_and_bet(players=3)", "pub"])
def test_view_keys_give_the_same_search_as_information_strings(game_string, monkeypatch):
    game = pyspiel.load_game(game_string)
    state = first_decision(game, seed=5, skip=3)
    me = state.current_player()
    fast = ISMCTS(game, me, np.random.default_rng(9), sims=300, rollout_rounds=1).search(state)
    # a game without the capability VIEWS: back to the information-state strings
    spec = games.REGISTRY[game.get_type().short_name]
    monkeypatch.setitem(games.REGISTRY, spec.short_name,
                        dataclasses.replace(spec, search=spec.search - {game_search.VIEWS}))
    slow = ISMCTS(game, me, np.random.default_rng(9), sims=300, rollout_rounds=1).search(state)
    assert fast == slow


@pytest.mark.parametrize("game_string, skip", [("underdog", 3), ("doubt_and_bet(players=3)", 0), ("pub", 3),
                                               ("over_under", 3)])
def test_compiled_chance_steps_give_the_same_search(game_string, skip, monkeypatch):
    """Chance below the root drawn and played in one compiled call
    (``chance_step``) takes the outcomes ``sample_chance`` takes
    from the same draws: the same search."""
    game = pyspiel.load_game(game_string)
    state = first_decision(game, seed=5, skip=skip)
    me = state.current_player()
    fast = ISMCTS(game, me, np.random.default_rng(9), sims=300, engine="python")
    assert fast._compiled_chance
    slow = ISMCTS(game, me, np.random.default_rng(9), sims=300, engine="python")
    slow._compiled_chance = False
    steps = []
    step = type(state).chance_step
    monkeypatch.setattr(type(state), "chance_step", lambda world, u: steps.append(u) or step(world, u))
    assert fast.search(state) == slow.search(state)
    assert steps  # chance below the root was met, and stepped compiled


def test_pub_policy_key_follows_the_information_state_and_fixes_the_heuristics_move(monkeypatch):
    from kibitz.agents.heuristics import HEURISTICS
    from kibitz.agents.heuristics import pub as pub_heuristic

    game = pyspiel.load_game("pub")
    heur = [HEURISTICS["pub"](game, p, p) for p in range(4)]
    move_of, decisions = {}, 0
    for seed in range(12):
        rng, worlds = np.random.default_rng(seed), np.random.default_rng(100 + seed)
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(chance_step(state, rng))
                continue
            me = state.current_player()
            key = pub_heuristic.policy_key(state, me)
            # every world the player cannot tell apart has its key
            for _ in range(3):
                world = state.resample_from_infostate(me, worlds.random)
                assert pub_heuristic.policy_key(world, me) == key
            move = heur[me].step(state)
            assert move_of.setdefault(key, move) == move
            decisions += 1
            # random moves as well, so that keys meet states the heuristic would not reach
            state.apply_action(move if rng.random() < 0.5 else int(rng.choice(state.legal_actions())))
    assert decisions > 12 * 20
    # the search with the model cached by the key is the search with the information-state string
    state = first_decision(game, seed=4, skip=6)
    me = state.current_player()
    fast = make_search(game, me, np.random.default_rng(2), sims=200, opponents="heuristic").search(state)
    monkeypatch.setattr(pub_heuristic, "policy_key", None)
    slow = make_search(game, me, np.random.default_rng(2), sims=200, opponents="heuristic").search(state)
    assert fast == slow


def test_every_agent_option_is_in_the_docs_options_table():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "solvers" / "ismcts.md").read_text()
    table = doc[doc.index("## Options"):doc.index("## Opponent model")]
    kind = agent_kinds()["ismcts"]
    for name, (default, _) in kind.options.items():
        assert f"| `{name}` | " in table, name


def test_every_preset_is_in_the_docs_presets_table_with_its_options():
    from pathlib import Path

    from kibitz.agents.registry import parse_spec

    doc = (Path(__file__).resolve().parents[1] / "docs" / "solvers" / "ismcts.md").read_text()
    rows = doc[doc.index("### Presets"):doc.index("## Opponent model")].split("\n")
    for name, config in _ismcts.PRESETS.items():
        row = next(r for r in rows if r.startswith(f"| `{name}` | "))
        spelled = row.split(" | ")[1].strip("`")
        assert _ismcts.make_config(**parse_spec(f"ismcts({spelled})")[1]) == config, name
    assert set(agent_kinds()["ismcts"].presets) == set(_ismcts.PRESETS)


def test_a_preset_with_options_beside_it():
    game = pyspiel.load_game(SMALL_UD)
    agent = make_agent("ismcts(preset=one_round,sims=7)", game, 0, seed=0)
    assert agent.search.config == dataclasses.replace(_ismcts.PRESETS["one_round"], sims=7)
    agent = make_agent("ismcts(belief,uct_c=2)", game, 0, seed=0)
    assert agent.search.config == dataclasses.replace(_ismcts.PRESETS["belief"], uct_c=2.0)
    with pytest.raises(ValueError, match="unknown IS-MCTS preset 'strong'; presets: one_round, one_step"):
        make_agent("ismcts(preset=strong)", game, 0)


def test_options_take_their_field_types_and_other_values_are_refused():
    config = _ismcts.ISMCTSConfig(uct_c=2, widen=1, sims=10.0)
    assert (type(config.uct_c), type(config.widen), type(config.sims)) == (float, float, int)
    with pytest.raises(ValueError, match="sims must be an integer; got 1.5"):
        _ismcts.ISMCTSConfig(sims=1.5)
    with pytest.raises(ValueError, match="uct_c must be a number; got 'high'"):
        _ismcts.ISMCTSConfig(uct_c="high")
    with pytest.raises(ValueError, match="option uct_c='high' must be a finite number"):
        make_agent("ismcts(uct_c=high)", pyspiel.load_game("kuhn_poker"), 0)
    with pytest.raises(ValueError, match="IS-MCTS has no option 'simulations'"):
        ISMCTS(pyspiel.load_game("kuhn_poker"), 0, np.random.default_rng(0), simulations=5)


def test_opponents_heuristic_lets_the_model_move_for_the_other_players(monkeypatch):
    """Kuhn poker, the searcher in seat 0 at the first move; seat 1 is
    modelled as always passing: with opponents=heuristic every seat-1 edge
    of the tree is a pass, while the searcher's own moves are searched."""
    from kibitz.agents import heuristics

    class NeverBets(_BetsOnlyWithTheKing):
        def step(self, state):
            return 0

    monkeypatch.setitem(heuristics.HEURISTICS, "kuhn_poker", NeverBets)
    game = pyspiel.load_game("kuhn_poker")
    state = game.new_initial_state()
    state.apply_action(2)
    state.apply_action(0)
    search = make_search(game, 0, np.random.default_rng(0), sims=200, opponents="heuristic", belief_eps=1e-9)
    visits = search.search(state)
    assert set(visits) == {0, 1} and min(visits.values()) > 0
    opponent_edges = [set(search.root.children[a].children) for a in (0, 1)]
    assert opponent_edges == [{0}, {0}]
    searched = ISMCTS(game, 0, np.random.default_rng(0), sims=200)
    searched.search(state)
    assert set(searched.root.children[1].children) == {0, 1}  # searched, seat 1 tries both


def test_modelled_opponent_edges_are_what_the_searcher_saw():
    """Underdog with opponents=heuristic: another player's edge is keyed by
    the searcher's view of the move ("p1 lays 4"), never by "keep 9"."""
    game = pyspiel.load_game("underdog(players=3,cards=7,bank=4)")
    state = first_decision(game, seed=2)
    me = state.current_player()
    search = make_search(game, me, np.random.default_rng(0), sims=300, opponents="heuristic")
    search.search(state)
    seen, stack = [], [search.root]
    while stack:
        node = stack.pop()
        for key, child in node.children.items():
            if isinstance(key, tuple) and key[:1] == ("saw",):
                seen.append(key[1])
            stack.append(child)
    texts = [t for view in seen for t in view]
    assert seen and any(" lays " in t for t in texts)
    assert not any(t.startswith(("you keep", "you draw", "you are dealt")) for t in texts)


@pytest.mark.parametrize("many", [64, 10**9])
def test_claim_nodes_with_many_moves_expand_each_untried_move_once(monkeypatch, many):
    """At a Doubt and Bet claim node with hundreds of legal claims, every
    simulation tries a new claim. Nodes with more than ``_MANY`` legal moves,
    under a quarter tried, draw it by rejection (``many=64``); the scan of
    every legal move (``many`` huge) must give the same statistics: one
    child per simulation, all legal, each other child's availability
    counted once per later simulation."""
    import kibitz.solvers.ismcts as ism

    monkeypatch.setattr(ism, "_MANY", many)
    game = pyspiel.load_game("doubt_and_bet")
    state = _claim_decision(game, np.random.default_rng(4), lambda st, legal: legal[0])
    legal = set(state.legal_actions())
    assert len(legal) > 4 * 60
    search = ism.ISMCTS(game, state.current_player(), np.random.default_rng(0), sims=60,
                        rollout_rounds=1)
    search.search(state)
    children = search.root.children
    assert len(children) == 60 and set(children) <= legal
    assert sorted(ch.avail for ch in children.values()) == list(range(1, 61))
    assert all(ch.visits == 1 for ch in children.values())


def test_shortlist_moves_search_only_the_heuristics_candidates():
    """moves=shortlist: at a Doubt and Bet claim node with thousands of
    legal claims the search tries only the shortlist (legal, the heuristic's
    own move and doubting among them), and its policy is zero elsewhere."""
    from kibitz.agents.heuristics import doubt_and_bet as dh

    game = pyspiel.load_game("doubt_and_bet")
    state = _claim_decision(game, np.random.default_rng(6), dh.choose, answering=True)
    legal = state.legal_actions()
    short = dh.shortlist(state, legal)
    assert 8 < len(short) < 60 < len(legal) and set(short) <= set(legal)
    assert dh.choose(state, legal) in short and dh.db.DOUBT in short
    me = state.current_player()
    search = make_search(game, me, np.random.default_rng(0), sims=200, rollout_rounds=1, moves="shortlist")
    visits = search.search(state)
    assert set(search.root.children) == set(short)  # 200 sims > the list: every candidate tried
    assert all(v == 0 for a, v in visits.items() if a not in short)
    policy = search.policy(state)
    assert set(a for a, p in policy.items() if p > 0) <= set(short)


def test_shortlist_is_made_once_per_node_and_the_search_is_unchanged(monkeypatch):
    """The searcher's shortlist depends only on what it has seen, so each
    node keeps the list made at its first visit with each view: the same
    search (every visit count equal) with far fewer calls than visits."""
    from kibitz.agents.heuristics import doubt_and_bet as dh

    game = pyspiel.load_game("doubt_and_bet")
    state = _claim_decision(game, np.random.default_rng(6), dh.choose)
    me = state.current_player()

    def run():
        calls = []
        search = make_search(game, me, np.random.default_rng(1), sims=300, rollout_rounds=1,
                        moves="shortlist", opponents="heuristic", rollout="heuristic")
        short = search._shortlist
        search._shortlist = lambda st, legal: calls.append(1) or short(st, legal)
        return search.search(state), len(calls)

    visits, calls = run()

    monkeypatch.setattr(_ismcts, "_Node", _UncachedNode)
    visits_uncached, calls_uncached = run()
    assert visits == visits_uncached
    assert calls_uncached >= 300 and calls < calls_uncached / 2


def test_shortlist_cache_follows_what_the_searcher_saw_after_its_own_call(monkeypatch):
    """A node below the searcher's own call is reached with either outcome
    of the showdown (the edge is the action), and the next round's exchange
    comes before any deal: the searcher may start it with other chips, so
    other moves are legal. The shortlist kept per node must follow what the
    searcher saw, or a search plays a move illegal in its world (found in
    review: 'buy slot' with no chips). Scripted from a 3-player game in
    which seat 0 answers a raise; each search runs, and equals the search
    that makes the list at every visit."""
    game = pyspiel.load_game("doubt_and_bet(players=3,chips=1,slots=3,colours=1,upkeep_start=0,"
                             "shuffle_every=0)")
    state = game.new_initial_state()

    def play(*moves):
        for m in moves:
            if isinstance(m, int):  # a card dealt (0 red, 1 rainbow)
                state.apply_action(m)
                continue
            p = state.current_player()
            names = {state.action_to_string(p, a): a for a in state.legal_actions()}
            state.apply_action(names[m])

    play("keep", "sell slot", "keep", 0, 0, 0, 0, 1, 0, 1, 1,
         "claim 1 red stake 1+0", "claim 2 red stake 1+0", "doubt", "raise 1+1", "fold",
         "keep", "keep", "sell slot", 0, 0, 1, 1, 0, 0, 1,
         "claim 1 red stake 1+0", "claim 2 red stake 1+0", "claim 3 rainbow stake 1+0", "doubt",
         "raise 1+1")
    assert state.current_player() == 0 and state.phase == "showdown"

    def searches():
        return [make_search(game, 0, np.random.default_rng(seed), sims=300, moves="shortlist",
                       rollout_rounds=1).search(state) for seed in range(6)]

    cached = searches()

    monkeypatch.setattr(_ismcts, "_Node", _UncachedNode)
    assert cached == searches()


def test_shortlist_needs_a_game_whose_heuristic_offers_one():
    with pytest.raises(ValueError, match="moves=shortlist: the 'pub' heuristic offers no shortlist; "
                                         "games with one: doubt_and_bet"):
        make_search(pyspiel.load_game("pub"), 0, np.random.default_rng(0), moves="shortlist")
    with pytest.raises(ValueError, match="moves must be one of all, shortlist; got 'some'"):
        ISMCTS(pyspiel.load_game("pub"), 0, np.random.default_rng(0), moves="some")


def test_doubt_and_bet_internal_resample_matches_the_full_replay_after_folded_rounds():
    """Before a round's deal (exchange) the hands and deck are still the last
    round's; after a fold that round was never revealed, so the search's
    world must hold the redrawn cards there, as the full replay does, not
    the real ones. Random play in a small configuration with seating
    shuffles, upkeeps and eliminations: every decision, every field equal."""
    import random as _random

    game = pyspiel.load_game("doubt_and_bet(players=4,chips=2,slots=2,colours=2,shuffle_every=2,"
                             "upkeep_start=3,upkeep_every=1,max_rounds=30)")
    after_fold = 0
    for state in random_play_decisions(game, np.random.default_rng(5), 40):
        if state.is_terminal():
            continue
        me = state.current_player()
        root = state.clone()
        for seed in range(2):
            a = state.resample_from_infostate(me, _random.Random(seed).random)
            b = root.resample_from_infostate(me, _random.Random(seed).random, internal=True)
            assert a._c.__getstate__() == b._c.__getstate__()
        if state.phase == "exchange":
            log = state.log()
            starts = [i for i, e in enumerate(log) if e[0] == "round"]
            last = log[starts[-2]:starts[-1]] if len(starts) > 1 else []
            if any(e[0] == "deal" for e in last) and not any(e[0] == "reveal" for e in last):
                after_fold += 1
    assert after_fold > 20


@pytest.mark.parametrize("phase", ["claim", "exchange"])
def test_doubt_and_bet_resample_memo_draws_earlier_rounds_once_and_stays_a_valid_world(phase):
    """With a search's ``memo`` the earlier rounds' hidden cards are drawn at
    the first call only: that first world is the one drawn without a memo,
    and every later one keeps its earlier rounds, draws this round afresh,
    and is still the world a full replay of the real history with its cards
    gives, field for field (at an exchange, before this round's deal, that
    includes the hands and deck left from the last round's redrawn cards)."""
    import random as _random

    game = pyspiel.load_game("doubt_and_bet(players=3)")
    bots = [make_agent("heuristic", game, p, p) for p in range(3)]
    rng = np.random.default_rng(3)
    state = game.new_initial_state()

    def folded_last_round():
        log = state.log()
        starts = [i for i, e in enumerate(log) if e[0] == "round"]
        return not any(e[0] == "reveal" for e in log[starts[-2]:starts[-1]])

    while (state.is_terminal() or state.is_chance_node() or state.round < 8 or state.phase != phase
           or (phase == "exchange" and not folded_last_round())):
        if state.is_terminal():  # folds are rare in heuristic play: another game
            state = game.new_initial_state()
        elif state.is_chance_node():
            state.apply_action(chance_step(state, rng))
        else:
            state.apply_action(bots[state.current_player()].step(state))
    me = state.current_player()
    log = state.log()
    round_start = max(i for i, e in enumerate(log) if e[0] == "round")
    assert any(e[0] == "reveal" for e in log[:round_start])  # earlier hands to redraw

    def cards_of(world, lo, hi):
        return [e for e in world.log()[lo:hi] if e[0] == "deal"]

    def full_replay(world):
        """The real history replayed with ``world``'s deals."""
        deals = iter(e[2] for e in world.log() if e[0] == "deal")
        replay = game.new_initial_state()
        for a in state.history():
            replay.apply_action(next(deals) if replay.phase == "deal" else a)
        return replay

    plain = state.resample_from_infostate(me, _random.Random(0).random, internal=True)
    memo = {}
    first = state.resample_from_infostate(me, _random.Random(0).random, internal=True, memo=memo)
    assert first._c.__getstate__() == plain._c.__getstate__()
    assert sum(key[0] == "db-earlier" for key in memo) == 1
    now = set()
    for seed in range(1, 9):
        world = state.resample_from_infostate(me, _random.Random(seed).random, internal=True, memo=memo)
        assert cards_of(world, 0, round_start) == cards_of(first, 0, round_start)
        assert world._c.__getstate__() == full_replay(world)._c.__getstate__()
        assert world.information_state_string(me) == state.information_state_string(me)
        now.add(tuple(cards_of(world, round_start, None)))
    if phase == "claim":
        assert len(now) > 4  # this round is drawn again each time
    # and without the memo the earlier rounds change from world to world
    others = {tuple(cards_of(state.resample_from_infostate(me, _random.Random(s).random, internal=True),
                             0, round_start)) for s in range(1, 5)}
    assert len(others) > 1

    bot = ISMCTS(game, me, np.random.default_rng(0), sims=30, rollout_rounds=1)
    bot.search(state)
    assert list(bot._memo) == ["memo"] and sum(key[0] == "db-earlier" for key in bot._memo["memo"]) == 1


def test_doubt_and_bet_believed_draw_matches_replaying_each_candidate():
    """Doubt and Bet draws belief=heuristic's candidates itself (a factor per
    player and hand, seat by seat); the worlds must follow the distribution of
    the generic rejection, which replays each candidate and checks every
    move: the mean count of each colour in each other hand agrees within
    sampling error, and differs from uniform worlds' (so the test has power)."""

    game = pyspiel.load_game("doubt_and_bet(players=3)")
    state = _answering_two_claims(game)
    n, k1 = 1500, game.k1

    def hands(make_world):
        out = np.zeros((n, 2, k1))
        for i in range(n):
            world = make_world(i)
            out[i] = [world.hand(0), world.hand(1)]
        return out

    def believed(seed, own_draw=True):
        policies = heuristic_policies(game)
        if not own_draw:  # the generic rejection: replay each candidate
            policies = dataclasses.replace(policies, believed_draw=None)
        search = ISMCTS(game, 2, np.random.default_rng(seed), sims=5, belief="heuristic", belief_eps=0.3,
                        policies=policies)
        rand = np.random.default_rng(seed + 1).random
        return lambda i: search._believed_world(state, rand)

    ours = hands(believed(0))
    generic = hands(believed(10, own_draw=False))
    rand = np.random.default_rng(7).random
    uniform = hands(lambda i: state.resample_from_infostate(2, rand))

    def z(a, b):
        return np.abs(a.mean(0) - b.mean(0)) / np.sqrt(a.var(0) / n + b.var(0) / n + 1e-12)

    assert z(ours, generic).max() < 4.5
    assert z(ours, uniform).max() > 5 and z(generic, uniform).max() > 5
