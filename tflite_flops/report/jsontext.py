"""Indented JSON text, byte for byte what ``json.dumps(value, indent=2, ensure_ascii=False)`` writes, faster.

The standard library encodes indented JSON in pure Python (its C encoder takes no indent before Python
3.13), through nested generators that yield one small string per token. A report of a large model is
most of its ops' dicts, whose keys repeat and whose values are flat scalars and short lists of ints
(shapes), so this writer:

* joins the lines of a list or dict with ``str.join`` instead of yielding token by token;
* encodes each key once (a dict keyed by the key string) and each short list of ints at once;
* can encode the items of a long list one by one (:func:`dumps_with_list`), so that a caller never
  holds every op's dict at the same time, only their text, joined once.

Only JSON-ready values are accepted (dict with string keys, list, tuple, str, int, float, bool, None), as
``Report.to_dict`` produces; anything else raises TypeError, as ``json.dumps`` would. Floats follow
``json.dumps``' defaults (``allow_nan``: NaN and infinities written as ``NaN``, ``Infinity``).
``tests/test_jsontext.py`` holds it to ``json.dumps`` on every sample's report and on random values.
"""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any, Callable, Iterable, Mapping

PLAIN = (int, float, str, bool, type(None))  # JSON-ready as they are (a bool is an int: listed for clarity)
_encode_str: Callable[[str], str] = json.encoder.encode_basestring  # type: ignore[attr-defined]
_INT_REPR = int.__repr__
_FLOAT_REPR = float.__repr__
_INDENTS = ["\n" + "  " * i for i in range(64)]
_KEYS: dict[str, str] = {}  # key -> '"key": ', shared by every call (keys are few: field names)
_MAX_KEYS = 65_536  # the cache stops growing here (a report's keys are field names, but a model names its own)


def _indent(level: int) -> str:
    return _INDENTS[level] if level < len(_INDENTS) else "\n" + "  " * level


def _key(k: Any) -> str:
    text = _KEYS.get(k) if type(k) is str else None
    if text is None:
        if isinstance(k, str):
            text = _encode_str(k) + ": "
            if len(_KEYS) < _MAX_KEYS:
                _KEYS[k] = text
            return text
        if k is True or k is False or k is None:  # as json.dumps converts keys
            return ('"true": ' if k else '"false": ') if k is not None else '"null": '
        if isinstance(k, int):
            return '"' + _INT_REPR(k) + '": '
        if isinstance(k, float):
            return '"' + _float(k) + '": '
        raise TypeError(f"keys must be str, int, float, bool or None, not {type(k).__name__}")
    return text


def _float(v: float) -> str:
    if v != v:
        return "NaN"
    if v == float("inf"):
        return "Infinity"
    if v == -float("inf"):
        return "-Infinity"
    return _FLOAT_REPR(v)


class _Raw(str):
    """Text already encoded: written as it is (the slot marker of :func:`dumps_with_list`)."""


def _encode(v: Any, level: int) -> str:
    t = type(v)
    if t is str:
        return _encode_str(v)
    if t is _Raw:
        return v
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if t is int:
        return _INT_REPR(v)
    if t is float:
        return _float(v)
    if t is list or t is tuple:
        if not v:
            return "[]"
        inner = _indent(level + 1)
        if all(type(x) is int for x in v):  # a shape: the common case
            return "[" + inner + ("," + inner).join(map(_INT_REPR, v)) + _indent(level) + "]"
        return "[" + inner + ("," + inner).join([_encode(x, level + 1) for x in v]) + _indent(level) + "]"
    if t is dict:
        if not v:
            return "{}"
        inner = _indent(level + 1)
        return ("{" + inner + ("," + inner).join([_key(k) + _encode(x, level + 1) for k, x in v.items()])
                + _indent(level) + "}")
    if isinstance(v, int):  # an int subclass (IntEnum): json.dumps writes its int value
        return _INT_REPR(v)
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, str):
        return _encode_str(v)
    if isinstance(v, (list, tuple)):
        return _encode(list(v), level)
    if isinstance(v, dict):
        return _encode(dict(v), level)
    raise TypeError(f"Object of type {t.__name__} is not JSON serializable")


def dumps(value: Any, level: int = 0) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)``, written as if ``value`` sat ``level`` levels deep
    (its lines after the first indented by ``2 * level`` spaces)."""
    return _encode(value, level)


def dumps_with_list(value: dict, key: str, items: Iterable[Any], end: str = "") -> str:
    """``dumps(value) + end``, with ``value[key]`` the list of ``items``, each encoded and dropped in turn:
    the text is joined once, and no list of every item is held."""
    marker = "\0"  # never in encoded JSON text: a NUL in a string or key is written \u0000
    before, after = _encode({**value, key: _Raw(marker)}, 0).split(marker)
    inner = _indent(2)
    parts = [before, "["]
    for item in items:
        parts.append(inner)
        parts.append(_encode(item, 2))
        parts.append(",")
    if len(parts) == 2:
        parts.append("]")
    else:
        parts[-1] = _indent(1) + "]"
    parts.append(after)
    parts.append(end)
    return "".join(parts)


def jsonable(value: Any) -> Any:
    """``value`` with its mappings as dicts of str keys, its tuples as lists and NumPy scalars as Python
    numbers: what ``json.dumps`` (and :func:`dumps`) take."""
    t = type(value)
    if t in PLAIN:
        return value
    if t is tuple or t is list:  # the common case first (shapes): typing.Mapping's isinstance is slow
        return [v if type(v) in PLAIN else jsonable(v) for v in value]
    if t is dict or isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # a stray NumPy scalar
        return value.item()
    return value


def sparse_dict(record: Any, keep_none: tuple[str, ...] = ()) -> dict[str, Any]:
    """The fields of ``record`` that are set (not None, or named in ``keep_none``), in declaration
    order, then its ``extra`` keys: the JSON form of a record whose keys depend on what was measured."""
    out = {f.name: getattr(record, f.name) for f in fields(record)
           if f.name != "extra" and (getattr(record, f.name) is not None or f.name in keep_none)}
    out.update(getattr(record, "extra", None) or {})
    return out


def split_known(cls: type, d: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``d`` split into the fields of ``cls`` and the rest (keys of a newer version: kept, not lost)."""
    names = {f.name for f in fields(cls)} - {"extra"}
    return {k: v for k, v in d.items() if k in names}, {k: v for k, v in d.items() if k not in names}


# For a writer that encodes a record's fields itself (report.records' ops): the same pieces dumps uses.
Raw = _Raw  # text already encoded, written as it is by dumps and dumps_with_list
encode = _encode  # (value, level) -> its text
encode_str = _encode_str
int_repr = _INT_REPR
indent = _indent


def key_text(key: Any) -> str:
    """The text of a dict's key as :func:`dumps` writes it, ``": "`` included (its value follows)."""
    return _key(key)
