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


# An item whose known saving is under this share of the model's time (or under FOLD_MS when the time is not known)
# saves nothing worth a line of its own: such items are folded into one line (Lighthouse hides them likewise).
FOLD_SHARE = 0.01
FOLD_MS = 0.001


def advice_lines(items: Sequence[Advice], model_ms: float | None = None) -> list[str]:
    """One line per item, the largest saving first (items without a known saving after, in their order); the items
    whose saving is under :data:`FOLD_SHARE` of ``model_ms`` (the model's measured or predicted time; without it,
    under :data:`FOLD_MS`) folded into one last line that names them."""
    ranked = sorted(range(len(items)), key=lambda i: (items[i].saving_ms is None, -(items[i].saving_ms or 0), i))
    floor = FOLD_SHARE * model_ms if model_ms else FOLD_MS
    small = [i for i in ranked if items[i].saving_ms is not None and items[i].saving_ms < floor]
    lines = [advice_line(items[i]) for i in ranked if i not in small]
    if small:
        kinds = ", ".join(dict.fromkeys(items[i].kind for i in small))
        lines.append(f"[{len(small)} more] change(s) that save under {floor:.2g} ms each ({kinds}): see the JSON")
    return lines


def advice_html(items: Sequence[Advice], model_ms: float | None = None) -> str:
    """The advice section of an HTML page ('' when there is none)."""
    if not items:
        return ""
    rows = "".join(f"<li>{esc(line)}</li>" for line in advice_lines(items, model_ms))
    return f'<section id="advice"><h2>{TITLE}</h2><ul class="advice">{rows}</ul></section>'
