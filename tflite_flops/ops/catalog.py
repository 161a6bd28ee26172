"""The op catalog: every BuiltinOperator code (and registered custom op) with its entry.

Used by ``python -m tflite_flops ops``, the coverage test and docs/conventions.md.
"""

from __future__ import annotations

import csv
import io

from .. import schema
from .registry import supported_ops


# What each bytes model of the registry counts (a formula may override it, e.g. gathers).
BYTES_MODELS = {"io": "R = Σ inputs, W = Σ outputs", "alias": "0 (shares its input buffer)",
                "metadata": "R = 0 (metadata), W = outputs"}


def catalog() -> list[dict[str, str]]:
    """One row per builtin op code, then per registered custom op: code, op, status, formula, bytes, reference, note."""
    specs = supported_ops()
    rows = []
    for code in sorted(schema.BUILTIN_OPS):
        name = schema.BUILTIN_OPS[code]
        spec = specs.get(name)
        rows.append({"code": str(code), "op": name, "status": spec.status if spec else "MISSING",
                     "formula": spec.formula if spec else "", "reference": spec.reference if spec else "",
                     "note": spec.note if spec else "", "bytes": _bytes(spec)})
    for name in sorted(k for k in specs if k.startswith("CUSTOM:")):
        spec = specs[name]
        rows.append({"code": "32", "op": name, "status": spec.status, "formula": spec.formula,
                     "reference": spec.reference, "note": spec.note, "bytes": _bytes(spec)})
    return rows


def _bytes(spec) -> str:
    if spec is None or spec.status == "not_costed":
        return ""
    return BYTES_MODELS.get(spec.bytes_model, spec.bytes_model)


def render_catalog(fmt: str = "table") -> str:
    """The catalog as a text table, CSV or a Markdown table."""
    rows = catalog()
    cols = ["code", "op", "status", "formula", "reference", "note"]
    if fmt in ("csv", "md"):
        cols.insert(4, "bytes")
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        return buf.getvalue()
    if fmt == "md":
        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(r[c].replace("|", "\\|") for c in cols) + " |" for r in rows]
        return "\n".join(lines) + "\n"
    from ..render.text import text_table

    # the formula and its note follow the aligned columns unpadded (a line may end in spaces); as
    # before, the header line reads "formula  (note)" and the first op's note is not shown
    cells = [[r["code"], r["op"], r["status"], r["formula"] + (f"  ({r['note']})" if r["note"] and i else "")]
             for i, r in enumerate(rows)]
    lines = text_table(["code", "op", "status"], [["code", "op", "status", "formula  (note)"]] + cells,
                       [True, False, False], rule=False, rstrip=False)[1:]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    lines.append("")
    lines.append(", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    return "\n".join(lines) + "\n"
