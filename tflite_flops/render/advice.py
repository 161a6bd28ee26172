"""The advice (what to change, with what it saves) as every text output shows it: one item a line.

The items come from the report (``report.advice``, :mod:`tflite_flops.analysis.advice`) or the comparison
(``compare``: a quantized model slower than its float twin); this module only lays them out, as Lighthouse lays
out its opportunities: sorted by saving, those that save little folded into one line.
"""

from __future__ import annotations

from typing import Sequence

from ..report.advice import SHARE_OF, Advice, percent_text, saving_text, share_text, two_digits
from .charts import esc

TITLE = "What to change"


def advice_line(a: Advice) -> str:
    """``[kind] text``: the text says the saving itself (``~0.9 ms predicted``, ``6.9% of the model's bytes
    moved``)."""
    return f"[{a.kind}] {a.text}"


# An item whose time saved is under this share of the model's time (or under FOLD_MS when the time is not known,
# and never FOLD_MS or less), or, without a time, whose share of the figure it is about is under it, saves nothing
# worth a line of its own: such items are folded into one line (Lighthouse hides them likewise).
FOLD_SHARE = 0.01
FOLD_MS = 0.001


def _rank(a: Advice) -> tuple[int, float]:
    """Items with a time saved first (the largest first), then those with a share alone, then neither."""
    if a.saving_ms is not None:
        return 0, -a.saving_ms
    if a.saving_share is not None:
        return 1, -a.saving_share
    return 2, 0.0


def fold_floor_ms(model_ms: float | None) -> float:
    """The time under which an item folds: :data:`FOLD_SHARE` of the model's time, at least :data:`FOLD_MS`."""
    return max(FOLD_SHARE * model_ms, FOLD_MS) if model_ms else FOLD_MS


def _folds(a: Advice, floor_ms: float) -> bool:
    if a.saving_ms is not None:
        return a.saving_ms < floor_ms
    return a.saving_share is not None and a.saving_share < FOLD_SHARE


def ranked(items: Sequence[Advice], model_ms: float | None = None) -> tuple[list[Advice], list[Advice]]:
    """(the items worth a line, largest saving first; the items folded), in the order :func:`advice_lines` shows."""
    order = sorted(range(len(items)), key=lambda i: (_rank(items[i]), i))
    floor = fold_floor_ms(model_ms)
    shown = [items[i] for i in order if not _folds(items[i], floor)]
    folded = [items[i] for i in order if _folds(items[i], floor)]
    return shown, folded


def _folded_line(folded: Sequence[Advice], floor_ms: float) -> str:
    """``[2 more] changes that save under 0.1 ms or 1% of the model's FLOPs each (partitions, ...): see the JSON``."""
    n = len(folded)
    limits = []
    if any(a.saving_ms is not None for a in folded):
        limits.append(f"{two_digits(floor_ms)} ms")
    bases = list(dict.fromkeys(SHARE_OF.get(a.share_of or "", "") for a in folded if a.saving_ms is None))
    if bases:
        limits.append(f"{percent_text(FOLD_SHARE)} of {' or '.join(b for b in bases if b) or 'what it is about'}")
    kinds = ", ".join(dict.fromkeys(a.kind for a in folded))
    return (f"[{n} more] {'changes that save' if n != 1 else 'a change that saves'} under {' or '.join(limits)}"
            f"{' each' if n != 1 else ''} ({kinds}): see the JSON")


def advice_lines(items: Sequence[Advice], model_ms: float | None = None) -> list[str]:
    """One line per item, the largest saving first (a time saved before a share, items without either last, in
    their order); the items whose time saved is under :data:`FOLD_SHARE` of ``model_ms`` (the model's measured or
    predicted time; without it, under :data:`FOLD_MS`), or, without a time, whose share is under
    :data:`FOLD_SHARE`, folded into one last line that names them."""
    shown, folded = ranked(items, model_ms)
    lines = [advice_line(a) for a in shown]
    if folded:
        lines.append(_folded_line(folded, fold_floor_ms(model_ms)))
    return lines


def top_advice(items: Sequence[Advice], model_ms: float | None = None) -> Advice | None:
    """The item that saves the most (the first line of :func:`advice_lines`), None when every item folds."""
    shown, _ = ranked(items, model_ms)
    return shown[0] if shown else None


def saving_parts(a: Advice) -> tuple[str, str]:
    """(the saving in a few characters, what it is): ``("~0.39 ms", "predicted")``, ``("6.9%", "of the model's
    bytes moved")``, ``("", "")`` when the item has neither (a report of an earlier version)."""
    if a.saving_ms is not None and a.saving_source is not None:
        said = saving_text(a.saving_ms, a.saving_source)
        value, _, source = said.rpartition(" ")
        return (value, source) if a.saving_ms > 0 else (said, "")
    said = share_text(a.saving_share, a.share_of)
    value, _, rest = said.partition(" of ")
    return value, f"of {rest}" if rest else ""


def advice_html(items: Sequence[Advice], model_ms: float | None = None) -> str:
    """The advice section of an HTML page ('' when there is none)."""
    if not items:
        return ""
    rows = "".join(f"<li>{esc(line)}</li>" for line in advice_lines(items, model_ms))
    return f'<section id="advice"><h2>{TITLE}</h2><ul class="advice">{rows}</ul></section>'
