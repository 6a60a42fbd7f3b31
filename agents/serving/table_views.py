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
moves are private, and the board (cards and counters) the page draws. A
game without one (a new game) gets :data:`GENERIC`, read through the
pyspiel API alone: the seat's observation string as the board and the
players' moves by name.
"""

from __future__ import annotations

import dataclasses
import re
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
    #: (state, seat) -> whether the seat is out of the game (will not move again)
    out: Callable = lambda state, seat: False
    #: (state, seat, move name) -> {"help": what the move will do, in words
    #: from the rules page}, or {} (sent with each legal move)
    describe: Callable = lambda state, seat, name: {}


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


def _underdog_describe(state, me, name):
    last = state.is_last_round
    stake = state.get_game().get_parameters()["last_round_stake"]
    if name == "swap":
        return {"help": "draw the top card of the pile, then keep one of your two cards and lay the other "
                        "face up in front of you"}
    if name == "new underdog":
        return {"help": f"turn the top card of the pile up: it replaces the underdog card ({state.underdog})"}
    if name.startswith("keep "):
        return {"help": f"keep the {name[5:]} in your hand and lay your other card face up"}
    if name == "fight":
        cost = f"{stake} chips, or all you have if less" if last else "1 chip"
        return {"help": f"put in {cost} and fight: among the fighters the lowest card adds the underdog's "
                        "value and the highest total takes the chips bet and "
                        + ("the bank" if last else "1 chip from the bank")}
    if name == "pass":
        return {"help": "stay out of this round's fight: you bet nothing and win nothing"}
    return {}


UNDERDOG = Adapter(text=lambda state, e, me: underdog.event_text(e, me), board=_underdog_board,
                   private_moves=frozenset({"keep"}),
                   out=lambda state, s: state.chips[s] == 0 and not state.hands[s],
                   describe=_underdog_describe)


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


_PUB_HELP = {
    "take": "take the face-up card into your collection",
    "draw": "draw the top card of the deck: if it is lower in rank and of another suit than the face-up "
            "card you then keep it alone or take both, else both go to your collection",
    "keep drawn": "only the drawn card goes to your collection; the face-up card stays for the next player",
    "take both": "the drawn card and the face-up card both go to your collection",
}

PUB = Adapter(text=lambda state, e, me: pub.event_text(e, me, state.get_game().card_names), board=_pub_board,
              describe=lambda state, me, name: {"help": _PUB_HELP[name]} if name in _PUB_HELP else {})


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


def _over_under_describe(state, me, name):
    m = re.fullmatch(r"stack (\d+) (over|under)", name)
    if m:
        s, way = int(m.group(1)), m.group(2)
        top, money, _ = state.stacks()[s]
        tie = ("a tie hands the stack to a player you choose" if state.get_game().get_parameters()["variant"]
               == "cutthroat" else "a tie is safe")
        return {"help": f"bet that the next card flipped onto stack {s} is {'higher' if way == 'over' else 'lower'} "
                        f"than its top ({state.rules.names[top]}): if so you are safe; if not you bust and its "
                        f"${money} goes to your tally (the lowest tally wins); {tie}"}
    m = re.fullmatch(r"give to (\d+)", name)
    if m:
        return {"help": f"hand the stack to seat {m.group(1)}, who claims it"}
    return {}


OVER_UNDER = Adapter(text=lambda state, e, me: over_under.event_text(e, state.rules.names, state.rules.rounds),
                     board=_over_under_board, describe=_over_under_describe)


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


_DB_HELP = {
    "keep": "keep your chips and slots as they are",
    "buy slot": "pay 1 chip for one more slot: one more card each deal",
    "sell slot": "turn a slot back into 1 chip: one card fewer each deal",
    "all in": "stake all you can wager (you cannot afford a call); your opponent's excess is returned, slot "
              "chips first, and every hand is revealed",
}


def _db_describe(state, me, name):
    """Doubt and Bet: a move's help. A claim has none (a claim decision has
    thousands of legal claims: the page builds a claim from the parts of
    their names, ``claim 3 red stake 2+1``, and says what it does)."""
    if name in _DB_HELP:
        return {"help": _DB_HELP[name]}
    m = re.fullmatch(r"(call|raise) (\d+)\+(\d+)", name)
    if m:
        kind, c, s = m.group(1), int(m.group(2)), int(m.group(3))
        what = ("match the stake: every hand is revealed and the claim decides who wins" if kind == "call" else
                f"raise the stake to {c + s}: your opponent calls, raises or folds")
        return {"help": f"{what} (you stake {c} chips and {s} slot chips)"}
    if name == "doubt":
        claim = state.claim
        colour = doubt_and_bet.colour_name(claim.colour, game_k1(state))
        return {"help": f"doubt p{claim.player}'s claim ({claim.quantity} {colour}): a showdown of stakes "
                        f"between you and p{claim.player}, you first"}
    if name == "fold":
        return {"help": "give up the showdown: you lose your last stake and the cards are not revealed"}
    return {}


DOUBT_AND_BET = Adapter(text=lambda state, e, me: doubt_and_bet.event_text(e, me, game_k1(state)),
                        board=_doubt_and_bet_board, out=lambda state, s: not state.alive[s],
                        describe=_db_describe)


def game_k1(state) -> int:
    return state.get_game().get_parameters()["colours"] + 1


ADAPTERS = {"underdog": UNDERDOG, "pub": PUB, "over_under": OVER_UNDER, "doubt_and_bet": DOUBT_AND_BET}


# ------------------------------------------------------------------ any other game
def _generic_board(state, me):
    """The board of a game without a view of its own: the seat's observation
    string (what the game's observer says the seat sees now), one empty box per seat."""
    return {"kind": "generic", "observation": state.observation_string(me),
            "seats": [{} for _ in range(state.get_game().num_players())]}


#: the view of a game without an adapter of its own: it reads the game
#: through the pyspiel API alone (no ``log()``, no properties). The move log
#: names every player's move (``action_to_string``) and no chance outcome;
#: so it suits games whose players' moves are public (poker-like games) and
#: whose cards a seat sees in its observation string. A game with private
#: moves needs an adapter of its own (``private_moves``).
GENERIC = Adapter(text=None, board=_generic_board)


def adapter_of(game) -> Adapter:
    """The view of ``game``: its own adapter, or :data:`GENERIC`."""
    return ADAPTERS.get(game.get_type().short_name, GENERIC)


# ------------------------------------------------------------------ the view
def cli_game_string(game) -> str:
    """The game string with every parameter, spelled as on the command line
    (``jokers=false``, not pyspiel's ``jokers=False``); it loads the same game."""
    params = game.get_parameters()
    values = [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in sorted(params.items())]
    name = game.get_type().short_name
    return f"{name}({','.join(values)})" if values else name


def move_log(state, me: int, adapter: Adapter) -> list[dict]:
    """The game so far as seat ``me`` sees it: one entry per move
    (``{"seat", "move"}``, or ``{"seat", "text"}`` for a private move of
    another seat) and per other event the seat sees (``{"text"}``)."""
    game = state.get_game()
    replay = game.new_initial_state()
    if adapter.text is None:  # the generic view: the players' moves by name
        entries = []
        for action in state.history():
            player = replay.current_player()
            if player >= 0:
                entries.append({"seat": player, "move": replay.action_to_string(player, action)})
            replay.apply_action(action)
        return entries
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
    adapter = adapter_of(game)
    player = state.current_player()
    over = state.is_terminal()
    legal = []
    if player == me and not over:
        for a in state.legal_actions():
            name = state.action_to_string(me, a)
            legal.append({"action": int(a), "move": name, **adapter.describe(state, me, name)})
    return {
        "seat": me,
        "players": game.num_players(),
        "to_move": player if player >= 0 else None,
        "chance_to_move": state.is_chance_node(),
        "over": over,
        "out": bool(adapter.out(state, me)) and not over,
        "returns": [float(r) for r in state.returns()] if over else None,
        "legal": legal,
        "board": adapter.board(state, me),
        "log": move_log(state, me, adapter),
        "information_state": state.information_state_string(me),
        "observation": state.observation_string(me),
    }
