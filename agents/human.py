"""A person at the terminal.

It shows the player what that seat may see (the information-state string,
which for kibitz games is one event per line, and the observation string),
lists the legal moves numbered, and takes a number or a move name. Bad input
is asked again; 'quit' or end of input raises :class:`Quit`.
"""

from __future__ import annotations

from kibitz.agents.base import Agent, deterministic


class Quit(Exception):
    """The person typed 'quit', or input ended (Ctrl-D, or the end of a file
    or pipe given as input: ``end_of_input``)."""

    def __init__(self, player: int, end_of_input: bool = False):
        super().__init__(f"player {player}: {'end of input' if end_of_input else 'quit'}")
        self.player = player
        self.end_of_input = end_of_input


class HumanAgent(Agent):
    name = "human"

    def __init__(self, game, player_id, seed=None, *, read=input, write=print):
        super().__init__(game, player_id, seed)
        self._read = read
        self._write = write
        self._shown = 0  # information-state lines already shown

    def restart_at(self, state):
        self._shown = 0

    def action_probabilities(self, state):
        legal = state.legal_actions()
        return deterministic(self.step(state), legal)

    def show_view(self, state):
        me = self._player_id
        lines = state.information_state_string(me).split("\n")
        for line in lines[self._shown:]:
            self._write(f"  {line}")
        self._shown = len(lines)

    def step(self, state):
        me = self._player_id
        self.show_view(state)
        self._write(f"You are player {me}. {state.observation_string(me)}")
        legal = state.legal_actions()
        names = [state.action_to_string(me, a) for a in legal]
        self._list(names)
        while True:
            try:
                text = self._read("Your move (number or name): ").strip()
            except EOFError:
                raise Quit(me, end_of_input=True) from None
            if text.lower() in ("quit", "exit"):
                raise Quit(me)
            if text.lower() == "list":
                self._list(names, everything=True)
                continue
            if text.isdigit() and 1 <= int(text) <= len(legal):
                return legal[int(text) - 1]
            matches = [a for a, n in zip(legal, names) if n.lower() == text.lower()]
            if matches:
                return matches[0]
            shown = names if len(names) <= self.MAX_LISTED else names[:5] + ["..."] + names[-3:]
            self._write(f"  '{text}' is not a legal move here; type 1..{len(legal)} or one of: "
                        + ", ".join(shown))

    #: longer move lists are abbreviated; 'list' prints them all
    MAX_LISTED = 40

    def _list(self, names, everything=False):
        if everything or len(names) <= self.MAX_LISTED:
            for i, n in enumerate(names, 1):
                self._write(f"  {i}) {n}")
            return
        for i in list(range(5)) + list(range(len(names) - 3, len(names))):
            self._write(f"  {i + 1}) {names[i]}")
            if i == 4:
                self._write(f"  ... {len(names) - 8} more: type a move by name "
                            "(e.g. 'claim 3 red stake 1+0'), a number, or 'list' to see them all")
