"""The what-if rows (``report.what_if``) as every output shows them: one compact table, "What if you convert it"."""

from __future__ import annotations

from typing import Sequence

from ..report.what_if import WhatIf
from ..units import human_bytes
from .charts import esc

TITLE = "What if you convert it (predicted, nothing converted)"
HEADERS = ["variant", "predicted", "memory", "XNNPACK ops", "partitions", "GPU ops", "GPU partitions", "changes"]
RIGHT = [False, True, True, True, True, True, True, False]


def _count(n: int | None) -> str:
    return "-" if n is None else str(n)


def _ms(w: WhatIf) -> str:
    if w.predicted_ms is None:
        return "-"
    return f"{w.predicted_ms:.3f} ms" + ("" if w.prediction_complete is not False else " (partial)")


def what_if_rows(rows: Sequence[WhatIf]) -> list[list[str]]:
    """One line of text cells per variant (HEADERS): its time, memory headline, placement, and what changes."""
    return [[w.label, _ms(w), "-" if w.memory_bytes is None else human_bytes(w.memory_bytes),
             f"{_count(w.xnnpack_delegated)}/{w.ops}" if w.xnnpack_delegated is not None else "-",
             _count(w.xnnpack_partitions), f"{_count(w.gpu_delegated)}/{w.ops}" if w.gpu_delegated is not None else "-",
             _count(w.gpu_partitions), "; ".join(w.changes) or "-"] for w in rows]


def what_if_html(rows: Sequence[WhatIf], labels: Sequence[str] = (), title: str = TITLE) -> str:
    """The what-if section of an HTML page ('' when there is none); ``labels``: a first column naming each row."""
    if not rows:
        return ""
    heads = (["", *HEADERS] if labels else HEADERS)
    right = ([False, *RIGHT] if labels else RIGHT)
    cells = [[label, *row] for label, row in zip(labels, what_if_rows(rows))] if labels else what_if_rows(rows)
    head = "".join(f"<th>{esc(h)}</th>" for h in heads)
    body = "".join("<tr>" + "".join(f'<td class="n">{esc(c)}</td>' if r else f"<td>{esc(c)}</td>"
                                    for c, r in zip(row, right)) + "</tr>" for row in cells)
    return (f'<section id="what-if"><h2>{esc(title)}</h2><table class="what-if"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></section>")
