"""The settings of one analysis: every choice that changes a figure, in one frozen object.

:class:`Settings` holds the input shapes, batch, WHILE trip count and signature (what is walked), the
runtime (name, threads, XNNPACK on or off: :class:`RuntimeSettings`), the delegates' flags
(:class:`DelegateConfig`), the shape and weight reading choices (``trust_stored_shapes``,
``count_zeros``), the cost overrides, the build the figures are for (:class:`Target`: TFLite Micro's,
XNNPACK's), and a device profile already checked against that configuration (``predict``).

The commands and :func:`tflite_flops.analyze` build it once and hand it down whole: nothing below
``commands/`` takes a loose setting keyword, so that every command computes a figure from the same
choices (docs/contributing.md, "Settings").

A leaf module: it imports nothing of the package but the errors and the CPU targets (another leaf), so that
every layer may read it. The types that describe part of what runs the model live here (the op registry
and the measurement modules import them from here): :class:`TflmTarget`, :class:`DelegateConfig` and
:class:`RuntimeSettings`.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, NamedTuple

from .errors import InputSpecError

INT32_MAX = 2**31 - 1  # a batch, trip count or thread count is a C int in the runtimes
MAX_THREADS = 1024  # interpreter threads: each is an OS thread with its own stack (100,000 exhausts memory)


def _check_int(name: str, value: Any, minimum: int, optional: bool = False, maximum: int = INT32_MAX) -> int | None:
    """``value`` as a Python int, or InputSpecError unless it is an integer (not a bool; a NumPy integer is
    one) from ``minimum`` to ``maximum`` (:data:`INT32_MAX`; or None when ``optional``): ``analyze(batch="abc")``,
    ``batch=1.5`` or ``while_trips=-5`` is refused in one line."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputSpecError(f"{name}: expected an integer, got {value!r}")
    if not minimum <= value <= maximum:
        raise InputSpecError(f"{name}: must be at least {minimum} and at most {maximum:,} (got {value})")
    return int(value)


@dataclass(frozen=True)
class TflmTarget:
    """The build of TensorFlow Lite Micro the arena is sized for.

    ``pointer_bytes``: 4 on a 32-bit MCU (Cortex-M, RISC-V 32, Xtensa), 8 on a 64-bit host.
    ``compression``: built with ``USE_TFLM_COMPRESSION`` (the tflite-micro Python package is), which
    adds scratch indices to some kernels' OpData and a pointer to ``SubgraphAllocations``.
    ``recording``: the ``RecordingMicroAllocator`` (the Python package's interpreter) instead of
    ``MicroAllocator``: larger allocator objects in the tail. ``package``: the kernels of the Python
    package's build (0.dev20261023, commit 8f6596d), newer than the source the facts follow (90b983c):
    where its structs differ, their fields as read from its machine code (``c_struct``'s ``package``).
    ``kernels``: the kernel set built in (``"reference"``, or ``"cmsis_nn"``: the CMSIS-NN optimized
    kernels most Cortex-M builds use, ``OPTIMIZED_KERNEL_DIR=cmsis_nn``); ``features``: the CPU
    features the CMSIS-NN library is compiled for, which change its buffer sizes: ``"mve"`` (Helium,
    ``ARM_MATH_MVEI``), ``"dsp"`` (the DSP extension, ``ARM_MATH_DSP``) or ``"none"``.
    """

    name: str
    pointer_bytes: int
    compression: bool = False
    recording: bool = False
    package: bool = False
    kernels: str = "reference"
    features: str = ""


