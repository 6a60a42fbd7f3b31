"""Small helpers shared by kibitz's searches (IS-MCTS, MCCFR)."""

from kibitz.games import search

_DIRECT: dict = {}  # state type -> its game declares ``search.DIRECT``


def direct_rules(state) -> bool:
    """True for states of a game that declares the capability
    ``search.DIRECT`` (kibitz's own games, whose rules live in Python).

    Their ``_apply_action``/``_legal_actions`` can then be called directly on
    states that are internal to a search (never handed out), skipping the
    Python -> C++ -> Python round trip of ``apply_action``; the C++ history
    of such states is not kept, and nothing reads it. Asked once per state
    class (a Python game's states are of its own class; C++ games' states
    share pyspiel's, and none of them declares it).
    """
    kind = type(state)
    direct = _DIRECT.get(kind)
    if direct is None:
        direct = _DIRECT[kind] = search.DIRECT in search.capabilities(state.get_game())
    return direct

