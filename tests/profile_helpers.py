"""Shared by the prediction tests: the runtime version a hand-written device profile claims."""

from __future__ import annotations

from tflite_flops.errors import RuntimeUnavailableError


def installed_version() -> str:
    """The installed LiteRT's version (what a profile is compared with), or any string when none is."""
    from tflite_flops.measure.runtime import runtime_version

    try:
        return runtime_version("litert")
    except RuntimeUnavailableError:
        return "0-no-runtime"
