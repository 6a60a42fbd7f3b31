"""The generic pyspiel adapter (games/adapter.py): a game written once as
compiled rules, played through the pyspiel API.

Two games go through the same checks: Underdog (every kibitz game on the
adapter) and a game written here and nowhere else, Kuhn poker in some
sixty lines of numba rules plus its information-state string. The latter shows
the adapter knows nothing of any game: played through pyspiel it is
OpenSpiel's own ``kuhn_poker`` node for node (players, legal actions,
chance outcomes, returns) and has the known NashConv of the uniform policy,
11/12. The checks: a clone is independent of its source; a serialized
state comes back the same; an illegal action raises naming the move, the
reason and the legal ones, and leaves the state as it was; a snapshot
restores its position; ``position_of`` is the position the compiled rules
reach on their own; the player to move is pyspiel's id (an enum for
chance and the end, as an OpenSpiel Python game returns).
"""

from __future__ import annotations

import numba
import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy
from open_spiel.python.algorithms import exploitability

from kibitz.games import adapter, search
from kibitz.games._common import IllegalActionError

_JIT = dict(cache=True, nogil=True, boundscheck=False)
SIG = search.RULE_SIGNATURES
# Kuhn's position: the two cards (-1 before the deal), the bets and passes
# made (0..3) and the moves (0 pass, 1 bet) at 3, 4, 5.
CARDS, MOVES, FIRST = 0, 2, 3


@numba.njit(**_JIT)
def _kuhn_over(s):
    m = s[MOVES]
    return m == 3 or (m == 2 and not (s[FIRST] == 0 and s[FIRST + 1] == 1))


@numba.njit(SIG["kind"], **_JIT)
def _kuhn_kind(s, prm):
    if s[CARDS + 1] < 0:
        return -1
    return -4 if _kuhn_over(s) else s[MOVES] % 2


@numba.njit(SIG["legal"], **_JIT)
def _kuhn_legal(s, prm, out):
    out[0], out[1] = 0, 1
    return 2


@numba.njit(SIG["outcomes"], **_JIT)
def _kuhn_outcomes(s, prm, actions, probs):
    k = 0
    for card in range(3):
        if card != s[CARDS]:
            actions[k] = card
            k += 1
    for i in range(k):
        probs[i] = 1.0 / k
    return k


@numba.njit(SIG["apply"], **_JIT)
def _kuhn_apply(s, prm, a):
    if s[CARDS + 1] < 0:
        s[CARDS + (1 if s[CARDS] >= 0 else 0)] = a
    else:
        s[FIRST + s[MOVES]] = a
        s[MOVES] += 1


@numba.njit(SIG["returns"], **_JIT)
def _kuhn_returns(s, prm, out):
    m = s[MOVES]
    last = s[FIRST + m - 1]
    if last == 0 and s[FIRST + m - 2] == 1:  # a fold: the bettor takes the ante
        winner, amount = m % 2, 1.0
    else:
        winner = 0 if s[CARDS] > s[CARDS + 1] else 1
        amount = 2.0 if last == 1 else 1.0
    out[winner], out[1 - winner] = amount, -amount


@numba.njit(SIG["token"], **_JIT)
def _kuhn_token(s, prm, a, player):
    if s[CARDS + 1] < 0:
        return a if (s[CARDS] >= 0) == (player == 1) else -1
    return 3 + a


def _kuhn_rules(game) -> search.CompiledRules:
    initial = np.array([-1, -1, 0, 0, 0, 0], dtype=np.int64)
    return search.CompiledRules(initial=initial, params=np.zeros(1, np.int64), kind=_kuhn_kind,
                                legal=_kuhn_legal, outcomes=_kuhn_outcomes, apply=_kuhn_apply,
                                returns=_kuhn_returns, token=_kuhn_token, num_tokens=5, max_branch=3,
                                position_of=adapter.position_of)


class KuhnState(adapter.State):
    def _why_illegal(self):
        return "the game is over" if self.is_terminal() else ""

    def _action_to_string(self, player, action):
        return f"card {action}" if player == pyspiel.PlayerId.CHANCE else ("pass", "bet")[action]

    def __str__(self):
        return " ".join(map(str, self._c.s[:2].tolist())) + " " + "".join(self._c.log())


class KuhnObserver(adapter.Observer):
    def __init__(self, iig_obs_type, game, params):
        super().__init__(iig_obs_type, params)
        self.set_pieces([("observer", 2, (2,))])

    def string_from(self, state, player):
        return f"{state._c.s[player]}{''.join(state._c.log())}"


class KuhnGame(adapter.Game):
    state_class = KuhnState
    observer_class = KuhnObserver

    def __init__(self, params=None):
        info = pyspiel.GameInfo(num_distinct_actions=2, max_chance_outcomes=3, num_players=2, min_utility=-2.0,
                                max_utility=2.0, utility_sum=0.0, max_game_length=3)
        super().__init__(_KUHN_TYPE, info, params or {})

    def compiled_rules(self):
        return _kuhn_rules(self)

    def record(self, log, before, action, after):
        """Kuhn's log: the players' moves, "p" and "b"."""
        if before[CARDS + 1] >= 0:
            log.append("pb"[action])


