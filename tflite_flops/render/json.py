"""JSON renderer: the versioned contract of :meth:`Report.to_dict`."""

from __future__ import annotations

from ..report import Report


def render_json(report: Report) -> str:
    """The report as indented JSON."""
    return report.to_json(indent=2) + "\n"
