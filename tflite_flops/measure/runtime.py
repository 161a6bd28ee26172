"""Interpreter adapters (LiteRT first, then tflite_runtime, then tf.lite) and input generation.

Nothing here parses flatbuffers: the harness only loads, resizes, fills and invokes. The
runtimes are imported lazily, so static analysis never pays for them.
"""

from __future__ import annotations

import contextlib
import os
import platform
import re
import sys
import tempfile
import warnings
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from . import runtimes
from ..errors import InputSpecError, RuntimeUnavailableError
from ..files import open_regular
from ..reader.bundle import MAGIC as BUNDLE_MAGIC
from ..reader.load import load_model
from ..settings import RuntimeSettings  # noqa: F401 - a setting; the runtime adapters read it

RUNTIMES = runtimes.names()  # the registered adapters, the default first


# Native log lines the runtimes write straight to file descriptor 2: LiteRT's "INFO: Created
# TensorFlow Lite XNNPACK delegate for CPU.", absl's preamble and TensorFlow's INFO lines
# ("I0000 00:00:1795434717.353083    4014 port.cc:153] oneDNN custom operations are on ...").
_NOISE = re.compile(r"^(INFO: |WARNING: All log messages before absl::InitializeLog\(\)|"
                    r"I\d{4} [\d:.]+\s+\d+ \S+:\d+\] )")
# LiteRT's error reporter appends messages without a separator ("... (3 != 1)Node number 7 ...").
_MESSAGE_STARTS = re.compile(r"(?<=\S)(?=(Node number \d+|Encountered unresolved custom op|Didn't find op for builtin"
                             r"|Registration failed|Restored original execution plan|Failed to apply|"
                             r"Internal error:|Unsupported data type|Ignoring failed application))")
_CUSTOM_OP = re.compile(r"Encountered unresolved custom op: ([^\s.]+)")


@contextlib.contextmanager
def quiet_native_stderr() -> Iterator[None]:
    """Hide the runtimes' native INFO lines on stderr; every other line they write is passed on.

    The interpreters log from C++ straight to file descriptor 2, out of Python's reach, so fd 2 is
    pointed at a temporary file for the duration and the lines that are not INFO noise are
    written back to ``sys.stderr`` afterwards.
    """
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):  # no usable fd 2 (embedded interpreter, closed stderr)
        yield
        return
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            with warnings.catch_warnings():  # tf.lite.Interpreter's deprecation notice
                warnings.filterwarnings("ignore", message=r"(?s).*tf\.lite\.Interpreter is deprecated")
                yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            kept = [line for line in tmp.read().decode("utf-8", "replace").splitlines()
                    if line.strip() and not _NOISE.match(line)]
            if kept:
                sys.stderr.write("\n".join(kept) + "\n")


def runtime_message(exc: BaseException) -> str:
    """One readable line from a runtime exception: lines and glued messages joined with ``; ``."""
    text = str(exc).strip()
    if not text:
        return type(exc).__name__
    parts = [p.strip() for line in text.splitlines() for p in _MESSAGE_STARTS.sub("\n", line).splitlines()]
    return "; ".join(p for p in parts if p)


def _load_failure(what: str, exc: BaseException) -> RuntimeUnavailableError:
    """The error for a runtime that fails to ``what`` (load / prepare ...): a missing custom op is named as such."""
    message = runtime_message(exc)
    custom = _CUSTOM_OP.search(str(exc))
    if custom:
        return RuntimeUnavailableError(f"the runtime has no kernel for the unresolved custom op {custom.group(1)!r} "
                                       f"(register its kernel with the interpreter to time this model)")
    return RuntimeUnavailableError(f"{what}: {message}")


def _import(runtime: str) -> tuple[Any, Any, str]:
    """(Interpreter class, OpResolverType enum, version) of a runtime, through its adapter in
    :mod:`tflite_flops.measure.runtimes`; raises RuntimeUnavailableError."""
    loaded = runtimes.load(runtime)
    return loaded.interpreter, loaded.op_resolver_type, loaded.version


def runtime_version(runtime: str) -> str:
    """Version string of an installed runtime."""
    return _import(runtime)[2]


def runnable_model(model: str | bytes) -> str | bytes:
    """What an interpreter loads for ``model``: the model itself, or for a LiteRT-LM bundle (a path or
    bytes) the bytes of its ``prefill_decode`` model section (an interpreter cannot read the container;
    :func:`tflite_flops.analyze` hands over the section ``section=`` chose)."""
    if isinstance(model, (bytes, bytearray)):
        head = bytes(model[:len(BUNDLE_MAGIC)])
    else:
        try:
            with open_regular(model, "rb") as f:
                head = f.read(len(BUNDLE_MAGIC))
        except OSError:
            return model  # the interpreter reports it
    if head != BUNDLE_MAGIC:
        return model
    parsed = load_model(model)
    return bytes(parsed.bundle.view(parsed.section))


