"""The library's front door: :func:`analyze` does what ``python -m tflite_flops analyze`` does.

It converts a Keras model (or SavedModel, concrete function) when given one, runs the static
analysis (:func:`tflite_flops.analysis.analyze_model`), then the measurements asked for
(:func:`tflite_flops.measure.pipeline.measure_report`), and applies ``strict`` last, so the CLI
and a deployment pipeline get the same Report.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Mapping

from .analysis import analyze_model
from .analysis.run import collector_paused
from .analysis.entries import CostOverride
from .convert import needs_conversion, source_name, to_tflite
from .errors import InputSpecError, ProfileMismatchError, RuntimeMissingError, RuntimeUnavailableError
from .reader.load import load_model
from .reader.model import Model
from .report import Report, lazy
from .report.completeness import check_strict
from .settings import GPU_ML_DRIFT, DelegateConfig, RuntimeSettings, Settings, Target

if TYPE_CHECKING:  # the measurement modules are imported when a measurement is asked for
    from .latency.profile import DeviceProfile  # and the latency model when a prediction is
    from .measure.bench import BenchSettings


def analyze(source: str | os.PathLike | bytes | bytearray | Model | Any, input_shapes: Any = None,
            batch: int | None = None, *, strict: bool = False, while_trips: int = 1,
            signature: str | None = None, cost_overrides: Mapping[str, CostOverride] | None = None,
            trust_stored_shapes: bool = True, quantization: str | None = None,
            count_zeros: bool | None = None, all_signatures: bool = False, prefill: str | None = None,
            decode: str | None = None, latency: bool = False, per_op: bool = False, roofline: bool = False,
            runtime: RuntimeSettings | str | None = None, bench: BenchSettings | None = None,
            inputs: Mapping[str, Any] | None = None, progress: bool = False, threads: int | None = None,
            section: str | int | None = None, all_sections: bool = False,
            predict: DeviceProfile | str | os.PathLike | None = None, force: bool = False,
            target: str | None = None, drift_check: bool = False, gpu_delegate: str | None = None,
            what_if: bool = False,
            settings: Settings | None = None) -> Report:
    """Analyze a TFLite model: per-op MACs, FLOPs, bytes, params, memory and totals; measure if asked.

    Args:
        source: a .tflite path, the model's bytes, or an already parsed :class:`Model`; also a Keras
            model, a SavedModel directory or a concrete function, converted first (needs TensorFlow).
        input_shapes: shapes of the entry subgraph's inputs: a mapping ``{name_or_index: shape}``,
            or spec strings (``"x=1x224x224x3"``, ``"0=1x224x224x3"``, a bare ``"1x224x224x3"``).
        batch: sets the leading dim of every input whose batch dim is dynamic or 1.
        strict: raise when the report has what ``--strict`` refuses
            (:func:`tflite_flops.report.completeness.strict_findings`: ops not counted, partial totals,
            skipped latency).
        while_trips: trip count of WHILE loops whose bound cannot be inferred.
        signature: analyze the subgraph of this signature key instead of subgraph 0.
        cost_overrides: ``{op_type: fn(ctx) -> Cost | int | (macs, flops)}``, used before the registry.
        trust_stored_shapes: keep the converter's stored shapes where inputs are unchanged and static.
        quantization: conversion mode for such sources: float (default), int8, dynamic_range, fp16.
        count_zeros: read dense constant weights to find mostly-zero (pruned) ones and report their
            effective MACs. ``None`` (default) does so for files up to 64 MiB only, so that a big
            model's weight pages are not touched unless asked; sparse-encoded weights are always seen.
        all_signatures: also analyze every signature and put their totals (and, for prefill/decode
            signatures, the per-token figures) in ``report.signatures``; see :mod:`tflite_flops.studies.signatures`.
        prefill, decode: with ``all_signatures``, the keys of the prefill and decode signatures
            (default: detected by name and by the token-count input dim).
        latency: time the model with a runtime (``--latency``): ``report.latency`` and ``throughput``,
            and tokens/s of every signature with ``all_signatures``.
        per_op: also time every op cut out into a single-op model (``--per-op``): ``ops[].latency_ms``.
        roofline: measure this machine's peaks and classify every op (``--roofline``).
        runtime: :class:`~tflite_flops.measure.runtime.RuntimeSettings` or a runtime name
            (``"litert"`` default, ``"tflite_runtime"``, ``"tensorflow"``).
        bench: :class:`~tflite_flops.measure.bench.BenchSettings` (runs, warm-up, minimum time).
        inputs: real input arrays by input name, instead of random data.
        progress: draw a progress bar on a terminal while timing.
        threads: the interpreter threads of the runtime memory figures (``memory.runtime``, XNNPACK
            off, and ``memory.runtime_xnnpack``: kernel temporaries depend on them), of the timed run and
            of the profile check: it replaces the ``runtime`` settings' threads (default: theirs, else 1).
        section: for a LiteRT-LM bundle (``.litertlm``), the model section to analyse: its index or
            ``model_type`` (default: the ``prefill_decode`` model).
        all_sections: for a bundle, also analyse every other model section (``report.bundle.sections``).
        predict: a device profile (:class:`~tflite_flops.latency.profile.DeviceProfile` or the path of
            its JSON file, ``calibrate -o``): predict every op's time (``ops[].predicted_ms``) and the
            whole model's (``report.prediction``) in the configuration of ``runtime`` and ``threads``
            (:func:`load_profile`). Needs no runtime. With ``all_signatures``, every signature's too
            (``signatures[KEY].prediction``) and the predicted token figures (``tokens.predicted_*``).
        force: predict with a profile made for another runtime version, thread count or XNNPACK setting
            (``--force``); the overridden refusal is in ``report.prediction.forced`` and a warning.
        target: the CPU target of the LiteRT and XNNPACK memory figures (``"x86-avx2"``, ``"arm-neon"``...,
            ``tflite_flops targets``); None or ``"host"``: this CPU's, detected as XNNPACK detects it.
        drift_check: with ``predict``, time the profile's drift reference here (about a second) and scale the
            prediction by the drift found, when the runtime is installed and the CPU model is the profile's
            (``--drift-check``): ``report.prediction.drift`` says what was found and whether it was applied.
        gpu_delegate: whose rules the GPU placement follows: ``"ml_drift"`` (None: the default, LiteRT 2.x's GPU
            accelerator) or ``"classic"`` (``TfLiteGpuDelegateV2``); docs/placement.md.
        what_if: also analyse the model as the converter would write it in each precision it could be converted
            to (fp16 weights, dynamic-range int8, full int8) and with a static shape where an input is dynamic,
            nothing converted (``--what-if``; :mod:`tflite_flops.studies.what_if`): ``report.what_if``, one row per
            variant with its predicted time (with ``predict``), memory headline and placement.
        settings: every choice that changes a figure in one :class:`~tflite_flops.settings.Settings` (the
            delegate flags and the target too), instead of the keywords ``input_shapes``, ``batch``,
            ``while_trips``, ``signature``, ``cost_overrides``, ``trust_stored_shapes``, ``count_zeros``,
            ``runtime``, ``threads``, ``force``, ``target``, ``drift_check`` and ``gpu_delegate`` (an error to
            pass both). Without it, those keywords make it.

    Returns:
        The :class:`Report`.

    Raises:
        ModelLoadError, ModelFormatError: the model cannot be read.
        ShapeError, InputSpecError: the input shapes do not fit the model.
        UnsupportedOpError, ShapeError: ``strict`` and the report has a problem ``--strict`` refuses
            (:func:`tflite_flops.report.completeness.check_strict`).
        RuntimeMissingError: a measurement was asked and the runtime is not installed; the static
            report is in the exception's ``report``.
        ProfileError: ``predict`` names a missing or unreadable profile.
        ProfileMismatchError: the profile was made for another configuration and ``force`` is False.
    """
    loose = {"input_shapes": input_shapes, "batch": batch, "while_trips": while_trips, "signature": signature,
             "cost_overrides": cost_overrides, "trust_stored_shapes": trust_stored_shapes,
             "count_zeros": count_zeros, "runtime": runtime, "threads": threads, "force": force, "target": target,
             "drift_check": drift_check, "gpu_delegate": gpu_delegate}
    if settings is None:
        settings = make_settings(**loose)  # built once: everything below reads these
    else:
        given = [k for k, v in loose.items() if _given(v, _LOOSE_DEFAULTS[k])]
        if given:
            raise InputSpecError(f"analyze(): give the settings either as settings= or as keywords, not both "
                                 f"({', '.join(given)})")
    check = None
    if predict is not None:  # a bad or foreign profile fails before any work
        check = load_profile(predict, settings=settings)
        settings = settings.with_profile(check)
    name = None
    if needs_conversion(source):  # TensorFlow is imported only to convert
        name = source_name(source)  # the converted bytes have no path: keep the directory or model name
        source = to_tflite(source, quantization or "float")
    elif quantization is not None:
        raise InputSpecError("quantization= applies to a Keras model, SavedModel or concrete function, not a .tflite")
    timed = _timed_source(source) if latency or per_op or roofline else None  # a Model without a file fails first
    with collector_paused():  # reading and walking allocate many small objects that the collector need not scan
        model = source if isinstance(source, Model) else load_model(source, section)  # read once
        report = analyze_model(model, settings, name=name)  # the entry
        report = _studies(report, model, settings, all_signatures, prefill, decode, all_sections, what_if)
        if timed is not None and model.bundle is not None:
            timed = bytes(model.bundle.view(model.section))  # the runtime runs the section, not the container
        del model  # freed before the collector runs again (a Model given by the caller stays the caller's)
    if check is not None and check.note:
        report = lazy.replace(report, notes=report.notes + (check.note,))
    if timed is not None:
        from .measure.bench import BenchSettings
        from .measure.pipeline import Measurements, measure_report

        what = Measurements(latency, per_op, roofline, settings.runtime, bench or BenchSettings(), inputs)
        try:
            report = measure_report(report, timed, what, progress=progress)
            if per_op:  # the advice's time at stake, measured where not predicted
                from .analysis.advice import with_measured_savings

                report = with_measured_savings(report)
            if latency and report.bundle is not None:
                from .measure.engine import add_engine_run

                report = add_engine_run(report, what.runtime)
        except RuntimeMissingError as exc:
            exc.report = report
            raise
    if strict:
        check_strict(report)  # the CLI's --strict applies the same function to the printed report
    return report


def _studies(report: Report, model: Model, settings: Settings, all_signatures: bool, prefill: str | None,
             decode: str | None, all_sections: bool, what_if: bool = False) -> Report:
    """``report`` (of the model's entry) with the studies of its other entries that :func:`analyze` composes:
    every signature (``all_signatures``: :mod:`tflite_flops.studies.signatures`) and, for a model read from
    a LiteRT-LM bundle, the bundle's sections (:mod:`tflite_flops.studies.sections`; every other model
    section analysed with ``all_sections``), and the what-if of other precisions (``what_if``:
    :mod:`tflite_flops.studies.what_if`). Each study is imported only when it runs."""
    if what_if:
        from .studies.what_if import what_if as what_if_rows

        report = lazy.replace(report, what_if=what_if_rows(model, report, settings))
    if all_signatures:
        from .studies.signatures import add_signatures

        report = add_signatures(report, model, settings, prefill=prefill, decode=decode)
    elif prefill is not None or decode is not None:
        raise InputSpecError("prefill= / decode= name signatures of all_signatures=True (--all-signatures)")
    if model.bundle is not None:
        from .studies.sections import describe_bundle

        report = replace(report, bundle=describe_bundle(model, report, settings, all_sections))
    elif all_sections:
        raise InputSpecError("all_sections=True (--all-sections) applies to a LiteRT-LM bundle (.litertlm)")
    return report


@dataclass(frozen=True)
class ProfileCheck:
    """A device profile accepted for a prediction: the profile, the refusal ``force`` overrode (None when it
    fits), and a note when part of the configuration could not be checked."""

    profile: DeviceProfile
    forced: str | None = None
    note: str | None = None


def load_profile(profile: DeviceProfile | str | os.PathLike, *, runtime: RuntimeSettings | str | None = None,
                 threads: int | None = None, force: bool = False, settings: Settings | None = None) -> ProfileCheck:
    """Read a device profile and check that it was made for the configuration predicted.

    The configuration is the one a ``--latency`` run would measure: ``settings.runtime`` (with
    ``settings.force``), or else ``runtime`` (a :class:`~tflite_flops.settings.RuntimeSettings` or a runtime
    name; default LiteRT, one thread, XNNPACK on) and ``threads`` (overrides the runtime's threads), and
    the version of that runtime as installed here. Without the runtime installed, the version cannot be compared: the thread count and
    XNNPACK setting still are, and the check's ``note`` says so. Nor is it for a profile imported from a
    device (``calibrate --import``): its laws stand for the device's own runtime. With ``settings.drift_check``
    the profile's drift reference is timed here and the profile returned is scaled by the drift found
    (:func:`tflite_flops.latency.calibrate.check_drift`; ``profile.drift`` says what was found).

    Raises:
        ProfileError: missing, unreadable, not a profile, or of another profile version.
        ProfileMismatchError: another runtime version, thread count or XNNPACK setting, unless ``force``.
    """
    from .latency.profile import DEVICE_SOURCES, WHOLE_MODEL_SOURCE, DeviceProfile
    from .measure.runtime import runtime_version

    if not isinstance(profile, (DeviceProfile, str, os.PathLike)):
        raise InputSpecError(f"predict: expected a DeviceProfile or the path of its JSON file, got "
                             f"{type(profile).__name__}")
    if not isinstance(profile, DeviceProfile):
        profile = DeviceProfile.load(os.fspath(profile))
    else:  # one built in code: checked as a file's would be (types, ranges, printable names)
        profile = profile.checked()
    if settings is None:
        settings = make_settings(runtime=runtime, threads=threads, force=force)
    force, threads = settings.force, settings.threads
    runtime_settings = settings.runtime
    m, note = profile.machine, None
    if profile.source in DEVICE_SOURCES:  # calibrate --import or --from-results: a device's own runtime timed it
        version = m.runtime_version  # the device's runtime, not one installed here: nothing to compare
        how = "fitted from whole-model times of" if profile.source == WHOLE_MODEL_SOURCE else "imported from"
        note = (f"prediction: a profile {how} {m.cpu} ({m.runtime}): the device's runtime version is not "
                "compared with one installed here (threads and XNNPACK were)")
    else:
        version = None
    try:
        if version is None:
            version = runtime_version(runtime_settings.runtime)
    except RuntimeUnavailableError:
        version = m.runtime_version  # nothing to compare against: the version check passes
        note = (f"prediction: no {runtime_settings.runtime} runtime here, so the profile's {m.runtime} "
                f"{m.runtime_version} was not compared with an installed version (threads and XNNPACK were)")
    try:
        profile.check_compatible(version, threads, runtime_settings.xnnpack)
        forced = None
    except ProfileMismatchError as exc:
        if not force:
            raise
        forced = str(exc)
    note = "; ".join(n for n in (note, _target_note(profile, settings.target.xnnpack)) if n) or None
    if settings.drift_check and profile.drift is None:  # once per command: every model is scaled alike
        from .latency.calibrate import check_drift

        profile = profile.drifted(check_drift(profile, runtime_settings))
    return ProfileCheck(profile, forced, note)


def _target_note(profile: Any, asked: str | None) -> str | None:
    """What a prediction with ``profile`` says of its CPU target: the profile's target governs it (a note when that
    is not this CPU's), or the profile names none (its figures are this CPU's); a ``target`` asked for (``asked``:
    ``--target``, None when not given) that contradicts the profile's is refused.

    Raises:
        InputSpecError: ``asked`` names another target than the profile's.
    """
    from . import targets

    m = profile.machine
    named = m.target if m.target in targets.targets() else None
    host = targets.host()[0].name
    if named is None:
        return (f"prediction: the profile names no CPU target ({m.cpu}): its laws' tiles are the defaults and the "
                f"placement and memory figures are {asked if asked not in (None, targets.HOST) else host}'s")
    if asked is not None and (host if asked == targets.HOST else asked) != named:
        raise InputSpecError(f"--target {asked} contradicts the profile, made on a {named} CPU ({m.cpu}): drop "
                             f"--target (the profile's target governs the prediction) or use a profile made on {asked}")
    if named != host:
        return f"prediction: the profile's CPU target {named} ({m.cpu}) governs the prediction, placement and memory"
    return None


def make_settings(input_shapes: Any = None, batch: int | None = None, *, while_trips: int = 1,
                  signature: str | None = None, cost_overrides: Mapping[str, CostOverride] | None = None,
                  trust_stored_shapes: bool = True, count_zeros: bool | None = None,
                  runtime: RuntimeSettings | str | None = None, threads: int | None = None,
                  force: bool = False, target: str | None = None, drift_check: bool = False,
                  tflm_target: str | None = None, gpu_delegate: str | None = None) -> Settings:
    """The :class:`~tflite_flops.settings.Settings` of :func:`analyze`'s keywords (same meanings): the one
    builder of the library and of the command line (``commands.common.analysis_settings`` hands it the options).
    ``threads``, when given, overrides the ``runtime`` settings' threads (default: theirs, else 1);
    ``target``: the CPU target's name (``tflite_flops targets``; None: this CPU's); ``tflm_target``: the TFLite
    Micro build (``settings.TFLM_TARGETS``; None: a Cortex-M's); ``gpu_delegate``: the GPU's rules (None: ML
    Drift's)."""
    run = RuntimeSettings(runtime) if isinstance(runtime, str) else runtime or RuntimeSettings()
    if threads is not None:
        run = replace(run, threads=int(threads))
    return Settings(input_shapes=input_shapes, batch=batch, while_trips=while_trips, signature=signature,
                    runtime=run, trust_stored_shapes=trust_stored_shapes, count_zeros=count_zeros,
                    cost_overrides=cost_overrides, force=force, target=Target(xnnpack=target, tflm=tflm_target),
                    drift_check=drift_check, delegate=DelegateConfig(gpu_delegate=gpu_delegate or GPU_ML_DRIFT))


_LOOSE_DEFAULTS = {"input_shapes": None, "batch": None, "while_trips": 1, "signature": None, "cost_overrides": None,
                   "trust_stored_shapes": True, "count_zeros": None, "runtime": None, "threads": None, "force": False,
                   "target": None, "drift_check": False, "gpu_delegate": None}


def _given(value: Any, default: Any) -> bool:
    """Whether a keyword of :func:`analyze` was given (not its default), without comparing arrays or mappings."""
    if default is None or isinstance(default, bool):
        return value is not default
    return not (isinstance(value, int) and value == default)


def _timed_source(source: Any) -> str | bytes:
    """What a runtime loads: the path or bytes (a parsed :class:`Model` by its path)."""
    if isinstance(source, Model):
        if source.path is None:
            raise InputSpecError("measuring a parsed Model needs its file: pass the path or the bytes")
        return source.path
    if isinstance(source, (bytearray, memoryview)):
        return bytes(source)
    return os.fspath(source) if isinstance(source, os.PathLike) else source
