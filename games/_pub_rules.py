"""Pub's rules (numba): the only copy, on a position held in one int64 array.

The rules page is docs/rules/pub.md (and the module docstring of
``kibitz.games.pub``); the game module declares the parameters and plays
these functions through the generic pyspiel adapter
(``kibitz.games.adapter``), and ``_pub_strings`` renders the events, the
strings and the observer from positions. The tree compiler, the batched
environment and the compiled searches run the same functions
(``search.CompiledRules``). A seat's cards are kept as counts and rank sums
per suit (hand and collection together: what a score needs) and as bit
masks of its hand and of its collection (what the observation and the
``compact`` encoding show); the cards placed, in order, are kept for the
strings alone (no rule reads them: a hand and a collection are written in
the order their cards came).

Position (``int64``), with ``n`` seats, ``S`` suits and ``N`` cards:

=====================  ==============================================
index                  meaning
=====================  ==============================================
0 ``PHASE``            phase (``SETUP`` .. ``OVER``)
1 ``PLACED``           cards placed so far: set aside, dealt, collected
                       (in the set-up: the set-up chance moves done)
2 ``DECK``             the deck, a bit mask of card ids (bit ``c``: card
                       ``c``); a last card discarded unseen stays in it
3 ``LEFT``             cards in the deck (the same)
4 ``FACE``             the face-up card, or -1 (at the end: the card
                       discarded face up, or -1)
5 ``DRAWN_CARD``       the drawn card waiting for the choice, or -1
6 ``MOVER``            the seat whose turn it is
7 + s*S + u            cards of suit ``u`` seat ``s`` holds
7 + (n + s)*S + u      their ranks' sum
7 + 2*n*S + s          seat ``s``'s hand (the cards dealt to it), a bit
                       mask of card ids
7 + 2*n*S + n + s      seat ``s``'s collection, a bit mask of card ids
7 + 2*n*S + 2*n + k    the ``k``-th card placed (``k`` below ``PLACED``):
                       set aside for ``k < removed``, dealt for ``k`` below
                       the set-up's length (to seat ``(k - removed) //
                       hand``), else collected: ``seat << 6 | card``
=====================  ==============================================

The position is ``7 + 2*n*S + 2*n + N`` long. ``observation`` writes
``PubObserver``'s observation tensor (``state.observation_tensor``) from
it: the face-up and drawn cards, the deck's count (0 at the end), the
masks, the phase and the seat to move. ``compact`` writes the ``compact``
encoding (``state.compact_tensor``) from the same fields: it depends only
on what a player has seen now (its hand, the collections, the face-up and
drawn cards), which the masks hold; its ``ScoreEstimate`` numbers
(``kibitz.games.pub``, what the heuristic plays by) are computed with the
Python estimate's float64 operations in the same order, so the float32
values are the same bit for bit.

Parameters (``int64``): players, suits, ranks, removed, hand, set-up
length, 1 for payoff ``win`` (0: ``score``).

Tokens (what a player sees of a move; -1 nothing): a card dealt to the
player ``64 + card``, a reveal ``128 + card``, a drawn card ``192 +
card``, every decision ``256 + action``. The information-state string
(``PubObserver``) is one line per event a player sees, so two histories
give one player the same string exactly when they give the same tokens.
"""

from __future__ import annotations

import numba
import numpy as np

from kibitz.games import adapter, search

_JIT = dict(cache=True, nogil=True, boundscheck=False)

# the phases and the actions (games/pub.py's docstring)
SETUP, REVEAL, TURN, DRAWN, CHOOSE, OVER = range(6)
TAKE, DRAW, KEEP_DRAWN, TAKE_BOTH = range(4)
# the position's fixed places (module docstring); the seats' arrays follow from FIRST_SEAT
PHASE, PLACED, DECK, LEFT, FACE, DRAWN_CARD, MOVER = range(7)
FIRST_SEAT = 7
# the masks' fields (after the counts and sums): hands, then collections
_HAND, _COLL = 0, 1
#: a collected card's entry in the cards placed: ``seat << SEAT_SHIFT | card`` (at most 52 cards)
SEAT_SHIFT = 6
NUM_TOKENS = 320


