"""The registry of interpreter adapters: one module per runtime in this package, found at import.

An adapter names its runtime, says how to install it and loads it lazily (static analysis never
imports a runtime); it may also load the TFLite schema module the runtime ships, which
:mod:`tflite_flops.measure.model_writer` writes single-op and probe models with. ``--runtime`` offers
:func:`names` in registration order (the first one is the default); :mod:`tflite_flops.measure.runtime`
builds interpreters through :func:`get`. Adding a runtime is one module here that calls
:func:`register` (see docs/contributing.md).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Any, Callable

from ...errors import RuntimeMissingError, RuntimeUnavailableError


@dataclass(frozen=True)
class Loaded:
    """What an adapter's ``load`` returns: the runtime's Interpreter class, its OpResolverType enum
    (``BUILTIN_WITHOUT_DEFAULT_DELEGATES`` turns XNNPACK off) and its version string."""

    interpreter: Any
    op_resolver_type: Any
    version: str


@dataclass(frozen=True)
class RuntimeAdapter:
    """One interpreter runtime.

    Attributes:
        name: the ``--runtime`` value.
        install_hint: how to install it, for the "not installed" message.
        load: imports the runtime and returns :class:`Loaded`; raises ImportError when it is missing.
        order: position among the ``--runtime`` choices (lowest first, the default).
        schema: imports the generated TFLite schema module the runtime ships, with the object API
            (``ModelT``, ``Pack``); raises ImportError when it is missing. None: it ships none.
    """

    name: str
    install_hint: str
    load: Callable[[], Loaded]
    order: int = 100
    schema: Callable[[], Any] | None = None


_ADAPTERS: dict[str, RuntimeAdapter] = {}


def register(adapter: RuntimeAdapter) -> RuntimeAdapter:
    """Add an adapter; a second adapter of the same name raises ValueError."""
    if adapter.name in _ADAPTERS:
        raise ValueError(f"runtime {adapter.name!r} is already registered")
    _ADAPTERS[adapter.name] = adapter
    return adapter


def _discover() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        importlib.import_module(f"{__name__}.{info.name}")


def names() -> tuple[str, ...]:
    """The registered runtimes, the default first."""
    return tuple(a.name for a in sorted(_ADAPTERS.values(), key=lambda a: (a.order, a.name)))


def get(name: str) -> RuntimeAdapter:
    """The adapter of ``name``; raises RuntimeUnavailableError for an unknown one."""
    try:
        return _ADAPTERS[name]
    except KeyError:
        raise RuntimeUnavailableError(f"unknown runtime {name!r} (choose {', '.join(names())})") from None


def load(name: str) -> Loaded:
    """Import runtime ``name``; raises RuntimeMissingError (with the install hint) when it is not installed."""
    adapter = get(name)
    try:
        return adapter.load()
    except ImportError as exc:
        raise RuntimeMissingError(
            f"runtime {name!r} is not installed ({exc}); install it with {adapter.install_hint}") from exc


def schema_module(name: str) -> Any:
    """The TFLite schema module (object API) to write models with when timing on runtime ``name``.

    The one that runtime ships; for a runtime that ships none (or whose module is missing), the
    first installed one of the other runtimes, in ``--runtime`` order.

    Raises:
        RuntimeUnavailableError: ``name`` is not a registered runtime.
        RuntimeMissingError: no installed runtime ships the schema module.
    """
    first = get(name)
    writers = [a for a in (first, *(get(n) for n in names() if n != name)) if a.schema is not None]
    for adapter in writers:
        try:
            return adapter.schema()  # type: ignore[misc]
        except ImportError:
            continue
    hints = " or ".join(f"{a.name} ({a.install_hint})" for a in writers)
    raise RuntimeMissingError(f"per-op timing and the roofline write small models with the TFLite schema module "
                              f"of a runtime, and none is installed: install {hints or 'a runtime that ships one'}")


_discover()