CORTEX_M = TflmTarget("32-bit MCU, reference kernels", 4)  # what the report shows by default
HOST_64 = TflmTarget("64-bit host, tflite-micro Python package", 8, compression=True, recording=True, package=True)
# The TFLite Micro builds the figures can be for (--tflm-target NAME): what a Cortex-M firmware links (32-bit,
# MicroAllocator, no compression), with the reference kernels or CMSIS-NN's for a core's features; and the
# tflite-micro Python package's build (the one the tests check against).
TFLM_TARGETS: Mapping[str, TflmTarget] = {
    "cortex-m": CORTEX_M,
    "cortex-m0-cmsis-nn": TflmTarget("32-bit MCU, CMSIS-NN kernels, no DSP (Cortex-M0/M0+/M3)", 4,
                                     kernels="cmsis_nn", features="none"),
    "cortex-m4-cmsis-nn": TflmTarget("32-bit MCU, CMSIS-NN kernels, DSP (Cortex-M4/M7/M33)", 4,
                                     kernels="cmsis_nn", features="dsp"),
    "cortex-m55-cmsis-nn": TflmTarget("32-bit MCU, CMSIS-NN kernels, MVE (Cortex-M55/M85)", 4,
                                      kernels="cmsis_nn", features="mve"),
    "host-64": HOST_64,
}
DEFAULT_TFLM_TARGET = "cortex-m"


def tflm_target(name: "str | TflmTarget | None") -> TflmTarget:
    """The TFLite Micro target ``name`` (a key of :data:`TFLM_TARGETS`; None: the default; a
    :class:`TflmTarget` as it is); an unknown name raises InputSpecError listing the valid ones."""
    if isinstance(name, TflmTarget):
        return name
    found = TFLM_TARGETS.get(DEFAULT_TFLM_TARGET if name is None else name)
    if found is None:
        raise InputSpecError(f"unknown TFLite Micro target {name!r}: expected one of {', '.join(TFLM_TARGETS)}")
    return found


def tflm_target_name(target: TflmTarget) -> str:
    """The key of ``target`` in :data:`TFLM_TARGETS`, or its own name when it is not one of them."""
    return next((key for key, t in TFLM_TARGETS.items() if t == target), target.name)


GPU_ML_DRIFT = "ml_drift"  # LiteRT 2.x's GPU accelerator: the ML Drift delegate (LITERT_CL, LITERT_METAL, LITERT_WEBGPU)
GPU_CLASSIC = "classic"  # TFLite's GPU delegate, TfLiteGpuDelegateV2 (tflite/delegates/gpu)
GPU_DELEGATES = (GPU_ML_DRIFT, GPU_CLASSIC)


class DelegateConfig(NamedTuple):
    """The delegate's configuration. The defaults are what LiteRT applies by default (XNNPACK with
    signed and unsigned 8-bit quantized kernels, dynamic range quantized kernels on, fully connected
    weights computed at run time off, read off ai-edge-litert 2.3 by the placement tests; the GPU: LiteRT
    2.x's GPU accelerator, the ML Drift delegate, whose options are fixed at its call of ``GetOpsToReplace``).

    ``gpu_delegate`` picks the GPU's rules: :data:`GPU_ML_DRIFT` (default; what ``benchmark_model --use_gpu``
    and the CompiledModel API of LiteRT 2.x apply) or :data:`GPU_CLASSIC` (``TfLiteGpuDelegateV2``, the
    classic interpreter's GPU delegate, with ``TfLiteGpuDelegateOptionsV2Default()``: quantized ops on, one
    partition). The other ``gpu_*`` flags are the classic delegate's options: ML Drift hard-codes them
    (quantized ops on, one partition, no op excluded), and :class:`Settings` refuses them with it.
    Within :class:`Settings`, ``threads`` is always the runtime's."""

    qs8: bool = True  # TFLITE_XNNPACK_DELEGATE_FLAG_QS8
    qu8: bool = True  # TFLITE_XNNPACK_DELEGATE_FLAG_QU8
    dynamic_fully_connected: bool = False  # TFLITE_XNNPACK_DELEGATE_FLAG_DYNAMIC_FULLY_CONNECTED
    dynamically_quantized: bool = True  # not TFLITE_XNNPACK_DELEGATE_FLAG_DISABLE_DYNAMICALLY_QUANTIZED_OPS
    threads: int = 1
    gpu_max_partitions: int = 1  # TfLiteGpuDelegateOptionsV2.max_delegated_partitions (<= 0 counts as 1)
    gpu_quant_ops: bool = True  # TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_QUANT: DEQUANTIZE/QUANTIZE and 8-bit tensors
    gpu_opencl: bool = True  # OpenCL available; without it (OpenGL backend) SPLIT and SPLIT_V are excluded
    gpu_mediapipe_ops: bool = False  # MediaPipe's build of the delegate, with its landmark/transform custom parsers
    gpu_delegate: str = GPU_ML_DRIFT  # whose rules the GPU placement follows: GPU_ML_DRIFT or GPU_CLASSIC


