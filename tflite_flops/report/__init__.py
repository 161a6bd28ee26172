"""The Report and what is pure data about reports: budget gate, completeness (``--strict``), comparison.

``records`` holds the frozen dataclasses between the analysis and the renderers, ``measured`` the
records of what a run measured, ``prediction`` the predicted latency (all re-exported here);
``columns`` declares the per-op columns every output shows; ``notebook`` the Report's ``repr``,
``to_dataframe`` and Jupyter view; ``schema`` the shipped JSON schema;
``budget``, ``completeness`` and ``compare`` read Reports and never the other way round.
"""

from .records import (SCHEMA_VERSION, STATUSES, PHASES, TensorSummary, OpRecord, Totals, OpTypeSummary,
                      precision_split, LazyText, SubgraphMemory, MemorySummary, RuntimeMemory, ModelInfo, TokenFigures,
                      DelegatePlacement, SignatureReport, Report, BundleSectionInfo, LlmInfo, EngineRun, BundleInfo)
from .measured import LatencyStats, Throughput, RooflineOp, BoundCounts, Roofline
from .prediction import Prediction, ProfileInfo, error_pct
from . import notebook as _notebook  # noqa: F401  registers the Report's repr, to_dataframe and _repr_html_

__all__ = ["SCHEMA_VERSION", "STATUSES", "PHASES", "TensorSummary", "OpRecord", "Totals", "OpTypeSummary",
           "precision_split", "LazyText", "SubgraphMemory", "MemorySummary", "RuntimeMemory", "ModelInfo", "TokenFigures",
           "LatencyStats", "Throughput", "RooflineOp", "BoundCounts", "Roofline", "DelegatePlacement",
           "SignatureReport", "Report", "BundleSectionInfo", "LlmInfo", "EngineRun", "BundleInfo", "Prediction",
           "ProfileInfo", "error_pct"]
