"""The runtime adapter registry: one module per runtime drives --runtime and the interpreter factory."""

from __future__ import annotations


import cli_process
import pytest

from tflite_flops.measure import runtimes
from tflite_flops.errors import RuntimeMissingError, RuntimeUnavailableError
from tflite_flops.measure.runtime import RUNTIMES, runtime_version


def test_every_shipped_runtime_is_registered_default_first():
    assert runtimes.names() == ("litert", "tflite_runtime", "tensorflow") == RUNTIMES
    assert all(runtimes.get(n).install_hint.startswith("pip install") for n in runtimes.names())


def test_a_duplicate_or_unknown_runtime_is_refused():
    with pytest.raises(ValueError, match="already registered"):
        runtimes.register(runtimes.get("litert"))
    with pytest.raises(RuntimeUnavailableError, match="unknown runtime 'nope'"):
        runtimes.get("nope")


def test_a_missing_runtime_names_its_install_hint(monkeypatch):
    def missing():
        raise ImportError("No module named 'fake'")

    monkeypatch.setitem(runtimes._ADAPTERS, "fake", runtimes.RuntimeAdapter("fake", "pip install fake", missing))
    with pytest.raises(RuntimeMissingError, match="pip install fake"):
        runtime_version("fake")


def test_runtime_choices_come_from_the_registry():
    help_text = cli_process.run(["analyze", "--help"], timeout=60, check=True).stdout
    assert "{" + ",".join(runtimes.names()) + "}" in help_text


@pytest.mark.runtime
def test_litert_adapter_loads():
    loaded = runtimes.load("litert")
    assert loaded.version and hasattr(loaded.op_resolver_type, "BUILTIN_WITHOUT_DEFAULT_DELEGATES")


@pytest.mark.runtime
@pytest.mark.parametrize("name", ["litert", pytest.param("tensorflow", marks=pytest.mark.tf)])
def test_activations_are_captured_through_every_adapter(name):
    """Per-op timing captures activations through make_interpreter, whatever the runtime (no LiteRT special case)."""
    from pathlib import Path

    import tflite_flops
    from tflite_flops.measure.runtime import RuntimeSettings, input_positions
    from tflite_flops.measure.single_op import capture_activations

    model = Path(__file__).resolve().parent.parent / "sample_models" / "cnn_float.tflite"
    report = tflite_flops.analyze(model)
    values = capture_activations(str(model), input_positions(report.inputs), RuntimeSettings(name))
    assert values and any(v.size and v.any() for v in values.values())
