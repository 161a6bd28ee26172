"""Inline SVG charts for the HTML reports, generated in Python (no JavaScript, no build step).

Each function takes plain numbers and labels and returns one ``<svg>`` element as a string.
Every label and tooltip is escaped here, so callers pass raw model strings. Charts are
static: hovering a mark shows its ``<title>`` tooltip in any browser.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

from ..units import human

# Twelve hues at least 23 CIE76 ΔE apart from each other and from OTHER_COLOR (the former
# "#2f7ebc" next to "#4c78a8" was 9 apart, "#d67195" next to "#b279a2" 19; see tests/test_html_browser.py).
PALETTE = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#eeca3b", "#b279a2", "#ff9da6",
           "#9d755d", "#1f3b73", "#6b3fa0", "#8f9c00")
OTHER_COLOR = "#b8bcc4"
FONT = "font-family=\"system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif\""

Fmt = Callable[[float], str]


def esc(value: object) -> str:
    """HTML/XML-escape any value (quotes too, so it is safe inside attributes)."""
    escape = _ESCAPE
    if escape is None:  # here: a run that writes no HTML never loads the module (1 ms); then kept (a page of a large
        escape = _escape()  # model escapes 300,000 values)
    return escape(str(value), quote=True)


_ESCAPE: Callable[..., str] | None = None


def _escape() -> Callable[..., str]:
    global _ESCAPE
    from html import escape

    _ESCAPE = escape
    return escape


def color_map(keys: Sequence[str]) -> dict[str, str]:
    """A stable colour per key: the first keys get the palette, the rest a neutral grey."""
    return {k: (PALETTE[i] if i < len(PALETTE) else OTHER_COLOR) for i, k in enumerate(keys)}


def _num(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".")


PLOT_MAX = 1e300  # a value past it (a count of 10**373: an int past any float) is drawn at it; its label stays exact


def plot(v: float) -> float:
    """``v`` as the float a chart's geometry uses: clamped to ±:data:`PLOT_MAX` (no OverflowError)."""
    if v != v:
        return 0.0
    return float(v) if -PLOT_MAX <= v <= PLOT_MAX else (PLOT_MAX if v > 0 else -PLOT_MAX)


def _svg_open(width: int, height: int, label: str) -> str:
    return (f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
            f'aria-label="{esc(label)}" xmlns="http://www.w3.org/2000/svg" {FONT} font-size="11">')


_FLOAT_SAFE = 10**300  # an int beyond this is charted with int arithmetic (its float would overflow, issue 44)


def _exponent(n: int) -> int:
    """The k of 10**k <= n < 10**(k+1) for an int n >= 1, without str() (refused past 4,300 digits)."""
    k = max(int((n.bit_length() - 1) * 0.30102999566398120) - 1, 0)
    while 10 ** (k + 1) <= n:
        k += 1
    return k


def finite(v: object) -> bool:
    """Whether ``v`` is a number a chart can draw: a finite float, or an int that a float holds."""
    if isinstance(v, int):
        return -_FLOAT_SAFE < v < _FLOAT_SAFE
    try:
        return math.isfinite(v)  # a float, a NumPy number
    except (TypeError, OverflowError):
        return False


