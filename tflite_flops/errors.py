"""Exception hierarchy: one base class, caught by the CLI and printed as one line."""

from __future__ import annotations


class TfliteFlopsError(Exception):
    """Base class of every error this package raises on purpose."""

    exit_code = 1


class ModelLoadError(TfliteFlopsError):
    """The model cannot be opened: missing file, a directory, unreadable, empty."""


class ModelFormatError(TfliteFlopsError):
    """The bytes are not a valid TFLite flatbuffer (bad identifier, truncated, corrupted)."""


class ReportFormatError(ModelFormatError, ValueError):
    """Text that is not a tflite_flops JSON report (``Report.from_json``); also a ``ValueError``."""


class ShapeError(TfliteFlopsError):
    """Shapes do not fit an op, or a user-given input shape contradicts the model."""


class InputSpecError(TfliteFlopsError):
    """A user-supplied option (input shape spec, budget value, ...) cannot be parsed."""

    exit_code = 2


class InputShapeError(ShapeError, InputSpecError):
    """A user-given input shape that the model refuses (a wrong rank, a dim the model fixes): a ``ShapeError``
    and, like an unknown input name, an input error (exit 2)."""

    exit_code = 2


class UnsupportedOpError(TfliteFlopsError):
    """An op has no cost formula and strict mode is on."""


class RuntimeUnavailableError(TfliteFlopsError):
    """No interpreter runtime is installed, or it cannot load the model."""


class OutputFormatError(TfliteFlopsError):
    """An unknown output format or an output file that cannot be written."""

    exit_code = 2


class RuntimeMissingError(RuntimeUnavailableError):
    """The requested interpreter package is not installed.

    Raised by ``tflite_flops.analyze(..., latency=True)``, it carries the static report in ``report``
    (None when raised before the analysis): nothing the analysis found is lost.
    """

    report: object = None


class ProfileMismatchError(TfliteFlopsError):
    """An imported device profile was taken of a different model (graph name or op types differ)."""
