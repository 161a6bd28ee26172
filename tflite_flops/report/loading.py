"""Reading a saved JSON report: parsed under bounds, then every value checked against the shipped schema before
any record is built from it (``Report.load``, ``Report.from_json``, ``Report.from_dict``; ``compare`` on a
``.json`` side).

A saved report comes from an earlier run, a colleague or another tool: it is untrusted input. The checks:

* **parsing** (:func:`parse`): the JSON literals ``NaN``, ``Infinity`` and ``-Infinity`` (Python's ``json``
  accepts them) and a number past a float's range (``1e400``, which would read as infinity) are refused;
  nesting too deep for the parser is refused; ``Report.load`` (:func:`read_report`) reads a file of at most
  :data:`REPORT_FILE_CAP` bytes, a regular file only.
* **the schema** (:func:`check`): the one the package ships (``tflite_flops/schema/report.schema.json``, made
  from the records' type hints by ``tests/report_schema.py``) is walked over the parsed value: every key the
  records use has its JSON type (an integer is a JSON integer: neither ``1.0`` nor ``true``), a count, a size or
  an index is at least 0 (``minimum``), a number is finite, a status or a phase is one of its values
  (``enum``), and an object names no key its record lacks (``additionalProperties``). A value the schema
  leaves free (``settings``' other keys, a bundle's metadata, the keys a newer version adds to the records with
  an ``extra`` field, a newer version's per-op figures) may nest at most :data:`FREE_DEPTH` levels and hold only
  finite numbers. A key that is missing is the record's default, or the record refuses it.
* **consistency**: what the renderers look up by a value (the analysed section of a bundle) exists.

A failure is one :class:`~tflite_flops.errors.ReportFormatError` line that names the file (when known), the
field (``ops[3].macs``) and what was expected: ``r.json: not a tflite_flops JSON report: ops[3].macs: expected an
integer >= 0, got -1``. A report that passes renders in every format (``tests/test_hostile_reports.py``).
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any, Callable

from ..errors import ReportFormatError
from ..files import MiB, read_capped

REPORT_FILE_CAP = 1024 * MiB  # a saved report read whole: a model of 80,000 ops writes 75 MB
FREE_DEPTH = 16  # nesting of a value the schema leaves free (settings, metadata, a newer version's keys)
_FLOAT_MAX = 1.7976931348623157e308
# records whose objects may carry keys the schema does not name: a newer version's per-op figures, kept in
# OpRecord.figures (plain values only)
_OPEN_SCALARS = {"OpRecord"}

Check = Callable[[Any], None]


class _Invalid(Exception):
    """A value that does not fit the schema; ``path`` is filled in as the walk unwinds (innermost first)."""

    def __init__(self, expected: str, value: Any = None, shown: bool = True) -> None:
        super().__init__(expected)
        self.expected, self.value, self.shown = expected, value, shown
        self.path: list[str] = []


def _fail(source: str | None, detail: str) -> ReportFormatError:
    where = f"{source}: " if source else ""
    return ReportFormatError(f"{where}not a tflite_flops JSON report: {detail}")


# ---- parsing -----------------------------------------------------------------------------------------------


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number (NaN and infinities are refused)")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is past a float's range")
    return value


def parse(text: str | bytes, source: str | None = None) -> Any:
    """The JSON value of ``text``: standard JSON only (no ``NaN``/``Infinity``, every number finite).

    Raises:
        ReportFormatError: not JSON, a non-finite number, or nested too deeply for the parser.
    """
    try:
        return json.loads(text, parse_constant=_constant, parse_float=_finite)
    except RecursionError:
        raise _fail(source, "nested too deeply") from None
    except (ValueError, TypeError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise _fail(source, f"{type(exc).__name__}: {_clip(str(exc), 200)}") from None


def read_report(path: str | os.PathLike) -> str:
    """The text of the report saved at ``path``: a regular file of at most :data:`REPORT_FILE_CAP` bytes, UTF-8
    (``Report.load`` reads it and checks it).

    Raises:
        ReportFormatError: not UTF-8 (the message names the file).
        OSError: the file cannot be read, is not a regular file, or is larger than the cap.
    """
    data = read_capped(path, REPORT_FILE_CAP)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(os.fspath(path), f"not UTF-8 text (byte {exc.start})") from None


# ---- the schema walk ---------------------------------------------------------------------------------------

_SCHEMA: dict[str, Any] = {}


def _compiled() -> Check:
    """The check of a whole report, compiled once from the shipped schema."""
    if "check" not in _SCHEMA:
        from .schema import report_schema

        schema = report_schema()
        _SCHEMA["check"] = _Compiler(schema.get("$defs", {})).compile(schema, "Report")
    return _SCHEMA["check"]


def check(d: Any, source: str | None = None) -> None:
    """Check a parsed report against the shipped schema (the module docstring says what is checked).

    Raises:
        ReportFormatError: the first value that does not fit, with its path.
    """
    if not isinstance(d, dict):
        raise _fail(source, f"expected a JSON object, got {_kind(d)}")
    try:
        _compiled()(d)
        _consistent(d)
    except _Invalid as bad:
        path = "".join(reversed(bad.path)).lstrip(".") or "the report"
        got = f", got {_show(bad.value)}" if bad.shown else ""
        raise _fail(source, f"{path}: expected {bad.expected}{got}") from None


def _consistent(d: dict) -> None:
    """What the renderers look up by a value exists, and what they divide by a total is a part of it (a share of
    the FLOPs is at most 100%: a part 10**400 times its total is no float)."""
    bundle = d.get("bundle")
    if bundle is not None and "section" in bundle and "sections" in bundle:
        if not any(s.get("index") == bundle["section"] for s in bundle["sections"]):
            raise _at(["bundle", "section"], "the index of one of bundle.sections", bundle["section"])
    total = (d.get("totals") or {}).get("flops")
    if total is None:
        return
    parts = [(["ops", i, "flops"], o.get("flops")) for i, o in enumerate(d.get("ops") or ())
             if o.get("phase", "inference") == "inference"]
    parts += [(["by_op_type", k, "flops"], v.get("flops")) for k, v in (d.get("by_op_type") or {}).items()]
    parts += [(["totals", "by_precision", k, "flops"], v.get("flops"))
              for k, v in (d["totals"].get("by_precision") or {}).items()]
    for path, flops in parts:
        if flops is not None and flops > total:
            raise _at(path, f"at most totals.flops ({total}): a part of the total", flops)


def _at(path: list[Any], expected: str, value: Any) -> _Invalid:
    bad = _Invalid(expected, value)
    bad.path = [f"[{p}]" if type(p) is int else _key(p) for p in reversed(path)]
    return bad


_NAMES = {"integer": "an integer", "number": "a finite number", "string": "a string", "boolean": "true or false",
          "null": "null", "array": "a list", "object": "an object"}
_PY: dict[str, tuple[type, ...]] = {"integer": (int,), "number": (int, float), "string": (str,), "boolean": (bool,),
                                    "null": (type(None),), "array": (list, tuple), "object": (dict,)}


def _is_number(v: Any) -> bool:
    """A finite float, or an int a float can hold (NaN fails both comparisons)."""
    return type(v) in (int, float) and -_FLOAT_MAX <= v <= _FLOAT_MAX


class _Compiler:
    """Turns a (draft 2020-12) schema into a check function: the keywords the report's schema uses (``type``,
    ``properties``, ``additionalProperties``, ``items``, ``$ref``, ``anyOf``, ``const``, ``enum``,
    ``minimum``, and ``required`` but in a record, whose missing key is its default). The checks are closures
    made once, specialised by kind (a leaf, a list, an object): a report of 80,000 ops is checked in about as
    long as it takes to parse."""

    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs
        self.done: dict[str, Check] = {}

    def compile(self, schema: Any, record: str | None = None) -> Check:
        if schema is True or schema == {}:
            return _free
        if "$ref" in schema:
            return self._ref(schema["$ref"].rsplit("/", 1)[-1])
        if "anyOf" in schema:
            return self._any_of(schema["anyOf"])
        if "const" in schema:
            const = schema["const"]

            def is_const(v: Any) -> None:
                if v != const or type(v) is not type(const):
                    raise _Invalid(json.dumps(const), v)
            return is_const
        if "enum" in schema:
            allowed = frozenset(schema["enum"])
            text = "one of " + ", ".join(json.dumps(a) for a in schema["enum"])

            def one_of(v: Any) -> None:
                if type(v) is not str or v not in allowed:
                    raise _Invalid(text, v)
            return one_of
        return self._typed(schema, record)

    def _ref(self, name: str) -> Check:
        if name not in self.done:
            slot: list[Check] = []
            self.done[name] = lambda v: slot[0](v)  # a placeholder against recursion
            slot.append(self.compile(self.defs[name], name))
            self.done[name] = slot[0]
        return self.done[name]

    def _any_of(self, parts: list[Any]) -> Check:
        nullable = {"type": "null"} in parts
        rest = [self.compile(p) for p in parts if p != {"type": "null"}]
        if len(rest) == 1:  # a record or null: the record's own message
            inner = rest[0]

            def record_or_null(v: Any) -> None:
                if v is not None or not nullable:
                    inner(v)
            return record_or_null

        def any_of(v: Any) -> None:
            if v is None and nullable:
                return
            first = None
            for part in rest:
                try:
                    part(v)
                    return
                except _Invalid as bad:
                    first = first or bad
            raise first  # type: ignore[misc]
        return any_of

    def _typed(self, schema: dict[str, Any], record: str | None) -> Check:
        names = schema.get("type")
        names = [names] if isinstance(names, str) else list(names or ())
        accepted = frozenset(t for name in names for t in _PY[name]) or None  # None: any type
        expected = " or ".join(_NAMES[t] for t in names) or "a JSON value"
        minimum = schema.get("minimum")
        if minimum is not None:
            expected = (expected.replace("an integer", f"an integer >= {minimum}")
                        .replace("a finite number", f"a finite number >= {minimum}"))
        if "items" in schema:
            return self._array(accepted, expected, self.compile(schema["items"]))
        if "properties" in schema or "additionalProperties" in schema or record is not None:
            return self._object(schema, record, accepted, expected)
        if names == ["object"] or accepted is None:  # an object the schema leaves free
            def free(v: Any) -> None:
                if accepted is not None and type(v) not in accepted:
                    raise _Invalid(expected, v)
                _free(v)
            return free
        if names == ["integer"] and minimum is None:
            return _INTS
        if minimum is None and "number" not in names:
            def leaf(v: Any) -> None:
                if type(v) not in accepted:
                    raise _Invalid(expected, v)
            return leaf

        float_only = "number" in names and "integer" not in names  # an int there must fit a float

        def amount(v: Any) -> None:
            t = type(v)
            if t not in accepted:
                raise _Invalid(expected, v)
            if (t is float or (t is int and float_only)) and not -_FLOAT_MAX <= v <= _FLOAT_MAX:
                raise _Invalid(expected, v)  # NaN, an infinity (a dict made in Python), an int past a float
            if minimum is not None and (t is int or t is float) and v < minimum:
                raise _Invalid(expected, v)
        return amount

    @staticmethod
    def _array(accepted: frozenset | None, expected: str, items: Check) -> Check:
        if items is _INTS:  # a shape: checked at C speed, the slow path only to name the bad item
            def ints(v: Any) -> None:
                if accepted is not None and type(v) not in accepted:
                    raise _Invalid(expected, v)
                if not set(map(type, v)) <= _INT_TYPE:
                    _each(v, items)
            return ints

        def array(v: Any) -> None:
            if accepted is not None and type(v) not in accepted:
                raise _Invalid(expected, v)
            _each(v, items)
        return array

    def _object(self, schema: dict[str, Any], record: str | None, accepted: frozenset | None, expected: str) -> Check:
        props = {k: self.compile(v) for k, v in schema.get("properties", {}).items()}
        required = () if record is not None else tuple(schema.get("required", ()))  # a record: its defaults
        extra = schema.get("additionalProperties", True)
        if record in _OPEN_SCALARS:
            other: Check | None = _scalar
        elif extra is False:
            other = None
        else:
            other = self.compile(extra)

        def obj(v: Any) -> None:
            if type(v) is not dict:
                if accepted is not None and type(v) not in accepted:
                    raise _Invalid(expected, v)
                return
            for k in required:
                if k not in v:
                    raise _Invalid(f"the key {k!r}", shown=False)
            for k, x in v.items():
                inner = props.get(k, other)
                try:
                    if inner is None:
                        raise _Invalid("no such key (this version does not know it)", shown=False)
                    inner(x)
                except _Invalid as bad:
                    bad.path.append(_key(k))
                    raise
        return obj


def _int_item(v: Any) -> None:
    if type(v) is not int:
        raise _Invalid("an integer", v)


_INTS: Check = _int_item
_INT_TYPE = frozenset({int})


def _each(v: Any, items: Check) -> None:
    for i, x in enumerate(v):
        try:
            items(x)
        except _Invalid as bad:
            bad.path.append(f"[{i}]")
            raise


def _scalar(v: Any) -> None:
    """A value the schema does not name in a record that keeps such keys: a plain, finite value."""
    if not (v is None or type(v) in (str, bool) or _is_number(v)):
        raise _Invalid("a string, a finite number, true, false or null", v)


def _free(v: Any) -> None:
    """A value the schema leaves free: at most FREE_DEPTH levels, finite numbers (iterative: any depth is safe)."""
    stack: list[tuple[Any, int, list[str]]] = [(v, 0, [])]
    while stack:
        x, depth, path = stack.pop()
        t = type(x)
        if t is dict or t is list or t is tuple:
            if depth >= FREE_DEPTH:
                bad = _Invalid(f"at most {FREE_DEPTH} levels of nesting here", shown=False)
                bad.path = list(reversed(path))
                raise bad
            pairs = x.items() if t is dict else enumerate(x)
            for k, y in pairs:
                if type(y) in (dict, list, tuple, float, int):
                    stack.append((y, depth + 1, path + [_key(k) if t is dict else f"[{k}]"]))
        elif t is float or t is int:
            if not _is_number(x):
                bad = _Invalid("a finite number", x)
                bad.path = list(reversed(path))
                raise bad
        elif not (x is None or t is str or t is bool or isinstance(x, (str, int, float))):
            bad = _Invalid("a JSON value", x)
            bad.path = list(reversed(path))
            raise bad


# ---- messages ----------------------------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _key(k: Any) -> str:
    """``.name``, or ``["odd key"]`` for a key that is not an identifier (clipped)."""
    if isinstance(k, str) and _IDENTIFIER.match(k) and len(k) <= 64:
        return f".{k}"
    return f"[{_clip(json.dumps(k, ensure_ascii=True) if isinstance(k, str) else repr(k), 64)}]"


def _kind(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(v), type(v).__name__)


def _show(v: Any) -> str:
    """A value as JSON writes it, clipped: ``"x"``, ``-1``, ``1.5``, ``a list``."""
    if isinstance(v, (dict, list, tuple)):
        return _kind(v if not isinstance(v, tuple) else list(v))
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10**20:
        return f"an integer of {len(str(abs(v)))} digits"
    try:
        return _clip(json.dumps(v, ensure_ascii=True), 60)
    except (TypeError, ValueError):
        return type(v).__name__


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"
