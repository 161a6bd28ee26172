"""A dataclass field computed at its first read (the model file's hash)."""

from __future__ import annotations

from typing import Any


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
