"""The static analysis of one entry of a model: :func:`analyze_model` (a Report) and the shapes it resolves.

No conversion, no measurement and no study of several entries here: :func:`tflite_flops.analyze`
converts a Keras model first, composes the studies (every signature: :mod:`tflite_flops.studies.signatures`;
a bundle's sections: :mod:`tflite_flops.studies.sections`) and adds latency, per-op timing and the
roofline when asked.
"""

from __future__ import annotations

import gc
import os
from contextlib import contextmanager
from dataclasses import replace
from typing import Iterator

from ..errors import ShapeError
from ..ops.registry import Shape
from ..reader.model import Model
from ..reader.load import load_model
from ..report import Report, lazy
from ..report.completeness import check_strict
from ..settings import Settings
from ..targets import fallback_note
from .shapes import SubgraphShapes, normalize_input_shapes
from .assemble import build_report
from .advice import add_advice
from .placement import xnnpack_placer
from .walk import Walk, entry_subgraph, walk_model


def analyze_model(source: str | os.PathLike | bytes | bytearray | Model, settings: Settings | None = None, *,
                  strict: bool = False, name: str | None = None, section: str | int | None = None) -> Report:
    """The static Report of one entry of a .tflite model: per-op MACs, FLOPs, bytes, params, memory and totals.

    ``settings`` (default :class:`~tflite_flops.settings.Settings()`): every choice that changes a figure
    (input shapes, batch, while trips, signature, threads, delegate flags, target, cost overrides); with
    a device profile in ``settings.predict`` (already checked against the configuration:
    :func:`tflite_flops.api.load_profile`), every op's predicted time and the whole model's
    (:func:`tflite_flops.latency.predict.add_prediction`). ``name`` names a model given as bytes (the
    report's ``model.path``). For a LiteRT-LM bundle, ``section`` picks the model section (default: the
    ``prefill_decode`` model). :func:`tflite_flops.analyze` also converts Keras models, composes the
    studies of several entries (``all_signatures``, a bundle's ``report.bundle``) and measures.

    Raises:
        ModelLoadError, ModelFormatError: the model cannot be read.
        ShapeError, InputSpecError: the input shapes do not fit the model.
        UnsupportedOpError, ShapeError: ``strict`` and the report has a problem ``--strict`` refuses.
    """
    settings = Settings() if settings is None else settings
    with collector_paused():
        model = source if isinstance(source, Model) else load_model(source, section)
        report = analyze_entry(model, settings)[0]
        if settings.predict is not None:
            from ..latency.predict import add_prediction  # only when predicted: a plain analysis never loads the laws

            report = add_prediction(report, model, settings.predict, settings.predict_forced,
                                    xnnpack_placer(model, settings.delegate))
        report = add_advice(report, model, settings.predict, settings.delegate)  # what to change, with the time at stake
        fallback = fallback_note(settings.target.xnnpack)
        if fallback:  # this CPU matches no target: its figures are the fallback target's, and the report says so
            report = lazy.replace(report, notes=report.notes + (fallback,))
        if name is not None and report.model.path is None:
            report = lazy.replace(report, model=lazy.replace(report.model, path=name))  # nothing deferred computed
        del model  # freed now, before the collector runs again: the report keeps only its hasher
    if strict:
        check_strict(report)  # the CLI's --strict applies the same function to the printed report
    return report


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while one analysis runs, if it was on.

    Reading and walking a model allocate tens of thousands of small tuples and records that
    reference counting frees; the collector's generational passes over them (and over the model
    they join) find nothing to free. Any cycle is collected after. Nested uses pause it once.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def analyze_entry(model: Model, settings: Settings) -> tuple[Report, Walk]:
    """The report of one entry (subgraph 0 or ``settings.signature``'s subgraph, at ``settings``' input shapes
    and batch) and the walk that made it.

    :func:`analyze_model` without the prediction; the walk tells :mod:`tflite_flops.studies.signatures`
    which weights each signature reads.
    """
    entry = entry_subgraph(model, settings.signature)
    spec = normalize_input_shapes(settings.input_shapes)
    walk = Walk(model, settings)
    walk_model(walk, entry, spec, settings.batch)
    return build_report(walk, model.subgraphs[entry], entry, spec, settings.batch), walk


def resolve_shapes(source: str | os.PathLike | bytes | Model, settings: Settings | None = None
                   ) -> dict[int, SubgraphShapes]:
    """The shapes (and folded small values) of every tensor, per reached subgraph, as ``analyze()`` sees them.

    Same walk as :func:`analyze_model` (input resolution, propagation, control flow) at ``settings``'
    input shapes, batch, signature, while trips and ``trust_stored_shapes``, without the report; tests
    compare it with an interpreter's own shapes.
    """
    model = source if isinstance(source, Model) else load_model(source)
    settings = replace(Settings() if settings is None else settings, count_zeros=False)
    walk = Walk(model, settings)
    walk_model(walk, entry_subgraph(model, settings.signature), normalize_input_shapes(settings.input_shapes),
               settings.batch)
    return walk.states


def propagated_shapes(model: "Model | str | bytes", input_shapes: object = None, batch: int | None = None,
                      trust_stored: bool = False, subgraph: int = 0) -> dict[int, Shape]:
    """Shape of every tensor of a subgraph after propagating the given input shapes.

    This is the same machinery the analysis uses (:func:`~tflite_flops.analysis.shapes.step` op by op),
    exposed so that tests and tools can compare it with an interpreter's own shapes.

    Args:
        model: a parsed :class:`Model`, a .tflite path, or its bytes.
        input_shapes: as for ``analyze()``: ``{name_or_index: shape}`` or spec strings.
        batch: the leading dim of every input whose batch dim is dynamic or 1.
        trust_stored: keep stored shapes where nothing changed (default False: every op's
            shape function runs, so the result checks them against the converter's shapes).
        subgraph: the entry subgraph.

    Returns:
        ``{tensor_index: shape}`` for every tensor of the subgraph.

    Raises:
        ShapeError, InputSpecError: the input shapes do not fit the model.
    """
    state = _entry_state(model, input_shapes, batch, trust_stored, subgraph)
    return dict(enumerate(state.shapes))


def unresolved_tensors(model: "Model | str | bytes", input_shapes: object = None, batch: int | None = None,
                       trust_stored: bool = False, subgraph: int = 0) -> list[int]:
    """Indices of the tensors whose shape could not be derived (they keep their stored placeholder)."""
    state = _entry_state(model, input_shapes, batch, trust_stored, subgraph)
    return [i for i, ok in enumerate(state.resolved) if not ok]


def _entry_state(model: "Model | str | bytes", input_shapes: object, batch: int | None, trust_stored: bool,
                 subgraph: int) -> SubgraphShapes:
    """The entry subgraph's shapes after the same walk as ``analyze()`` (control flow included)."""
    settings = Settings(input_shapes=input_shapes, batch=batch, trust_stored_shapes=trust_stored)
    if subgraph == 0:
        return resolve_shapes(model, settings)[0]
    parsed = model if isinstance(model, Model) else load_model(model)  # type: ignore[arg-type]
    key = next((sig.key for sig in parsed.signatures if sig.subgraph_index == subgraph), None)
    if key is None:
        raise ShapeError(f"subgraph {subgraph} is not the entry of any signature")
    return resolve_shapes(parsed, replace(settings, signature=key))[subgraph]
