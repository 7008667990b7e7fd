"""Training the shipped models (the ``train`` extra: PyTorch and onnx, never needed to read)."""

from __future__ import annotations

from typing import Any

from digitise.errors import MissingDependencyError

#: What to install when either is missing.
TRAIN_EXTRA = "pip install 'digitise[train]'"


def require_torch() -> Any:
    """PyTorch (the module, typed Any: it is an optional extra), after checking that onnx is there too.

    Training ends by exporting to ONNX, which needs the onnx package: without
    this check a run with PyTorch alone trains for up to an hour and then fails
    at the export.
    """
    try:
        # imported here: an optional package (PyTorch, the `train` extra)
        import torch
    except ImportError as exc:
        raise MissingDependencyError(f"PyTorch is needed for training: {TRAIN_EXTRA}") from exc
    try:
        # imported here: an optional package (onnx, the `train` extra)
        import onnx  # noqa: F401  (imported to check it is installed: torch.onnx.export needs it)
    except ImportError as exc:
        raise MissingDependencyError(f"onnx is needed to export the trained model: {TRAIN_EXTRA}") from exc
    return torch
