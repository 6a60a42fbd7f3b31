"""Load and play a kibitz network agent file with onnxruntime and numpy.

Copy this file and kibitz_agent_loader.py (the stdlib loader, whose reading
and checks this one uses: the size limit, gzip, JSON, every field, the
model's base64 and SHA-256) into a frontend, side by side. It imports
nothing else of kibitz and no pyspiel. A network agent file (format
``kibitz-agent`` version 2, ``"agent": "network"``, docs/formats/agent-file.md
in kibitz) holds an ONNX model that maps the input vector of the player to
move (its encoding is the file's ``network.encoding``: the information-state
tensor, in the game observer's layout, or another encoding of the game such
as Doubt and Bet's ``compact``; the file's ``input`` lists the pieces and
names the documentation, the game's rules page) and a mask of the legal
actions to one probability per distinct action::

    agent = KibitzNetAgent.load("underdog.json.gz")
    probs = agent.probabilities(info_state, legal_actions)   # {action id: probability}
    action = agent.choose(info_state, legal_actions, random.Random(7))

Every problem with a file (those of kibitz_agent_loader, a tabular file, a
model onnxruntime cannot load, a model whose inputs or outputs do not have
the file's sizes) raises :class:`AgentFileError` naming the file.
"""

from __future__ import annotations

import random

import numpy as np
import onnxruntime as ort

try:  # inside kibitz
    from . import kibitz_agent_loader as _tabular
except ImportError:  # copied beside kibitz_agent_loader.py
    import kibitz_agent_loader as _tabular

AgentFileError = _tabular.AgentFileError
INPUTS = ("info_state", "legal_mask")
OUTPUTS = ("logits", "probs")


class KibitzNetAgent:
    """A network agent from a checked version-2 document (see the module docstring)."""

    def __init__(self, document: dict, threads: int = 1):
        _tabular.check_document(document)
        if _tabular.agent_kind(document) != "network":
            raise AgentFileError("a tabular agent file: load it with kibitz_agent_loader.KibitzAgent")
        self.document = document
        self.game = document["game"]
        net = document["network"]
        self.input_size, self.num_actions = net["input_size"], net["num_actions"]
        #: the input the model reads (``info_state``), e.g. ``information_state_tensor`` or ``compact``
        self.encoding = net["encoding"]
        #: ``dense`` or ``factored`` (the model computes the logits either way)
        self.output = net.get("output", "dense")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        try:
            self.session = ort.InferenceSession(_tabular.model_bytes(document), options,
                                                providers=["CPUExecutionProvider"])
        except Exception as e:  # onnxruntime raises its own exception classes
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise AgentFileError(f"onnxruntime cannot load the model ({first})") from None
        self._check_signature()

    def _check_signature(self):
        inputs, outputs = self.session.get_inputs(), self.session.get_outputs()
        names = tuple(i.name for i in inputs), tuple(o.name for o in outputs)
        if names != (INPUTS, OUTPUTS):
            raise AgentFileError(f"the model's inputs {list(names[0])} and outputs {list(names[1])} must be "
                                 f"{list(INPUTS)} and {list(OUTPUTS)}")
        widths = [i.shape[-1] for i in inputs] + [o.shape[-1] for o in outputs]
        want = [self.input_size, self.num_actions, self.num_actions, self.num_actions]
        if widths != want:
            raise AgentFileError(f"the model's widths (info_state, legal_mask, logits, probs) are {widths}; "
                                 f"field 'network' says {want}")

    @classmethod
    def load(cls, path, limit: int | None = None, threads: int = 1) -> "KibitzNetAgent":
        """The agent in ``path``; ``limit``: see kibitz_agent_loader.read_bytes."""
        document = _tabular.read_document(path, limit)
        try:
            return cls(document, threads)
        except AgentFileError as e:
            raise AgentFileError(f"{path}: {e}") from None

    @property
    def metadata(self) -> dict:
        """Everything but the model's bytes."""
        return {k: (v if k != "model" else {m: x for m, x in v.items() if m != "base64"})
                for k, v in self.document.items()}

    def run(self, info_states, legal_masks) -> tuple[np.ndarray, np.ndarray]:
        """``(logits, probs)`` for a batch: ``info_states`` ``[N, input_size]``
        and ``legal_masks`` ``[N, num_actions]`` (1 legal, 0 not)."""
        x = np.asarray(info_states, np.float32).reshape(-1, self.input_size)
        m = np.asarray(legal_masks, np.float32).reshape(-1, self.num_actions)
        logits, probs = self.session.run(list(OUTPUTS), {INPUTS[0]: x, INPUTS[1]: m})
        return logits, probs

    def probabilities(self, info_state, legal_actions) -> dict[int, float]:
        """``{action id: probability}`` over ``legal_actions`` (renormalised
        over them) for one input vector (the file's encoding)."""
        legal = sorted(int(a) for a in legal_actions)
        if not legal or legal[0] < 0 or legal[-1] >= self.num_actions:
            raise ValueError(f"legal actions must be a non-empty list of ids in 0..{self.num_actions - 1}; "
                             f"got {legal_actions!r}")
        x = np.asarray(info_state, np.float32)
        if x.size != self.input_size:
            raise ValueError(f"the input has {x.size} floats; this network reads {self.input_size} "
                             f"({self.encoding})")
        mask = np.zeros(self.num_actions, np.float32)
        mask[legal] = 1.0
        p = self.run(x, mask)[1][0, legal].astype(np.float64)
        total = p.sum()
        return {a: float(q / total) for a, q in zip(legal, p)}

    def choose(self, info_state, legal_actions, rng: random.Random | None = None) -> int:
        """An action drawn from :meth:`probabilities` with ``rng``."""
        probs = self.probabilities(info_state, legal_actions)
        actions = sorted(probs)
        return (rng or random.Random()).choices(actions, weights=[probs[a] for a in actions], k=1)[0]
