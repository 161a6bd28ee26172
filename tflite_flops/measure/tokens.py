"""Tokens/s of generative models: every signature timed with the LiteRT signature runner.

:func:`measure_signatures` (``--latency``) times every signature of a report made with
``all_signatures=True`` (:mod:`tflite_flops.studies.signatures`) with the harness statistics of
:mod:`tflite_flops.measure.bench`, and adds tokens/s and the time to first token (one prefill call:
the logits of the prompt's last token give the first token). Each timed call is one runner call:
inputs copied in, invoke, outputs copied out, which is what a generation loop with an external KV
cache pays; the invoke alone is timed too (``model_median_ms``, ``tokens.model_tokens_per_s``): the
model's own time, the rest being the runner's copies.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Mapping

import numpy as np

from ..errors import InputSpecError, RuntimeUnavailableError
from ..report import LatencyStats, Report
from .bench import summarize_ms, time_invokes
from .runtime import make_interpreter, random_input, runtime_version


def measure_signatures(report: Report, model: str | bytes, runtime: Any, bench: Any,
                       clock: Any = None) -> Report:
    """Time every signature of ``report.signatures`` and add tokens/s and time to first token.

    Args:
        report: a report made with ``all_signatures=True``.
        model: the .tflite path or bytes to load.
        runtime: :class:`~tflite_flops.measure.runtime.RuntimeSettings`.
        bench: :class:`~tflite_flops.measure.bench.BenchSettings` (runs, warm-up, min time).
        clock: an injectable nanosecond clock for the statistics (tests); default ``perf_counter_ns``.

    Returns:
        The report with ``latency`` of every signature and, for prefill/decode signatures,
        ``tokens.latency_ms``, ``tokens.tokens_per_s`` and (prefill) ``tokens.time_to_first_token_ms``.
        A runtime that cannot run a signature leaves it unmeasured with a warning.

    Raises:
        RuntimeMissingError: the runtime is not installed.
    """

    interpreter = make_interpreter(model, runtime)
    signatures = dict(report.signatures)
    warnings = list(report.warnings)
    for key, sig in report.signatures.items():
        try:
            latency = time_signature(interpreter, key, runtime, bench, clock=clock)
        except RuntimeUnavailableError as exc:
            warnings.append(f"signature {key}: latency skipped: {exc}")
            continue
        tokens = sig.tokens
        if tokens is not None and latency.median_ms > 0:
            median, own = latency.median_ms, latency.model_median_ms
            tokens = dataclasses.replace(
                tokens, latency_ms=median, tokens_per_s=tokens.tokens / (median / 1e3),
                time_to_first_token_ms=median if tokens.role == "prefill" else None,
                model_latency_ms=own, model_tokens_per_s=tokens.tokens / (own / 1e3) if own else None)
        signatures[key] = dataclasses.replace(sig, latency=latency, tokens=tokens)
    return dataclasses.replace(report, signatures=signatures, warnings=tuple(warnings))


def time_signature(interpreter: Any, key: str, runtime: Any, bench: Any, shapes: Mapping[str, Any] | None = None,
                   clock: Any = None, inputs: Mapping[str, Any] | None = None) -> LatencyStats:
    """Time calls of one signature's runner: the harness statistics and the environment.

    Args:
        interpreter: a loaded interpreter (:func:`tflite_flops.measure.runtime.make_interpreter`).
        key: the signature key.
        runtime, bench: :class:`~tflite_flops.measure.runtime.RuntimeSettings`, :class:`~tflite_flops.measure.bench.BenchSettings`.
        shapes: input shapes by name replacing the stored ones (a dynamic cache length).
        clock: an injectable nanosecond clock (tests).
        inputs: arrays by input name (``--inputs``) in place of generated ones.

    Raises:
        RuntimeUnavailableError: the runtime cannot run the signature.
    """
    try:
        runner = interpreter.get_signature_runner(key)
        feed = signature_inputs(runner.get_input_details(), shapes, given=inputs)
        first_ms, samples = time_invokes(lambda: runner(**feed), bench, clock or time.perf_counter_ns)
        model_ms = _model_alone(runner, bench, clock or time.perf_counter_ns)
    except (ValueError, RuntimeError, KeyError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RuntimeUnavailableError(f"the {runtime.runtime} runtime cannot run signature {key!r}: {first}") from exc
    return LatencyStats(runtime=runtime.runtime, runtime_version=runtime_version(runtime.runtime),
                        threads=runtime.threads, xnnpack=runtime.xnnpack, runs=len(samples), warmup=bench.warmup,
                        first_ms=first_ms, **summarize_ms(samples), model_median_ms=model_ms,
                        method="signature runner call (inputs in, invoke, outputs out)")


def _model_alone(runner: Any, bench: Any, clock: Any) -> float | None:
    """The median of the signature's invoke alone, the inputs the runner's last call set kept in place and
    nothing copied in or out (the model's own time); None where the runner does not expose its invoke.

    LiteRT's ``SignatureRunner.__call__`` resizes and sets every input, invokes its subgraph and copies
    every output out; an LLM's KV cache makes those copies most of a decode call. This times the
    interpreter's ``Invoke`` of the runner's subgraph, as a generation loop that keeps the cache in the
    interpreter's tensors would pay.
    """
    wrapper, index = getattr(runner, "_interpreter_wrapper", None), getattr(runner, "_subgraph_index", None)
    invoke = getattr(wrapper, "Invoke", None)
    if invoke is None or not isinstance(index, int):
        return None
    _, samples = time_invokes(lambda: invoke(index), bench, clock)
    return summarize_ms(samples)["median_ms"]


def token_roofline(report: Report, peak_bytes_per_s: float) -> Report:
    """Add the memory-bound limit of every prefill/decode signature: ``peak_bytes_per_s ÷ bytes_per_token``.

    A decode step reads every weight and the whole KV cache for one token, so its speed is bounded
    by the memory bandwidth long before the FLOPs matter; the limit sits next to the measured
    tokens/s in the reports. ``peak_bytes_per_s`` comes from :func:`tflite_flops.measure.roofline.measure_peaks`.
    """
    signatures = {}
    for key, sig in report.signatures.items():
        tok = sig.tokens
        if tok is not None and tok.bytes_per_token > 0 and peak_bytes_per_s > 0:
            tok = dataclasses.replace(tok, roofline_tokens_per_s=peak_bytes_per_s / tok.bytes_per_token)
        signatures[key] = dataclasses.replace(sig, tokens=tok)
    return dataclasses.replace(report, signatures=signatures)


def signature_inputs(details: Mapping[str, Mapping[str, Any]], shapes: Mapping[str, Any] | None = None,
                     seed: int = 0, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Inputs for one signature call: the arrays ``given`` (``--inputs``, by input name), else token ids in
    [0, 100) (as benchmark_model's integers), positions 0..n-1 for integer inputs named ``*pos*``, random data
    (the harness's rules) for the rest.

    ``shapes`` (by input name) replaces the stored shapes, e.g. a dynamic cache length; the
    signature runner resizes its inputs to the arrays it is given.

    Raises:
        InputSpecError: a given array names no input of the signature, or has another shape than the call's.
    """
    unknown = sorted(set(given or ()) - set(details))
    if unknown:
        raise InputSpecError(f"--inputs: {', '.join(map(repr, unknown))} is no input of this signature "
                             f"(its inputs: {', '.join(details)})")
    rng = np.random.default_rng(seed)
    feed = {}
    for name, detail in details.items():
        dtype = np.dtype(detail["dtype"])
        shape = tuple(int(d) for d in (shapes or {}).get(name, detail["shape"]))
        detail = {**detail, "shape": shape}
        if given and name in given:
            array = np.asarray(given[name])
            if tuple(array.shape) != shape:
                raise InputSpecError(f"--inputs: {name!r} has shape {list(array.shape)}, this call needs "
                                     f"{list(shape)}")
            feed[name] = array.astype(dtype, copy=False)
        elif dtype.kind in "iu" and "pos" in name.lower():
            feed[name] = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
        else:
            feed[name] = random_input(detail, rng)
    return feed