_KUHN_TYPE = pyspiel.GameType(
    short_name="kibitz_adapter_kuhn", long_name="Kuhn poker on the kibitz adapter (a test)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL, chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM, reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2, min_num_players=2, provides_information_state_string=True,
    provides_information_state_tensor=False, provides_observation_string=False,
    provides_observation_tensor=False, parameter_specification={})
pyspiel.register_game(_KUHN_TYPE, KuhnGame)

GAMES = ["kibitz_adapter_kuhn", "underdog(players=3,cards=5,bank=2)", "underdog"]


def _random_states(game, rng, games=3):
    """Every state of ``games`` random games (clones), in order: each move
    uniform among the legal actions or chance outcomes."""
    out = []
    for _ in range(games):
        state = game.new_initial_state()
        out.append(state.clone())
        while not state.is_terminal():
            moves = _moves(state)
            state.apply_action(moves[rng.integers(len(moves))])
            out.append(state.clone())
    return out


def _moves(state):
    return [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()


def _same(a, b) -> None:
    """Two states of one game are the same position, log and strings."""
    assert np.array_equal(a.position(), b.position())
    assert a._c.log() == b._c.log() and a.history() == b.history() and str(a) == str(b)
    assert a.current_player() == b.current_player()
    for p in range(a.get_game().num_players()):
        assert a.information_state_string(p) == b.information_state_string(p)
    if not a.is_terminal():
        assert _moves(a) == _moves(b)
    assert a.returns() == b.returns()


def test_a_game_written_once_is_openspiels_kuhn_poker_node_for_node():
    ours, theirs = pyspiel.load_game("kibitz_adapter_kuhn"), pyspiel.load_game("kuhn_poker")
    stack, nodes = [(ours.new_initial_state(), theirs.new_initial_state())], 0
    while stack:
        a, b = stack.pop()
        nodes += 1
        assert a.current_player() == b.current_player() and a.is_terminal() == b.is_terminal()
        if a.is_terminal():
            assert a.returns() == b.returns()
            continue
        if a.is_chance_node():
            assert [x for x, _ in a.chance_outcomes()] == [x for x, _ in b.chance_outcomes()]
            assert np.allclose([p for _, p in a.chance_outcomes()], [p for _, p in b.chance_outcomes()])
        else:
            assert a.legal_actions() == b.legal_actions()
        for x in _moves(a):
            stack.append((a.child(x), b.child(x)))
    assert nodes == 58
    uniform = exploitability.nash_conv(ours, policy.UniformRandomPolicy(ours))
    assert uniform == pytest.approx(11 / 12)


def test_the_player_to_move_is_pyspiels_id():
    game = pyspiel.load_game("kibitz_adapter_kuhn")
    state = game.new_initial_state()
    assert state.current_player() is pyspiel.PlayerId.CHANCE and state.is_chance_node()
    for a in (2, 0, 1, 1):
        state.apply_action(a)
    assert state.current_player() is pyspiel.PlayerId.TERMINAL and state.is_terminal()
    assert state.returns() == [2.0, -2.0] and str(state) == "2 0 bb"


@pytest.mark.parametrize("game_string", GAMES)
def test_a_clone_is_independent_of_its_source(game_string):
    game = pyspiel.load_game(game_string)
    for state in _random_states(game, np.random.default_rng(1), games=2)[::3]:
        if state.is_terminal():
            continue
        clone = state.clone()
        _same(clone, state)
        before = (state.position(), list(state._c.log()), str(state), state.history())
        clone.apply_action(_moves(clone)[-1])
        assert np.array_equal(state.position(), before[0])
        assert (state._c.log(), str(state), state.history()) == before[1:]
        state.apply_action(_moves(state)[-1])
        _same(clone, state)


@pytest.mark.parametrize("game_string", GAMES)
def test_a_serialized_state_comes_back_the_same(game_string):
    game = pyspiel.load_game(game_string)
    for state in _random_states(game, np.random.default_rng(2), games=1)[::4]:
        _, back = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
        _same(back, state)
        if not back.is_terminal():  # and plays on as the source does
            a = _moves(state)[0]
            _same(back.child(a), state.child(a))


@pytest.mark.parametrize("game_string", GAMES)
def test_an_illegal_action_is_named_and_changes_nothing(game_string):
    game = pyspiel.load_game(game_string)
    states = _random_states(game, np.random.default_rng(3), games=1)
    for state in states[:6] + states[-1:]:
        legal = [] if state.is_terminal() else _moves(state)
        ids = max(game.num_distinct_actions(), game.max_chance_outcomes())
        bad = next(a for a in range(ids + 1) if a not in legal)
        before = state.clone()
        with pytest.raises(IllegalActionError) as error:
            state.apply_action(bad)
        message = str(error.value)
        assert f"{bad}" in message
        if state.is_terminal():
            assert "not legal for anyone: the game is over" in message
        else:
            assert "legal" in message and all(f"({a})" in message for a in legal)
        _same(state, before)
    with pytest.raises(IllegalActionError, match=r"is no (move|chance outcome) of"):
        game.new_initial_state().apply_action(10 ** 6)


@pytest.mark.parametrize("game_string", GAMES)
def test_a_restored_snapshot_is_its_position_and_log(game_string):
    game = pyspiel.load_game(game_string)
    state = game.new_initial_state()
    rng = np.random.default_rng(4)
    while not state.is_terminal():
        snap, copy = state.snapshot(), state.clone()
        moves = _moves(state)
        state._apply_action(moves[-1])
        state.restore(snap)
        assert np.array_equal(state.position(), copy.position()) and state._c.log() == copy._c.log()
        assert _moves(state) == moves and str(state) == str(copy)
        state._apply_action(moves[rng.integers(len(moves))])


@pytest.mark.parametrize("game_string", GAMES)
def test_position_of_is_where_the_compiled_rules_get_on_their_own(game_string):
    game = pyspiel.load_game(game_string)
    rules = game.compiled_rules()
    assert rules.position_of is adapter.position_of
    for state in _random_states(game, np.random.default_rng(5), games=2):
        s = rules.initial.copy()
        for a in state.history():
            rules.apply(s, rules.params, a)
        got = rules.position_of(state)
        assert got.dtype == np.int64 and np.array_equal(got, s)
        got[0] += 1  # a copy: the state keeps its position
        assert np.array_equal(state.position(), s)


def test_observation_tensors_are_the_compiled_ones_and_hide_private_pieces():
    game = pyspiel.load_game("underdog(players=3,cards=5,bank=2)")
    public = game.make_py_observer(pyspiel.IIGObservationType(
        perfect_recall=False, public_info=True, private_info=pyspiel.PrivateInfoType.NONE))
    default = game.make_py_observer()
    rules = game.compiled_rules()
    out = np.empty(game.observation_tensor_size(), np.float32)
    hidden = 0
    for state in _random_states(game, np.random.default_rng(6), games=2):
        for p in range(3):
            rules.observation(state.position(), rules.params, p, out)
            assert np.array_equal(np.array(state.observation_tensor(p), np.float32), out)
            default.set_from(state, p)
            assert np.array_equal(default.tensor, out)
            public.set_from(state, p)
            for name in type(public).PRIVATE:
                default.dict[name][...] = 0
            assert np.array_equal(public.tensor, default.tensor)
            hidden += not np.array_equal(public.tensor, out)
    assert hidden > 0


def test_the_core_compares_and_pickles_without_its_game():
    game = pyspiel.load_game("underdog")
    state = game.new_initial_state()
    state.apply_action(0)
    fields = state._c.__getstate__()
    assert fields == state.clone()._c.__getstate__()  # comparable: the position as a tuple
    assert fields["game"] == str(game) and isinstance(fields["s"], tuple)
    core = adapter.Core()
    core.__setstate__(fields)
    assert np.array_equal(core.s, state.position()) and core.s.dtype == np.int64
    assert core.kind is pyspiel.PlayerId.CHANCE and core.moves is None
    assert str(core.game) == str(game) and core.rules.max_branch == game.rules.max_branch


@pytest.mark.parametrize("game_string", GAMES)
def test_the_log_written_late_is_the_log_written_move_by_move(game_string):
    """The log is written from the kept positions when it is read: read at
    the end only, and from clones and snapshots taken between, it is the
    log read after every move."""
    game = pyspiel.load_game(game_string)
    rng = np.random.default_rng(7)
    for _ in range(2):
        eager, late = game.new_initial_state(), game.new_initial_state()
        clones = []
        while not eager.is_terminal():
            a = _moves(eager)[rng.integers(len(_moves(eager)))]
            eager.apply_action(a)
            eager._c.log()
            late.apply_action(a)
            if rng.random() < 0.1:
                clones.append((late.clone(), len(eager._c.log())))
        assert late._c.log() == eager._c.log()
        for clone, length in clones:
            assert clone._c.log() == eager._c.log()[:length]


@pytest.mark.parametrize("game_string", [*GAMES, "pub", "over_under", "doubt_and_bet(players=2)", "showdown"])
def test_python_callers_get_what_pyspiel_answers(game_string):
    """The adapter answers ``legal_actions`` and ``is_chance_node`` in Python
    (no pyspiel conversions); at every state of random games, for every
    player argument, they equal pyspiel's own methods, which go through C++
    and call ``_legal_actions`` and ``current_player``."""
    game = pyspiel.load_game(game_string)
    checked = 0
    for state in _random_states(game, np.random.default_rng(8), games=6):
        assert state.is_chance_node() == pyspiel.State.is_chance_node(state)
        assert state.legal_actions() == pyspiel.State.legal_actions(state)
        for p in range(game.num_players()):
            assert state.legal_actions(p) == pyspiel.State.legal_actions(state, p)
        checked += 1
    assert checked > 20
