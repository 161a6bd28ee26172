"""The page every HTML output shares (report, compare, sweep): inline CSS and JS, the embedded JSON data.

Nothing is loaded from the network. The embedded data (``<script type="application/json"
id="report-data">``) is JSON with ``<``, ``>`` and ``&`` escaped, NaN and infinities written as null.
"""

from __future__ import annotations

import json
import math
from importlib import resources
from typing import Any, Iterable, Iterator, Mapping

from .charts import esc


def _static(name: str) -> str:
    """A stylesheet or script shipped as package data in ``render/static/`` (read once, at import)."""
    return (resources.files("tflite_flops.render") / "static" / name).read_text(encoding="utf-8")


CSS = _static("report.css")  # package data: tflite_flops/render/static/


# Sorting and filtering of every table with class "sortable-table"; #selftest runs a check.
JS = _static("report.js")


def _compact(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)


_OPS_SLOT = "\0tflite_flops: the ops\0"  # stands for the ops in the head's text, replaced by their text


def script_json(data: Any, ops: Iterable[Any] | None = None) -> str:
    """JSON that is safe inside ``<script type="application/json">`` (no ``<``, ``>``, ``&`` left).

    With ``ops`` (each op's dict, :meth:`Report.op_dicts`), ``data["ops"]`` is their list, each encoded in
    turn (by the C encoder: the whole report's dict of a large model took most of the page's time)."""
    return "".join(_script_json_pieces(data, ops))


def _script_json_pieces(data: Any, ops: Iterable[Any] | None) -> list[str]:
    """:func:`script_json`'s text in pieces, which the page joins once with its own: a large model's ops are tens of
    MB of text, each whole copy of which (joined, made safe, put in the page) was that much more memory."""
    if ops is None:
        return [_script_safe(_compact(_finite(data)))]
    head = _compact(_finite({**data, "ops": _OPS_SLOT}))
    parts = head.split(_compact(_OPS_SLOT))
    if len(parts) != 2:  # a model's own strings hold the slot's text: encode the whole list at once
        return [_script_safe(_compact(_finite({**data, "ops": list(ops)})))]
    pieces = [_script_safe(parts[0]), "["]  # each chunk made safe on its own (a character at a time: the same text)
    for chunk in _compact_ops(ops):
        pieces += (_script_safe(chunk), ",")
    if len(pieces) > 2:
        pieces.pop()  # the last comma
    pieces += ("]", _script_safe(parts[1]))
    return pieces


def _script_safe(text: str) -> str:
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


# _compact's encoder, made once: a list of ops is encoded in one call of its C encoder
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)
_CHUNK = 512  # ops encoded at once (their dicts held meanwhile)


def _compact_ops(ops: Iterable[Any]) -> Iterator[str]:
    """``_compact(_finite(op))`` of each op, joined by commas a chunk at a time: the chunk's list is encoded at
    once (its text between the brackets is its ops' texts joined by commas), and the chunk holding a NaN or an
    infinity, which the encoder refuses, op by op through :func:`_finite` (``_finite`` changes nothing else that
    the encoder writes: an op's dict holds dicts, lists and numbers, ``Report.op_dicts``)."""
    chunk: list[Any] = []
    for op in ops:
        chunk.append(op)
        if len(chunk) == _CHUNK:
            yield _compact_chunk(chunk)
            chunk = []
    if chunk:
        yield _compact_chunk(chunk)


def _compact_chunk(chunk: list[Any]) -> str:
    if all(type(op) is dict for op in chunk):
        try:
            return _ENCODER.encode(chunk)[1:-1]
        except ValueError:  # a NaN or an infinity: null, op by op
            pass
    return ",".join([_compact(_finite(op)) for op in chunk])


def page(title: str, subtitle: str, body: str, data: Any = None, ops: Iterable[Any] | None = None) -> str:
    """The shared page shell: head with inline CSS, header, body sections, embedded data (``ops``, when given,
    its ``"ops"`` list: see :func:`script_json`), inline JS."""
    data_block = (['<script type="application/json" id="report-data">', *_script_json_pieces(data, ops), "</script>\n"]
                  if data is not None else [])
    return "".join(["<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
                    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
                    "'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
                    f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
                    f"<header><h1>{esc(title)}</h1><div class=\"sub\">{subtitle}</div></header>\n<main>\n{body}\n"
                    "<footer>Generated by tflite_flops. Self-contained: no network resources are loaded.</footer>\n"
                    "</main>\n", *data_block, f"<script>{JS}</script>\n</body>\n</html>\n"])


_LEAVES = (int, str, bool, type(None))


def _finite(value: Any) -> Any:
    """Replace NaN/inf (not valid JSON) with None, recursively."""
    t = type(value)
    if t in _LEAVES:  # the common cases first: typing.Mapping's isinstance is slow
        return value
    if t is list or t is tuple:
        return [v if type(v) in _LEAVES else _finite(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {k: v if type(v) in _LEAVES else _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
