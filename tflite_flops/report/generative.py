"""The records of a generative model's report: each signature's figures (``analyze --all-signatures``), its
per-token figures, and a LiteRT-LM bundle's sections, metadata and engine run (``.litertlm``).

:class:`~tflite_flops.report.Report` holds them in ``signatures`` and ``bundle``; a report of a plain model has
neither, and a run that makes none never loads this module (``Report.to_dict`` and ``from_dict`` import it
when they meet one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

from .measured import LatencyStats
from .prediction import Prediction

if TYPE_CHECKING:  # records.py imports this module when a report holds these records, not the other way round
    from .records import MemorySummary, TensorSummary, Totals


@dataclass(frozen=True)
class TokenFigures:
    """Per-token figures of a signature that runs a generative model's prefill or decode step.

    Counts per token are the signature's totals divided by ``tokens``, rounded to the nearest
    int. See :mod:`tflite_flops.studies.signatures` for how the role, the tokens and the cache are found.
    """

    role: str  # "prefill" | "decode"
    tokens: int  # tokens one call processes: the token input's last dim
    token_input: str  # the signature input that carries the token ids
    macs_per_token: int
    flops_per_token: int
    # the weights the signature reads (stored bytes), once per call, ÷ tokens; of a table only row lookups read
    # (an embedding), the rows the call reads
    weight_bytes_per_token: int
    kv_cache_bytes: int  # bytes of the KV-cache inputs (their shapes and dtypes), read and rewritten per call
    kv_cache_inputs: tuple[str, ...] = ()
    kv_length: int | None = None  # cache slots, when the cache update (DYNAMIC_UPDATE_SLICE) shows the dim
    latency_ms: float | None = None  # median of timed signature-runner calls
    tokens_per_s: float | None = None  # tokens / median call time
    time_to_first_token_ms: float | None = None  # prefill only: one prefill call (its last logits give token 1)
    bytes_per_token: int = 0  # weight bytes per token + KV-cache bytes per token (the cache is read once per call)
    roofline_tokens_per_s: float | None = None  # memory-bound limit: measured bandwidth ÷ bytes_per_token
    # predicted (analyze --all-signatures --predict PROFILE): the signature's predicted call time, tokens ÷ it,
    # and for prefill the predicted time to first token (one prefill call); JSON keys only when predicted
    predicted_latency_ms: float | None = None
    predicted_tokens_per_s: float | None = None
    predicted_time_to_first_token_ms: float | None = None
    # measured (--latency): the model's own time per call (the invoke alone, the inputs kept in place, nothing
    # copied) and tokens ÷ it; latency_ms - model_latency_ms is the signature runner's copies of the inputs and
    # outputs (the KV cache, when the caller keeps it). JSON keys only when measured
    model_latency_ms: float | None = None
    model_tokens_per_s: float | None = None


@dataclass(frozen=True)
class SignatureReport:
    """One signature of a multi-signature model: its totals, and token figures for prefill/decode.

    ``totals.params`` / ``param_bytes`` count the weights this signature's subgraphs read; weights
    shared with other signatures are in every signature that reads them and once in the report's
    own ``totals.params``.
    """

    key: str
    subgraph: int
    inputs: tuple[TensorSummary, ...]
    outputs: tuple[TensorSummary, ...]
    totals: Totals
    operators: int  # ops that run per call (WHILE bodies counted once)
    unsupported: Mapping[str, int] = field(default_factory=dict)
    tokens: TokenFigures | None = None
    latency: LatencyStats | None = None  # the bench statistics of one signature-runner call
    memory: MemorySummary | None = None  # the signature's own arenas (its subgraphs at its shapes)
    # the signature's predicted call (its ops at its shapes, its partitions); JSON key only when predicted
    prediction: Prediction | None = None


@dataclass(frozen=True)
class BundleSectionInfo:
    """One section of a LiteRT-LM bundle. A model section analysed with ``--all-sections`` has its
    ``totals`` (at its stored shapes, entry subgraph 0 or its first signature) and ``operators``;
    one that could not be analysed has ``error``."""

    index: int
    kind: str  # the section's data type: TFLiteModel, TFLiteWeights, SP_Tokenizer, LlmMetadataProto, ...
    size_bytes: int
    model_type: str | None = None  # tf_lite_prefill_decode, tf_lite_embedder, ...
    backend_constraint: str | None = None  # cpu, gpu, npu (a comma-separated list)
    analysed: bool = False  # the section this report's ops and totals are of
    totals: Totals | None = None
    operators: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class LlmInfo:
    """The bundle's LlmMetadata: what the LiteRT-LM engine is told about the model."""

    model_type: str | None = None  # generic_model, gemma3, qwen3, ...
    max_num_tokens: int | None = None  # context length the engine allocates its KV cache for
    start_token: str | None = None  # "ids 2" or the token text
    stop_tokens: tuple[str, ...] = ()
    has_prompt_template: bool = False


