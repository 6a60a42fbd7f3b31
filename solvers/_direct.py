"""Direct calls into the rules of kibitz games, for states internal to a search."""


def direct_rules(state) -> bool:
    """True for kibitz's own games, whose rules live entirely in Python.

    Their ``_apply_action``/``_legal_actions`` can then be called directly on
    states that are internal to a search (never handed out), skipping the
    Python -> C++ -> Python round trip of ``apply_action``; the C++ history
    of such states is not kept, and nothing reads it.
    """
    return type(state).__module__.startswith("games.")
