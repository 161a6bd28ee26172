"""Interpreter adapters (LiteRT first, then tflite_runtime, then tf.lite) and input generation.

Nothing here parses flatbuffers: the harness only loads, resizes, fills and invokes. The
runtimes are imported lazily, so static analysis never pays for them.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from .errors import RuntimeMissingError, RuntimeUnavailableError

RUNTIMES = ("litert", "tflite_runtime", "tensorflow")
_INSTALL_HINT = {
    "litert": "pip install 'tflite_flops[runtime]' (ai-edge-litert)",
    "tflite_runtime": "pip install tflite-runtime",
    "tensorflow": "pip install 'tflite_flops[tf]' (tensorflow-cpu)",
}


@dataclass(frozen=True)
class RuntimeSettings:
    """How to run the model: which runtime, threads, XNNPACK on or off."""

    runtime: str = "litert"
    threads: int = 1
    xnnpack: bool = True


def _import(runtime: str) -> tuple[Any, Any, str]:
    """(Interpreter class, OpResolverType enum, version) of a runtime; raises RuntimeUnavailableError."""
    try:
        if runtime == "litert":
            import ai_edge_litert
            from ai_edge_litert.interpreter import Interpreter, OpResolverType

            return Interpreter, OpResolverType, getattr(ai_edge_litert, "__version__", "?")
        if runtime == "tflite_runtime":
            import tflite_runtime
            from tflite_runtime.interpreter import Interpreter, OpResolverType

            return Interpreter, OpResolverType, getattr(tflite_runtime, "__version__", "?")
        if runtime == "tensorflow":
            os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
            import tensorflow as tf

            return tf.lite.Interpreter, tf.lite.experimental.OpResolverType, tf.__version__
    except ImportError as exc:
        raise RuntimeMissingError(
            f"runtime {runtime!r} is not installed ({exc}); install it with {_INSTALL_HINT[runtime]}") from exc
    raise RuntimeUnavailableError(f"unknown runtime {runtime!r} (choose {', '.join(RUNTIMES)})")


def runtime_version(runtime: str) -> str:
    """Version string of an installed runtime."""
    return _import(runtime)[2]


def make_interpreter(model: str | bytes, settings: RuntimeSettings) -> Any:
    """Create an interpreter for a path or bytes; raises RuntimeUnavailableError when it cannot load."""
    interpreter_cls, resolver, _ = _import(settings.runtime)
    kwargs: dict[str, Any] = {"num_threads": settings.threads}
    if not settings.xnnpack:
        kwargs["experimental_op_resolver_type"] = resolver.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    if isinstance(model, (bytes, bytearray)):
        kwargs["model_content"] = bytes(model)
    else:
        kwargs["model_path"] = str(model)
    try:
        return interpreter_cls(**kwargs)
    except (ValueError, RuntimeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RuntimeUnavailableError(f"the {settings.runtime} runtime cannot load the model: {first}") from exc


def resize_and_allocate(interpreter: Any, shapes: Mapping[int, tuple[int, ...]]) -> None:
    """Resize inputs (by position in get_input_details) and allocate; RuntimeUnavailableError on failure."""
    details = interpreter.get_input_details()
    try:
        for pos, shape in shapes.items():
            if tuple(details[pos]["shape"]) != tuple(shape):
                interpreter.resize_tensor_input(details[pos]["index"], list(shape), strict=False)
        interpreter.allocate_tensors()
    except (ValueError, RuntimeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RuntimeUnavailableError(f"the runtime cannot run the model at these shapes: {first}") from exc


def random_input(detail: Mapping[str, Any], rng: np.random.Generator) -> np.ndarray:
    """Random data like benchmark_model: float in [-0.5, 0.5), int8 [-127, 127], uint8 [0, 254],
    other integers [0, 99], bool {0, 1}."""
    shape = tuple(int(d) for d in detail["shape"])
    dtype = np.dtype(detail["dtype"])
    if dtype.kind == "f":
        return rng.uniform(-0.5, 0.5, size=shape).astype(dtype)
    if dtype == np.int8:
        return rng.integers(-127, 128, size=shape, dtype=np.int8)
    if dtype == np.uint8:
        return rng.integers(0, 255, size=shape, dtype=np.uint8)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind in "iu":
        return rng.integers(0, 100, size=shape).astype(dtype)
    raise RuntimeUnavailableError(f"cannot generate input data of dtype {dtype} for {detail.get('name')!r}")


def fill_inputs(interpreter: Any, data: Mapping[str, np.ndarray] | None = None, seed: int = 0) -> None:
    """Set every input: from ``data`` (keyed by name or position) when given, else random."""
    rng = np.random.default_rng(seed)
    for pos, detail in enumerate(interpreter.get_input_details()):
        value = None
        if data is not None:
            value = data.get(detail["name"], data.get(str(pos)))
            if value is None:
                raise RuntimeUnavailableError(f"--inputs has no array for input {detail['name']!r} (or key '{pos}')")
            value = np.asarray(value, dtype=detail["dtype"])
            if tuple(value.shape) != tuple(detail["shape"]):
                raise RuntimeUnavailableError(
                    f"--inputs array for {detail['name']!r} has shape {list(value.shape)}, "
                    f"the model runs {list(detail['shape'])}")
        else:
            value = random_input(detail, rng)
        interpreter.set_tensor(detail["index"], value)


def load_npz(path: str) -> dict[str, np.ndarray]:
    """Arrays of an .npz file keyed by name."""
    try:
        with np.load(path) as f:
            return {k: f[k] for k in f.files}
    except (OSError, ValueError) as exc:
        raise RuntimeUnavailableError(f"{path}: cannot read input arrays ({exc})") from exc


def cpu_model() -> str:
    """The CPU model name (from /proc/cpuinfo on Linux), else platform.processor()."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
