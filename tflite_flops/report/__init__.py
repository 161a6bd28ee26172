"""The Report and what is pure data about reports: budget gate, completeness (``--strict``), comparison.

``records`` holds the frozen dataclasses between the analysis and the renderers, ``measured`` the
records of what a run measured, ``prediction`` the predicted latency, ``generative`` the signatures' and a
bundle's records (all re-exported here; the last three loaded when first used);
``columns`` declares the per-op columns every output shows; ``notebook`` the Report's ``repr``,
``to_dataframe`` and Jupyter view; ``schema`` the shipped JSON schema, which ``loading`` checks a saved report
against before ``Report.load`` / ``from_json`` build it;
``budget``, ``completeness`` and ``compare`` read Reports and never the other way round.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .records import (SCHEMA_VERSION, STATUSES, PHASES, TensorSummary, OpRecord, Totals, OpTypeSummary,
                      precision_split, LazyText, SubgraphMemory, MemorySummary, RuntimeMemory, ModelInfo,
                      DelegatePlacement, Report)
from . import notebook as _notebook  # noqa: F401  registers the Report's repr, to_dataframe and _repr_html_

# loaded when first used (PEP 562): the records of a timed, predicted or generative run, which a static run of a
# plain model never builds
_LAZY = {**dict.fromkeys(("LatencyStats", "Throughput", "RooflineOp", "BoundCounts", "Roofline"), ".measured"),
         **dict.fromkeys(("Prediction", "ProfileInfo", "error_pct"), ".prediction"),
         **dict.fromkeys(("TokenFigures", "SignatureReport", "BundleSectionInfo", "LlmInfo", "EngineRun", "BundleInfo"),
                         ".generative")}

if TYPE_CHECKING:
    from .generative import BundleInfo, BundleSectionInfo, EngineRun, LlmInfo, SignatureReport, TokenFigures
    from .measured import BoundCounts, LatencyStats, Roofline, RooflineOp, Throughput
    from .prediction import Prediction, ProfileInfo, error_pct


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value


__all__ = ["SCHEMA_VERSION", "STATUSES", "PHASES", "TensorSummary", "OpRecord", "Totals", "OpTypeSummary",
           "precision_split", "LazyText", "SubgraphMemory", "MemorySummary", "RuntimeMemory", "ModelInfo", "TokenFigures",
           "LatencyStats", "Throughput", "RooflineOp", "BoundCounts", "Roofline", "DelegatePlacement",
           "SignatureReport", "Report", "BundleSectionInfo", "LlmInfo", "EngineRun", "BundleInfo", "Prediction",
           "ProfileInfo", "error_pct"]
