"""JSON renderer: the versioned contract of :meth:`Report.to_dict`."""

from __future__ import annotations

from ...report import Report
from . import register_format


@register_format("json", (".json",), order=20)
def render_json(report: Report) -> str:
    """The report as indented JSON."""
    return report.to_json(indent=2, end="\n")
