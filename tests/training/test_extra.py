"""Training needs the train extra (PyTorch and onnx), and says which part is missing before it starts."""

from __future__ import annotations

import sys
import types

import pytest

from digitise.errors import MissingDependencyError
from digitise.training import require_torch


def test_without_pytorch_training_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # an import of it now fails
    with pytest.raises(MissingDependencyError, match=r"PyTorch is needed for training: pip install 'digitise\[train\]'"):
        require_torch()


def test_pytorch_without_onnx_is_refused_before_training_not_at_the_export(monkeypatch: pytest.MonkeyPatch) -> None:
    stand_in = types.ModuleType("torch")
    monkeypatch.setitem(sys.modules, "torch", stand_in)
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(MissingDependencyError, match=r"onnx is needed to export the trained model"):
        require_torch()


def test_with_both_it_gives_pytorch(monkeypatch: pytest.MonkeyPatch) -> None:
    stand_in = types.ModuleType("torch")
    monkeypatch.setitem(sys.modules, "torch", stand_in)
    monkeypatch.setitem(sys.modules, "onnx", types.ModuleType("onnx"))
    assert require_torch() is stand_in
