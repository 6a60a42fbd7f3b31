"""What the web table sends a page: one seat's view of a game, as JSON.

:func:`seat_view` builds it from what that seat may know and nothing else:
the seat's own cards, the public cards and events, and cards the rules have
revealed (a showdown, the hands shown at the end). A card another seat holds
unrevealed is sent as ``"back"`` (a card is there) or as a count. Every
field comes from the game's public API (``log()`` and the read-only
properties each game module documents) read through that seat's eyes; the
test is that the view is the same JSON for every state
``state.resample_from_infostate(seat, ...)`` can draw (tests/test_table.py).

The move log lists every move by its name (``state.action_to_string``): the
seat's own moves and the other seats' public moves. A move whose name would
show a hidden card (in Underdog, ``keep 7`` after a swap) is written as the
seat sees it (``p1 lays 3``). Chance outcomes and the game's other events
appear as the lines of the seat's information-state string (the game
module's ``event_text`` for that seat), so a card dealt to another seat is
not in it.

A game has a :class:`Adapter`: how to read its events as that seat, which
moves are private, and the board (cards and counters) the page draws.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from kibitz.games import doubt_and_bet, over_under, pub, underdog


@dataclasses.dataclass(frozen=True)
class Adapter:
    #: (state, event, seat) -> the seat's line for the event, or None
    text: Callable
    #: (state, seat) -> the board: a JSON-able dict of what the seat sees
    board: Callable
    #: event kinds of moves whose name only the mover may see
    private_moves: frozenset = frozenset()


def _round_events(log, kind="round"):
    """The events since the last ``kind`` event (that one included)."""
    for i in range(len(log) - 1, -1, -1):
        if log[i].kind == kind:
            return log[i:]
    return log


# ------------------------------------------------------------------ underdog
def _underdog_board(state, me):
    game = state.get_game()
    events = _round_events(state.log())
    chips, hands, laid = state.chips, state.hands, state.face_up
    fighting, passing, shown = set(), set(), {}
    drawn, dealt = None, {}
    used = 0
    for e in events:
        if e.kind == "fight":
            fighting.add(e.player)
        elif e.kind == "pass":
            passing.add(e.player)
        elif e.kind == "show":
            shown = dict(e.cards)
        elif e.kind == "deal":
            dealt[e.player] = True
        if e.kind in ("deal", "underdog", "draw", "flip"):
            used += 1
        if e.kind == "draw" and e.player == me:
            drawn = e.card
        elif e.kind == "keep" and e.player == me:
            drawn = None
    seats = []
    for s in range(game.num_players()):
        if s == me:
            card = hands[s] or None
        elif s in shown:
            card = shown[s]
        else:
            card = "back" if hands[s] else None
        seats.append({"chips": chips[s], "card": card, "face_up": laid[s] or None,
                      "status": "fights" if s in fighting else "passes" if s in passing else None})
    return {"kind": "underdog", "round": state.round, "last_round": state.is_last_round, "bank": state.bank,
            "start_player": state.start_player, "underdog": state.underdog or None,
            "pile": game.num_cards - used if not state.is_terminal() else None,
            "drawn": drawn, "seats": seats}


UNDERDOG = Adapter(text=lambda state, e, me: underdog.event_text(e, me), board=_underdog_board,
                   private_moves=frozenset({"keep"}))


# ------------------------------------------------------------------ pub
def _pub_card(card, ranks):
    name = pub.card_name(card, ranks)
    return {"id": card, "rank": name[:-1], "suit": name[-1], "name": name}


def _pub_board(state, me):
    game = state.get_game()
    ranks = game.get_parameters()["ranks"]
    shown = None
    for e in state.log()[::-1]:
        if e.kind == "hands":
            shown = e.hands
            break
    seats = []
    for s, hand in enumerate(state.hands):
        if s == me or shown is not None:
            cards = [_pub_card(c, ranks) for c in (hand if shown is None else shown[s])]
        else:
            cards = ["back"] * len(hand)
        seats.append({"hand": cards, "collection": [_pub_card(c, ranks) for c in state.collections[s]]})
    scores = state.scores
    return {"kind": "pub", "phase": state.phase, "deck": state.deck_size,
            "face_up": _pub_card(state.face_up, ranks) if state.face_up >= 0 else None,
            "drawn": _pub_card(state.drawn_card, ranks) if state.drawn_card >= 0 else None,
            "scores": list(scores) if scores is not None else None, "seats": seats}


PUB = Adapter(text=lambda state, e, me: pub.event_text(e, me, state.get_game().card_names), board=_pub_board)


# ------------------------------------------------------------------ over_under
def _over_under_board(state, me):
    rules = state.rules
    stacks = []
    for s, (top, money, owner) in enumerate(state.stacks()):
        stacks.append({"stack": s, "top": rules.names[top] if top >= 0 else None,
                       "value": state.top_value(s) if top >= 0 else None, "money": money,
                       "claimed_by": owner if owner >= 0 else None})
    return {"kind": "over_under", "round": state.round, "rounds": rules.rounds, "dealer": state.dealer,
            "phase": state.phase, "deck": state.deck_size, "tally": list(state.tally),
            "pending_stack": state.pending_stack if state.pending_stack >= 0 else None,
            "donated": state.donated if state.donated >= 0 else None, "stacks": stacks,
            "seats": [{"tally": t, "stacks": [st["stack"] for st in stacks if st["claimed_by"] == s]}
                      for s, t in enumerate(state.tally)]}


OVER_UNDER = Adapter(text=lambda state, e, me: over_under.event_text(e, state.rules.names, state.rules.rounds),
                     board=_over_under_board)


# ------------------------------------------------------------------ doubt_and_bet
def _colours(counts, k1):
    return [doubt_and_bet.colour_name(k, k1) for k, x in enumerate(counts) for _ in range(x)]


def _doubt_and_bet_board(state, me):
    game = state.get_game()
    k1 = game.get_parameters()["colours"] + 1
    events = _round_events(state.log())
    revealed = {}
    for e in events:
        if e.kind == "reveal":
            revealed = dict(e.hands)
    holding = state.phase in ("claim", "showdown")
    seats = []
    for s in range(game.num_players()):
        alive = state.alive[s]
        if revealed.get(s) is not None:
            cards = _colours(revealed[s], k1)
        elif s == me:
            cards = _colours(state.hand(s), k1)
        elif holding and alive:
            cards = ["back"] * state.slots[s]
        else:
            cards = []
        seats.append({"chips": state.chips[s], "slots": state.slots[s], "alive": alive, "cards": cards})
    claim = state.claim
    showdown = state.showdown
    return {"kind": "doubt_and_bet", "round": state.round, "phase": state.phase,
            "first_player": state.first_player, "turn_order": list(state.turn_order),
            "claim": None if claim is None else {
                "player": claim.player, "quantity": claim.quantity,
                "colour": doubt_and_bet.colour_name(claim.colour, k1), "stake": [claim.chips, claim.slot_chips]},
            "showdown": None if showdown is None else {
                "bettor": showdown[0], "doubter": showdown[1], "bettor_stake": list(showdown[2]),
                "doubter_stake": None if showdown[3] is None else list(showdown[3])},
            "seats": seats}


DOUBT_AND_BET = Adapter(text=lambda state, e, me: doubt_and_bet.event_text(e, me, game_k1(state)),
                        board=_doubt_and_bet_board)


def game_k1(state) -> int:
    return state.get_game().get_parameters()["colours"] + 1


ADAPTERS = {"underdog": UNDERDOG, "pub": PUB, "over_under": OVER_UNDER, "doubt_and_bet": DOUBT_AND_BET}


# ------------------------------------------------------------------ the view
def move_log(state, me: int, adapter: Adapter) -> list[dict]:
    """The game so far as seat ``me`` sees it: one entry per move
    (``{"seat", "move"}``, or ``{"seat", "text"}`` for a private move of
    another seat) and per other event the seat sees (``{"text"}``)."""
    game = state.get_game()
    replay = game.new_initial_state()
    entries = []
    log = replay.log()  # a game may log events before the first move (Underdog's first round)
    for e in log:
        text = adapter.text(replay, e, me)
        if text is not None:
            entries.append({"text": text})
    seen = len(log)
    for action in state.history():
        player = replay.current_player()
        name = replay.action_to_string(player, action) if player >= 0 else None
        replay.apply_action(action)
        log = replay.log()
        events = log[seen:]
        seen = len(log)
        if player >= 0:
            first, events = events[0], events[1:]
            if player == me or first.kind not in adapter.private_moves:
                entries.append({"seat": player, "move": name})
            else:
                entries.append({"seat": player, "text": adapter.text(replay, first, me)})
        for e in events:
            text = adapter.text(replay, e, me)
            if text is not None:
                entries.extend({"text": line} for line in text.split("\n"))
    return entries


def seat_view(state, me: int) -> dict:
    """The JSON a page at seat ``me`` is sent (see the module docstring)."""
    game = state.get_game()
    adapter = ADAPTERS[game.get_type().short_name]
    player = state.current_player()
    over = state.is_terminal()
    legal = []
    if player == me and not over:
        legal = [{"action": int(a), "move": state.action_to_string(me, a)} for a in state.legal_actions()]
    return {
        "seat": me,
        "players": game.num_players(),
        "to_move": player if player >= 0 else None,
        "chance_to_move": state.is_chance_node(),
        "over": over,
        "returns": [float(r) for r in state.returns()] if over else None,
        "legal": legal,
        "board": adapter.board(state, me),
        "log": move_log(state, me, adapter),
        "information_state": state.information_state_string(me),
        "observation": state.observation_string(me),
    }
