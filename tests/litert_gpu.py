"""What LiteRT's own GPU accelerator (ML Drift) takes of a model, where this machine can run it.

The ai-edge-litert wheel ships the ML Drift delegate's WebGPU build (``libLiteRtWebGpuAccelerator.so``, kernel name
``LITERT_WEBGPU``). Its choice of ops is the same ``GetOpsToReplace`` call as LITERT_CL's and LITERT_METAL's
(``ml_drift_delegate/delegate/delegate_webgpu.cc``: quantized ops allowed, ``max_delegated_partitions`` = 1,
no op excluded, the same parser factory), so on any machine with a Vulkan device for Dawn (a GPU's driver, or
Mesa's software lavapipe: Mesa 23 or newer, whose lavapipe has the dynamic-indexing features Dawn wants) it tells
what a phone's GPU accelerator takes.

The accelerator is applied when a ``CompiledModel`` is made with the GPU (and the CPU for the rest) in a child
process; ``GetOpsToReplaceWithOptions`` then logs, per subgraph it does not take whole::

    Following operations are not supported by GPU delegate:
    GATHER: Only support 1D indices
    67 operations will run on the GPU, and the remaining 6 operations will run on the CPU.

(or "No operations will run on the GPU, and all N operations will run on the CPU."). Nothing is logged for a
subgraph it takes whole. So for a one-subgraph model: the ops it runs on the GPU (a count, not which) and the
refusals it met (op name and message, each once). The partitioning's own log line ("yielding N partitions") is
at VERBOSE, which the wheel does not print.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass

_CHILD = r"""
import sys
from ai_edge_litert.compiled_model import CompiledModel, HardwareAccelerator
model = CompiledModel.from_file(sys.argv[1], hardware_accel=HardwareAccelerator.GPU | HardwareAccelerator.CPU)
print("FULLY_ACCELERATED", model.is_fully_accelerated(), flush=True)
"""
_COUNTS = re.compile(r"^(\d+) operations will run on the GPU, and the remaining (\d+) operations will run on the CPU\.")
_NONE = re.compile(r"^No operations will run on the GPU, and all (\d+) operations will run on the CPU\.")
NO_DEVICE = ("No adapters found", "Failed to initialize WebGPU environment", "Couldn't load Vulkan")


@dataclass(frozen=True)
class GpuVerdict:
    """What the accelerator logged for a model: per subgraph it did not take whole, (on the GPU, on the CPU)."""

    partial: tuple[tuple[int, int], ...]
    refusals: frozenset[str]  # "OP: message" lines, as logged
    fully_accelerated: bool | None  # CompiledModel.is_fully_accelerated()


class NoGpuDevice(RuntimeError):
    """No device the WebGPU accelerator can use (no Vulkan driver)."""


def gpu_verdict(path: str, timeout: float = 300.0) -> GpuVerdict:
    """Make a CompiledModel of ``path`` on the GPU and CPU in a child process and read the accelerator's log."""
    run = subprocess.run([sys.executable, "-c", _CHILD, path], capture_output=True, text=True, timeout=timeout)
    text = run.stdout + run.stderr
    if "FULLY_ACCELERATED" not in run.stdout:
        if any(s in text for s in NO_DEVICE):
            raise NoGpuDevice(text[-2000:])
        raise RuntimeError(f"CompiledModel failed on {path}:\n{text[-4000:]}")
    partial: list[tuple[int, int]] = []
    refusals: set[str] = set()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.endswith("Following operations are not supported by GPU delegate:"):
            for follow in lines[i + 1:]:
                m, none = _COUNTS.match(follow), _NONE.match(follow)
                if m:
                    partial.append((int(m.group(1)), int(m.group(2))))
                    break
                if none:
                    partial.append((0, int(none.group(1))))
                    break
                refusals.add(follow.strip())
    fully = "FULLY_ACCELERATED True" in run.stdout
    return GpuVerdict(tuple(partial), frozenset(refusals), fully)


if __name__ == "__main__":  # python tests/litert_gpu.py MODEL.tflite...
    for name in sys.argv[1:]:
        print(name, gpu_verdict(name))
