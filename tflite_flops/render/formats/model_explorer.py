"""Model Explorer overlay (``--format model-explorer``, ``.me.json``): per-node data for Google's Model Explorer.

The file is the JSON form of ``model_explorer.node_data_builder.ModelNodeData`` as that
package writes it (``ModelNodeData.to_json_string``): its ``graphsData`` mapping becomes the
top-level object, keyed by graph id, and each value is a ``GraphNodeData``::

    {"main": {"name": "tflite_flops FLOPs",
              "results": {"<output tensor name>": {"value": 224256}, ...},
              "gradient": [{"stop": 0, "bgColor": "#fff5eb"}, ..., {"stop": 1, "bgColor": "#a63603"}]}}

* Graph ids follow Model Explorer's TFLite adapter: the subgraph's name, else the key of the
  signature that points at it, else ``subgraph_<i>`` (``ModelInfo.subgraph_names``).
* Node keys are the op's first output tensor name (Model Explorer matches them against the
  ``tensor_name`` of each node's outputs); an op without one is keyed by its node id, the op index.
* Ops whose cost is unknown (status ``unsupported``) are left out rather than shown as 0.

Load it in Model Explorer with "Upload node data" next to the model, or from Python with
``model_explorer.config().add_model_from_path(m).add_node_data_from_path(f)``.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from ...errors import OutputFormatError
from ...report import OpRecord, Report
from ...report.columns import PREDICTED, TIMED, Column, explorer_metrics
from . import register_format

# metric -> (label, value of one op or None): the declared per-op columns that Model Explorer shows
# (tflite_flops.report.columns); a flag (a delegate's "taken") is 1 or 0.
def metrics() -> dict[str, tuple[str, Callable[[OpRecord, Report], float | int | None]]]:
    """Every metric: ``{name: (label, value of one op or None)}``, from the column declarations."""
    def reader(c: Column) -> Callable[[OpRecord, Report], float | int | None]:
        if c.unit == "flag":
            return lambda o, r: None if c.read(o, r) is None else int(c.read(o, r))
        return c.read

    return {name: (c.explorer[1], reader(c)) for name, c in explorer_metrics().items()}  # type: ignore[index]


PLACEMENT_BANDS = ({"value": 0, "bgColor": "#cf222e"}, {"value": 1, "bgColor": "#2da44e"})  # kept red, taken green

GRADIENT = ({"stop": 0, "bgColor": "#fff5eb"}, {"stop": 0.5, "bgColor": "#fd8d3c"}, {"stop": 1, "bgColor": "#a63603"})
THRESHOLD_COLORS = ("#fff5eb", "#fdd0a2", "#fd8d3c", "#d94801", "#7f2704")


def graph_id(report: Report, subgraph: int) -> str:
    """Model Explorer's id of a subgraph (see the module docstring)."""
    names = report.model.subgraph_names
    if subgraph < len(names) and names[subgraph]:
        return names[subgraph]
    return "main" if subgraph == 0 and not names else f"subgraph_{subgraph}"


def _thresholds(values: list[float]) -> list[dict[str, Any]]:
    """Upper bounds at the 50th, 75th, 90th percentile and the maximum, each with a colour."""
    ordered = sorted(values)
    if not ordered:
        return []
    bounds: list[float] = []
    for q in (0.5, 0.75, 0.9):
        v = ordered[min(len(ordered) - 1, int(q * len(ordered)))]
        if not bounds or v > bounds[-1]:
            bounds.append(v)
    if ordered[-1] > (bounds[-1] if bounds else float("-inf")):
        bounds.append(ordered[-1])
    colors = THRESHOLD_COLORS[-len(bounds):] if len(bounds) < len(THRESHOLD_COLORS) else THRESHOLD_COLORS
    return [{"value": b, "bgColor": c} for b, c in zip(bounds, colors)]


def column_of(metric: str) -> Column:
    """The declared column of a metric."""
    return explorer_metrics()[metric]


def node_data(report: Report, metric: str = "flops", style: str = "gradient") -> dict[str, dict[str, Any]]:
    """The overlay as a dict ``{graph_id: GraphNodeData}``.

    Args:
        report: the analysis.
        metric: one of :func:`metrics` (``flops``, ``macs``, ``bytes``, ``params``, ``latency_ms``,
            ``flops_per_s``, ``intensity``, ``xnnpack``, ``gpu``, ``predicted_ms``). Latency metrics need per-op
            latency in the report, ``predicted_ms`` a prediction; the placement metrics colour taken ops green and
            kept ones red.
        style: ``gradient`` (colour interpolated from min to max) or ``thresholds`` (four bands by percentile).

    Raises:
        OutputFormatError: an unknown metric or style, a latency metric without per-op latency, or
            ``predicted_ms`` without a prediction.
    """
    known = metrics()
    if metric not in known:
        raise OutputFormatError(f"unknown Model Explorer metric {metric!r} (known: {', '.join(known)})")
    if style not in ("gradient", "thresholds"):
        raise OutputFormatError(f"unknown Model Explorer style {style!r} (gradient or thresholds)")
    label, value_of = known[metric]
    flag = column_of(metric).unit == "flag"
    graphs: dict[str, dict[str, Any]] = {}
    for op in report.ops:
        if op.status in ("unsupported", "opaque"):
            continue
        value = value_of(op, report)
        if value is None:
            continue
        gid = graph_id(report, op.subgraph)
        results = graphs.setdefault(gid, {"name": f"tflite_flops {label}", "results": {}})["results"]
        results[op.name or str(op.index)] = {"value": value}
    needs = column_of(metric).outputs.get("html")  # a measured or predicted figure says what it needs
    if not graphs and needs is TIMED:
        raise OutputFormatError(f"Model Explorer metric {metric!r} needs per-op latency (analyze --latency --per-op)")
    if not graphs and needs is PREDICTED:
        raise OutputFormatError(f"Model Explorer metric {metric!r} needs a prediction (analyze --predict PROFILE)")
    for graph in graphs.values():
        if flag:  # two values (a delegate takes the op or not): a band each, whatever the style
            graph["thresholds"] = [dict(b) for b in PLACEMENT_BANDS]
        elif style == "gradient":
            graph["gradient"] = [dict(g) for g in GRADIENT]
        else:
            graph["thresholds"] = _thresholds([r["value"] for r in graph["results"].values()])
    return graphs


@register_format("model-explorer", (".me.json",), order=60)
def render_model_explorer(report: Report, metric: str = "flops", style: str = "gradient") -> str:
    """The overlay JSON text (FLOPs with a colour gradient by default)."""
    return json.dumps(node_data(report, metric, style), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