@dataclass(frozen=True)
class EngineRun:
    """A measurement by the LiteRT-LM engine (``litert_lm.Benchmark``), or why there is none.

    ``ran`` is False with ``reason`` when the engine could not load or run the bundle here; the
    signature runner's figures (``SignatureReport.tokens``) are measured either way. The engine
    samples, tokenizes and manages its own KV cache: see docs/generative.md for how its figures
    differ from the signature runner's.
    """

    ran: bool
    reason: str | None = None
    backend: str = "cpu"
    version: str | None = None  # litert-lm-api's version
    prefill_tokens: int | None = None  # tokens of the last prefill
    prefill_tokens_per_s: float | None = None
    decode_tokens: int | None = None
    decode_tokens_per_s: float | None = None
    time_to_first_token_s: float | None = None
    init_s: float | None = None  # engine and session creation


@dataclass(frozen=True)
class BundleInfo:
    """A report of a LiteRT-LM bundle (``.litertlm``): the container around the analysed model.

    ``report.model`` describes the analysed model section (``size_bytes`` is the section's);
    this record describes the bundle: its file, format version, sections, metadata and tokenizer.
    ``external_weight_bytes`` are the bytes of weights sections that belong to the analysed model
    (counted from the section table, never read).
    """

    path: str | None
    size_bytes: int
    version: str
    section: int  # index of the analysed model section
    sections: tuple[BundleSectionInfo, ...]
    system_metadata: Mapping[str, Any] = field(default_factory=dict)
    tokenizer: str | None = None  # sentencepiece | huggingface (zlib JSON) | None
    llm: LlmInfo | None = None
    external_weight_bytes: int = 0
    engine: EngineRun | None = None  # with --latency

    @property
    def analysed(self) -> BundleSectionInfo:
        """The analysed model section."""
        return next(s for s in self.sections if s.index == self.section)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], totals: Callable[[Mapping[str, Any]], Totals]) -> "BundleInfo":
        """Rebuild from the ``bundle`` key of :meth:`Report.to_dict` (``totals`` rebuilds a section's)."""
        def section(s: Mapping[str, Any]) -> BundleSectionInfo:
            t = s.get("totals")
            return BundleSectionInfo(**{**s, "totals": None if t is None else totals(t)})

        llm = d.get("llm")
        engine = d.get("engine")
        return cls(**{**d, "sections": tuple(section(s) for s in d["sections"]),
                      "system_metadata": dict(d.get("system_metadata") or {}),
                      "llm": None if llm is None else LlmInfo(**{**llm, "stop_tokens": tuple(llm.get("stop_tokens", ()))}),
                      "engine": None if engine is None else EngineRun(**engine)})


_PREDICTED_TOKENS = ("predicted_latency_ms", "predicted_tokens_per_s", "predicted_time_to_first_token_ms",
                     "model_latency_ms", "model_tokens_per_s")  # written only when set


def predicted_signature_json(d: dict[str, Any], sig: SignatureReport) -> None:
    """The JSON form of a signature's prediction, and none of its keys when it was not predicted (the
    reports without ``--predict`` stay as they were)."""
    if sig.prediction is None:
        del d["prediction"]
    else:
        d["prediction"] = sig.prediction.to_dict()
    tokens = d.get("tokens")
    if tokens is not None:
        for k in _PREDICTED_TOKENS:
            if tokens[k] is None:
                del tokens[k]


def signature_from_dict(d: Mapping[str, Any], summary: Any, totals: Any, memory: Any) -> SignatureReport:
    """A :class:`SignatureReport` from its ``to_dict`` form (``summary``, ``totals`` and ``memory`` rebuild the
    parts)."""
    latency, prediction = d.get("latency"), d.get("prediction")
    tokens = d.get("tokens")
    if tokens is not None:
        tokens = TokenFigures(**{**tokens, "kv_cache_inputs": tuple(tokens.get("kv_cache_inputs", ()))})
    return SignatureReport(key=d["key"], subgraph=d["subgraph"], inputs=tuple(summary(t) for t in d["inputs"]),
                           outputs=tuple(summary(t) for t in d["outputs"]), totals=totals(d["totals"]),
                           operators=d["operators"], unsupported=dict(d.get("unsupported") or {}), tokens=tokens,
                           latency=None if latency is None else LatencyStats.from_dict(latency),
                           memory=memory(d.get("memory")),
                           prediction=None if prediction is None else Prediction.from_dict(prediction))
