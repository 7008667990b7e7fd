"""What a whole-cell model exports for adapting to a writer: its penultimate layer and its last layer.

Per-match adaptation (:mod:`digitise.vision.adapt`) fine-tunes a model's last
layer on one writer's squares. At run time only onnxruntime is there, so a
shipped model carries what that needs: a second graph output ``features``
(the activations the last layer reads) and, in its metadata, the last
layer's weight, bias and count temperature (:data:`digitise.vision.cellnet.HEAD_KEYS`).
Adding the output leaves the ``probabilities`` output as it was: the same
nodes compute it.

Run on the shipped models once (``python -m digitise.training.features
digitise/vision/models/cellnet_point.onnx ...``); ``digitise train --cellnet``
exports new models this way.
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import numpy as np

from digitise.fileio import write_atomic
from digitise.vision.cellnet import FEATURES_OUTPUT, HEAD_KEYS

#: The exported graph's last layer (``nn.Linear(128, 33)``) and the activation it reads.
LAST_WEIGHT = "net.20.weight"
LAST_BIAS = "net.20.bias"
LAST_INPUT = "/net/net.19/Relu_output_0"
#: The node dividing the count logits by the calibration temperature (a constant input).
COUNT_DIVIDE = "/Div"


def with_features(model_bytes: bytes) -> bytes:
    """``model_bytes`` with the ``features`` output added and the last layer kept in its metadata."""
    # imported here: an optional package (onnx, the `train` extra)
    import onnx
    from onnx import numpy_helper

    model = onnx.load_from_string(model_bytes)
    graph = model.graph
    inits = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    constants = {n.output[0]: numpy_helper.to_array(n.attribute[0].t) for n in graph.node if n.op_type == "Constant"}
    divide = next(n for n in graph.node if n.name == COUNT_DIVIDE)
    temperature = float(np.asarray(constants[divide.input[1]]).reshape(-1)[0])
    if LAST_INPUT not in {o for n in graph.node for o in n.output}:
        raise ValueError(f"the model has no {LAST_INPUT}: not a whole-cell model of this architecture")
    if FEATURES_OUTPUT not in {o.name for o in graph.output}:
        graph.node.append(onnx.helper.make_node("Identity", [LAST_INPUT], [FEATURES_OUTPUT], name="features"))
        width = int(inits[LAST_WEIGHT].shape[1])
        graph.output.append(onnx.helper.make_tensor_value_info(FEATURES_OUTPUT, onnx.TensorProto.FLOAT, ["n", width]))
    weight, bias = inits[LAST_WEIGHT].astype("<f4"), inits[LAST_BIAS].astype("<f4")
    said = {
        HEAD_KEYS[0]: base64.b64encode(weight.tobytes()).decode("ascii"),
        HEAD_KEYS[1]: base64.b64encode(bias.tobytes()).decode("ascii"),
        HEAD_KEYS[2]: repr(temperature),
        HEAD_KEYS[3]: f"{weight.shape[0]},{weight.shape[1]}",
    }
    kept = [p for p in model.metadata_props if p.key not in said]
    del model.metadata_props[:]
    for prop in kept:
        model.metadata_props.add(key=prop.key, value=prop.value)
    for key in HEAD_KEYS:
        model.metadata_props.add(key=key, value=said[key])
    onnx.checker.check_model(model)
    return bytes(model.SerializeToString())


def expose(path: Path) -> None:
    """Rewrite the model at ``path`` with its ``features`` output and last layer."""
    write_atomic(path, with_features(path.read_bytes()), overwrite=True)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        expose(Path(name))
