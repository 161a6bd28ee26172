"""Renderers of the op catalog (:func:`tflite_flops.ops.catalog.catalog` rows): table, csv, md.

The format table is :data:`CATALOG_RENDERERS` (extensions from
:data:`tflite_flops.render.formats.FORMATS`).
"""

from __future__ import annotations

import csv
import io
from typing import Mapping, Sequence

from .formats import RendererTable
from .text import text_table

Row = Mapping[str, str]
COLUMNS = ["code", "op", "status", "formula", "reference", "note"]  # csv and md add "bytes" after "formula"


def _file_columns() -> list[str]:
    cols = list(COLUMNS)
    cols.insert(4, "bytes")
    return cols


def catalog_csv(rows: Sequence[Row]) -> str:
    """One CSV row per op code."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=_file_columns(), lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def catalog_md(rows: Sequence[Row]) -> str:
    """A Markdown table (``|`` in cells escaped)."""
    cols = _file_columns()
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(r[c].replace("|", "\\|") for c in cols) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def catalog_table(rows: Sequence[Row]) -> str:
    """The terminal listing: code, op, status, then the formula and its note; a count per status."""
    # the formula and its note follow the aligned columns unpadded (a line may end in spaces)
    cells = [[r["code"], r["op"], r["status"], r["formula"] + (f"  ({r['note']})" if r["note"] else "")]
             for r in rows]
    lines = text_table(["code", "op", "status"], [["code", "op", "status", "formula  (note)"]] + cells,
                       [True, False, False], rule=False, rstrip=False)[1:]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    lines.append("")
    lines.append(", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    return "\n".join(lines) + "\n"


# format -> (renderer, extensions); the same table serves --format and -o FILE of ``ops``.
CATALOG_RENDERERS: RendererTable[Sequence[Row]] = RendererTable("the op catalog", {
    "table": catalog_table,
    "csv": catalog_csv,
    "md": catalog_md,
})


def catalog_format_for_path(path: str) -> str:
    """The catalog format an output file's extension selects."""
    return CATALOG_RENDERERS.for_path(path)


def render_catalog(rows: Sequence[Row], fmt: str = "table") -> str:
    """The catalog rows in ``fmt``."""
    return CATALOG_RENDERERS.render(rows, fmt)