def placed_at(n: int, suits: int) -> int:
    """Where the cards placed begin in a position of ``n`` seats and ``suits`` suits."""
    return FIRST_SEAT + 2 * n * suits + 2 * n


@numba.njit(search.RULE_SIGNATURES["kind"], **_JIT)
def kind(s, prm):
    ph = s[PHASE]
    if ph == TURN or ph == CHOOSE:
        return s[MOVER]
    if ph == OVER:
        return -4
    return -1


@numba.njit(search.RULE_SIGNATURES["legal"], **_JIT)
def legal(s, prm, out):
    if s[PHASE] == TURN:
        out[0], out[1] = TAKE, DRAW
        return 2
    if s[PHASE] == CHOOSE:
        out[0], out[1] = KEEP_DRAWN, TAKE_BOTH
        return 2
    return 0


@numba.njit(search.RULE_SIGNATURES["outcomes"], **_JIT)
def outcomes(s, prm, actions, probs):
    """The cards of the deck, ascending, each with probability 1 / (cards in the deck)."""
    mask, count = s[DECK], s[LEFT]
    p = 1.0 / count
    j = 0
    for c in range(prm[1] * prm[2]):
        if (mask >> c) & 1:
            actions[j] = c
            probs[j] = p
            j += 1
    return j


@numba.njit(**_JIT)
def _place(s, prm, entry):
    """Appends ``entry`` to the cards placed (module docstring)."""
    s[FIRST_SEAT + 2 * prm[0] * prm[1] + 2 * prm[0] + s[PLACED]] = entry
    s[PLACED] += 1


@numba.njit(**_JIT)
def _add(s, prm, seat, card, field):
    """Gives ``card`` to ``seat``: its counts and sums, the bit mask of its
    hand (``field`` _HAND) or of its collection (_COLL), and the cards placed."""
    n, suits, ranks = prm[0], prm[1], prm[2]
    u = card // ranks
    s[FIRST_SEAT + seat * suits + u] += 1
    s[FIRST_SEAT + (n + seat) * suits + u] += card % ranks + 1
    s[FIRST_SEAT + 2 * n * suits + field * n + seat] |= np.int64(1) << card
    _place(s, prm, card if field == _HAND else seat << SEAT_SHIFT | card)


@numba.njit(**_JIT)
def _next_turn(s, prm):
    """Ends a turn: the game ends the moment the deck is empty, or when a
    reveal would take its last card (discarded unseen); else the next seat's
    turn, which begins with a reveal when there is no face-up card."""
    left, face = s[LEFT], s[FACE]
    if left == 0 or (face < 0 and left == 1):
        s[PHASE] = OVER
        return
    s[MOVER] = (s[MOVER] + 1) % prm[0]
    s[PHASE] = TURN if face >= 0 else REVEAL


@numba.njit(**_JIT)
def _take_both(s, prm):
    _add(s, prm, s[MOVER], s[FACE], _COLL)
    _add(s, prm, s[MOVER], s[DRAWN_CARD], _COLL)
    s[FACE] = -1
    s[DRAWN_CARD] = -1
    _next_turn(s, prm)


