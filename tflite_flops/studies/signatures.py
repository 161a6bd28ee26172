"""Every signature in one report, and the per-token figures of generative models: a study of several
entries, which :func:`tflite_flops.analyze` (``all_signatures=True``, ``--all-signatures``) composes on the
report of the model's entry.

A generative ``.tflite`` (an on-device LLM) has several signatures, typically ``prefill``
(T prompt tokens at once) and ``decode`` (one token), that share one copy of the weights and
pass a KV cache in and out. :func:`add_signatures` analyzes every signature of a model and
fills ``report.signatures`` with a :class:`~tflite_flops.report.SignatureReport` each:

* **totals** of the signature (MACs, FLOPs by precision, bytes, params). ``params`` counts the
  weights the signature's subgraphs read; a weight shared by several signatures is in each of
  them, and once in the report's own ``totals.params`` (the reader counts a buffer that several
  subgraphs point at once).
* **role**: ``prefill`` or ``decode``, from the key (``prefill_128`` → prefill; ``decode`` /
  ``generate`` → decode), else from the token-count input dim (T > 1 → prefill, T = 1 →
  decode); ``prefill=`` / ``decode=`` (``--prefill SIG --decode SIG``) name them instead.
  The token input is an integer input of shape ``[1, T]``, preferably named like ``tokens`` /
  ``input_ids``.
* **per-token figures** (:class:`~tflite_flops.report.TokenFigures`) of prefill and decode
  signatures: MACs and FLOPs per token (the signature's totals ÷ T), weight bytes read per
  token (the stored bytes of its weights, read once per call, ÷ T), the KV-cache bytes (the
  cache inputs' shapes × dtypes; cache inputs are the inputs named ``*cache*`` / ``kv*`` or
  returned under the same name) and the cache length (the dim along which the cache is
  updated by DYNAMIC_UPDATE_SLICE, whose update is T long on that dim).

With ``--latency``, :mod:`tflite_flops.measure.tokens` times every signature and adds tokens/s
and the time to first token. With ``predict`` (``--predict PROFILE``), every signature gets its own
prediction (:func:`tflite_flops.latency.predict.add_prediction` on the signature's report: its ops at
its shapes, its XNNPACK partitions) and the token figures their predicted counterparts, computed as
the measured ones are: tokens/s = tokens ÷ the predicted call time, and for prefill the time to first
token = one predicted prefill call.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from ..analysis.placement import xnnpack_placer
from ..analysis.run import analyze_entry
from ..errors import InputSpecError
from ..latency.predict import add_prediction
from ..ops.facts import facts_of
from ..reader.bounds import check_signature_work
from ..reader.model import Model, Signature
from ..report import Prediction, Report, SignatureReport, TensorSummary, TokenFigures
from ..settings import Settings
from ..units import tensor_bytes

ROLES = ("prefill", "decode")
_INT_DTYPES = frozenset({"INT32", "INT64"})


def add_signatures(report: Report, model: Model, settings: Settings, *, prefill: str | None = None,
                   decode: str | None = None) -> Report:
    """``report`` with ``signatures`` filled: every signature of ``model`` analyzed at its stored shapes.

    Args:
        report: the report of the model's entry (as :func:`tflite_flops.analyze` makes it).
        model: the parsed model.
        settings: the analysis :class:`~tflite_flops.settings.Settings` (each signature is analysed with
            them, at its own stored shapes); with a device profile (``settings.predict``, already checked),
            each signature's ``prediction`` and the token figures' ``predicted_*`` fields. (``strict`` is
            checked by :func:`tflite_flops.analyze` on the finished report, signatures included.)
        prefill, decode: signature keys to take as the prefill / decode step (default: detected).

    Raises:
        InputSpecError: the model has no signature, or ``prefill`` / ``decode`` names an unknown
            signature or one without a token-count input.
    """
    if not model.signatures:
        raise InputSpecError("--all-signatures: the model has no signatures (SignatureDefs)")
    check_signature_work(model)  # the loop below is bounded by the file's size
    keys = [s.key for s in model.signatures]
    for what, key in (("--prefill", prefill), ("--decode", decode)):
        if key is not None and key not in keys:
            raise InputSpecError(f"{what} {key!r}: no such signature (signatures: {', '.join(keys)})")
    roles = signature_roles(model, prefill, decode)
    out: dict[str, SignatureReport] = {}
    warnings = list(report.warnings)
    notes = list(report.notes)
    for sig in model.signatures:
        sub, walk = analyze_entry(model, settings.at_point(signature=sig.key))
        if settings.predict is not None:
            sub = add_prediction(sub, model, settings.predict, settings.predict_forced,
                                 xnnpack_placer(model, settings.delegate))  # the settings' delegate flags
        reached = {o.subgraph for o in sub.ops if o.phase != "not_executed"} | {sig.subgraph_index}
        params = param_bytes = 0
        for (subgraph, _), (n, size) in walk.params.tensors.items():
            if subgraph in reached:
                params += n
                param_bytes += size
        totals = dataclasses.replace(sub.totals, params=params, param_bytes=param_bytes)
        role = roles.get(sig.key)
        tokens = None
        if role is not None:
            read = weight_bytes_read(model, walk, sub, reached)
            tokens = _token_figures(model, sig, role[0], role[1], role[2], totals, walk.states[sig.subgraph_index].shapes,
                                    read)
            tokens = predicted_tokens(tokens, sub.prediction)
        named = _named(sig, sub)
        out[sig.key] = SignatureReport(
            key=sig.key, subgraph=sig.subgraph_index, inputs=named[0], outputs=named[1], totals=totals,
            operators=sum(1 for o in sub.ops if o.phase == "inference"), unsupported=dict(sub.unsupported),
            tokens=tokens, memory=sub.memory, prediction=sub.prediction)
        warnings += [f"signature {sig.key}: {w}" for w in sub.warnings if w not in report.warnings]
        notes += [f"signature {sig.key}: {n}" for n in sub.notes if n not in report.notes]
    return dataclasses.replace(report, signatures=out, warnings=tuple(dict.fromkeys(warnings)),
                               notes=tuple(dict.fromkeys(notes)))


def predicted_tokens(tokens: TokenFigures, prediction: Prediction | None) -> TokenFigures:
    """``tokens`` with the predicted call time, tokens/s and (prefill) time to first token, by the rules
    :func:`tflite_flops.measure.tokens.measure_signatures` applies to the measured median: tokens/s =
    tokens ÷ the call time in seconds, the time to first token = one prefill call."""
    if prediction is None or prediction.latency_ms <= 0:
        return tokens
    ms = prediction.latency_ms
    return dataclasses.replace(tokens, predicted_latency_ms=ms, predicted_tokens_per_s=tokens.tokens / (ms / 1e3),
                               predicted_time_to_first_token_ms=ms if tokens.role == "prefill" else None)


def signature_roles(model: Model, prefill: str | None = None,
                    decode: str | None = None) -> dict[str, tuple[str, str, int]]:
    """{signature key: (role, token input name, tokens per call)} of the prefill / decode signatures.

    Detection by key first (``prefill*`` → prefill, ``decode*`` / ``generate*`` → decode), then by
    the token input's length (T > 1 prefill, T = 1 decode). ``prefill`` / ``decode`` override it.
    A signature without a static token-count input gets no role (an error when named explicitly).
    """
    roles: dict[str, tuple[str, str, int]] = {}
    for sig in model.signatures:
        token = token_input(model, sig)
        chosen = "prefill" if sig.key == prefill else "decode" if sig.key == decode else None
        if chosen is not None and token is None:
            raise InputSpecError(f"--{chosen} {sig.key!r}: the signature has no token-count input "
                                 "(an integer input of shape [1, T])")
        if token is None:
            continue
        name, count = token
        if chosen is None:
            lower = sig.key.lower()
            if "prefill" in lower:
                chosen = "prefill"
            elif "decode" in lower or "generate" in lower:
                chosen = "decode"
            else:
                chosen = "prefill" if count > 1 else "decode"
            if (chosen == "prefill" and prefill is not None) or (chosen == "decode" and decode is not None):
                continue  # the user named the signature of this role
        roles[sig.key] = (chosen, name, count)
    return roles


def token_input(model: Model, sig: Signature) -> tuple[str, int] | None:
    """(name, T) of the signature's token-count input: an integer input of static shape [1, T].

    Inputs named like token ids (``tokens``, ``input_ids``, ``ids``) come first; position inputs
    (``*pos*``) and cache inputs are never taken.
    """
    sg = model.subgraphs[sig.subgraph_index]
    found = []
    for name, index in sig.inputs.items():
        t = sg.tensors[index]
        shape = t.shape_signature if t.shape_signature is not None else t.shape
        lower = name.lower()
        if (t.dtype not in _INT_DTYPES or len(shape) != 2 or shape[0] != 1 or shape[1] < 1 or "pos" in lower
                or _is_cache_name(lower)):
            continue
        preferred = "token" in lower or "ids" in lower
        found.append((not preferred, name, int(shape[1])))
    if not found:
        return None
    _, name, count = min(found)
    return name, count


def _is_cache_name(lower: str) -> bool:
    return "cache" in lower or lower.startswith("kv") or "_kv" in lower or "past_key" in lower or "past_value" in lower


def _token_figures(model: Model, sig: Signature, role: str, token: str, count: int, totals: Any,
                   shapes: Any, read_bytes: int) -> TokenFigures:
    """Per-token MACs/FLOPs/weight bytes and the KV cache of one prefill or decode signature (``read_bytes``:
    the weight bytes one call reads, :func:`weight_bytes_read`)."""
    sg = model.subgraphs[sig.subgraph_index]
    caches = cache_inputs(sig, token)
    cache_bytes = sum(tensor_bytes(shapes[i], sg.tensors[i].dtype) for i in caches.values())
    weight_bytes = round(read_bytes / count)
    return TokenFigures(
        role=role, tokens=count, token_input=token,
        # per token = the call's total ÷ tokens per call, rounded to the nearest int
        macs_per_token=round(totals.macs / count), flops_per_token=round(totals.flops / count),
        weight_bytes_per_token=weight_bytes, kv_cache_bytes=int(cache_bytes),
        kv_cache_inputs=tuple(sorted(caches)), kv_length=kv_length(sg, set(caches.values()), shapes),
        # bytes a token needs from memory: its share of the weights (all of them for a decode step)
        # plus its share of the cache, which attention reads once per call
        bytes_per_token=weight_bytes + round(cache_bytes / count))


def weight_bytes_read(model: Model, walk: Any, sub: Report, reached: set[int]) -> int:
    """The stored weight bytes one call of a signature reads: each weight counted in its params in full, but a
    table that only row lookups read (``OpFacts.row_lookup``: GATHER, EMBEDDING_LOOKUP), directly or through
    the op that unpacks it at init (``OpFacts.weight_unpacking``: a DEQUANTIZE of a constant), only for the
    rows the call reads: ids × the lookup's runs per call × the table's bytes per row, at most the table.

    A decode step reads one row of the embedding table, not the table; a table that a computing op also
    reads (embeddings tied to the logits' FULLY_CONNECTED) is read in full.
    """
    runs = {(o.subgraph, o.index): o.executions for o in sub.ops}
    # (subgraph, what is read) -> [(op, input position)]; what is read is a stored buffer (the tensors that share
    # it are one table: an embedding tied to the logits' projection), else the tensor
    readers: dict[tuple[int, Any], list[tuple[Any, int]]] = {}

    def read_key(s: int, t: int) -> Any:
        stored = model.subgraphs[s].tensors[t]
        return ("buffer", stored.data_offset) if stored.data_size else t

    for s in reached:
        for op in model.subgraphs[s].operators:
            for pos, t in enumerate(op.inputs):
                if t >= 0:
                    readers.setdefault((s, read_key(s, t)), []).append((op, pos))

    def rows_fraction(s: int, tensor: int, unpacked: bool) -> tuple[int, int] | None:
        """(rows read, rows) of a table that only row lookups read; None when something reads it whole."""
        read = total = 0
        for op, pos in readers.get((s, read_key(s, tensor)), ()):
            facts = facts_of(op.op_type)
            lookup = facts.row_lookup
            if lookup is not None and pos == lookup[0] and len(op.inputs) > lookup[1] and op.inputs[lookup[1]] >= 0:
                axis = int(op.options.get("axis", 0) or 0)
                table = walk.states[s].shapes[op.inputs[pos]]
                if axis != 0 or op.options.get("batch_dims", 0) or not table or table[0] < 1:
                    return None  # rows along another axis, or per batch: counted whole
                ids = walk.states[s].shapes[op.inputs[lookup[1]]]
                n_ids = 1
                for d in ids:
                    n_ids *= int(d)
                read += n_ids * runs.get((s, op.index), 1)
                total = int(table[0])
            elif facts.weight_unpacking and pos == 0 and not unpacked and op.outputs:
                inner = rows_fraction(s, op.outputs[0], True)  # the rows of the unpacked copy the lookups read
                if inner is None:
                    return None
                read, total = read + inner[0], inner[1]
            else:
                return None
        return (read, total) if total else None

    out = 0
    counted = set()  # the buffers read: two tensors of one buffer (a tied embedding) are one read
    for (s, tensor), (_, size) in walk.params.tensors.items():
        key = read_key(s, tensor)
        if s not in reached or (s, key) in counted:
            continue
        counted.add((s, key))
        rows = rows_fraction(s, tensor, False)
        out += size if rows is None else min(size, size * rows[0] // rows[1])
    return out


def cache_inputs(sig: Signature, token: str | None = None) -> dict[str, int]:
    """{name: tensor index} of the signature's KV-cache inputs: named ``*cache*``, ``kv*``,
    ``past_key*`` / ``past_value*``, or returned as an output of the same name (state kept by the caller)."""
    return {name: index for name, index in sig.inputs.items()
            if _is_cache_name(name.lower()) or (name in sig.outputs and name != token)}


def kv_length(sg: Any, cache_tensors: set[int], shapes: Any) -> int | None:
    """The cache length: the dim of a cache input that an op updating a slice of it (``OpFacts.slice_update``:
    DYNAMIC_UPDATE_SLICE) updates with a shorter slice.

    The update of a cache [1, S, H, D] by T tokens is [1, T, H, D] (T < S), so the dim where the
    two differ is the KV length S. None when no such update is found or the dims are ambiguous.
    """
    lengths = set()
    for op in sg.operators:
        update = facts_of(op.op_type).slice_update
        if update is None or len(op.inputs) <= max(update) or op.inputs[update[0]] not in cache_tensors:
            continue
        full, part = shapes[op.inputs[update[0]]], shapes[op.inputs[update[1]]]
        differ = [a for a, b in zip(full, part) if a != b] if len(full) == len(part) else []
        if len(differ) == 1:
            lengths.add(int(differ[0]))
    return lengths.pop() if len(lengths) == 1 else None


def _named(sig: Signature, sub: Report) -> tuple[tuple[TensorSummary, ...], tuple[TensorSummary, ...]]:
    """The signature's inputs and outputs under their signature names (the report's, renamed)."""
    by_index_in = {t.index: t for t in sub.inputs}
    by_index_out = {t.index: t for t in sub.outputs}

    def pick(names: Mapping[str, int], known: Mapping[int, TensorSummary]) -> tuple[TensorSummary, ...]:
        out = []
        for name, index in names.items():
            t = known.get(index)
            if t is not None:
                out.append(dataclasses.replace(t, name=name))
        return tuple(out)

    return pick(sig.inputs, by_index_in), pick(sig.outputs, by_index_out)
