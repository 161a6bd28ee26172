"""Device profiles: the fitted laws that turn an op's static figures into a predicted time.

A profile is made by ``tflite_flops calibrate`` on one machine, in one runtime configuration
(runtime version, threads, XNNPACK on or off), and read by ``analyze --predict PROFILE``. This
module is pure data and arithmetic: it runs nothing, and both sides (calibration, which fits the
laws, and prediction, which evaluates them) go through ``features.op_features`` so that an op is
described the same way when it is fitted and when it is predicted (:mod:`~tflite_flops.latency.features`).

The contract (docs/predict.md):

* :func:`~tflite_flops.latency.features.op_features` describes one resolved op (an :class:`~tflite_flops.report.OpRecord`) in the
  placement it gets: its law key (family, precision, placement) and named numeric features.
* A :class:`Law` is linear in named features: ``time_us = sum(coef[name] * features[name])``, with
  ``"1"`` the constant term (the per-op overhead). Its residuals are kept as quantiles of
  ``ln(measured / predicted)`` over the calibration points: the uncertainty range.
* A :class:`DeviceProfile` holds the machine (with its cache sizes), the laws, the per-invoke and
  per-partition overheads, the cost of data by reuse distance (``cache_curve``, latency/cache.py) and the
  drift reference (``reference``), and round-trips through JSON (``to_dict`` / ``from_dict``, ``save`` /
  ``load``). The last two, and the machine's caches, are optional keys: a profile without them loads.
* A :class:`Drift` is the result of a drift check (``--drift-check``); :meth:`DeviceProfile.drifted` scales
  a profile by it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from ..errors import ProfileMismatchError
from ..files import write_atomic
from ..report.measured import noise
from ..ops.facts import LAW_GROUP_DEFAULT, facts_of, with_fact
from .kernels import CHANNEL_TILE, law_tile  # noqa: F401 (profile's API)
from .profile_schema import (CACHES_MAX, CURVES_MAX, JSON_FILE_CAP, LAWS_MAX, NOTE_MAX, NOTES_MAX,  # noqa: F401
                             PROFILE_FILE_CAP, PROFILE_SCHEMA, REFERENCE_MAX, TERMS_MAX, FieldReader, ProfileError,
                             echo, kind_of, read_curve, read_domain, read_json)

PROFILE_FORMAT = "tflite_flops.device_profile"
PROFILE_VERSION = 1
DRIFT_FACTOR_MAX = 100.0  # a drift check's factor (now / then) applied between 1/100 and 100 (DeviceProfile.drifted)

# DeviceProfile.source of the profiles a device's own runtime timed: "import" (a calibration pack's op
# profiles) and WHOLE_MODEL_SOURCE (whole-model results, calibrate --from-results: latency/results.py)
WHOLE_MODEL_SOURCE = "results"
DEVICE_SOURCES = ("import", WHOLE_MODEL_SOURCE)

XNNPACK_PLACEMENT = "xnnpack"
BUILTIN_PLACEMENT = "builtin"
# A builtin op that runs right after one of XNNPACK's dynamically quantized (qd8) GEMM kernels, as a dynamic-range
# model's builtin hybrid DEPTHWISE_CONV_2D does: it takes about 2.9x as long there (docs/notes/predict-hybrid-rnn.md).
# Its law is fitted on the suite's after-qd8 points; an op without one is predicted by its builtin law.
AFTER_QD8_PLACEMENT = "builtin-after-qd8"
# The same for an op XNNPACK runs by a kernel that pays for what a qd8 kernel leaves behind (on x86, its SSE-only
# f32 max-pool and bilinear-resize kernels: 2.1x and 3.2x; docs/notes/predict-atrous-audio.md); an op without
# its own law at this placement is predicted by its XNNPACK law.
XNNPACK_AFTER_QD8_PLACEMENT = "xnnpack-after-qd8"
AFTER_QD8_PLACEMENTS: Mapping[str, str] = {BUILTIN_PLACEMENT: AFTER_QD8_PLACEMENT,
                                           XNNPACK_PLACEMENT: XNNPACK_AFTER_QD8_PLACEMENT}
ON_XNNPACK = (XNNPACK_PLACEMENT, XNNPACK_AFTER_QD8_PLACEMENT)  # the placements whose op runs on the delegate


@dataclass(frozen=True)
class OpFeatures:
    """One op as the cost model sees it: the key of its law and its named features."""

    family: str  # the op type, or a family name shared by op types that cost alike (see features.op_features)
    precision: str  # OpRecord.precision: float32, float16, int8, hybrid, ...
    placement: str  # "xnnpack", "builtin", or one of AFTER_QD8_PLACEMENTS' values
    values: Mapping[str, float] = field(default_factory=dict)  # named features; "1" is always 1.0

    @property
    def key(self) -> tuple[str, str, str]:
        """(family, precision, placement): the law this op is predicted by."""
        return self.family, self.precision, self.placement


@dataclass(frozen=True)
class Law:
    """A fitted time law for one (family, precision, placement).

    ``coefficients`` maps a feature name to microseconds per unit of that feature. ``log_low`` and
    ``log_high`` are quantiles of ln(measured / predicted) of the op's own part (the measured time less
    the invoke and partition overheads) over the ``points`` calibration points (so the range is
    ``predicted * exp(log_low) .. predicted * exp(log_high)``, the overheads added apart).
    """

    family: str
    precision: str
    placement: str
    coefficients: Mapping[str, float]
    log_low: float = 0.0
    log_high: float = 0.0
    points: int = 0
    median_abs_error: float | None = None  # median |measured/predicted - 1| on the calibration points
    # the fitted domain: (min, max) over the calibration points of each of its features (``law_features``,
    # "1" apart); empty when not known (a profile made before domains were kept): see predict.out_of_domain
    domain: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    # the keys of the calibration points the fit left out as outliers (not in the profile's JSON: calibration
    # lists them in its notes, where a law that cannot hold some of its points shows)
    dropped: tuple[str, ...] = field(default=(), compare=False)

    @property
    def key(self) -> tuple[str, str, str]:
        """(family, precision, placement)."""
        return self.family, self.precision, self.placement

    def predict_us(self, features: OpFeatures) -> float:
        """The predicted time in microseconds (never below 0)."""
        total = 0.0
        for name, coef in self.coefficients.items():
            total += coef * float(features.values.get(name, 1.0 if name == "1" else 0.0))
        return max(total, 0.0)

    def range_us(self, features: OpFeatures) -> tuple[float, float, float]:
        """(predicted, low, high) in microseconds."""
        t = self.predict_us(features)
        return t, t * math.exp(self.log_low), t * math.exp(self.log_high)


@dataclass(frozen=True)
class Machine:
    """Where a profile was calibrated: what a prediction with it stands for."""

    cpu: str
    cores: int
    runtime: str  # the runtime's package, e.g. "ai_edge_litert"
    runtime_version: str
    threads: int
    xnnpack: bool
    system: str = ""  # platform string (OS, architecture)
    target: str = ""  # the CPU target it was calibrated on (tflite_flops targets); "": a profile of an earlier version
    caches: Mapping[str, int] = field(default_factory=dict)  # {"L1d", "L2", "L3": bytes one core sees}; {} unknown


@dataclass(frozen=True)
class Drift:
    """A drift check (``--drift-check``): the profile's reference points timed again here.

    ``factor`` (the median over the points of now / then) scales the prediction when ``applied``; when the
    check could not run (another CPU, no runtime, a profile without a reference), ``applied`` is False and
    ``why`` says why."""

    applied: bool
    factor: float | None = None
    reference_ms_then: float | None = None  # the reference points' medians summed, at calibration
    reference_ms_now: float | None = None  # the same, timed now
    why: str = ""
    # the share of the configured threads' CPU time this process had while timing the reference (None: too short
    # to say); well below 1, other processes compete for the cores (see BUSY_SHARE)
    cpu_share: float | None = None

    @property
    def busy(self) -> bool:
        """Other processes took a good part of the CPU while the reference was timed (the rule of a noisy measured
        latency too: :func:`tflite_flops.report.measured.noise`)."""
        return noise(None, self.cpu_share) is not None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``prediction.drift``)."""
        return {"applied": self.applied, "factor": self.factor, "reference_ms_then": self.reference_ms_then,
                "reference_ms_now": self.reference_ms_now, "why": self.why, "cpu_share": self.cpu_share}




