"""KV-length sweep of a generative model's decode step: ``sweep MODEL --kv-length 128,512,2048``.

How decode slows as the KV cache grows. The model must expose the cache length in one of two
ways (the sweep says which it used):

* **one decode signature per length** (``decode_kv128``, ``decode_kv512``, …; decode role as in
  :mod:`tflite_flops.studies.signatures`): the point at length S is the signature whose cache is S long
  (its DYNAMIC_UPDATE_SLICE shows which dim: :func:`~tflite_flops.studies.signatures.kv_length`). Taken
  when every requested length has one;
* **a dynamic cache dim**: the decode signature whose cache inputs share one ``-1`` dim in their
  shape signature; the point at length S sets that dim to S on every cache input.

Each point is a full analysis (totals as in :mod:`tflite_flops.studies.sweep`), and the scaling law of
every total is fitted in the one variable ``S`` with :func:`tflite_flops.studies.scaling_law.fit_law`: for an
attention over the whole cache, ``MACs = a·S + b`` exactly, ``a`` being the attention work per
cache slot and ``b`` the rest of the step. With ``--latency`` every point is timed with the
signature runner (:func:`tflite_flops.measure.tokens.time_signature`) and gets decode tokens/s; with
``--predict PROFILE`` every point gets the predicted time of its decode step (``point.prediction``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Mapping, Sequence

from ..analysis import analyze_model
from ..settings import Settings
from ..errors import InputSpecError
from .signatures import cache_inputs, kv_length, signature_roles
from ..reader.model import Model, Signature
from ..reader.load import load_model
from ..report import LatencyStats, Throughput
from .scaling_law import FIT_METRICS, Fit, Variable, fit_law
from .sweep import PointSpec, SweepPoint, SweepResult, point_of

KV_METRICS = {**FIT_METRICS, "bytes_read": "bytes read"}


def parse_lengths(text: str) -> list[int]:
    """``"128,512,2048"`` -> [128, 512, 2048]; InputSpecError when not positive integers."""
    try:
        values = [int(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise InputSpecError(f"cannot read --kv-length {text!r} (expected e.g. 128,512,2048)") from None
    if not values or min(values) < 1:
        raise InputSpecError(f"--kv-length needs positive lengths (got {text!r})")
    return values


def kv_sweep(model: str | bytes | Model, lengths: Sequence[int], *, decode: str | None = None,
             measure: Callable[[SweepPoint, str], tuple[LatencyStats | None, Throughput | None]] | None = None,
             settings: Settings | None = None, strict: bool = False) -> SweepResult:
    """Analyze the decode step at every KV length in ``lengths`` and fit the scaling law in S.

    Args:
        model: a .tflite path, its bytes or a parsed :class:`Model`.
        lengths: the KV lengths (cache slots) to analyze.
        decode: the decode signature (default: the signatures detected as decode).
        measure: optional ``measure(point, signature_key) -> (latency, throughput)`` per point.
        settings: the analysis :class:`~tflite_flops.settings.Settings` of every point (its signature and
            input shapes are the point's): while trips, threads, delegates, target; with a device profile
            (``settings.predict``, checked by :func:`tflite_flops.api.load_profile`), the predicted time of
            the decode step at every length (``point.prediction``: the decode signature's ops at the
            point's cache shapes, on its own XNNPACK partitions).
        strict: as for ``analyze()``.

    Raises:
        InputSpecError: the model exposes no KV length (no decode signature per length, no
            dynamic cache dim), or ``decode`` is not a decode-capable signature.
    """

    base = Settings() if settings is None else settings
    parsed = model if isinstance(model, Model) else load_model(model)  # type: ignore[arg-type]
    plan, dims, how = _plan(parsed, list(lengths), decode)
    out = []
    for length, key, shapes in plan:
        report = analyze_model(parsed, base.at_point(shapes or None, None, key), strict=strict)
        point = point_of(PointSpec(shapes), report)
        if measure is not None:
            latency, throughput = measure(point, key)
            point = replace(point, latency=latency, throughput=throughput)
        out.append(point)
    return SweepResult(parsed.path or "<bytes>", tuple(out), _fit(plan, dims, how, out))


def _decode_signatures(model: Model, decode: str | None) -> list[Signature]:
    roles = signature_roles(model, decode=decode)
    sigs = [s for s in model.signatures if roles.get(s.key, ("",))[0] == "decode"]
    if decode is not None:
        sigs = [s for s in sigs if s.key == decode]
    return sigs


Plan = list[tuple[int, str, dict[str, tuple]]]  # (length, signature key, input shapes) per point


def _plan(model: Model, lengths: list[int], decode: str | None) -> tuple[Plan, tuple[tuple[str, int], ...], str]:
    """The points (signatures per length first, else a dynamic dim), the (input, axis) dims that S
    stands for, and how the points were made."""
    sigs = _decode_signatures(model, decode)
    if not sigs:
        raise InputSpecError("--kv-length: no decode signature (a signature named decode* or with a [1, 1] token "
                             "input; name it with --decode SIG)")
    by_length: dict[int, str] = {}
    dynamic: list[tuple[Signature, int]] = []
    for sig in sigs:
        sg = model.subgraphs[sig.subgraph_index]
        caches = cache_inputs(sig)
        if not caches:
            continue
        axes = set()
        for index in caches.values():
            signature = sg.tensors[index].shape_signature or ()
            axes.add(tuple(a for a, d in enumerate(signature) if d < 0))
        if len(axes) == 1 and len(next(iter(axes))) == 1:
            dynamic.append((sig, next(iter(axes))[0]))
            continue
        stored = [t.shape for t in sg.tensors]
        length = kv_length(sg, set(caches.values()), stored)
        if length is not None:
            by_length.setdefault(length, sig.key)
    if all(n in by_length for n in lengths):
        first = next(s for s in sigs if s.key == by_length[lengths[0]])
        sg = model.subgraphs[first.subgraph_index]
        dims = []
        for name, index in sorted(cache_inputs(first).items()):  # the axis whose length is the KV length
            shape = sg.tensors[index].shape
            dims += [(name, a) for a, d in enumerate(shape) if d == lengths[0]][:1]
        return ([(n, by_length[n], {}) for n in lengths], tuple(dims),
                "one decode signature per length: " + ", ".join(f"S={n}: {by_length[n]}" for n in lengths))
    if dynamic:
        sig, axis = dynamic[0]
        sg = model.subgraphs[sig.subgraph_index]
        plan = []
        for n in lengths:
            shapes = {}
            for name, index in cache_inputs(sig).items():
                shape = list(sg.tensors[index].shape)
                shape[axis] = n
                shapes[name] = tuple(shape)
            plan.append((n, sig.key, shapes))
        return (plan, tuple((name, axis) for name in sorted(cache_inputs(sig))),
                f"the dynamic cache dim of signature {sig.key!r} set to each length")
    have = ", ".join(f"{n} ({k})" for n, k in sorted(by_length.items())) or "none"
    raise InputSpecError(f"--kv-length {','.join(map(str, lengths))}: the model has decode signatures for KV lengths "
                         f"{have} and no decode signature with a dynamic cache length")


def _fit(plan: Plan, dims: tuple[tuple[str, int], ...], how: str, points: list[SweepPoint]) -> Fit | None:
    """The law of every total in the one variable S (the KV length)."""
    if len(points) < 2:
        return None
    variable = Variable("S", dims, tuple(n for n, _, _ in plan), ("S",))
    laws = {metric: fit_law(metric, [variable], [int(p.totals.get(metric)) for p in points]) for metric in KV_METRICS}
    notes = [f"S = KV length (cache slots); points from {how}"]
    macs = laws["macs"]
    if macs.exact and len(macs.terms) == 2 and {p for p, _ in macs.terms} == {(0,), (1,)}:
        slope = dict(macs.terms)[(1,)]
        notes.append(f"MACs grow linearly in S: {slope} MACs per cache slot per step (attention over the cache); "
                     f"the constant term is the rest of the step")
    if not all(p.shapes_resolved for p in points):
        notes.append("some points have unresolved dims (placeholder shapes): their totals and the fit are unreliable")
    return Fit((variable,), laws, tuple(notes))


def decode_measurer(model: str | bytes, runtime: Any, bench: Any, clock: Any = None,
                    inputs: Mapping[str, Any] | None = None
                    ) -> Callable[[SweepPoint, str], tuple[LatencyStats | None, Throughput | None]]:
    """``measure(point, key) -> (latency, throughput)`` for :func:`kv_sweep`: one signature-runner timing
    per point (the caches at the point's length), throughput with decode ``tokens_per_s``. ``inputs``
    (``--inputs``, by input name) are fed to every point's call in place of generated arrays."""
    from ..errors import RuntimeUnavailableError
    from .signatures import token_input
    from ..measure.tokens import time_signature
    from ..measure.runtime import make_interpreter

    interpreter = make_interpreter(model, runtime)
    parsed = load_model(model)  # O(ops): the token count of each signature
    tokens = {s.key: (token_input(parsed, s) or ("", 1))[1] for s in parsed.signatures}

    def measure(point: SweepPoint, key: str) -> tuple[LatencyStats | None, Throughput | None]:
        report = point.report
        shapes = {t.name: tuple(t.shape) for t in report.inputs} if report is not None else None
        try:
            latency = time_signature(interpreter, key, runtime, bench, shapes=shapes, clock=clock, inputs=inputs)
        except RuntimeUnavailableError as exc:
            return LatencyStats(skipped=str(exc), runtime=runtime.runtime), None
        seconds = latency.median_ms / 1e3
        if seconds <= 0:
            return latency, None
        return latency, Throughput(tokens_per_s=tokens[key] / seconds, flops_per_s=point.totals.flops / seconds,
                                   inferences_per_s=1 / seconds)

    return measure
