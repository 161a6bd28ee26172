"""The Report and what is pure data about reports: budget gate, completeness (``--strict``), comparison.

``records`` holds the frozen dataclasses between the analysis and the renderers (re-exported here);
``budget``, ``completeness`` and ``compare`` read Reports and never the other way round.
"""

from .records import (SCHEMA_VERSION, STATUSES, PHASES, TensorSummary, OpRecord, Totals, OpTypeSummary,
                      precision_split, LazyText, SubgraphMemory, MemorySummary, RuntimeMemory, ModelInfo, TokenFigures,
                      LatencyStats, Throughput, RooflineOp, BoundCounts, Roofline, DelegatePlacement, SignatureReport,
                      Report, BundleSectionInfo, LlmInfo, EngineRun, BundleInfo)

__all__ = ["SCHEMA_VERSION", "STATUSES", "PHASES", "TensorSummary", "OpRecord", "Totals", "OpTypeSummary",
           "precision_split", "LazyText", "SubgraphMemory", "MemorySummary", "RuntimeMemory", "ModelInfo", "TokenFigures",
           "LatencyStats", "Throughput", "RooflineOp", "BoundCounts", "Roofline", "DelegatePlacement",
           "SignatureReport", "Report", "BundleSectionInfo", "LlmInfo", "EngineRun", "BundleInfo"]