@dataclass(frozen=True)
class DeviceProfile:
    """The fitted laws of one machine in one runtime configuration."""

    machine: Machine
    laws: tuple[Law, ...]
    invoke_overhead_us: float = 0.0  # once per invoke()
    partition_overhead_us: float = 0.0  # once per delegate partition (DELEGATE node) per invoke
    created: str = ""  # ISO 8601 time of the calibration
    source: str = ""  # "calibrate" (timed here), "import" (benchmark_model op profiles) or WHOLE_MODEL_SOURCE
    notes: tuple[str, ...] = ()
    version: int = PROFILE_VERSION
    suite: str = ""  # the suite timed: "full", "quick" (calibrate --quick) or "import" (a pack); "" not recorded
    range_rate: float | None = None  # the laws' ranges' nominal coverage (0.8: 10%..90% quantiles); None: not recorded

    @property
    def domains_known(self) -> bool:
        """Whether the laws carry their fitted domains (profiles made before they were kept do not)."""
        return any(law.domain for law in self.laws)
    # the cost of data and state by reuse distance: ((distance bytes, us per byte, us per op, us per invoke), ...)
    # (latency/cache.py); () none
    cache_curve: tuple[tuple[int, float, float, float], ...] = ()
    # the same per op precision ("float32", "int8") where the cold points of that precision fit one; else cache_curve
    cache_curves: Mapping[str, tuple[tuple[int, float, float, float], ...]] = field(default_factory=dict)
    reference: Mapping[str, float] = field(default_factory=dict)  # drift reference: suite point key -> median us
    drift: Drift | None = field(default=None, compare=False)  # a drift check's result (never saved)

    def drifted(self, drift: Drift) -> "DeviceProfile":
        """This profile with ``drift`` recorded and, when it is applied, every time scaled by its factor:
        the laws' coefficients, the overheads and the cache curve (the ranges are ratios and stay). A factor beyond
        DRIFT_FACTOR_MAX either way (or not finite) is recorded, not applied: the reference then ran on a machine
        in another state than a drift (another load, another configuration), and scaling by it would put the
        profile's times past their ranges."""
        factor = drift.factor
        if drift.applied and not (factor is not None and math.isfinite(factor)
                                  and 1 / DRIFT_FACTOR_MAX <= factor <= DRIFT_FACTOR_MAX):
            shown = f"×{factor:.3g}" if factor is not None and math.isfinite(factor) else "not a number"
            drift = replace(drift, applied=False, factor=factor if shown != "not a number" else None,
                            reference_ms_then=_finite_or_none(drift.reference_ms_then),
                            reference_ms_now=_finite_or_none(drift.reference_ms_now),
                            why=f"the drift found ({shown}) is beyond ×{1 / DRIFT_FACTOR_MAX:g}–×{DRIFT_FACTOR_MAX:g}: "
                                "not this machine's drift (another load or configuration); calibrate again")
        f = drift.factor if drift.applied and drift.factor else 1.0
        laws = tuple(replace(law, coefficients={k: v * f for k, v in law.coefficients.items()}) for law in self.laws)
        return replace(self, laws=laws, invoke_overhead_us=self.invoke_overhead_us * f,
                       partition_overhead_us=self.partition_overhead_us * f,
                       cache_curve=_scaled(self.cache_curve, f),
                       cache_curves={p: _scaled(c, f) for p, c in self.cache_curves.items()}, drift=drift)

    def law(self, features: OpFeatures) -> Law | None:
        """The law for ``features``' key, or None when the profile has none (see ``law_for``)."""
        return self._index().get(features.key)

    def law_for(self, features: OpFeatures) -> Law | None:
        """The law that predicts ``features``: its own, else the first that exists of its group's law
        (``law_group``), its own law at another precision (``PRECISION_FALLBACK``), its group's at another
        precision, the generic law (GENERIC_FAMILY) of its precision, then of another precision; at the
        op's placement first, then at the other one. None when the profile has no law at all.

        ``fallback(features)`` says which of these was taken.
        """
        found = self._resolve(features)
        return found[0] if found else None

    def fallback(self, features: OpFeatures) -> str | None:
        """How ``law_for`` found the law of ``features``: None for its own law, else a short phrase
        (``"group binary"``, ``"float32 law"``, ``"generic law"``, ...)."""
        found = self._resolve(features)
        return found[1] if found else "no law"

    def _resolve(self, features: OpFeatures) -> tuple[Law, str | None] | None:
        index = self._index()
        family, precision, placement = features.key
        plain = {v: k for k, v in AFTER_QD8_PLACEMENTS.items()}.get(placement)
        if plain is not None:  # its own law at this placement, else as any op of its plain placement
            law = index.get(features.key)
            return (law, None) if law is not None else self._resolve(replace(features, placement=plain))
        group = group_of(family)
        precisions = (precision, *PRECISION_FALLBACK.get(precision, ("float32",)))
        other = BUILTIN_PLACEMENT if placement == XNNPACK_PLACEMENT else XNNPACK_PLACEMENT
        for place in (placement, other):
            where = "" if place == placement else f" ({place})"
            for prec in precisions:
                tail = "" if prec == precision else f" at {prec}"
                for fam, what in ((family, None), (group, f"group {group}")):
                    law = index.get((fam, prec, place))
                    if law is not None:
                        label = what or ("" if not tail and not where else f"{family} law")
                        return law, (f"{label}{tail}{where}".strip() or None)
            for prec in precisions:
                law = index.get((GENERIC_FAMILY, prec, place))
                if law is not None:
                    return law, f"generic law{'' if prec == precision else f' at {prec}'}{where}"
        return None

    def _index(self) -> dict[tuple[str, str, str], Law]:
        index = self.__dict__.get("_law_index")
        if index is None:
            index = {law.key: law for law in self.laws}
            object.__setattr__(self, "_law_index", index)
        return index

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``format``, ``version`` first)."""
        m = self.machine
        machine: dict[str, Any] = {"cpu": m.cpu, "cores": m.cores, "system": m.system, "runtime": m.runtime,
                                   "runtime_version": m.runtime_version, "threads": m.threads, "xnnpack": m.xnnpack,
                                   "target": m.target}
        if m.caches:
            machine["caches"] = dict(m.caches)
        out = {
            "format": PROFILE_FORMAT, "version": self.version, "created": self.created, "source": self.source,
            "machine": machine,
            "invoke_overhead_us": self.invoke_overhead_us, "partition_overhead_us": self.partition_overhead_us,
            "laws": [{"family": law.family, "precision": law.precision, "placement": law.placement,
                      "coefficients": dict(law.coefficients), "log_low": law.log_low, "log_high": law.log_high,
                      "points": law.points, "median_abs_error": law.median_abs_error} for law in self.laws],
            "notes": list(self.notes),
        }
        _add_confidence_fields(out, self)
        if self.cache_curve:  # keys a profile calibrated before the whole-model conditions does not have
            out["cache_curve"] = [list(row) for row in self.cache_curve]
        if self.cache_curves:
            out["cache_curves"] = {p: [list(row) for row in c] for p, c in self.cache_curves.items()}
        if self.reference:
            out["reference"] = dict(self.reference)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "profile") -> "DeviceProfile":
        """The profile of a JSON document, every field checked against :data:`PROFILE_SCHEMA` (its type, and a
        number's range: finite, of its sign, within what a machine can take) before any figure uses it.

        Raises:
            ProfileError: not a device profile, of a version this tool does not read, or a field of the wrong
                type or out of its range (one line naming ``where``, the field and the range).
        """
        if isinstance(d, Mapping) and not isinstance(d, dict):
            d = dict(d)
        if not isinstance(d, dict) or d.get("format") != PROFILE_FORMAT:
            raise ProfileError(f"{where}: not a tflite_flops device profile (no \"format\": \"{PROFILE_FORMAT}\")")
        version = d.get("version")
        if type(version) is not int or version != PROFILE_VERSION:
            raise ProfileError(f"{where}: device profile version {echo(version)}; this tool reads version "
                               f"{PROFILE_VERSION} (run calibrate again)")
        r = FieldReader(where)
        m = r.obj(d, "machine", "machine", required=True)
        machine = Machine(cpu=r.text(m, "cpu", "machine.cpu", required=True), cores=r.num(m, "cores", "machine.cores"),
                          system=r.text(m, "system", "machine.system"),
                          runtime=r.text(m, "runtime", "machine.runtime", required=True),
                          runtime_version=r.text(m, "runtime_version", "machine.runtime_version", required=True),
                          threads=r.num(m, "threads", "machine.threads"),
                          xnnpack=r.flag(m, "xnnpack", "machine.xnnpack"),
                          target=r.text(m, "target", "machine.target"),
                          caches={k: r.number(v, f"machine.caches.{k}", "machine.caches.*")
                                  for k, v in r.items(m, "caches", "machine.caches", CACHES_MAX)})
        laws = []
        for i, x in enumerate(r.array(d, "laws", "laws", LAWS_MAX, required=True)):
            laws.append(_read_law(r, x, f"laws[{i}]"))
        seen: dict[tuple[str, str, str], int] = {}
        for i, law in enumerate(laws):
            if law.key in seen:
                raise ProfileError(f"{where}: malformed device profile: laws[{i}] is a second law for "
                                   f"{law.family} ({law.precision}, {law.placement}), after laws[{seen[law.key]}]")
            seen[law.key] = i
        notes = tuple(r.text(n, f"notes[{i}]", limit=NOTE_MAX, value=True)
                      for i, n in enumerate(r.array(d, "notes", "notes", NOTES_MAX)))
        source = r.text(d, "source", "source")
        suite = r.text(d, "suite", "suite") if d.get("suite") is not None else \
            "quick" if "quick suite" in notes else "import" if source == "import" else ""
        rate = d.get("range_rate")
        profile = cls(machine=machine, laws=tuple(laws),
                      invoke_overhead_us=r.num(d, "invoke_overhead_us", "invoke_overhead_us", default=0.0),
                      partition_overhead_us=r.num(d, "partition_overhead_us", "partition_overhead_us", default=0.0),
                      created=r.text(d, "created", "created"), source=source, notes=notes, suite=suite,
                      range_rate=None if rate is None else r.number(rate, "range_rate", "range_rate"),
                      cache_curve=read_curve(r, d.get("cache_curve"), "cache_curve"),
                      cache_curves={p: read_curve(r, c, f"cache_curves.{p}")
                                    for p, c in r.items(d, "cache_curves", "cache_curves", CURVES_MAX)},
                      reference={k: r.number(v, f"reference.{k}", "reference.*")
                                 for k, v in r.items(d, "reference", "reference", REFERENCE_MAX)})
        return profile

    def checked(self, where: str = "profile") -> "DeviceProfile":
        """This profile (one a library user built, not read from a file) checked as :meth:`from_dict` checks a
        file's: its JSON form read back, its drift kept.

        Raises:
            ProfileError: a field of the wrong type or out of its range.
        """
        try:
            d = self.to_dict()
        except (TypeError, ValueError, AttributeError) as exc:
            raise ProfileError(f"{where}: not a device profile ({type(exc).__name__}: {exc})") from None
        return replace(type(self).from_dict(d, where), drift=self.drift)

    def save(self, path: str) -> None:
        """Write the profile as JSON, whole or not at all (:func:`tflite_flops.files.write_atomic`)."""
        import os

        if os.path.isdir(path):
            raise ProfileError(f"{path}: is a directory; name the profile file to write")
        try:
            write_atomic(path, json.dumps(self.to_dict(), indent=1, sort_keys=False) + "\n")
        except OSError as exc:
            raise ProfileError(f"{path}: cannot write the profile ({exc.strerror or exc})") from None

    @classmethod
    def load(cls, path: str) -> "DeviceProfile":
        """Read a profile file.

        Raises:
            ProfileError: missing, unreadable, not JSON, not a profile, or another version.
        """
        data = read_json(path, f"{path}: no such device profile", "the device profile", PROFILE_FILE_CAP)
        return cls.from_dict(data, where=path)

    def check_compatible(self, runtime_version: str, threads: int, xnnpack: bool, force: bool = False) -> None:
        """Refuse a profile made for another configuration than the one predicted, unless ``force``.

        Raises:
            ProfileMismatchError: another runtime version, thread count or XNNPACK setting.
        """
        m = self.machine
        if force:
            return
        if m.runtime_version != runtime_version:
            raise ProfileMismatchError(f"device profile made with {m.runtime} {m.runtime_version}, not "
                                       f"{runtime_version}: calibrate again, or pass --force")
        if m.threads != threads:
            raise ProfileMismatchError(f"device profile made at {m.threads} thread(s), not {threads}: pass "
                                       f"--threads {m.threads}, calibrate again, or pass --force")
        if m.xnnpack != xnnpack:
            raise ProfileMismatchError(f"device profile made with XNNPACK {'on' if m.xnnpack else 'off'}: "
                                       f"{'drop --no-xnnpack' if m.xnnpack else 'pass --no-xnnpack'}, calibrate "
                                       "again, or pass --force")


# Op types that cost alike share a group: a group law is fitted on all of the group's calibration points
# and predicts an op type of the group that has no law of its own (``DeviceProfile.law_for``). Each op
# type's group is a fact of its record (``law_group``, registered in its family module, ops/facts.py).
GENERIC_FAMILY = LAW_GROUP_DEFAULT.value  # the law of every op without a law of its own or of its group (per precision, placement)


def groups() -> dict[str, tuple[str, ...]]:
    """``{group: its op types}``, from the op types' records."""
    out: dict[str, tuple[str, ...]] = {}
    for op, group in with_fact("law_group").items():
        out[group] = (*out.get(group, ()), op)
    return out


# The features a law of each group is fitted on (a subset of what features.op_features gives); an op type whose own law
# takes others registers them in its record (``law_features``: CONV_2D's output-channel tiles, WHILE's trips). Contractions cost per
# MAC, per activation element read and written, and per weight read (hybrid and builtin kernels read the
# weights every run); element-wise and layout ops per element; pooling per window element (its FLOPs).
LAW_FEATURES: Mapping[str, tuple[str, ...]] = {
    "conv": ("1", "macs", "taps", "in", "out", "params", "dw_macs_past_l1", "dw_rem_taps", "elems_past_l2",
             "out_rows"),
    # per row too (out_rows): a dynamically quantized row is quantized with parameters of its own
    "matmul": ("1", "macs", "in", "out", "params", "params_past_l2", "params_past_l3", "params_nr2", "out_rows"),
    "binary": ("1", "in", "out", "rows", "act_out", "elems_past_l2"),
    "unary": ("1", "out", "elems_past_l2"),
    "pool": ("1", "flops", "in", "out", "elems_past_l2"),
    "reduce": ("1", "in", "out"),
    "normalize": ("1", "in", "out_rows"),  # per row too: float32 SOFTMAX 14.7 ns a row of 16, 0.17 ns an element
    "layout": ("1", "in", "out", "elems_past_l2", "out_rows"),
    "convert": ("1", "out", "elems_past_l2"),
    GENERIC_FAMILY: ("1", "macs", "flops", "bytes"),
}

# Which other precision's law stands in when a precision has none (most like it first).
PRECISION_FALLBACK: Mapping[str, tuple[str, ...]] = {
    "int8": ("uint8", "int16", "hybrid", "float32"), "uint8": ("int8", "hybrid", "float32"),
    "int16": ("int8", "float32"), "hybrid": ("float32", "int8"), "float16": ("float32",),
    "float32": ("float16", "hybrid", "int8"),
}


def _add_confidence_fields(out: dict[str, Any], profile: DeviceProfile) -> None:
    """Write the suite, the range's nominal rate and each law's domain into the JSON form ``out``."""
    out["suite"] = profile.suite
    out["range_rate"] = profile.range_rate
    for x, law in zip(out["laws"], profile.laws):
        if law.domain:
            x["domain"] = {k: [lo, hi] for k, (lo, hi) in law.domain.items()}


def _read_law(r: FieldReader, x: Any, path: str) -> Law:
    """One law of a profile's JSON (``laws[i]``), checked."""
    if not isinstance(x, dict):
        raise r.fail(path, f"is {kind_of(x)}, not an object")
    coefficients = {k: r.number(v, f"{path}.coefficients.{k}", "laws[].coefficients.*")
                    for k, v in r.items(x, "coefficients", f"{path}.coefficients", TERMS_MAX)}
    if "coefficients" not in x:
        raise r.fail(f"{path}.coefficients", "is missing")
    mae = x.get("median_abs_error")
    law = Law(family=r.text(x, "family", f"{path}.family", required=True),
              precision=r.text(x, "precision", f"{path}.precision", required=True),
              placement=r.text(x, "placement", f"{path}.placement", required=True),
              coefficients=coefficients,
              log_low=r.num(x, "log_low", f"{path}.log_low", "laws[].log_low", default=0.0),
              log_high=r.num(x, "log_high", f"{path}.log_high", "laws[].log_high", default=0.0),
              points=r.num(x, "points", f"{path}.points", "laws[].points", default=0),
              median_abs_error=None if mae is None else r.number(mae, f"{path}.median_abs_error",
                                                                   "laws[].median_abs_error"),
              domain=read_domain(r, r.obj(x, "domain", f"{path}.domain"), f"{path}.domain"))
    if law.log_low > law.log_high:
        raise r.fail(f"{path}.log_low", f"{law.log_low} is above log_high {law.log_high}: the range "
                     f"{law.log_low}..{law.log_high} is empty", malformed=False)
    return law


def _finite_or_none(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _scaled(curve: tuple[tuple[int, float, float, float], ...], f: float) -> tuple[tuple[int, float, float, float], ...]:
    return tuple((d, b * f, k * f, i * f) for d, b, k, i in curve)


def group_of(family: str) -> str:
    """The group an op type's law falls back to (its record's ``law_group``; GENERIC_FAMILY when it is in none)."""
    return facts_of(family).law_group or GENERIC_FAMILY


def law_features(family: str) -> tuple[str, ...]:
    """The features a law of ``family`` (an op type, a group name or GENERIC_FAMILY) is fitted on."""
    return facts_of(family).law_features or LAW_FEATURES.get(family) or LAW_FEATURES[group_of(family)]


def elements(shape: Any) -> int:
    """The elements of a shape (negative dims count 0)."""
    n = 1
    for d in shape:
        n *= max(int(d), 0)
    return n