def _int_ticks(lo: int, hi: int, n: int) -> list[int]:
    """:func:`nice_ticks` of ints too large for a float, in exact int arithmetic."""
    raw = max(-(-(hi - lo) // max(n, 1)), 1)
    mag = 10 ** _exponent(raw)
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    ticks = [lo // step * step]
    while ticks[-1] < hi:  # the last tick is at or above hi
        ticks.append(ticks[-1] + step)
    return ticks


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering [lo, hi] (1, 2, 5 × 10^k steps)."""
    if hi <= lo:
        hi = lo + 1
    if isinstance(lo, int) and isinstance(hi, int) and not (-_FLOAT_SAFE < lo and hi < _FLOAT_SAFE):
        return _int_ticks(lo, hi, n)
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks = [round(start, 12)]
    while ticks[-1] < hi - step * 1e-9:  # the last tick is at or above hi
        ticks.append(round(ticks[-1] + step, 12))
    return ticks


def log_ticks(lo: float, hi: float) -> list[float]:
    """Powers of ten covering [lo, hi] (lo > 0)."""
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if a == b:
        b += 1
    return [10.0 ** k for k in range(a, b + 1)]


def hbar_chart(items: Sequence[tuple[str, float, str, str]], *, title: str, width: int = 720,
               fmt: Fmt = human, unit: str = "") -> str:
    """Horizontal bars: ``items`` = (label, value, colour, tooltip), drawn in the given order."""
    if not items:
        return ""
    bar_h, gap, left, right, top = 18, 6, 170, 90, 8
    height = top + len(items) * (bar_h + gap) + 6
    vmax = max((plot(v) for _, v, _, _ in items), default=0) or 1
    span = width - left - right
    out = [_svg_open(width, height, title)]
    for i, (label, value, color, tip) in enumerate(items):
        y = top + i * (bar_h + gap)
        w = max(span * plot(value) / vmax, 0 if value <= 0 else 1.5)
        short = label if len(label) <= 26 else label[:25] + "…"
        out.append(f'<g><title>{esc(tip)}</title>'
                   f'<text x="{left - 8}" y="{y + bar_h - 5}" text-anchor="end" fill="#333">{esc(short)}</text>'
                   f'<rect x="{left}" y="{y}" width="{_num(w)}" height="{bar_h}" rx="3" fill="{esc(color)}"/>'
                   f'<text x="{_num(left + w + 6)}" y="{y + bar_h - 5}" fill="#555">{esc(fmt(value) + unit)}'
                   '</text></g>')
    out.append("</svg>")
    return "".join(out)


def _y_grid(ticks: Sequence[float], y: Callable[[float], float], left: int, x_end: float, fmt: Fmt) -> list[str]:
    """Horizontal grid lines with their value labels on the left."""
    return [f'<line x1="{left}" x2="{x_end}" y1="{_num(y(t))}" y2="{_num(y(t))}" stroke="#e6e8eb"/>'
            f'<text x="{left - 6}" y="{_num(y(t) + 4)}" text-anchor="end" fill="#666">{esc(fmt(t))}</text>'
            for t in ticks]


def _index_axis(n: int, slot: float, left: int, x_end: float, top: int, ph: int, height: int, pw: int,
                x_label: str, y_label: str) -> list[str]:
    """The baseline, the item indices under it (about 12 of them) and the two axis titles."""
    out = [f'<line x1="{left}" x2="{x_end}" y1="{top + ph}" y2="{top + ph}" stroke="#999"/>']
    step = max(1, math.ceil(n / 12))
    for i in range(0, n, step):
        out.append(f'<text x="{_num(left + i * slot + slot / 2)}" y="{top + ph + 14}" text-anchor="middle" '
                   f'fill="#666">{i}</text>')
    out.append(f'<text x="{left + pw / 2:.0f}" y="{height - 4}" text-anchor="middle" fill="#444">{esc(x_label)}</text>'
               f'<text x="12" y="{top + ph / 2:.0f}" text-anchor="middle" fill="#444" '
               f'transform="rotate(-90 12 {top + ph / 2:.0f})">{esc(y_label)}</text>')
    return out


def sequence_chart(values: Sequence[tuple[float, str, str]], *, title: str, y_label: str, width: int = 960,
                   height: int = 260, fmt: Fmt = human, x_label: str = "op, in execution order") -> str:
    """One bar per item, left to right: ``values`` = (value, colour, tooltip)."""
    if not values:
        return ""
    left, right, top, bottom = 64, 12, 12, 34
    pw, ph = width - left - right, height - top - bottom
    vmax = max(plot(v) for v, _, _ in values) or 1
    ticks = nice_ticks(0, vmax, 4)
    ymax = ticks[-1] or 1
    slot = pw / len(values)
    bw = max(slot * 0.8, 0.6)
    out = [_svg_open(width, height, title)]
    out += _y_grid(ticks, lambda t: top + ph - ph * t / ymax, left, width - right, fmt)
    for i, (v, color, tip) in enumerate(values):
        h = ph * plot(v) / ymax
        if v > 0:
            h = max(h, 1.0)
        x = left + i * slot + (slot - bw) / 2
        out.append(f'<rect x="{_num(x)}" y="{_num(top + ph - h)}" width="{_num(bw)}" height="{_num(h)}" '
                   f'fill="{esc(color)}"><title>{esc(tip)}</title></rect>')
    out += _index_axis(len(values), slot, left, width - right, top, ph, height, pw, x_label, y_label)
    out.append("</svg>")
    return "".join(out)


def area_chart(values: Sequence[tuple[float, str]], *, title: str, y_label: str, peak: int | None = None,
               width: int = 960, height: int = 220, fmt: Fmt = human, color: str = "#4c78a8",
               x_label: str = "op, in execution order", stacked: Sequence[float] | None = None,
               stacked_color: str = "#f58518") -> str:
    """A filled step profile, one step per item: ``values`` = (value, tooltip); ``peak`` is marked.

    ``stacked``: a second profile drawn on top of the first (one value per item), when any is > 0;
    the peak is then marked at the top of both.
    """
    if not values:
        return ""
    if stacked is not None and not any(stacked):
        stacked = None
    left, right, top, bottom = 84, 12, 16, 34
    pw, ph = width - left - right, height - top - bottom
    tops = [v + (stacked[i] if stacked is not None else 0) for i, (v, _) in enumerate(values)]
    ticks = nice_ticks(0, max(plot(t) for t in tops) or 1, 4)
    ymax = ticks[-1] or 1
    slot = pw / len(values)

    def y(v: float) -> float:
        return top + ph - ph * plot(v) / ymax

    out = [_svg_open(width, height, title)]
    out += _y_grid(ticks, y, left, width - right, fmt)
    points = [f"{left},{top + ph}"]
    for i, (v, _) in enumerate(values):
        points += [f"{_num(left + i * slot)},{_num(y(v))}", f"{_num(left + (i + 1) * slot)},{_num(y(v))}"]
    points.append(f"{width - right},{top + ph}")
    out.append(f'<polygon points="{" ".join(points)}" fill="{esc(color)}" fill-opacity="0.35" stroke="{esc(color)}" '
               'stroke-width="1.2"/>')
    if stacked is not None:  # the second layer: from each item's value up to value + stacked
        upper = [f"{_num(left + i * slot + d * slot)},{_num(y(tops[i]))}" for i in range(len(values)) for d in (0, 1)]
        lower = [f"{_num(left + i * slot + d * slot)},{_num(y(values[i][0]))}"
                 for i in reversed(range(len(values))) for d in (1, 0)]
        out.append(f'<polygon points="{" ".join(upper + lower)}" fill="{esc(stacked_color)}" fill-opacity="0.45" '
                   f'stroke="{esc(stacked_color)}" stroke-width="1"/>')
    for i, (v, tip) in enumerate(values):  # hover targets
        out.append(f'<rect x="{_num(left + i * slot)}" y="{top}" width="{_num(slot)}" height="{ph}" fill="transparent">'
                   f'<title>{esc(tip)}</title></rect>')
    if peak is not None and 0 <= peak < len(values):
        x = left + (peak + 0.5) * slot
        anchor = "end" if x > left + pw * 0.7 else "start"
        dx = -6 if anchor == "end" else 6
        out.append(f'<line x1="{_num(x)}" x2="{_num(x)}" y1="{top}" y2="{top + ph}" stroke="#e45756" '
                   f'stroke-dasharray="4 3"/><text x="{_num(x + dx)}" y="{top + 10}" text-anchor="{anchor}" '
                   f'fill="#e45756">peak {esc(fmt(tops[peak]))} at op {peak}</text>')
    out += _index_axis(len(values), slot, left, width - right, top, ph, height, pw, x_label, y_label)
    out.append("</svg>")
    return "".join(out)


def _scale(lo: float, hi: float, log: bool) -> tuple[float, float, list[float]]:
    if log:
        ticks = log_ticks(lo, hi)
        return math.log10(ticks[0]), math.log10(ticks[-1]), ticks
    ticks = nice_ticks(min(lo, 0.0), hi, 5)
    return ticks[0], ticks[-1], ticks


def scatter_chart(points: Sequence[tuple[float, float, str, str]], *, title: str, x_label: str, y_label: str,
                  log_x: bool = True, log_y: bool = True, width: int = 640, height: int = 340,
                  x_fmt: Fmt = human, y_fmt: Fmt = human,
                  lines: Sequence[tuple[Sequence[tuple[float, float]], str, str]] = ()) -> str:
    """Points (x, y, colour, tooltip) with optional polylines (points, colour, label); log axes by default."""
    pts = [(x, y, c, t) for x, y, c, t in points if (x > 0 or not log_x) and (y > 0 or not log_y)
           and finite(x) and finite(y)]
    if not pts:
        return ""
    xs = [p[0] for p in pts] + [x for line, _, _ in lines for x, _ in line]
    ys = [p[1] for p in pts] + [y for line, _, _ in lines for _, y in line]
    left, right, top, bottom = 70, 16, 14, 40
    pw, ph = width - left - right, height - top - bottom
    x0, x1, xt = _scale(min(xs), max(xs), log_x)
    y0, y1, yt = _scale(min(ys), max(ys), log_y)

    def sx(v: float) -> float:
        v = math.log10(v) if log_x else v
        return left + pw * (v - x0) / ((x1 - x0) or 1)

    def sy(v: float) -> float:
        v = math.log10(v) if log_y else v
        return top + ph - ph * (v - y0) / ((y1 - y0) or 1)

    out = [_svg_open(width, height, title)]
    for t in yt:
        y = sy(t)
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{_num(y)}" y2="{_num(y)}" stroke="#e6e8eb"/>'
                   f'<text x="{left - 6}" y="{_num(y + 4)}" text-anchor="end" fill="#666">{esc(y_fmt(t))}</text>')
    for t in xt:
        x = sx(t)
        out.append(f'<line x1="{_num(x)}" x2="{_num(x)}" y1="{top}" y2="{top + ph}" stroke="#f0f1f3"/>'
                   f'<text x="{_num(x)}" y="{top + ph + 15}" text-anchor="middle" fill="#666">{esc(x_fmt(t))}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#ccc"/>')
    for line, color, label in lines:
        seg = [(x, y) for x, y in line if (x > 0 or not log_x) and (y > 0 or not log_y)]
        if len(seg) >= 2:
            d = " ".join(f"{_num(sx(x))},{_num(sy(y))}" for x, y in seg)
            out.append(f'<polyline points="{d}" fill="none" stroke="{esc(color)}" stroke-width="2">'
                       f'<title>{esc(label)}</title></polyline>')
    for x, y, color, tip in pts:
        out.append(f'<circle cx="{_num(sx(x))}" cy="{_num(sy(y))}" r="4" fill="{esc(color)}" fill-opacity="0.8" '
                   f'stroke="#fff" stroke-width="0.8"><title>{esc(tip)}</title></circle>')
    out.append(f'<text x="{left + pw / 2:.0f}" y="{height - 6}" text-anchor="middle" fill="#444">{esc(x_label)}</text>'
               f'<text x="14" y="{top + ph / 2:.0f}" text-anchor="middle" fill="#444" '
               f'transform="rotate(-90 14 {top + ph / 2:.0f})">{esc(y_label)}</text>')
    out.append("</svg>")
    return "".join(out)


def line_chart(categories: Sequence[str], series: Sequence[tuple[str, Sequence[float | None], str]], *,
               title: str, y_label: str, width: int = 640, height: int = 300, fmt: Fmt = human) -> str:
    """Series of values over categorical x positions (e.g. input shapes); ``None`` leaves a gap."""
    vals = [v for _, values, _ in series for v in values if v is not None and finite(v)]
    if not categories or not vals:
        return ""
    left, right, top, bottom = 64, 16, 14, 46
    pw, ph = width - left - right, height - top - bottom
    ticks = nice_ticks(0, max(vals), 5)
    ymax = ticks[-1] or 1
    slot = pw / len(categories)

    def sx(i: int) -> float:
        return left + slot * i + slot / 2

    def sy(v: float) -> float:
        return top + ph - ph * v / ymax

    out = [_svg_open(width, height, title)]
    out += _y_grid(ticks, sy, left, width - right, fmt)
    step = max(1, math.ceil(len(categories) / 10))
    for i, cat in enumerate(categories):
        if i % step == 0:
            short = cat if len(cat) <= 16 else cat[:15] + "…"
            out.append(f'<text x="{_num(sx(i))}" y="{top + ph + 15}" text-anchor="middle" fill="#666">'
                       f'{esc(short)}<title>{esc(cat)}</title></text>')
    out.append(f'<line x1="{left}" x2="{width - right}" y1="{top + ph}" y2="{top + ph}" stroke="#999"/>')
    legend_x = left + 8
    for name, values, color in series:
        pts = [(sx(i), sy(v), v, categories[i]) for i, v in enumerate(values) if v is not None and finite(v)]
        if len(pts) >= 2:
            d = " ".join(f"{_num(x)},{_num(y)}" for x, y, _, _ in pts)
            out.append(f'<polyline points="{d}" fill="none" stroke="{esc(color)}" stroke-width="2"/>')
        for x, y, v, cat in pts:
            out.append(f'<circle cx="{_num(x)}" cy="{_num(y)}" r="3.5" fill="{esc(color)}">'
                       f'<title>{esc(f"{name} @ {cat}: {fmt(v)}")}</title></circle>')
        if len(series) > 1:
            out.append(f'<rect x="{legend_x}" y="{top + 2}" width="10" height="10" fill="{esc(color)}"/>'
                       f'<text x="{legend_x + 14}" y="{top + 11}" fill="#333">{esc(name)}</text>')
            legend_x += 24 + 7 * len(name)
    out.append(f'<text x="{left + pw / 2:.0f}" y="{height - 6}" text-anchor="middle" fill="#444">input shape</text>'
               f'<text x="14" y="{top + ph / 2:.0f}" text-anchor="middle" fill="#444" '
               f'transform="rotate(-90 14 {top + ph / 2:.0f})">{esc(y_label)}</text>')
    out.append("</svg>")
    return "".join(out)


def paired_hbar_chart(items: Sequence[tuple[str, float, float]], *, title: str, names: tuple[str, str],
                      width: int = 720, fmt: Fmt = human, colors: tuple[str, str] = (PALETTE[0], PALETTE[1])) -> str:
    """Two bars per label (A above B), for comparisons."""
    if not items:
        return ""
    bar_h, gap, left, right, top = 11, 10, 170, 90, 26
    height = top + len(items) * (2 * bar_h + gap) + 4
    vmax = max(max(plot(a), plot(b)) for _, a, b in items) or 1
    span = width - left - right
    out = [_svg_open(width, height, title)]
    for j, (name, color) in enumerate(zip(names, colors)):
        x = left + j * 220
        out.append(f'<rect x="{x}" y="6" width="10" height="10" fill="{esc(color)}"/>'
                   f'<text x="{x + 14}" y="15" fill="#333">{esc(name if len(name) <= 30 else name[:29] + "…")}'
                   '</text>')
    for i, (label, a, b) in enumerate(items):
        y = top + i * (2 * bar_h + gap)
        short = label if len(label) <= 26 else label[:25] + "…"
        out.append(f'<text x="{left - 8}" y="{y + bar_h + 4}" text-anchor="end" fill="#333">{esc(short)}</text>')
        for k, (v, color) in enumerate(((a, colors[0]), (b, colors[1]))):
            w = max(span * plot(v) / vmax, 0 if v <= 0 else 1.5)
            yy = y + k * bar_h
            out.append(f'<rect x="{left}" y="{yy}" width="{_num(w)}" height="{bar_h - 1}" fill="{esc(color)}">'
                       f'<title>{esc(f"{label} ({names[k]}): {fmt(v)}")}</title></rect>'
                       f'<text x="{_num(left + w + 5)}" y="{yy + bar_h - 2}" fill="#555" font-size="10">'
                       f'{esc(fmt(v))}</text>')
    out.append("</svg>")
    return "".join(out)
