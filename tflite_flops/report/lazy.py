"""Report fields computed at their first read: the model file's hash, and the sections no caller asked for yet.

Pay for what you use: :func:`tflite_flops.analyze` returns a Report whose costly sections are :class:`Deferred`
until their first read (a renderer, ``to_dict``, ``==``, pickling), which computes them once and keeps the
value: the delegates' placement and the memory plan (the report's ``delegation`` and ``memory``, and their
per-op figures, each a :class:`DeferredColumn` that every record shares), within the memory TFLite Micro's
arena and XNNPACK's memory with the arena it leaves, the advice, and the warnings those may add. The fields
that may hold one are named by :func:`lazy_fields` on their dataclass.
To everything else the field is a plain value: ``dataclasses.replace``, equality, ``to_dict``, ``repr``,
pickling and copying see the figures an eager analysis gives. :func:`replace` is
``dataclasses.replace`` that keeps the fields not yet computed deferred.
"""

from __future__ import annotations

import dataclasses
import gc
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
            self._value = _collector_paused(self._make)  # type: ignore[arg-type]
            self._make = None  # what it held (the model, the walk) is freed
        return self._value

    @property
    def done(self) -> bool:
        """Whether the value is computed."""
        return self._value is not _UNSET

    def __reduce__(self) -> tuple[Any, tuple[Any]]:
        return _value_of, (self.get(),)


def _collector_paused(make: Callable[[], Any]) -> Any:
    """``make()`` with Python's cyclic garbage collector paused, as the analysis that deferred it ran
    (``analysis.run.collector_paused``): a deferred pass allocates per-op tuples and records that reference
    counting frees, and the collector's full passes over them and the report would find nothing to free
    (on a 100,000-op model they were half of the passes' time). Any cycle is collected after."""
    if not gc.isenabled():
        return make()
    gc.disable()
    try:
        return make()
    finally:
        gc.enable()


def _value_of(value: Any) -> Any:
    return value


class DeferredColumn:
    """One per-op figure of every op, computed by a pass at the first read of it on any op: a
    :class:`Deferred` ``{(subgraph, op index): value}`` that every record shares (an op it lacks: None).
    Pickled as the computed values (once per pickle: the records share it)."""

    __slots__ = ("values", "_table")

    def __init__(self, values: Deferred) -> None:
        self.values = values
        self._table: Any = None  # the values once computed

    def of(self, op: Any) -> Any:
        """The value of the record ``op`` (its ``subgraph`` and ``index``)."""
        table = self._table
        if table is None:
            table = self._table = self.values.get()
        return table.get((op.subgraph, op.index))

    def __reduce__(self) -> tuple[Any, tuple[Any]]:
        return _computed_column, (self.values.get(),)


def _computed_column(values: Any) -> DeferredColumn:
    done = Deferred(lambda: values)
    done.get()
    return DeferredColumn(done)


class LazyField:
    """A dataclass field that may hold a :class:`Deferred` (or a :class:`DeferredColumn`), computed at the first
    read of the field. Installed by :func:`lazy_fields` on a dataclass whose fields keep their declared defaults;
    the value lives in the instance's ``__dict__`` under ``_<name>``.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name, self.slot = name, f"_{name}"

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__[self.slot]
        kind = type(value)
        if kind is Deferred:
            value = value.get()
            obj.__dict__[self.slot] = value  # a cache of the same value: the dataclass stays frozen
        elif kind is DeferredColumn:
            value = value.of(obj)
            obj.__dict__[self.slot] = value
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.slot] = value


def lazy_fields(*names: str) -> Callable[[type], type]:
    """Class decorator, above ``@dataclass``: the fields ``names`` may be given a :class:`Deferred` (a
    :class:`DeferredColumn`), computed at their first read. Their defaults and factories stay the dataclass'."""
    def install(cls: type) -> type:
        known = {f.name for f in dataclasses.fields(cls)}
        for name in names:
            if name not in known:
                raise TypeError(f"{cls.__name__} has no field {name!r}")
            holder = LazyField()
            holder.__set_name__(cls, name)
            setattr(cls, name, holder)
        return cls
    return install


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
    """The names of ``obj``'s fields that hold a :class:`Deferred` (a :class:`DeferredColumn`) not computed yet
    (the tests count work)."""
    out = []
    for f in dataclasses.fields(obj):
        value = raw(obj, f.name)
        if type(value) is DeferredColumn:
            value = value.values
        if type(value) is Deferred and not value.done:
            out.append(f.name)
    return out
