"""The ONNX model of a network policy (solvers/network.py), built with ``onnx.helper``.

Graph (opset :data:`OPSET`, IR version :data:`IR_VERSION`):

* inputs ``info_state`` float32 ``[N, input_size]`` (the network's
  encoding of the player to move: the information-state tensor, or another
  encoding the game offers, e.g. Doubt and Bet's ``compact``) and
  ``legal_mask`` float32 ``[N, num_actions]`` (1 at the legal actions, 0
  elsewhere);
* ``h_0 = info_state``; ``h_{k+1} = Relu(Gemm(h_k, W_k, b_k))`` for the
  hidden layers, ``logits = Gemm(h_K, W_K, b_K)`` for a dense output;
* for a factored output (``spec.factors`` = F factor logits and the game's
  action factors ``index``, ``(num_actions, R)``) the last ``Gemm`` has one
  more column with zero weights and bias, ``factors = Gemm(h_K, [W_K 0],
  [b_K 0])`` (``[N, F + 1]``, its last column exactly 0), and ``logits =
  Gather(factors, index_0, axis=1) + ... + Gather(factors, index_{R-1},
  axis=1)``, the columns of ``index`` as int64 initializers: the same sums,
  in the same order, as :func:`solvers.network.forward`;
* ``probs = Softmax(logits + (legal_mask - 1) * MASK_PENALTY, axis=-1)``,
  the masked softmax of :func:`solvers.network.masked_softmax`;
* outputs ``logits`` and ``probs``, both float32 ``[N, num_actions]``.

Opset 17 is the one chosen: every operator here (Gemm, Relu, Gather, Sub,
Mul, Add, Softmax with ``axis=-1``) has had its present meaning since opset 13, and
opset 17 with IR version 8 is read by onnxruntime 1.14 and later and by
onnxruntime-web, so a frontend with a runtime a few years old runs it too.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from kibitz.solvers.network import MASK_PENALTY, NetworkSpec

OPSET = 17
IR_VERSION = 8
INPUTS = ("info_state", "legal_mask")
OUTPUTS = ("logits", "probs")


def build_model(spec: NetworkSpec, params, index=None) -> onnx.ModelProto:
    """The checked ONNX model of the network ``spec`` with ``params``
    (``[W0, b0, W1, b1, ...]``); ``index``: the game's action factors, for
    (and only for) a factored network."""
    sizes = spec.sizes
    factored = spec.output == "factored"
    if factored != (index is not None):
        raise ValueError("a factored network needs the game's action factors, a dense one none")
    if factored:
        index = np.asarray(index)
        if index.ndim != 2 or index.shape[0] != spec.num_actions or index.min() < 0 \
                or index.max() > spec.factors:
            raise ValueError(f"the action factors must be ({spec.num_actions}, R) ids in 0..{spec.factors}")
    if len(params) != 2 * (len(sizes) - 1):
        raise ValueError(f"{len(params)} parameter arrays for {len(sizes) - 1} layers; expected "
                         f"{2 * (len(sizes) - 1)}")
    inits, nodes = [], []
    h = INPUTS[0]
    last = len(sizes) - 2
    for k in range(last + 1):
        w, b = np.asarray(params[2 * k], np.float32), np.asarray(params[2 * k + 1], np.float32)
        if w.shape != (sizes[k], sizes[k + 1]) or b.shape != (sizes[k + 1],):
            raise ValueError(f"layer {k}: shapes {w.shape}, {b.shape}; the spec says "
                             f"{(sizes[k], sizes[k + 1])}, {(sizes[k + 1],)}")
        if factored and k == last:  # the "nothing" column: weights and bias 0
            w = np.concatenate([w, np.zeros((w.shape[0], 1), np.float32)], axis=1)
            b = np.concatenate([b, np.zeros(1, np.float32)])
        inits += [numpy_helper.from_array(w, f"W{k}"), numpy_helper.from_array(b, f"b{k}")]
        out = ("factors" if factored else OUTPUTS[0]) if k == last else f"z{k}"
        nodes.append(helper.make_node("Gemm", [h, f"W{k}", f"b{k}"], [out], name=f"dense{k}"))
        if k < last:
            nodes.append(helper.make_node("Relu", [out], [f"h{k + 1}"], name=f"relu{k}"))
            h = f"h{k + 1}"
    if factored:
        total = None
        for r in range(index.shape[1]):
            inits.append(numpy_helper.from_array(index[:, r].astype(np.int64), f"index{r}"))
            part = OUTPUTS[0] if index.shape[1] == 1 else f"part{r}"
            nodes.append(helper.make_node("Gather", ["factors", f"index{r}"], [part], axis=1, name=f"gather{r}"))
            if total is not None:
                out = OUTPUTS[0] if r == index.shape[1] - 1 else f"sum{r}"
                nodes.append(helper.make_node("Add", [total, part], [out], name=f"add{r}"))
                part = out
            total = part
    inits += [numpy_helper.from_array(np.array(1.0, np.float32), "one"),
              numpy_helper.from_array(np.array(MASK_PENALTY, np.float32), "penalty")]
    nodes += [
        helper.make_node("Sub", [INPUTS[1], "one"], ["mask_minus_one"], name="mask_minus_one"),
        helper.make_node("Mul", ["mask_minus_one", "penalty"], ["mask_penalty"], name="mask_penalty"),
        helper.make_node("Add", [OUTPUTS[0], "mask_penalty"], ["masked_logits"], name="masked_logits"),
        helper.make_node("Softmax", ["masked_logits"], [OUTPUTS[1]], axis=-1, name="softmax"),
    ]
    graph = helper.make_graph(
        nodes, "kibitz_network_policy",
        [helper.make_tensor_value_info(INPUTS[0], TensorProto.FLOAT, ["N", spec.input_size]),
         helper.make_tensor_value_info(INPUTS[1], TensorProto.FLOAT, ["N", spec.num_actions])],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, ["N", spec.num_actions]) for name in OUTPUTS],
        initializer=inits)
    model = helper.make_model(graph, producer_name="kibitz", opset_imports=[helper.make_opsetid("", OPSET)],
                              ir_version=IR_VERSION)
    model.doc_string = (f"kibitz network policy for {spec.game}: {spec.encoding} input, hidden "
                        f"{list(spec.hidden)}, {spec.output} output"
                        + (f" ({spec.factors} factor logits)" if factored else ""))
    onnx.checker.check_model(model)
    return model


def model_bytes(spec: NetworkSpec, params, index=None) -> bytes:
    """:func:`build_model` serialised."""
    return build_model(spec, params, index).SerializeToString()


def check_model_bytes(data: bytes, spec: NetworkSpec | None = None) -> None:
    """ValueError unless ``data`` is an ONNX model that passes
    ``onnx.checker.check_model`` with this module's inputs and outputs (and,
    given ``spec``, its sizes)."""
    try:
        model = onnx.load_model_from_string(data)
        onnx.checker.check_model(model)
    except Exception as e:  # DecodeError, ValidationError: the checker's own message
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError(f"the model fails onnx.checker ({first})") from None
    names = ([i.name for i in model.graph.input], [o.name for o in model.graph.output])
    if tuple(names[0]) != INPUTS or tuple(names[1]) != OUTPUTS:
        raise ValueError(f"the model's inputs {names[0]} and outputs {names[1]} must be "
                         f"{list(INPUTS)} and {list(OUTPUTS)}")
    if spec is not None:
        def width(value_info):
            return value_info.type.tensor_type.shape.dim[-1].dim_value
        got = (width(model.graph.input[0]), width(model.graph.output[0]))
        if got != (spec.input_size, spec.num_actions):
            raise ValueError(f"the model takes {got[0]} inputs and gives {got[1]} logits; the file says "
                             f"{spec.input_size} and {spec.num_actions}")