@dataclass(frozen=True)
class RuntimeSettings:
    """How to run the model: which runtime, threads, XNNPACK on or off."""

    runtime: str = "litert"
    threads: int = 1
    xnnpack: bool = True


@dataclass(frozen=True)
class Target:
    """The builds the figures are computed for: TFLite Micro's (``tflm``, :data:`CORTEX_M` by default, or a
    name of :data:`TFLM_TARGETS`) and
    the CPU that runs LiteRT and XNNPACK (``xnnpack``: a target's name, ``tflite_flops targets``; None or
    ``"host"``: this CPU's, detected as XNNPACK detects it). ``cpu`` is that target's data
    (:class:`tflite_flops.targets.CpuTarget`); an unknown name is refused in one line listing the valid ones."""

    tflm: TflmTarget = CORTEX_M
    xnnpack: str | None = None

    def __post_init__(self) -> None:
        from . import targets

        targets.get(self.xnnpack)  # an unknown name fails here, once, with the valid names
        if not isinstance(self.tflm, TflmTarget):  # a name of TFLM_TARGETS (None: the default)
            object.__setattr__(self, "tflm", tflm_target(self.tflm))

    @property
    def cpu(self):
        """The CPU target's constants (:class:`tflite_flops.targets.CpuTarget`)."""
        from . import targets

        return targets.get(self.xnnpack)

    @property
    def name(self) -> str:
        """The CPU target's name (``host`` resolved: ``x86-avx512``, ``arm-neon``...)."""
        return self.cpu.name


