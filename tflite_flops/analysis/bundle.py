"""The container of a model read from a LiteRT-LM bundle, as a report record (:class:`BundleInfo`).

The analysed model section is analysed like any .tflite (:mod:`tflite_flops.analysis.run`); this
module describes the rest of the bundle from its header: the sections, the system metadata, the
tokenizer, the LLM metadata, the externalised weights of the analysed model (their sections' sizes,
never their bytes), and, with ``all_sections``, the totals of every other model section.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from ..errors import TfliteFlopsError
from ..reader.bundle import MODEL_SECTION, Bundle, Section
from ..reader.load import load_section
from ..reader.model import Model
from ..report import BundleInfo, BundleSectionInfo, LlmInfo, Report
from ..settings import Settings

# (model, settings) -> (Report, walk): analysis.run.analyze_entry
EntryAnalysis = Callable[..., Any]


def describe_bundle(model: Model, report: Report, settings: Settings,
                    analyse: EntryAnalysis | None = None) -> BundleInfo:
    """The :class:`BundleInfo` of a model read from a bundle (``model.bundle`` must be set).

    Args:
        model: the analysed model section.
        report: its report (the analysed section's totals).
        analyse: with ``--all-sections``, the entry analysis that each other model section gets
            (at its stored shapes); None lists the sections without analysing them.
        settings: the analysis :class:`~tflite_flops.settings.Settings`; ``analyse`` gets them with each
            other section's stored shapes (no input shapes, batch or signature of the analysed section's).
    """
    bundle, chosen = model.bundle, model.section
    assert bundle is not None and chosen is not None  # noqa: S101 - callers check model.bundle
    sections = []
    for s in bundle.sections:
        info = BundleSectionInfo(index=s.index, kind=s.kind, size_bytes=s.size, model_type=s.model_type,
                                 backend_constraint=s.backend_constraint, analysed=s.index == chosen.index)
        if s.index == chosen.index:
            info = replace(info, totals=report.totals, operators=report.model.operators)
        elif analyse is not None and s.kind == MODEL_SECTION:
            info = _analysed(bundle, s, info, analyse, settings)
        sections.append(info)
    llm = bundle.llm
    return BundleInfo(
        path=bundle.path, size_bytes=bundle.size_bytes, version=bundle.version, section=chosen.index,
        sections=tuple(sections), system_metadata=dict(bundle.system_metadata), tokenizer=bundle.tokenizer,
        llm=None if llm is None else LlmInfo(llm.model_type, llm.max_num_tokens, llm.start_token, llm.stop_tokens,
                                             llm.has_prompt_template),
        external_weight_bytes=sum(w.size for w in bundle.weights_for(chosen)))


def _analysed(bundle: Bundle, section: Section, info: BundleSectionInfo, analyse: EntryAnalysis,
              settings: Settings) -> BundleSectionInfo:
    """``info`` with the section's totals, or the one-line reason it could not be analysed."""
    try:
        report: Report = analyse(load_section(bundle, section), settings.at_point())[0]
    except TfliteFlopsError as exc:
        return replace(info, error=str(exc))
    return replace(info, totals=report.totals, operators=report.model.operators)
