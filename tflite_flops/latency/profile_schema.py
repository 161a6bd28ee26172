"""The file format of a device profile: its schema (every field's type and declared range), the reader that
checks a profile's JSON against it, and the error of a profile that cannot be read.

:meth:`tflite_flops.latency.profile.DeviceProfile.from_dict` reads a profile's JSON through :class:`FieldReader`:
each field is checked for its type, each number against its :data:`PROFILE_SCHEMA` range (finite, of its sign,
within what a machine allows), each string for control characters and length, each list and object for its
count, before any figure uses a value. A field that fails is one :class:`ProfileError` line naming the file, the
field and what it must be. The caps on the file (:data:`PROFILE_FILE_CAP`) and on its counts are here too.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import TfliteFlopsError
from ..files import MiB, read_capped
from ..units import printable

JSON_FILE_CAP = 256 * MiB  # a calibration pack's manifest
PROFILE_FILE_CAP = 2 * MiB  # a device profile: a full calibration is well under 1 MiB (docs/predict.md)


class ProfileError(TfliteFlopsError):
    """A device profile that cannot be read: missing, not JSON, not a profile, or of another version."""


def read_json(path: str, missing: str, what: str, cap: int = JSON_FILE_CAP) -> Any:
    """The JSON document in ``path`` (at most ``cap`` bytes); ProfileError with ``missing`` when there is no such
    file, else one line naming ``what`` (a device profile, a calibration pack's manifest) and why it cannot be read."""
    try:
        return json.loads(read_capped(path, cap, "r", encoding="utf-8"))
    except FileNotFoundError:
        raise ProfileError(missing) from None
    except json.JSONDecodeError as exc:
        raise ProfileError(f"{path}: not {what} (invalid JSON at line {exc.lineno})") from None
    except ValueError as exc:  # an integer of more digits than Python converts (sys.get_int_max_str_digits)
        raise ProfileError(f"{path}: not {what} ({str(exc).split(':')[0]})") from None
    except RecursionError:
        raise ProfileError(f"{path}: not {what} (its JSON is nested too deeply)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError(f"{path}: cannot read {what} ({exc})") from None


# ---- the schema of a device profile's JSON -------------------------------------------------------------------------
# Every number a profile holds has a declared range (finite; of its sign; within what a machine allows, with a wide
# margin), checked when the profile is read, so that no figure made from it can overflow: a coefficient at most
# COEF_US_MAX times the largest feature an op can have (a float) and an op's time is checked finite where it is
# predicted (predict.OP_US_MAX). A value out of its range is one line naming the file, the field and the range.

COEF_US_MAX = 1e6  # µs per unit of any feature (per op, MAC, byte, trip): a second; fits give ~1e-3 per MAC
TIME_US_MAX = 1e7  # µs of an overhead or of a reference point's median: ten seconds
REFERENCE_US_MIN = 1e-3  # µs: no reference point runs in less than a nanosecond (a drift is now / then)
LOG_RANGE_MAX = 10.0  # |ln(measured / predicted)| of a law's range: e^10 ≈ 22,000 times either way
CACHE_BYTES_MAX = 1 << 40  # a cache one core sees: 1 TiB
DISTANCE_MAX = 1 << 50  # a reuse distance on a cache curve: 1 PiB
FEATURE_MAX = 1e30  # an end of a law's fitted domain (MACs, bytes, elements of the calibration points)
NAME_MAX = 256  # characters of a name (CPU, runtime, version, law family, feature, ...)
NOTE_MAX = 65_536  # characters of one note
LAWS_MAX, TERMS_MAX, NOTES_MAX = 10_000, 64, 1_000  # laws; coefficients (and domain entries) a law; notes
CURVE_ROWS_MAX, CURVES_MAX, REFERENCE_MAX, CACHES_MAX = 1_024, 64, 10_000, 16


@dataclass(frozen=True)
class Bound:
    """The range of one numeric field: ``lo <= value <= hi`` (``<`` at an open end), an integer when ``integer``."""

    lo: float
    hi: float
    unit: str
    integer: bool = False
    open_ends: bool = False

    def holds(self, value: float) -> bool:
        """Whether ``value`` (finite or not, an int of any size) is in range."""
        if self.open_ends:
            return self.lo < value < self.hi
        return self.lo <= value <= self.hi  # False for NaN

    def text(self) -> str:
        """"an integer from 1 to 65,536 (threads)"."""
        what = "an integer" if self.integer else "a number"
        lo, hi = (f"{v:,}" if self.integer else f"{v:g}" for v in (self.lo, self.hi))
        ends = f"between {lo} and {hi}" if self.open_ends else f"from {lo} to {hi}"
        return f"{what} {ends} ({self.unit})"


# the numeric fields of a profile, by JSON path ("*": any key, "[]": any index); docs: the profiles section of
# docs/contributing.md
PROFILE_SCHEMA: Mapping[str, Bound] = {
    "machine.cores": Bound(1, 65_536, "cores", integer=True),
    "machine.threads": Bound(1, 65_536, "threads", integer=True),
    "machine.caches.*": Bound(0, CACHE_BYTES_MAX, "bytes one core sees", integer=True),
    "invoke_overhead_us": Bound(0, TIME_US_MAX, "µs per invoke"),
    "partition_overhead_us": Bound(0, TIME_US_MAX, "µs per partition run"),
    "laws[].coefficients.*": Bound(0, COEF_US_MAX, "µs per unit of the feature"),
    "laws[].log_low": Bound(-LOG_RANGE_MAX, LOG_RANGE_MAX, "ln of measured / predicted"),
    "laws[].log_high": Bound(-LOG_RANGE_MAX, LOG_RANGE_MAX, "ln of measured / predicted"),
    "laws[].points": Bound(0, 1_000_000_000, "calibration points", integer=True),
    "laws[].median_abs_error": Bound(0, 1e6, "|measured / predicted - 1|"),
    "laws[].domain.*[]": Bound(0, FEATURE_MAX, "the feature's value"),
    "range_rate": Bound(0, 1, "the range's nominal coverage", open_ends=True),
    "cache_curve[][0]": Bound(0, DISTANCE_MAX, "bytes of reuse distance", integer=True),
    "cache_curve[][1]": Bound(0, COEF_US_MAX, "µs per byte"),
    "cache_curve[][2]": Bound(0, TIME_US_MAX, "µs per op"),
    "cache_curve[][3]": Bound(0, TIME_US_MAX, "µs per invoke"),
    "reference.*": Bound(REFERENCE_US_MIN, TIME_US_MAX, "µs, a reference point's median"),
}
CURVE_FIELDS = ("cache_curve[][0]", "cache_curve[][1]", "cache_curve[][2]", "cache_curve[][3]")


def kind_of(value: Any) -> str:
    """What a JSON value is, in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return {str: "a string", list: "a list", dict: "an object", int: "an integer", float: "a number"}.get(
        type(value), type(value).__name__)


def echo(value: Any) -> str:
    """``value`` as an error line shows it: short, never a 400-digit integer or a control character."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        if abs(value) < 10**15:
            return repr(value)
        return f"an integer of {len(str(value)) if value.bit_length() < 14_000 else 'thousands of'} digits"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:40] + "…")
    return kind_of(value)


