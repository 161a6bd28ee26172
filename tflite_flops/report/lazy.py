"""Report fields computed at their first read: the model file's hash, and the sections no caller asked for yet.

Pay for what you use: :func:`tflite_flops.analyze` returns a Report whose costly sections that no per-op
record needs (TFLite Micro's arena, XNNPACK's memory and the arena with XNNPACK on, the advice, and the
warnings those may add) are :class:`Deferred`: a field declared with :class:`LazyField` holds one until
the first read (a renderer, ``to_dict``, ``==``, pickling), which computes it once and keeps the value.
To everything else the field is a plain value: ``dataclasses.replace``, equality, ``to_dict``, ``repr``,
pickling and copying see the figures an eager analysis gives. :func:`replace` is
``dataclasses.replace`` that keeps the fields not yet computed deferred.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

EAGER = False  # True: a Deferred computes its value when made (the tests' eager reference)
_UNSET = object()


class LazyText:
    """A dataclass field whose value may be given as a zero-argument callable, called at the first read.

    ``ModelInfo.sha256`` uses it: hashing a multi-GB file costs seconds, so the analysis passes
    a callable and only a reader of the field (a renderer, ``to_dict``, ``==``) pays for it;
    the result then replaces the callable. To everything else the field is a plain ``str``.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = f"_{name}"

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            raise AttributeError(self._slot[1:])  # no class-level default: the field stays required
        value = obj.__dict__[self._slot]
        if callable(value):
            value = value()
            obj.__dict__[self._slot] = value  # a cache of the same value: the dataclass stays frozen
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self._slot] = value


class Deferred:
    """A value computed by a zero-argument function at its first :meth:`get`, once; shared by every copy
    of the record that holds it. Pickled (batch workers, ``copy``) as its value."""

    __slots__ = ("_make", "_value")

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make: Callable[[], Any] | None = make
        self._value: Any = _UNSET
        if EAGER:
            self.get()

    def get(self) -> Any:
        """The value: computed at the first call (a function that raises is called again next time)."""
        if self._value is _UNSET:
            self._value = self._make()  # type: ignore[misc]
            self._make = None  # what it held (the model, the walk) is freed
        return self._value

    @property
    def done(self) -> bool:
        """Whether the value is computed."""
        return self._value is not _UNSET

    def __reduce__(self) -> tuple[Any, tuple[Any]]:
        return _value_of, (self.get(),)


def _value_of(value: Any) -> Any:
    return value


_NO_DEFAULT = object()


class LazyField:
    """A dataclass field that may hold a :class:`Deferred`, computed at the first read of the field.

    Declared as the field's default (``memory: MemorySummary | None = LazyField(None)``; ``LazyField()``:
    a required field). The value lives in the instance's ``__dict__`` under ``_<name>``.
    """

    def __init__(self, default: Any = _NO_DEFAULT) -> None:
        self._default = default

    def __set_name__(self, owner: type, name: str) -> None:
        self._name, self.slot = name, f"_{name}"

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            if self._default is _NO_DEFAULT:
                raise AttributeError(self._name)  # no class-level default: the field stays required
            return self._default  # the dataclass' default
        value = obj.__dict__[self.slot]
        if type(value) is Deferred:
            value = value.get()
            obj.__dict__[self.slot] = value  # a cache of the same value: the dataclass stays frozen
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.slot] = value


def raw(obj: Any, name: str) -> Any:
    """The field ``name`` of ``obj`` as stored: a :class:`Deferred` not computed yet stays one."""
    holder = type(obj).__dict__.get(name)
    if isinstance(holder, (LazyField, LazyText)):
        return obj.__dict__[f"_{name}"]
    return getattr(obj, name)


def replace(obj: Any, **changes: Any) -> Any:
    """``dataclasses.replace(obj, **changes)`` that computes none of the fields still deferred: the copy
    holds the same :class:`Deferred` (computed once for both)."""
    for f in dataclasses.fields(obj):
        if f.init and f.name not in changes:
            changes[f.name] = raw(obj, f.name)
    return type(obj)(**changes)


def pending(obj: Any) -> list[str]:
    """The names of ``obj``'s fields that hold a :class:`Deferred` not computed yet (the tests count work)."""
    out = []
    for f in dataclasses.fields(obj):
        value = raw(obj, f.name)
        if type(value) is Deferred and not value.done:
            out.append(f.name)
    return out
