"""The static analysis of one model: :func:`analyze_model` (a Report) and the shapes it resolves.

No conversion and no measurement here: :func:`tflite_flops.analyze` converts a Keras model first
and adds latency, per-op timing and the roofline when asked.
"""

from __future__ import annotations

import gc
import os
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Iterator, Mapping

from ..errors import InputSpecError, ShapeError
from ..ops.registry import Shape
from ..reader.model import Model
from ..reader.load import load_model
from ..report import Report
from ..report.completeness import check_strict
from .shapes import SubgraphShapes, normalize_input_shapes
from .assemble import build_report
from .entries import CostOverride
from .bundle import describe_bundle
from .cost_model import DeviceProfile
from .predict import add_prediction
from .generative import add_signatures
from .sparsity import COUNT_ZEROS_AUTO_LIMIT
from .walk import Walk, entry_subgraph, walk_model


def analyze_model(source: str | os.PathLike | bytes | bytearray | Model, input_shapes: Any = None,
                  batch: int | None = None, *, strict: bool = False, while_trips: int = 1,
                  signature: str | None = None, cost_overrides: Mapping[str, CostOverride] | None = None,
                  trust_stored_shapes: bool = True, count_zeros: bool | None = None, all_signatures: bool = False,
                  prefill: str | None = None, decode: str | None = None, name: str | None = None,
                  threads: int = 1, section: str | int | None = None, all_sections: bool = False,
                  predict: DeviceProfile | None = None, predict_forced: str | None = None) -> Report:
    """The static Report of a .tflite model: per-op MACs, FLOPs, bytes, params, memory and totals.

    Arguments as for :func:`tflite_flops.analyze`, which also converts Keras models and measures;
    ``name`` names a model given as bytes (the report's ``model.path``); ``threads``: the interpreter
    threads of the runtime memory figure (``memory.runtime``). For a LiteRT-LM bundle, ``section``
    picks the model section (default: the ``prefill_decode`` model), ``all_sections`` adds every other
    model section's totals to ``report.bundle``. With ``predict`` (a device profile, already checked against
    the configuration: :func:`tflite_flops.api.load_profile`), every op's predicted time and the whole
    model's (:func:`tflite_flops.analysis.predict.add_prediction`; ``predict_forced``: the refusal ``--force``
    overrode).

    Raises:
        ModelLoadError, ModelFormatError: the model cannot be read.
        ShapeError, InputSpecError: the input shapes do not fit the model.
        UnsupportedOpError, ShapeError: ``strict`` and the report has a problem ``--strict`` refuses.
    """
    with _collector_paused():
        model = source if isinstance(source, Model) else load_model(source, section)
        settings = {"while_trips": while_trips, "cost_overrides": cost_overrides,
                    "trust_stored_shapes": trust_stored_shapes, "count_zeros": count_zeros, "threads": threads}
        report = analyze_entry(model, signature, input_shapes, batch, **settings)[0]
        if predict is not None:
            report = add_prediction(report, model, predict, predict_forced)
        if name is not None and report.model.path is None:
            report = replace(report, model=replace(report.model, path=name))
        if all_signatures:
            report = add_signatures(report, model, analyze_entry, prefill=prefill, decode=decode, **settings)
        elif prefill is not None or decode is not None:
            raise InputSpecError("prefill= / decode= name signatures of all_signatures=True (--all-signatures)")
        if model.bundle is not None:
            report = replace(report, bundle=describe_bundle(model, report, analyze_entry if all_sections else None, **settings))
        elif all_sections:
            raise InputSpecError("all_sections=True (--all-sections) applies to a LiteRT-LM bundle (.litertlm)")
        del model  # freed now, before the collector runs again: the report keeps only its hasher
    if strict:
        check_strict(report)  # the CLI's --strict applies the same function to the printed report
    return report


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while one analysis runs, if it was on.

    Reading and walking a model allocate tens of thousands of small tuples and records that
    reference counting frees; the collector's generational passes over them (and over the model
    they join) find nothing to free. Any cycle is collected after.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def analyze_entry(model: Model, signature: str | None, input_shapes: Any, batch: int | None, *,
                  while_trips: int, cost_overrides: Mapping[str, CostOverride] | None, trust_stored_shapes: bool,
                  count_zeros: bool | None, threads: int = 1) -> tuple[Report, Walk]:
    """The report of one entry (subgraph 0 or a signature's subgraph) and the walk that made it.

    :func:`analyze_model` without the signature summaries; the walk tells
    :mod:`tflite_flops.analysis.generative` which weights each signature reads.
    """
    entry = entry_subgraph(model, signature)
    spec = normalize_input_shapes(input_shapes)
    if count_zeros is None:  # reading every weight costs time on big files: automatic only for small ones
        count_zeros = model.size_bytes <= COUNT_ZEROS_AUTO_LIMIT
    walk = Walk(model, max(int(while_trips), 0), dict(cost_overrides or {}), trust_stored_shapes, bool(count_zeros),
                threads=max(int(threads), 1))
    walk_model(walk, entry, spec, batch)
    return build_report(walk, model.subgraphs[entry], entry, spec, batch), walk


def resolve_shapes(source: str | os.PathLike | bytes | Model, input_shapes: Any = None, batch: int | None = None, *,
                   trust_stored_shapes: bool = True, while_trips: int = 1,
                   signature: str | None = None) -> dict[int, SubgraphShapes]:
    """The shapes (and folded small values) of every tensor, per reached subgraph, as ``analyze()`` sees them.

    Same walk as :func:`analyze_model` (input resolution, propagation, control flow), without the report;
    tests compare it with an interpreter's own shapes. Arguments as for :func:`analyze_model`.
    """
    model = source if isinstance(source, Model) else load_model(source)
    walk = Walk(model, max(int(while_trips), 0), {}, trust_stored_shapes, count_zeros=False)
    walk_model(walk, entry_subgraph(model, signature), normalize_input_shapes(input_shapes), batch)
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
    if subgraph == 0:
        return resolve_shapes(model, input_shapes, batch, trust_stored_shapes=trust_stored)[0]
    parsed = model if isinstance(model, Model) else load_model(model)  # type: ignore[arg-type]
    key = next((sig.key for sig in parsed.signatures if sig.subgraph_index == subgraph), None)
    if key is None:
        raise ShapeError(f"subgraph {subgraph} is not the entry of any signature")
    return resolve_shapes(parsed, input_shapes, batch, trust_stored_shapes=trust_stored, signature=key)[subgraph]
