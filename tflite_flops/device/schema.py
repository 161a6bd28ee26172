"""The checks every file from a device passes before a figure uses one of its values, and the bounds on
reading it (issue 44).

A benchmark log, an op profile, a litert-benchmark result or a benchmark_model proto comes from a phone,
a device farm or a colleague: untrusted input. Each reader here parses in linear time under a size cap,
then checks each value it keeps against its range: a time is a finite number of at least 0, a count an integer
from 0 to :data:`MAX_COUNT`, the latency statistics consistent
(``min <= median <= max``, ``min <= avg <= max``, ``p5 <= p95``). A value out of range is one
:class:`~tflite_flops.errors.ModelFormatError` line that names the file, the field and the range.
Every string kept from a file (op names, node types, delegate and model names) is made safe for a
terminal (:func:`~tflite_flops.units.printable`), as a model's custom op names are.

The bounds (docs/contributing.md, "Resource bounds"):

* sizes read whole: :data:`TEXT_CAP` (logs, logcat captures, op profiles as text or CSV, litert-benchmark's
  stdout), :data:`JSON_CAP` (litert-benchmark's ``--result_json``), :data:`PROTO_CAP` (``ModelRuntimeDetails``,
  ``BenchmarkProfilingData``), :data:`RESULT_CAP` (``BenchmarkResult``);
* a text file has at most :data:`MAX_LINES` lines; a number is written in at most :data:`NUMBER_CHARS`
  characters (a 5,000-digit count is refused before Python's int-string limit is met);
* a JSON document nests at most :data:`JSON_MAX_DEPTH` levels; a proto holds at most :data:`MAX_ELEMENTS`
  nodes, edges, subgraphs and op rows (counted before it is decoded: :func:`count_elements`), and protobuf's
  own decoder refuses nesting deeper than 100 levels.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping

from ..errors import ModelFormatError
from ..files import MiB
from ..units import printable

TEXT_CAP = 32 * MiB  # a benchmark log or op profile of a 20,000-op model is a few MB
JSON_CAP = 1 * MiB  # litert-benchmark's --result_json is a few hundred bytes
PROTO_CAP = 16 * MiB  # ModelRuntimeDetails / BenchmarkProfilingData: ~100 bytes a node or tensor; the element count
# before decoding holds up to 16 bytes per 2 bytes of a hostile file: 16 MiB keeps it under ~350 MB
RESULT_CAP = 1 * MiB  # BenchmarkResult: a few dozen bytes
MAX_LINES = 1 << 20  # lines of a text file: a real profile or log has a few hundred thousand at most
NUMBER_CHARS = 64  # characters of one number (digits, sign, point, exponent)
MAX_COUNT = 10**9  # runs, warm-up runs, times called, threads: a count above it is no count
JSON_MAX_DEPTH = 32  # litert-benchmark's result nests 2 levels
MAX_ELEMENTS = 1 << 18  # nodes, edges, subgraphs and op rows of one proto (a real one: a few thousand)


def refuse(path: str, message: str) -> ModelFormatError:
    """The one-line error for ``path`` (its name made safe for a terminal)."""
    return ModelFormatError(f"{printable(str(path))}: {message}")


def name(value: Any) -> str:
    """A string from a device file, safe for every output (control characters escaped)."""
    text = str(value)
    return text if text.isprintable() else printable(text)  # most names need no escape: checked in C


def _show(text: Any) -> str:
    """A refused value as the error line shows it: at most 40 characters."""
    if not isinstance(text, str):
        s = repr(text)
        return name(s[:40] + "…" if len(s) > 40 else s)
    return repr(name(text[:40] + "…" if len(text) > 40 else text))


def number(text: str, path: str, field: str) -> float:
    """The number written as ``text`` (any finite value; the range is checked by the caller)."""
    s = text.strip()
    value = math.nan
    if len(s) <= NUMBER_CHARS:
        try:
            value = float(s)
        except ValueError:
            pass
    if not math.isfinite(value):
        raise refuse(path, f"{field} is not a finite number ({_show(text)})")
    return value


def time_value(value: Any, path: str, field: str, what: str = "a time") -> float:
    """A time (or ``what``): a finite number of at least 0 (0: below the tool's resolution)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise refuse(path, f"{field} is not a number ({_show(value)})")
    if isinstance(value, int) and abs(value) > 10**300:
        value = math.inf
    v = float(value)
    if not math.isfinite(v) or v < 0:
        raise refuse(path, f"{field} is not {what} ({_show(value)}; {what} is a finite number of at least 0)")
    return v


def count(value: Any, path: str, field: str, *, low: int = 0) -> int:
    """A count: an integer from ``low`` to :data:`MAX_COUNT` (text: at most :data:`NUMBER_CHARS` digits;
    a float only when whole, as ``1.000`` in a profile's "times called")."""
    v: Any = value
    if isinstance(value, str):
        s = value.strip()
        try:
            v = int(s) if len(s) <= NUMBER_CHARS else None
        except ValueError:
            try:
                v = float(s) if len(s) <= NUMBER_CHARS else None
            except ValueError:
                v = None
    if isinstance(v, float) and math.isfinite(v) and v.is_integer():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= MAX_COUNT:
        raise refuse(path, f"{field} is not a count ({_show(value)}; a count is an integer from {low} to "
                           f"{MAX_COUNT:,})")
    return v


def check_stats(path: str, stats: Mapping[str, float | None], where: str = "") -> None:
    """The latency statistics (times already checked one by one) agree: min <= median <= max,
    min <= avg <= max, min <= p5 <= p95 <= max. ``stats`` keys: min, median, avg, max, p5, p95
    (a missing or None value is not checked); ``where`` prefixes the names ("latency.")."""
    order = (("min", "median"), ("median", "max"), ("min", "avg"), ("avg", "max"), ("min", "p5"), ("p5", "p95"),
             ("p95", "max"), ("p5", "median"), ("median", "p95"))
    for low, high in order:
        a, b = stats.get(low), stats.get(high)
        if a is not None and b is not None and a > b:
            raise refuse(path, f"inconsistent statistics: {where}{low} ({a:g}) is above {where}{high} ({b:g}); "
                               f"they must keep min <= p5 <= median <= p95 <= max and min <= avg <= max")


def lines(text: str, path: str) -> list[str]:
    """The lines of ``text`` (split at ``\\n`` only; a ``\\r`` before it is dropped), at most
    :data:`MAX_LINES` of them, of a text of at most :data:`TEXT_CAP` characters."""
    if len(text) > TEXT_CAP:
        raise refuse(path, f"larger than {TEXT_CAP // MiB} MiB, the most read from a benchmark log or profile")
    n = text.count("\n")
    if n >= MAX_LINES:
        raise refuse(path, f"more than {MAX_LINES:,} lines, the most read from a benchmark log or profile")
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def bracketed(line: str, key: str) -> str | None:
    """The ``X`` of ``key: [X]`` in ``line`` (benchmark_model's ``Graph: [model.tflite]``): at the first ``key:``
    that starts a word and is followed by ``[``, when the line (less trailing space) ends with ``]``; else None.
    Linear: each ``key:`` is looked at once, and the space after it skipped once."""
    end = len(line.rstrip())
    if end == 0 or line[end - 1] != "]":
        return None
    pos = line.find(key + ":")
    while pos >= 0:
        after = pos + len(key) + 1
        rest = _SPACE.match(line, after).end()
        word_start = pos == 0 or not (line[pos - 1].isalnum() or line[pos - 1] == "_")
        if word_start and rest < end - 1 and line[rest] == "[":
            return line[rest + 1:end - 1]
        pos = line.find(key + ":", after)
    return None


_SPACE = re.compile(r"\s*")


# ---- JSON ----------------------------------------------------------------------------------------------

_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


def _too_deep(path: str, field: Any) -> ModelFormatError:
    where = f"field {name(field)!r}" if field is not None else "the document"
    return refuse(path, f"{where} nests more than {JSON_MAX_DEPTH} levels (the most read from a benchmark result)")


def _check_depth(doc: Any, path: str) -> None:
    """Refuse a parsed document nested more than :data:`JSON_MAX_DEPTH` levels, naming the top-level field
    that is (one pass over its containers, no recursion)."""
    stack: list[tuple[Any, int, Any]] = [(doc, 1, None)]
    while stack:
        value, depth, field = stack.pop()
        if depth > JSON_MAX_DEPTH:
            raise _too_deep(path, field)
        items = value.items() if isinstance(value, dict) else enumerate(value)
        stack.extend((v, depth + 1, k if depth == 1 else field) for k, v in items if isinstance(v, (dict, list)))


def _deep_field(text: str) -> Any:
    """The top-level field of a JSON text that nests more than :data:`JSON_MAX_DEPTH` levels (None: the
    document itself), found by one pass over its strings and brackets that stops there. Only run on a text
    the decoder found too deep to decode, whose strings up to that point were well formed."""
    depth, field, last = 0, None, None
    for m in _JSON_TOKEN.finditer(text):
        tok = m.group()
        if tok in "[{":
            if depth == 1:
                field = last
            depth += 1
            if depth > JSON_MAX_DEPTH:
                break
        elif tok in "]}":
            depth -= 1
        elif depth == 1:
            last = tok
    try:
        return json.loads(field) if field is not None else None
    except ValueError:
        return None


class _TooLong(float):
    """A JSON integer of more than :data:`NUMBER_CHARS` digits: infinity, refused by its field's check."""

    def __new__(cls, digits: int) -> "_TooLong":
        obj = super().__new__(cls, math.inf)
        obj.digits = digits
        return obj

    def __repr__(self) -> str:
        return f"a number of {self.digits:,} digits"


def _json_int(text: str) -> Any:
    return int(text) if len(text) <= NUMBER_CHARS else _TooLong(len(text))


def _json_constant(text: str) -> Any:
    raise ValueError(f"{text} is not a number JSON allows")


def load_json(data: bytes, path: str, what: str) -> Any:
    """The JSON document in ``data`` (at most :data:`JSON_CAP` bytes, :data:`JSON_MAX_DEPTH` levels; ``NaN``
    and ``Infinity`` refused; an integer of more than :data:`NUMBER_CHARS` digits kept as infinity, for its
    field's check to refuse)."""
    if len(data) > JSON_CAP:
        raise refuse(path, f"larger than {JSON_CAP // MiB} MiB, the most read from {what}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise refuse(path, f"not {what} (not UTF-8: {exc.reason} at byte {exc.start})") from None
    try:
        doc = json.loads(text, parse_int=_json_int, parse_constant=_json_constant)
    except json.JSONDecodeError as exc:
        raise refuse(path, f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise _too_deep(path, _deep_field(text)) from None
    except ValueError as exc:
        raise refuse(path, f"not valid JSON ({name(exc)})") from None
    if isinstance(doc, (dict, list)):
        _check_depth(doc, path)
    return doc


# ---- protocol buffers ----------------------------------------------------------------------------------

_SHADOWS: dict[tuple, Any] = {}


def _shadow(numbers: tuple[int, ...]) -> Any:
    """A message class whose fields ``numbers`` are ``repeated bytes``: a message parsed with it keeps each
    element of those fields as its encoded bytes, so that they are counted before any is decoded."""
    if numbers in _SHADOWS:
        return _SHADOWS[numbers]
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    f = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name=f"tflite_flops_shadow_{len(_SHADOWS)}.proto",
                                              package="tflite_flops.shadow", syntax="proto2")
    msg = file.message_type.add(name="Shadow")
    for n in numbers:
        msg.field.add(name=f"f{n}", number=n, label=f.LABEL_REPEATED, type=f.TYPE_BYTES)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("tflite_flops.shadow.Shadow"))
    _SHADOWS[numbers] = cls
    return cls


Layout = Mapping[int, "Layout | None"]


def count_elements(data: bytes, layout: Layout, path: str, what: str) -> int:
    """How many elements the repeated message fields of ``layout`` hold in ``data``, counted from the wire
    format without decoding them (``layout``: field number -> the layout of its message, or None for a field
    only counted); refused above :data:`MAX_ELEMENTS`. Malformed data counts what it can: the decoder that
    follows refuses it."""
    from google.protobuf.message import DecodeError

    total = 0
    todo: list[tuple[bytes, Layout]] = [(data, layout)]
    while todo:
        body, lay = todo.pop()
        msg = _shadow(tuple(sorted(lay)))()
        try:
            msg.ParseFromString(body)
        except (DecodeError, RuntimeWarning, ValueError):
            continue
        for number, sub in lay.items():
            items = getattr(msg, f"f{number}")
            total += len(items)
            if total > MAX_ELEMENTS:
                raise refuse(path, f"a {what} of more than {MAX_ELEMENTS:,} nodes, tensors, subgraphs and rows "
                                   "(the most read)")
            if sub:
                todo.extend((item, sub) for item in items)
    return total
