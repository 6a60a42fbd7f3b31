"""Small helpers shared by kibitz's searches (IS-MCTS, MCCFR)."""


def direct_rules(state) -> bool:
    """True for kibitz's own games, whose rules live entirely in Python.

    Their ``_apply_action``/``_legal_actions`` can then be called directly on
    states that are internal to a search (never handed out), skipping the
    Python -> C++ -> Python round trip of ``apply_action``; the C++ history
    of such states is not kept, and nothing reads it.
    """
    return type(state).__module__.startswith("kibitz.games.")


def sample_chance(state, rand):
    """A chance outcome of ``state`` drawn with ``rand()`` (uniform in [0, 1))."""
    outcomes = state.chance_outcomes()
    u = rand()
    acc = 0.0
    for action, prob in outcomes:
        acc += prob
        if u < acc:
            return action
    return outcomes[-1][0]
