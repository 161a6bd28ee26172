"""The MAC/FLOP convention, element sizes and the one place where numbers are formatted.

Convention (see docs/conventions.md):

* a MAC is one multiply-accumulate of a contraction (conv, matmul, dot product);
* one MAC is two FLOPs, as TensorFlow's profiler counts (``flops_registry.py``);
* every other arithmetic operation is one FLOP (or one integer OP for integer kernels).

Every count is a Python ``int`` until it is rendered here.
"""

from __future__ import annotations

import math
import re
from typing import Iterable

from .errors import InputSpecError

FLOPS_PER_MAC = 2

# Bits per element of each TFLite TensorType name. STRING, RESOURCE and VARIANT have no
# fixed size; they are counted as 0 bytes (their data is not arithmetic input).
DTYPE_BITS: dict[str, int] = {
    "FLOAT32": 32,
    "FLOAT16": 16,
    "INT32": 32,
    "UINT8": 8,
    "INT64": 64,
    "STRING": 0,
    "BOOL": 8,
    "INT16": 16,
    "COMPLEX64": 64,
    "INT8": 8,
    "FLOAT64": 64,
    "COMPLEX128": 128,
    "UINT64": 64,
    "RESOURCE": 0,
    "VARIANT": 0,
    "UINT32": 32,
    "UINT16": 16,
    "INT4": 4,
    "BFLOAT16": 16,
    "INT2": 2,
    "UINT4": 4,
    "FLOAT8_E4M3FN": 8,
    "FLOAT8_E5M2": 8,
}

FLOAT_DTYPES = frozenset({"FLOAT32", "FLOAT16", "BFLOAT16", "FLOAT64", "COMPLEX64", "COMPLEX128",
                          "FLOAT8_E4M3FN", "FLOAT8_E5M2"})


# Precisions whose arithmetic is floating point; every other (int8, int16, hybrid, …) counts integer OPs.
FLOAT_PRECISIONS = frozenset({"float32", "float16", "bfloat16", "float64"})


def precision_unit(precision: str) -> str:
    """'FLOPs' for float precisions, 'OPs' for integer and hybrid kernels."""
    return "FLOPs" if precision in FLOAT_PRECISIONS else "OPs"


_prod = math.prod


def num_elements(shape: Iterable[int]) -> int:
    """Product of the dims as a Python int (1 for a scalar); negative dims count as 0."""
    if type(shape) is tuple:  # the analysis' shapes: one C-level product (it is called per tensor, per op)
        try:
            if not shape or min(shape) >= 0:
                n = _prod(shape)
                if type(n) is int:
                    return n
        except TypeError:
            pass  # dims that are not numbers: the loop below raises as it always did
    n = 1
    for d in shape:
        n *= int(d) if d > 0 else 0
    return n


def dense_bytes(n: int, dtype: str) -> int:
    """Bytes of ``n`` dense elements of ``dtype``: ceil(n · bits / 8) (packed int4 rounds up)."""
    return (n * DTYPE_BITS.get(dtype, 0) + 7) // 8


def tensor_bytes(shape: Iterable[int], dtype: str) -> int:
    """Bytes of a dense tensor of this shape: :func:`dense_bytes` of its element count."""
    return dense_bytes(num_elements(shape), dtype)


_SUFFIXES = [(10**12, "T"), (10**9, "G"), (10**6, "M"), (10**3, "K")]
_SCIENTIFIC = 10**15  # from here on a count is written 1.234e+15: never divided as a float (10**309 / 10**12 overflows)


def human(n: int | float | None, digits: int = 4) -> str:
    """Format a count with a K/M/G/T suffix: 300_800_000 -> '300.8 M'."""
    if n is None:
        return "-"
    if isinstance(n, float) and not math.isfinite(n):
        return str(n)
    sign = "-" if n < 0 else ""
    a = abs(n)
    if a >= _SCIENTIFIC:  # a thousand T and more (past a float's range too): the leading digits and the power of ten
        text = str(int(a))
        return f"{sign}{text[0]}.{text[1:4]}e+{len(text) - 1}"
    for scale, suffix in _SUFFIXES:
        if a >= scale:
            value = a / scale
            text = f"{value:.{max(digits - len(str(int(value))), 1)}f}"
            if "." in text:
                text = text.rstrip("0").rstrip(".")
            return f"{sign}{text} {suffix}"
    if isinstance(n, float) and not n.is_integer():
        return f"{n:.3g}"
    return f"{sign}{int(a)}"


def grouped(n: int) -> str:
    """Format an int with thousands separators: 10838016 -> '10,838,016'."""
    return f"{int(n):,}"


def human_bytes(n: int | None) -> str:
    """Format a byte count with binary units: 1536 -> '1.5 KiB'."""
    if n is None:
        return "-"
    if abs(n) >= _SCIENTIFIC:  # past a thousand TiB (and a float's range): the count of bytes, in powers of ten
        return f"{human(n)} B"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover


_COUNT_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMgGtT]?)\s*$")
_MULT = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}


def parse_count(text: str) -> int:
    """Parse '300M', '1.5G', '4096' or '2e9' into an int (decimal suffixes)."""
    m = _COUNT_RE.match(str(text))
    if not m:
        raise InputSpecError(f"cannot read {text!r} as a count (use e.g. 300M, 1.5G, 4096)")
    return _finite_int(float(m.group(1)) * _MULT[m.group(2).lower()], text)


_BYTES_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMgGtT]i?)?[bB]?\s*$")
_BYTE_MULT = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12,
              "ki": 2**10, "mi": 2**20, "gi": 2**30, "ti": 2**40}


def parse_bytes(text: str) -> int:
    """Parse '2MiB', '512K', '1.5M', '65536' or '64KB' into bytes (K/M/G decimal, KiB/MiB/GiB binary)."""
    m = _BYTES_RE.match(str(text))
    if not m:
        raise InputSpecError(f"cannot read {text!r} as bytes (use e.g. 512K, 2MiB, 65536)")
    return _finite_int(float(m.group(1)) * _BYTE_MULT[(m.group(2) or "").lower()], text)


def _finite_int(value: float, text: str) -> int:
    """``value`` rounded to an int, or the package's error when it is beyond a float's range ('1e999')."""
    if not math.isfinite(value):
        raise InputSpecError(f"cannot read {text!r}: the number is too large")
    return int(round(value))


def human_unit(n: int | float | None, unit: str) -> str:
    """A count with its unit: 53_890_000_000, 'FLOP/s' -> '53.89 GFLOP/s'; 0, 'OP/s' -> '0 OP/s'."""
    text = human(n)
    return f"{text}{unit}" if text[-1:].isalpha() else f"{text} {unit}"


# C0 and C1 control characters, DEL, and the bidirectional overrides that reorder what a terminal shows
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str, newlines: bool = False) -> str:
    """``text`` safe for a terminal: control characters (escape sequences, carriage returns, newlines unless
    ``newlines``) and bidirectional overrides written as ``\\x1b``, ``\\n``, ``\\u202e``. A tensor name
    or a model's description can hold anything; on a terminal it must neither move the cursor nor start
    a line that looks like the tool's own (``error: ...``)."""

    def escape(m: re.Match) -> str:
        c = m.group(0)
        if c == "\n" and newlines:
            return c
        return c.encode("unicode_escape").decode("ascii") if c in "\n\r\t" else (
            f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")

    return _UNPRINTABLE.sub(escape, text)
