"""Doubt and Bet: IS-MCTS's heuristic-weighted belief, drawn seat by seat.

With ``belief=heuristic`` IS-MCTS keeps a drawn world with probability
``eps`` to the power of the other players' moves of this round that the
opponent model ``move_of(state, player)`` would not have made in it. Its
generic way replays each candidate and checks every move. In Doubt and Bet
a player's claims and showdown moves depend only on their own cards and
what everyone saw, so :func:`believed_draw` works out each other player's
factor once per hand, deals a candidate's cards seat by seat, rejects it as
soon as a seat's factor fails, and replays only a kept candidate: the same
distribution for less. The heuristic's module hands it to the search
(``kibitz.solvers.ismcts.SearchPolicies.believed_draw``).

It reads the game through its public API: ``round_start()``, ``history()``,
``log()``, ``phase``, ``hand(player)`` and the internal resample with
``memo`` and ``cards`` (``kibitz.games.search``).
"""

from __future__ import annotations

from kibitz.games.doubt_and_bet import draw_colour

_CARD_PHASES = ("claim", "showdown")
#: OpenSpiel's Python-game protocol, which searches may call on their own states
_PROTOCOL = frozenset({"_apply_action", "_legal_actions", "_action_to_string"})


def believed_draw(state, player_id, sampler, move_of, eps, memo):
    """One candidate of the rejection: a world (as
    ``state.resample_from_infostate(player_id, sampler, internal=True,
    memo=memo)`` draws) kept with probability ``eps`` to the power of the
    other players' moves this round that ``move_of`` would not have made in
    it, else None. ``move_of`` must read a seat's cards through
    ``hand(seat)`` (the heuristic's fast ``rollout_action`` does).

    Each other player's factor is cached in ``memo`` (the search's, for one
    root state) by hand; moves that do not depend on the cards (exchanges)
    give one factor for every candidate.
    """
    key = ("db-belief", player_id, state.round)
    setup = memo.get(key)
    if setup is None:
        setup = memo[key] = _setup(state, player_id, move_of, eps)
    const, decisions, blocks, left0, factors, k1 = setup
    if const < 1.0 and sampler() >= const:
        return None
    left = left0[:]
    total = sum(left)
    cards = []
    for s, count, mine, tracked in blocks:  # the deal, seat by seat
        if mine is not None:
            cards += mine
            continue
        hand = [0] * k1
        for _ in range(count):  # one card by the copies left: the hot loop of the belief
            k = draw_colour(left, total, sampler)
            total -= 1
            hand[k] += 1
            cards.append(k)
        if tracked:  # the seat's hand is complete: its factor
            hand = tuple(hand)
            f = factors.get((s, hand))
            if f is None:
                f = factors[(s, hand)] = _factor(decisions[s], s, hand, move_of, eps)
            if f < 1.0 and sampler() >= f:
                return None
    return state.resample_from_infostate(player_id, sampler, internal=True, memo=memo, cards=cards)


def _setup(state, player_id, move_of, eps):
    """What :func:`believed_draw` needs of this round, once per search: the
    factor of the moves that do not depend on the cards, the other players'
    card-dependent moves (each a state just before it, and the move), this
    round's deal as blocks of one seat's cards, the copies of each colour
    left besides the player's own cards, an empty cache of factors by hand,
    and K1."""
    game = state.get_game()
    start, replay = state.round_start()
    const, decisions = 1.0, {}
    for a in state.history()[start:]:
        p = replay.current_player()
        if p >= 0 and p != player_id:
            if replay.phase in _CARD_PHASES:
                decisions.setdefault(p, []).append((replay.clone(), a))
            elif move_of(replay, p) != a:
                const *= eps
        replay._apply_action(a)
    log = state.log()
    begun = max(i for i, e in enumerate(log) if e.kind == "round")
    this_round = log[begun:]
    assert not any(e.kind == "reveal" for e in this_round), "a decision's round is not revealed yet"
    deals = [(e.player, e.colour) for e in this_round if e.kind == "deal"]
    # the deal as blocks of one seat's cards (the game deals seat by seat):
    # (seat, cards, the player's own cards or None, has a factor)
    blocks = []
    for s, k in deals:
        if not blocks or blocks[-1][0] != s:
            blocks.append([s, 0, [] if s == player_id else None, s in decisions])
        blocks[-1][1] += 1
        if s == player_id:
            blocks[-1][2].append(k)
    assert len({b[0] for b in blocks}) == len(blocks), "each seat's cards are dealt together"
    left = [game.copies] * game.k1
    for s, k in deals:
        if s == player_id:
            left[k] -= 1
    return const, decisions, [tuple(b) for b in blocks], left, {}, game.k1


def _factor(moves, seat, hand, move_of, eps):
    """``eps`` to the power of ``moves`` (states and moves of ``seat``) that
    ``move_of`` would not make with ``seat`` holding ``hand``."""
    f = 1.0
    for before, a in moves:
        if move_of(_Holding(before, seat, hand), seat) != a:
            f *= eps
    return f


class _Holding:
    """``state`` as it would be with ``seat`` holding ``cards`` (counts per
    colour): ``hand(seat)`` answers them, everything else is the state's."""

    __slots__ = ("_state", "_seat", "_cards")

    def __init__(self, state, seat, cards):
        self._state, self._seat, self._cards = state, seat, cards

    def hand(self, player):
        return self._cards if player == self._seat else self._state.hand(player)

    def __getattr__(self, name):
        # the public API only (and OpenSpiel's protocol), as for any caller above the games
        if name.startswith("_") and name not in _PROTOCOL:
            raise AttributeError(f"{name}: not part of the game's public API")
        return getattr(self._state, name)