def make_interpreter(model: str | bytes, settings: RuntimeSettings, preserve_all_tensors: bool = False) -> Any:
    """Create an interpreter for a path or bytes; raises RuntimeUnavailableError when it cannot load.

    ``preserve_all_tensors`` keeps every intermediate tensor readable after ``invoke()`` (the
    per-op timing captures activations that way). A LiteRT-LM bundle runs its ``prefill_decode``
    model (:func:`runnable_model`).
    """
    interpreter_cls, resolver, _ = _import(settings.runtime)
    kwargs: dict[str, Any] = {"num_threads": settings.threads}
    if preserve_all_tensors:
        kwargs["experimental_preserve_all_tensors"] = True
    if not settings.xnnpack:
        kwargs["experimental_op_resolver_type"] = resolver.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    model = runnable_model(model)
    if isinstance(model, (bytes, bytearray)):
        kwargs["model_content"] = bytes(model)
    else:
        kwargs["model_path"] = str(model)
    try:
        with quiet_native_stderr():
            return interpreter_cls(**kwargs)
    except (ValueError, RuntimeError) as exc:
        raise _load_failure(f"the {settings.runtime} runtime cannot load the model", exc) from exc


def resize_and_allocate(interpreter: Any, shapes: Mapping[int, tuple[int, ...]]) -> None:
    """Resize inputs (by position in get_input_details) and allocate; RuntimeUnavailableError on failure."""
    details = interpreter.get_input_details()
    try:
        with quiet_native_stderr():
            for pos, shape in shapes.items():
                if tuple(details[pos]["shape"]) != tuple(shape):
                    interpreter.resize_tensor_input(details[pos]["index"], list(shape), strict=False)
    except (ValueError, RuntimeError) as exc:
        raise _load_failure("the runtime cannot resize the inputs to these shapes", exc) from exc
    try:
        with quiet_native_stderr():
            interpreter.allocate_tensors()
    except (ValueError, RuntimeError) as exc:
        what = ("the runtime cannot prepare the model at these shapes" if any(
            tuple(details[pos]["shape"]) != tuple(shape) for pos, shape in shapes.items())
            else "the runtime cannot prepare the model")
        raise _load_failure(what, exc) from exc


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


def input_positions(inputs: Sequence[Any]) -> dict[int, tuple[int, ...]]:
    """Shapes to run, by input position, from a report's resolved inputs (``report.inputs``)."""
    return {pos: tuple(t.shape) for pos, t in enumerate(inputs)}


def input_names(inputs: Sequence[Any]) -> dict[int, tuple[str, ...]]:
    """The name a report shows for each input position of ``report.inputs`` (``--inputs`` accepts it)."""
    return {pos: (t.name,) for pos, t in enumerate(inputs)}


def input_keys(pos: int, runtime_name: str, names: Sequence[str] = ()) -> list[str]:
    """Every key ``--inputs`` accepts for the input at ``pos``: the names the report shows (signature
    input name), the runtime's tensor name, the position, and ``arr_<pos>`` (``np.savez`` without names)."""
    return list(dict.fromkeys([*names, runtime_name, str(pos), f"arr_{pos}"]))


def match_inputs(data: Mapping[str, Any], keys: Sequence[Sequence[str]]) -> dict[int, Any]:
    """The array of each input position from ``data``; ``keys[pos]`` are the names input ``pos`` accepts.

    Raises:
        RuntimeUnavailableError: an input has no array, two arrays name the same input, or an array names
            no input (latency is then skipped with this reason; the static report stays).
    """
    out: dict[int, Any] = {}
    used: set[str] = set()
    for pos, accepted in enumerate(keys):
        found = [k for k in accepted if k in data]
        if not found:
            raise RuntimeUnavailableError(f"--inputs has no array for input {pos} (name it {' or '.join(map(repr, accepted))}; "
                                 f"the file has {', '.join(map(repr, data)) or 'no arrays'})")
        if len(found) > 1:
            raise RuntimeUnavailableError(f"--inputs has {len(found)} arrays for input {pos}: {', '.join(map(repr, found))}")
        out[pos] = data[found[0]]
        used.add(found[0])
    extra = [k for k in data if k not in used]
    if extra:
        raise RuntimeUnavailableError(f"--inputs array(s) {', '.join(map(repr, extra))} match no input of the model "
                             f"(accepted: {', '.join(repr(k) for ks in keys for k in ks)})")
    return out


def fill_inputs(interpreter: Any, data: Mapping[str, np.ndarray] | None = None, seed: int = 0,
                names: Mapping[int, Sequence[str]] | None = None) -> None:
    """Set every input: from ``data`` when given (keyed by any name :func:`input_keys` accepts; ``names``
    adds the report's names per position), else random."""
    rng = np.random.default_rng(seed)
    details = interpreter.get_input_details()
    arrays = None
    if data is not None:
        arrays = match_inputs(data, [input_keys(pos, d["name"], (names or {}).get(pos, ()))
                                     for pos, d in enumerate(details)])
    for pos, detail in enumerate(details):
        if arrays is not None:
            value = np.asarray(arrays[pos])
            want = [int(d) for d in detail["shape"]]
            if [int(d) for d in value.shape] != want:
                raise RuntimeUnavailableError(
                    f"--inputs array for input {pos} ({detail['name']}) has shape {[int(d) for d in value.shape]}, "
                    f"the model runs {want}")
            value = value.astype(detail["dtype"], copy=False)
        else:
            value = random_input(detail, rng)
        interpreter.set_tensor(detail["index"], value)


def load_npz(path: str) -> dict[str, np.ndarray]:
    """Arrays of an .npz file keyed by name."""
    try:
        with open_regular(path, "rb") as raw, np.load(raw) as f:
            return {k: f[k] for k in f.files}
    except (OSError, ValueError) as exc:
        raise InputSpecError(f"{path}: cannot read input arrays ({exc})") from exc
    except MemoryError:  # a header that claims terabytes
        raise InputSpecError(f"{path}: cannot read input arrays (an array is larger than this machine's memory)") from None


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