@dataclass(frozen=True)
class Settings:
    """Every choice that changes a figure of an analysis (see the module docstring).

    ``input_shapes``: as for :func:`tflite_flops.analyze` (a mapping, spec strings or a bare shape; a list
    is kept as a tuple). ``count_zeros=None``: automatic (files up to 64 MiB). ``cost_overrides``:
    ``{op_type: fn(ctx)}``. ``force``: predict with a profile made for another configuration.
    ``predict``: the device profile (a :class:`~tflite_flops.latency.profile.DeviceProfile`) already
    checked against ``runtime`` (:func:`tflite_flops.api.load_profile`, :meth:`with_profile`), and
    ``predict_forced`` the refusal ``force`` overrode. ``drift_check``: time the profile's drift reference
    here and scale the prediction by the drift found (docs/predict.md, "Drift"). ``delegate.threads`` always
    equals ``runtime.threads``.
    """

    input_shapes: Any = None
    batch: int | None = None
    while_trips: int = 1
    signature: str | None = None
    runtime: RuntimeSettings = field(default_factory=RuntimeSettings)
    delegate: DelegateConfig = field(default_factory=DelegateConfig)
    trust_stored_shapes: bool = True
    count_zeros: bool | None = None
    cost_overrides: Mapping[str, Callable[..., Any]] | None = None
    target: Target = field(default_factory=Target)
    force: bool = False
    predict: Any = None
    predict_forced: str | None = None
    drift_check: bool = False  # time the profile's drift reference here and scale the prediction (--drift-check)

    def __post_init__(self) -> None:
        if isinstance(self.input_shapes, list):
            object.__setattr__(self, "input_shapes", tuple(self.input_shapes))
        if isinstance(self.runtime, str):
            object.__setattr__(self, "runtime", RuntimeSettings(self.runtime))
        if self.delegate.threads != self.runtime.threads:
            object.__setattr__(self, "delegate", self.delegate._replace(threads=self.runtime.threads))
        object.__setattr__(self, "batch", _check_int("batch", self.batch, 1, optional=True))
        object.__setattr__(self, "while_trips", _check_int("while_trips", self.while_trips, 0))
        _check_int("threads", self.runtime.threads, 1, maximum=MAX_THREADS)
        if self.signature is not None and not isinstance(self.signature, str):
            raise InputSpecError(f"signature: expected a signature key (a str), got {self.signature!r}")
        for name in ("trust_stored_shapes", "force", "drift_check"):
            if not isinstance(getattr(self, name), bool):
                raise InputSpecError(f"{name}: expected True or False, got {getattr(self, name)!r}")
        if self.count_zeros is not None and not isinstance(self.count_zeros, bool):
            raise InputSpecError(f"count_zeros: expected None, True or False, got {self.count_zeros!r}")
        _check_gpu(self.delegate)

    @property
    def threads(self) -> int:
        """The interpreter threads (of the runtime memory figures, the delegates, the profile check)."""
        return self.runtime.threads

    @property
    def xnnpack(self) -> bool:
        """Whether a run applies the XNNPACK delegate (the configuration a profile is checked against)."""
        return self.runtime.xnnpack

    def with_threads(self, threads: int) -> Settings:
        """These settings at ``threads`` interpreter threads (the delegates' too)."""
        return replace(self, runtime=replace(self.runtime, threads=threads))

    def with_profile(self, check: Any) -> Settings:
        """These settings with a checked device profile (a :class:`tflite_flops.api.ProfileCheck`, or None), at the
        profile's CPU target when it names one (:func:`tflite_flops.api.load_profile` refused a ``target`` that
        contradicts it): the device's target governs the features, the placement and the memory figures."""
        if check is None:
            return replace(self, predict=None, predict_forced=None)
        from . import targets

        target = self.target
        named = check.profile.machine.target
        if named in targets.targets():
            target = replace(target, xnnpack=named)
        return replace(self, predict=check.profile, predict_forced=check.forced, target=target)

    def at_point(self, input_shapes: Any = None, batch: int | None = None, signature: str | None = None) -> Settings:
        """These settings with another entry: the input shapes, batch and signature of one point of a
        sweep (or one signature or section of a model); everything else is kept."""
        return replace(self, input_shapes=input_shapes, batch=batch, signature=signature)


_CLASSIC_ONLY = {"gpu_max_partitions": 1, "gpu_quant_ops": True, "gpu_opencl": True, "gpu_mediapipe_ops": False}


def _check_gpu(config: DelegateConfig) -> None:
    """The GPU model is one of :data:`GPU_DELEGATES`, and the classic delegate's options keep ML Drift's values
    with it (ML Drift's ``GetOpsToReplace`` call fixes them: a limit of 1, quantized ops on, nothing excluded)."""
    if config.gpu_delegate not in GPU_DELEGATES:
        raise InputSpecError(f"gpu_delegate: expected one of {', '.join(GPU_DELEGATES)}, got {config.gpu_delegate!r}")
    if config.gpu_delegate == GPU_ML_DRIFT:
        for name, fixed in _CLASSIC_ONLY.items():
            if getattr(config, name) != fixed:
                raise InputSpecError(f"{name}={getattr(config, name)!r} is an option of the classic GPU delegate: the "
                                     f"LiteRT GPU accelerator (ML Drift) fixes it at {fixed!r}; give "
                                     f"gpu_delegate={GPU_CLASSIC!r} with it")
