"""The predicted latency of a report (``analyze --predict PROFILE``): pure data, JSON key ``prediction``.

The figures come from :mod:`tflite_flops.latency.predict`; the per-op times are ``OpRecord.predicted_ms``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Mapping

from .jsontext import split_known

# An op whose feature lies beyond DOMAIN_FACTOR times the largest value its law was fitted on, or below the
# smallest over DOMAIN_FACTOR, is predicted by extrapolation: low confidence. 2 is a choice, not a fit
# (docs/predict.md, "Confidence"): an op a little past the suite's extremes stays high; a layer four times
# the largest fitted, or a shape computation of a few elements under a law fitted from 1 K up, is flagged.
DOMAIN_FACTOR = 2.0

# Below this share of CPU time while timing the drift reference, the machine is oversubscribed: the reference's
# short invokes are rarely preempted (their medians, and so the factor, barely move), but an invoke longer than a
# scheduler slice is, and a whole model's median then grows with its length: measured here at a load of 10 on 2
# cores, the reference 1.00x, MobileNetV1 0.25 (0.2 ms) 1.0x, MobileNetV2 (3.3 ms) 3.5x, ResNet50 (34 ms) 3.2x.
BUSY_SHARE = 0.8


@dataclass(frozen=True)
class ProfileInfo:
    """The device profile a prediction stands for: where and how it was calibrated."""

    cpu: str
    cores: int
    runtime: str
    runtime_version: str
    threads: int
    xnnpack: bool
    system: str = ""
    created: str = ""  # ISO 8601 time of the calibration
    source: str = ""  # "calibrate" (timed on the machine), "import" (benchmark_model op profiles) or "results"
    # (calibrate --from-results: whole-model times)
    laws: int = 0  # fitted laws in the profile
    suite: str = ""  # the suite it timed: "full", "quick" (calibrate --quick), "import"; "" not recorded (older profile)
    range_rate: float | None = None  # the nominal coverage of the laws' ranges (0.8); None: not recorded


_ONLY_WHEN_SET = ("cache_ms", "drift")  # keys a prediction has only when they apply


@dataclass(frozen=True)
class Prediction:
    """The predicted time of one inference and its range.

    ``latency_ms = ops_ms + overhead_ms``: the per-op predictions (each op's ``predicted_ms``, fused
    ops 0) plus the profile's per-invoke overhead and its per-partition overhead once per delegate
    partition run. ``low_ms`` / ``high_ms`` come from the laws' residual quantiles
    (docs/predict.md). ``complete`` is False when some op that runs per inference has no
    prediction (``ops_not_predicted``, op type -> count): the figures then leave those ops out.
    """

    latency_ms: float
    low_ms: float
    high_ms: float
    profile: ProfileInfo
    ops_not_predicted: Mapping[str, int] = field(default_factory=dict)
    complete: bool = True
    placement: str = "xnnpack"  # "xnnpack" (delegated ops on XNNPACK, the rest builtin) or "builtin"
    ops_predicted: int = 0  # ops per inference with a predicted time (fused ones included)
    ops_fused: int = 0  # ops the delegate fuses into another op of their partition: predicted 0
    ops_fallback: int = 0  # ops predicted by a law of their group, another precision or the generic law
    partitions: int = 0  # delegate partition runs per inference (a partition in a loop body once per trip)
    ops_ms: float = 0.0  # sum of the per-op predictions
    overhead_ms: float = 0.0  # per-invoke + per-partition overheads
    forced: str | None = None  # the refusal that --force overrode (None: the profile fits this configuration)
    # confidence (docs/predict.md, "Confidence"): the predicted time of the ops whose op_confidence is "low"
    # (a stand-in law, or features beyond DOMAIN_FACTOR x their law's fitted domain), their count, and their
    # share of latency_ms; ``flags``: what the whole prediction rests on, each one of FLAGS
    low_confidence_ms: float = 0.0
    low_confidence_ops: int = 0
    low_confidence_share: float = 0.0
    flags: tuple[str, ...] = ()
    # the part of the prediction that is data and state out of cache in a whole model (in ops_ms, and the
    # per-invoke part in overhead_ms; docs/predict.md, "Whole-model conditions"); None (and not in the JSON)
    # when the profile has no cache curve
    cache_ms: float | None = None
    # the drift check (--drift-check): {"applied", "factor", "reference_ms_then", "reference_ms_now", "why"};
    # None (and not in the JSON) when it was not asked
    drift: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # keys this version does not know (kept)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``latency_ms``, ``low_ms``, ``high_ms``, ``profile`` first)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)
               if f.name != "extra" and not (f.name in _ONLY_WHEN_SET and getattr(self, f.name) is None)}
        out["profile"] = {f.name: getattr(self.profile, f.name) for f in fields(ProfileInfo)}
        out["ops_not_predicted"] = dict(self.ops_not_predicted)
        out.update(self.extra)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Prediction":
        """Rebuild from :meth:`to_dict` output."""
        known, extra = split_known(cls, d)
        known["profile"] = ProfileInfo(**split_known(ProfileInfo, known["profile"])[0])
        known["ops_not_predicted"] = dict(known.get("ops_not_predicted") or {})
        known["flags"] = tuple(known.get("flags") or ())
        return cls(**known, extra=extra)


# The provenance flags of a prediction (``Prediction.flags``), in the order the outputs list them:
PARTIAL = "partial"  # some ops were not predicted (``ops_not_predicted``): the figures leave them out
QUICK_PROFILE = "quick_profile"  # the profile was calibrated with --quick (half the suite's shapes)
STAND_IN_LAWS = "stand_in_laws"  # some ops were predicted by another op type's, precision's or placement's law
FOREIGN_PROFILE = "foreign_profile"  # made for another configuration, used with --force (``forced`` says how)
DOMAINS_UNKNOWN = "domains_unknown"  # an older profile without fitted domains: out-of-domain ops cannot be told
NO_TARGET = "no_target"  # the profile names no CPU target: the laws' tiles are the defaults, the figures this CPU's
NO_CACHES = "no_caches"  # the profile records no cache sizes: the terms of weights past the caches are 0
# fitted from whole-model times (calibrate --from-results): a base profile's laws scaled per op class, so the split
# of the time between ops is the base machine's
WHOLE_MODEL_FIT = "whole_model_fit"
FLAGS = (PARTIAL, QUICK_PROFILE, STAND_IN_LAWS, FOREIGN_PROFILE, DOMAINS_UNKNOWN, NO_TARGET, NO_CACHES, WHOLE_MODEL_FIT)


def error_pct(predicted_ms: float | None, measured_ms: float | None) -> float | None:
    """How far a prediction is from the measurement, in % of the measurement (+: predicted slower);
    None when either is missing or nothing was measured."""
    if predicted_ms is None or measured_ms is None or measured_ms <= 0:
        return None
    return 100.0 * (predicted_ms - measured_ms) / measured_ms