class FieldReader:
    """Reads the fields of a profile's JSON, each checked for its type (and a number for its PROFILE_SCHEMA range);
    a field that fails is one ProfileError naming the file, the field and what it must be."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, path: str, why: str, malformed: bool = True) -> ProfileError:
        head = "malformed device profile" if malformed else "device profile out of range"
        return ProfileError(f"{self.where}: {head}: {path} {why}")

    def _get(self, d: Any, key: str, path: str, required: bool) -> Any:
        if not isinstance(d, dict):  # a JSON object (a dict: faster to test than Mapping)
            raise self.fail(path.rsplit(".", 1)[0] if "." in path else path, f"is {kind_of(d)}, not an object")
        if key not in d and required:
            raise self.fail(path, "is missing")
        return d.get(key)

    def obj(self, d: Any, key: str, path: str, required: bool = False) -> Mapping[str, Any]:
        value = self._get(d, key, path, required)
        if value is None and not required:
            return {}
        if not isinstance(value, dict):
            raise self.fail(path, f"is {kind_of(value)}, not an object")
        return value

    def items(self, d: Any, key: str, path: str, limit: int) -> list[tuple[str, Any]]:
        """The entries of an object field (at most ``limit``), their keys checked as names."""
        value = self.obj(d, key, path)
        if len(value) > limit:
            raise self.fail(path, f"has {len(value):,} entries (at most {limit:,})")
        return [(self.text(k, f"{path} key", value=True), v) for k, v in value.items()]

    def array(self, d: Any, key: str, path: str, limit: int, required: bool = False) -> list[Any]:
        value = self._get(d, key, path, required)
        if value is None and not required:
            return []
        return self.sequence(value, path, limit)

    def sequence(self, value: Any, path: str, limit: int) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(path, f"is {kind_of(value)}, not a list")
        if len(value) > limit:
            raise self.fail(path, f"has {len(value):,} entries (at most {limit:,})")
        return value

    def text(self, d: Any, key: str = "", path: str = "", required: bool = False, limit: int = NAME_MAX,
             value: bool = False) -> str:
        """A string field of ``d`` ("" when absent and not ``required``), or the string ``d`` itself with
        ``value`` (``key`` is then its path): printable (no control character, which would forge a line of
        the tool's output), at most ``limit`` characters."""
        if value:
            path, s = key, d
        else:
            s = self._get(d, key, path, required)
            if s is None and not required:
                return ""
        if not isinstance(s, str):
            raise self.fail(path, f"is {kind_of(s)}, not a string")
        if len(s) > limit:
            raise self.fail(path, f"has {len(s):,} characters (at most {limit:,})")
        if not s.isprintable() and printable(s) != s:  # isprintable: the quick test (no control character)
            raise self.fail(path, f"is {printable(echo(s))}: a control character (a newline, an escape, a "
                                  "direction override) is not allowed in it")
        return s

    def flag(self, d: Any, key: str, path: str) -> bool:
        value = self._get(d, key, path, True)
        if not isinstance(value, bool):
            raise self.fail(path, f"is {kind_of(value)}, not true or false")
        return value

    def num(self, d: Any, key: str, path: str, field: str | None = None, default: float | None = None) -> Any:
        """A numeric field of ``d`` at ``path`` (its PROFILE_SCHEMA key ``field``, else ``path``); ``default``
        when absent (required when None)."""
        value = self._get(d, key, path, default is None)
        if value is None and default is not None:
            return default
        return self.number(value, path, field or path)

    def number(self, value: Any, path: str, field: str) -> Any:
        """``value`` checked against PROFILE_SCHEMA[field]: an int for an integer field (an integral float too),
        else a float; finite and in range, else one line naming ``path`` and the range."""
        bound = PROFILE_SCHEMA[field]
        kind = type(value)
        if (kind is float or kind is int) and bound.lo <= value <= bound.hi and not bound.open_ends:  # the usual case
            if kind is float and not bound.integer:
                return value
            if kind is int:
                return value if bound.integer else float(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(path, f"is {kind_of(value)}, not {bound.text()}")
        if bound.integer and isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
            raise self.fail(path, f"is {echo(value)}, not {bound.text()}", malformed=False)
        if not bound.holds(value):  # compared as Python numbers: an int of 400 digits is out of range, not an error
            raise self.fail(path, f"is {echo(value)}, out of range: {bound.text()}", malformed=False)
        return int(value) if bound.integer else float(value)


def read_domain(r: FieldReader, dom: Mapping[str, Any], path: str) -> dict[str, tuple[float, float]]:
    """A law's fitted domain (``{feature: [low, high]}``), checked: two numbers in range, low <= high."""
    if len(dom) > TERMS_MAX:
        raise r.fail(path, f"has {len(dom):,} entries (at most {TERMS_MAX})")
    out = {}
    for k, v in dom.items():
        name = r.text(k, f"{path} key", value=True)
        pair = r.sequence(v, f"{path}.{name}", 2)
        if len(pair) != 2:
            raise r.fail(f"{path}.{name}", f"has {len(pair)} value(s), not [low, high]")
        lo = r.number(pair[0], f"{path}.{name}[0]", "laws[].domain.*[]")
        hi = r.number(pair[1], f"{path}.{name}[1]", "laws[].domain.*[]")
        if lo > hi:
            raise r.fail(f"{path}.{name}", f"is [{lo:g}, {hi:g}]: its low end is above its high end", malformed=False)
        out[name] = (lo, hi)
    return out


def read_curve(r: FieldReader, rows: Any, path: str) -> tuple[tuple[int, float, float, float], ...]:
    """A cache curve of its JSON form (``[[distance, us per byte, us per op, us per invoke], ...]``), checked:
    each row four numbers in range, the distances non-decreasing."""
    if rows is None:
        return ()
    out = []
    for i, row in enumerate(r.sequence(rows, path, CURVE_ROWS_MAX)):
        cells = r.sequence(row, f"{path}[{i}]", 4)
        if len(cells) != 4:
            raise r.fail(f"{path}[{i}]", f"has {len(cells)} value(s), not [distance, µs per byte, per op, per invoke]")
        d, b, k, v = (r.number(c, f"{path}[{i}][{j}]", f) for j, (c, f) in enumerate(zip(cells, CURVE_FIELDS)))
        if out and d < out[-1][0]:
            raise r.fail(f"{path}[{i}][0]", f"is {d:,}, below the row before's {out[-1][0]:,}: distances increase",
                         malformed=False)
        out.append((d, b, k, v))
    return tuple(out)