@numba.njit(search.RULE_SIGNATURES["apply"], **_JIT)
def apply(s, prm, a):
    ph = s[PHASE]
    if ph == SETUP or ph == REVEAL or ph == DRAWN:
        s[DECK] &= ~(np.int64(1) << a)
        s[LEFT] -= 1
        if ph == SETUP:
            pos = s[PLACED]
            if pos >= prm[3]:  # dealt, a whole hand at a time from seat 0
                _add(s, prm, (pos - prm[3]) // prm[4], a, _HAND)
            else:  # set aside
                _place(s, prm, a)
            if pos + 1 == prm[5]:
                s[PHASE] = REVEAL
        elif ph == REVEAL:
            s[FACE] = a
            s[PHASE] = TURN
        else:
            s[DRAWN_CARD] = a
            face, ranks = s[FACE], prm[2]
            if a % ranks < face % ranks and a // ranks != face // ranks:
                s[PHASE] = CHOOSE  # a lower card of another suit: the player chooses
            else:
                _take_both(s, prm)
    elif ph == TURN:
        if a == TAKE:
            _add(s, prm, s[MOVER], s[FACE], _COLL)
            s[FACE] = -1
            _next_turn(s, prm)
        else:
            s[PHASE] = DRAWN
    else:  # CHOOSE
        if a == KEEP_DRAWN:
            _add(s, prm, s[MOVER], s[DRAWN_CARD], _COLL)
            s[DRAWN_CARD] = -1
            _next_turn(s, prm)
        else:
            _take_both(s, prm)

@numba.njit(search.RULE_SIGNATURES["returns"], **_JIT)
def returns(s, prm, out):
    """The returns of a final position, into ``out``: for each suit the
    seats holding the most of it (at least one) score 0 for it, the others
    its ranks; payoff ``win``, the lowest scores share 1; ``score``, the
    mean score minus the seat's own."""
    n, suits = prm[0], prm[1]
    # the scores first, in ``out`` (integers, exact in float64)
    for seat in range(n):
        out[seat] = 0.0
    for u in range(suits):
        top = 0
        for seat in range(n):
            top = max(top, s[FIRST_SEAT + seat * suits + u])
        for seat in range(n):
            if s[FIRST_SEAT + seat * suits + u] != top or top == 0:
                out[seat] += s[FIRST_SEAT + (n + seat) * suits + u]
    if prm[6]:
        best = out.min()
        winners = 0
        for seat in range(n):
            if out[seat] == best:
                winners += 1
        share = 1.0 / winners
        for seat in range(n):
            out[seat] = share if out[seat] == best else 0.0
    else:
        total = 0
        for seat in range(n):
            total += np.int64(out[seat])
        mean = total / n
        for seat in range(n):
            out[seat] = mean - out[seat]


@numba.njit(search.RULE_SIGNATURES["token"], **_JIT)
def token(s, prm, a, player):
    ph = s[PHASE]
    if ph == SETUP:
        pos = s[PLACED]
        if pos < prm[3] or (pos - prm[3]) // prm[4] != player:
            return -1
        return 64 + a
    if ph == REVEAL:
        return 128 + a
    if ph == DRAWN:
        return 192 + a
    return 256 + a


@numba.njit(**_JIT)
def _cards(mask, num_cards, out, at):
    """Writes 1 at ``out[at + c]`` for each card ``c`` of ``mask``."""
    for c in range(num_cards):
        if (mask >> c) & 1:
            out[at + c] = 1.0


@numba.njit(search.RULE_SIGNATURES["observation"], **_JIT)
def observation(s, prm, player, out):
    """``PubObserver``'s observation tensor (not perfect recall) of
    ``player``, into ``out``: observer n | to_move n+1 | own_hand N |
    face_up N | drawn N | collections n*N | deck 1 | shown n*N | phase 6."""
    n, N = prm[0], prm[1] * prm[2]
    masks = FIRST_SEAT + 2 * n * prm[1]
    out[:] = 0.0
    out[player] = 1.0
    cur = kind(s, prm)
    out[n + (cur if cur >= 0 else n)] = 1.0
    at = 2 * n + 1
    _cards(s[masks + _HAND * n + player], N, out, at)
    at += N
    if s[FACE] >= 0:
        out[at + s[FACE]] = 1.0
    at += N
    if s[DRAWN_CARD] >= 0:
        out[at + s[DRAWN_CARD]] = 1.0
    at += N
    for seat in range(n):
        _cards(s[masks + _COLL * n + seat], N, out, at + seat * N)
    at += n * N
    over = s[PHASE] == OVER
    out[at] = 0.0 if over else np.float32(s[LEFT])
    at += 1
    if over:
        for seat in range(n):
            _cards(s[masks + _HAND * n + seat], N, out, at + seat * N)
    at += n * N
    out[at + s[PHASE]] = 1.0


# ------------------------------------------------------------ compact encoding
#: ``pub.MAJORITY_CHANCE`` (leads -2 .. 2)
_MAJORITY = np.array([0.05, 0.3, 0.8, 0.95, 1.0])


@numba.njit(**_JIT)
def _majority_chance(lead):
    """``pub.majority_chance(lead)``, the same float64 operations."""
    x = min(max(lead + 2, 0.0), 4.0)
    i = min(int(x), 3)
    return _MAJORITY[i] + (x - i) * (_MAJORITY[i + 1] - _MAJORITY[i])


@numba.njit(**_JIT)
def _suit_of(mask, u, ranks):
    """The count and the rank sum of the cards of suit ``u`` in ``mask``."""
    count = total = 0
    for r in range(ranks):
        if (mask >> (u * ranks + r)) & 1:
            count += 1
            total += r + 1
    return count, total


@numba.njit(**_JIT)
def _estimate(s, prm, me, rival, c1, c2):
    """``ScoreEstimate.estimate`` of ``me``'s cards (hand and collection)
    plus the cards ``c1`` and ``c2`` (-1: none), summed suit by suit."""
    n, suits, ranks = prm[0], prm[1], prm[2]
    total = 0.0
    for u in range(suits):
        count = s[FIRST_SEAT + me * suits + u]
        sums = s[FIRST_SEAT + (n + me) * suits + u]
        for c in (c1, c2):
            if c >= 0 and c // ranks == u:
                count += 1
                sums += c % ranks + 1
        if count:
            total += np.float64(sums) * (1.0 - _majority_chance(count - rival[u]))
    return total


@numba.njit(**_JIT)
def _draw_cost(s, prm, me, rival, base, unseen):
    """``ScoreEstimate.draw_cost(face)``: the mean over the unseen cards
    (in ascending order) of what drawing each would cost."""
    ranks, face = prm[2], s[FACE]
    total = 0.0
    k = 0
    for x in range(prm[1] * ranks):
        if not (unseen >> x) & 1:
            continue
        k += 1
        both = _estimate(s, prm, me, rival, face, x) - base
        if x % ranks < face % ranks and x // ranks != face // ranks:
            total += min(both, _estimate(s, prm, me, rival, x, -1) - base)
        else:
            total += both
    return total / k


@numba.njit(**_JIT)
def _card_items(card, suits, ranks, out, at):
    """A card's items: suit one-hot, rank/R, card one-hot (none for -1)."""
    if card >= 0:
        out[at + card // ranks] = 1.0
        out[at + suits] = (card % ranks + 1) / ranks
        out[at + suits + 1 + card] = 1.0


@numba.njit(**_JIT)
def _suit_items(s, prm, me, rival, unseen, out, at):
    """The ``suits`` piece: per suit ``n + 7`` items."""
    n, suits, ranks = prm[0], prm[1], prm[2]
    T = ranks * (ranks + 1) // 2
    masks = FIRST_SEAT + 2 * n * suits
    for u in range(suits):
        mine = s[FIRST_SEAT + me * suits + u]
        total = s[FIRST_SEAT + (n + me) * suits + u]
        out[at] = mine / ranks
        out[at + 1] = total / T
        best = 0
        for j in range(1, n):
            k = _suit_of(s[masks + _COLL * n + (me + j) % n], u, ranks)[0]
            best = max(best, k)
            out[at + 1 + j] = k / ranks
        at += n + 1
        out[at] = best / ranks
        out[at + 1] = (mine - best) / ranks
        count, sums = _suit_of(unseen, u, ranks)
        out[at + 2] = count / ranks
        out[at + 3] = sums / T
        chance = _majority_chance(mine - rival[u])
        out[at + 4] = chance
        out[at + 5] = total * (1.0 - chance) / T
        at += 6


@numba.njit(**_JIT)
def _seat_items(s, prm, me, out, at):
    """The ``seats`` piece: per seat from ``me`` in turn order, its
    collection's size/D, the score of its collection (``me``'s: with its
    hand) now/M, its turn."""
    n, suits, ranks = prm[0], prm[1], prm[2]
    D = suits * ranks - prm[5]
    M = suits * (ranks * (ranks + 1) // 2)
    masks = FIRST_SEAT + 2 * n * suits
    turn = s[MOVER] if s[PHASE] == TURN or s[PHASE] == CHOOSE else -1
    score = np.zeros(n, dtype=np.int64)
    count = np.zeros(n, dtype=np.int64)
    sums = np.zeros(n, dtype=np.int64)
    for u in range(suits):
        top = 0
        for p in range(n):
            known = s[masks + _COLL * n + p]
            if p == me:
                known |= s[masks + _HAND * n + p]
            count[p], sums[p] = _suit_of(known, u, ranks)
            top = max(top, count[p])
        for p in range(n):
            if count[p] != top or top == 0:
                score[p] += sums[p]
    for j in range(n):
        p = (me + j) % n
        size = 0
        for u in range(suits):
            size += _suit_of(s[masks + _COLL * n + p], u, ranks)[0]
        out[at + 3 * j] = size / D
        out[at + 3 * j + 1] = score[p] / M
        out[at + 3 * j + 2] = 1.0 if p == turn else 0.0


@numba.njit(search.RULE_SIGNATURES["observation"], **_JIT)
def compact(s, prm, player, out):
    """``player``'s ``compact`` encoding (``state.compact_tensor(player)``;
    the layout is ``pub.compact_pieces``) into ``out``: phase 6 | deck 3 |
    suits S*(n+7) | face_up S+1+N | drawn S+1+N | costs 6 | seats n*3, the
    estimates computed as ``pub.ScoreEstimate`` computes them (float64,
    rounded once to float32)."""
    n, suits, ranks = prm[0], prm[1], prm[2]
    N = suits * ranks
    D = N - prm[5]
    masks = FIRST_SEAT + 2 * n * suits
    out[:] = 0.0
    out[s[PHASE]] = 1.0
    # what the player has seen: its hand, every collection, face-up and drawn
    seen = s[masks + _HAND * n + player]
    for p in range(n):
        seen |= s[masks + _COLL * n + p]
    for c in (s[FACE], s[DRAWN_CARD]):
        if c >= 0:
            seen |= np.int64(1) << c
    unseen = ~seen & ((np.int64(1) << N) - 1)
    num_unseen = 0
    for u in range(suits):
        num_unseen += _suit_of(unseen, u, ranks)[0]
    deck = 0 if s[PHASE] == OVER else s[LEFT]
    out[6] = min(deck, D) / D
    out[7] = prm[3] / N
    out[8] = num_unseen / N
    # the most cards of a suit another seat is expected to hold
    hidden = prm[4] / suits
    rival = np.zeros(suits)
    for j in range(1, n):
        coll = s[masks + _COLL * n + (player + j) % n]
        for u in range(suits):
            k = hidden
            for _ in range(_suit_of(coll, u, ranks)[0]):
                k += 1.0
            rival[u] = max(rival[u], k)
    at = 9
    _suit_items(s, prm, player, rival, unseen, out, at)
    at += suits * (n + 7)
    _card_items(s[FACE], suits, ranks, out, at)
    at += suits + 1 + N
    _card_items(s[DRAWN_CARD], suits, ranks, out, at)
    at += suits + 1 + N
    base = _estimate(s, prm, player, rival, -1, -1)
    if s[PHASE] == TURN:
        take = _estimate(s, prm, player, rival, s[FACE], -1) - base
        draw = _draw_cost(s, prm, player, rival, base, unseen)
        out[at], out[at + 1], out[at + 2] = take / ranks, draw / ranks, (take - draw) / ranks
    elif s[PHASE] == CHOOSE:
        keep = _estimate(s, prm, player, rival, s[DRAWN_CARD], -1) - base
        both = _estimate(s, prm, player, rival, s[FACE], s[DRAWN_CARD]) - base
        out[at + 3], out[at + 4], out[at + 5] = keep / ranks, both / ranks, (both - keep) / ranks
    at += 6
    _seat_items(s, prm, player, out, at)

def compiled_rules(game) -> search.CompiledRules:
    """The compiled rules of a ``pub`` game."""
    n, suits = game.num_seats, game.num_suits
    # counts and sums, the masks (hands, collections: all empty), the cards placed
    initial = np.zeros(placed_at(n, suits) + game.num_cards, dtype=np.int64)
    initial[PHASE] = SETUP
    initial[DECK] = (1 << game.num_cards) - 1
    initial[LEFT] = game.num_cards
    initial[FACE] = initial[DRAWN_CARD] = -1
    params = np.array([n, suits, game.num_ranks, game.num_removed, game.hand_size,
                       game.setup_length, 1 if game.payoff == "win" else 0], dtype=np.int64)
    return search.CompiledRules(
        initial=initial, params=params, kind=kind, legal=legal, outcomes=outcomes, apply=apply,
        returns=returns, token=token, num_tokens=NUM_TOKENS,
        max_branch=max(4, game.num_cards), observation=observation,
        position_of=adapter.position_of, compact=compact)
