"""The sections of a LiteRT-LM bundle, as a report record (:class:`BundleInfo`): a study of the bundle.

The analysed model section is analysed like any .tflite (:mod:`tflite_flops.analysis.run`); this
module describes the rest of the bundle from its header: the sections, the system metadata, the
tokenizer, the LLM metadata, the externalised weights of the analysed model (their sections' sizes,
never their bytes), and, with ``all_sections``, the totals of every other model section, each analysed
as its own entry. :func:`tflite_flops.analyze` adds it to the report of a model read from a bundle.
"""

from __future__ import annotations

from dataclasses import replace

from ..analysis.run import analyze_entry
from ..errors import TfliteFlopsError
from ..reader.bundle import MODEL_SECTION, Bundle, Section
from ..reader.load import load_section
from ..reader.model import Model
from ..report import BundleInfo, BundleSectionInfo, LlmInfo, Report
from ..settings import Settings


def describe_bundle(model: Model, report: Report, settings: Settings, all_sections: bool = False) -> BundleInfo:
    """The :class:`BundleInfo` of a model read from a bundle (``model.bundle`` must be set).

    Args:
        model: the analysed model section.
        report: its report (the analysed section's totals).
        settings: the analysis :class:`~tflite_flops.settings.Settings`; with ``all_sections``, each other
            model section is analysed with them at its stored shapes (no input shapes, batch or signature
            of the analysed section's).
        all_sections: ``--all-sections``: analyse every other model section (its totals); without it the
            sections are listed, not analysed.
    """
    bundle, chosen = model.bundle, model.section
    assert bundle is not None and chosen is not None  # noqa: S101 - callers check model.bundle
    sections = []
    for s in bundle.sections:
        info = BundleSectionInfo(index=s.index, kind=s.kind, size_bytes=s.size, model_type=s.model_type,
                                 backend_constraint=s.backend_constraint, analysed=s.index == chosen.index)
        if s.index == chosen.index:
            info = replace(info, totals=report.totals, operators=report.model.operators)
        elif all_sections and s.kind == MODEL_SECTION:
            info = _analysed(bundle, s, info, settings)
        sections.append(info)
    llm = bundle.llm
    return BundleInfo(
        path=bundle.path, size_bytes=bundle.size_bytes, version=bundle.version, section=chosen.index,
        sections=tuple(sections), system_metadata=dict(bundle.system_metadata), tokenizer=bundle.tokenizer,
        llm=None if llm is None else LlmInfo(llm.model_type, llm.max_num_tokens, llm.start_token, llm.stop_tokens,
                                             llm.has_prompt_template),
        external_weight_bytes=sum(w.size for w in bundle.weights_for(chosen)))


def _analysed(bundle: Bundle, section: Section, info: BundleSectionInfo, settings: Settings) -> BundleSectionInfo:
    """``info`` with the section's totals, or the one-line reason it could not be analysed."""
    try:
        report = analyze_entry(load_section(bundle, section), settings.at_point())[0]
    except TfliteFlopsError as exc:
        return replace(info, error=str(exc))
    return replace(info, totals=report.totals, operators=report.model.operators)
