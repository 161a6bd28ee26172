"""The advice (what to change, with the time at stake) as every text output shows it: one item a line.

The items come from the report (``report.advice``, :mod:`tflite_flops.analysis.advice`) or the comparison
(``compare``: a quantized model slower than its float twin); this module only lays them out.
"""

from __future__ import annotations

from typing import Sequence

from ..report.advice import Advice
from .charts import esc

TITLE = "What to change"


def advice_line(a: Advice) -> str:
    """``[kind] text``: the text says the time at stake itself (``~0.9 ms predicted``), where known."""
    return f"[{a.kind}] {a.text}"


def advice_lines(items: Sequence[Advice]) -> list[str]:
    """One line per item, the largest saving first (items without a known saving after, in their order)."""
    ranked = sorted(range(len(items)), key=lambda i: (items[i].saving_ms is None, -(items[i].saving_ms or 0), i))
    return [advice_line(items[i]) for i in ranked]


def advice_html(items: Sequence[Advice]) -> str:
    """The advice section of an HTML page ('' when there is none)."""
    if not items:
        return ""
    rows = "".join(f"<li>{esc(line)}</li>" for line in advice_lines(items))
    return f'<section id="advice"><h2>{TITLE}</h2><ul class="advice">{rows}</ul></section>'
