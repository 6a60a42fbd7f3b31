"""IS-MCTS with a prior: PUCT at the searcher's own nodes (``prior=SPEC``)."""

import numpy as np
import pyspiel
import pytest

from kibitz import games  # noqa: F401  (registers the kibitz games)
import kibitz.solvers.ismcts as _ismcts
from kibitz.agents.ismcts import make_search
from kibitz.agents.registry import make_agent
from kibitz.solvers.ismcts import ISMCTS, SearchPolicies

SMALL_UD = "underdog(players=3,cards=5,bank=2)"


def _decision(game, seed, min_moves=2):
    """A decision of a random game with at least ``min_moves`` legal moves."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    while True:
        if state.is_terminal():
            state = game.new_initial_state()
            continue
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(outcomes[int(rng.choice(len(outcomes), p=np.array(probs) / sum(probs)))])
            continue
        legal = state.legal_actions()
        if len(legal) >= min_moves:
            return state
        state.apply_action(legal[int(rng.integers(len(legal)))])


def _kuhn_facing_a_bet(card):
    """Kuhn poker: seat 1 holds ``card`` (0 Jack, 2 King), seat 0 the Queen and bets."""
    state = pyspiel.load_game("kuhn_poker").new_initial_state()
    for action in (1, card, 1):
        state.apply_action(action)
    return state


def test_all_prior_mass_on_one_move_makes_it_the_most_visited():
    game = pyspiel.load_game(SMALL_UD)
    state = _decision(game, seed=3)
    me, legal = state.current_player(), state.legal_actions()
    plain = ISMCTS(game, me, np.random.default_rng(0), sims=30, engine="python").search(state)
    # the prior's move is the one plain UCB1 likes least
    favoured = min(legal, key=lambda a: (plain[a], a))
    asked = []

    def prior(world, player):
        asked.append(world.information_state_string(player))
        return {a: float(a == favoured) for a in world.legal_actions()}

    search = ISMCTS(game, me, np.random.default_rng(0), sims=30, policies=SearchPolicies(prior=prior))
    visits = search.search(state)
    assert sum(visits.values()) == 30
    assert max(visits, key=visits.get) == favoured and visits[favoured] > 15
    # asked once per information state of the searcher in a search
    assert asked and len(asked) == len(set(asked))
    assert asked[0] == state.information_state_string(me)


@pytest.mark.parametrize("card, best", [(2, 1), (0, 0)])  # the King calls, the Jack folds
def test_a_uniform_prior_still_finds_the_winning_move(card, best):
    state = _kuhn_facing_a_bet(card)
    search = make_search(state.get_game(), 1, np.random.default_rng(0), sims=60, prior="random")
    assert search.policies.prior is not None
    visits = search.search(state)
    assert max(visits, key=visits.get) == best and visits[best] > 40


def test_puct_selection_rule():
    node = _ismcts._Node()
    # unvisited moves: the higher prior first
    assert _ismcts._puct(node, [0, 1, 2], {0: 0.2, 1: 0.5, 2: 0.3}, 1.0) == 1
    for a, (visits, total) in {0: (4, 3.0), 1: (4, 1.0)}.items():
        child = node.children[a] = _ismcts._Node()
        child.visits, child.total = visits, total
    # Q(0) = 0.75 + 0.2 * sqrt(8) / 5, Q(1) = 0.25 + 0.5 * sqrt(8) / 5, unvisited 2 at the
    # node's mean 0.5 + 0.3 * sqrt(8): move 2
    assert _ismcts._puct(node, [0, 1, 2], {0: 0.2, 1: 0.5, 2: 0.3}, 1.0) == 2
    # without exploration, the best mean
    assert _ismcts._puct(node, [0, 1, 2], {0: 0.2, 1: 0.5, 2: 0.3}, 0.0) == 0


def test_no_prior_is_the_search_of_before():
    game = pyspiel.load_game(SMALL_UD)
    state = _decision(game, seed=5)
    me = state.current_player()
    before = ISMCTS(game, me, np.random.default_rng(4), sims=40).search(state)
    assert make_search(game, me, np.random.default_rng(4), sims=40).search(state) == before
    assert make_search(game, me, np.random.default_rng(4), sims=40, prior=None).search(state) == before
    assert ISMCTS(game, me, np.random.default_rng(4), sims=40, policies=SearchPolicies()).search(state) == before


@pytest.mark.parametrize("spec, message", [
    ("ismcts(prior=ismcts)", r"prior=ismcts: 'ismcts' cannot be a prior; the prior is an agent spec whose "
                             r"action_probabilities are known: trained, net\(FILE\), policy\(FILE\), heuristic "
                             r"or random"),
    ("ismcts(prior=human)", r"prior=human: 'human' cannot be a prior; .*heuristic or random"),
    ("ismcts(prior=bogus)", r"prior=bogus: 'bogus' cannot be a prior; the prior is an agent spec"),
    ("ismcts(prior=policy(missing.json))", r"prior=policy\(missing.json\): "),
    ("ismcts(prior=trained,puct_c=-1)", r"puct_c must be >= 0; got -1.0"),
])
def test_bad_prior_specs_are_one_clear_error(spec, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec, pyspiel.load_game("kuhn_poker"), 0)


def test_the_search_needs_the_prior_its_config_names():
    with pytest.raises(ValueError, match="prior=trained: no prior policy was given"):
        ISMCTS(pyspiel.load_game("kuhn_poker"), 0, np.random.default_rng(0), prior="trained")


def test_same_seed_same_search_with_a_prior_and_a_model():
    game = pyspiel.load_game(SMALL_UD)
    state = _decision(game, seed=7)
    me = state.current_player()
    spec = "ismcts(guided,prior=heuristic,model=heuristic,sims=40)"
    runs = [make_agent(spec, game, me, seed=s).search.search(state) for s in (1, 1, 2)]
    assert runs[0] == runs[1] and sum(runs[0].values()) == 40


def test_guided_preset_hands_the_trained_network_as_prior_and_model():
    game = pyspiel.load_game("pub")
    agent = make_agent("ismcts(guided,sims=20)", game, 0, seed=0)
    config = agent.search.config
    assert (config.prior, config.model, config.belief, config.opponents) == ("trained", "trained", "model", "model")
    assert agent.search.policies.prior is not None and agent.search.policies.model is not None
    state = _decision(game, seed=1, min_moves=2)
    agent = make_agent("ismcts(guided,sims=20)", game, state.current_player(), seed=0)
    assert sum(agent.search.search(state).values()) == 20
