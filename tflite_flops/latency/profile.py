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

from ..errors import ProfileMismatchError, TfliteFlopsError
from ..files import MiB, read_capped, write_atomic
from ..units import printable
from ..report.prediction import BUSY_SHARE
from ..ops.facts import LAW_GROUP_DEFAULT, facts_of, with_fact
from .kernels import CHANNEL_TILE, law_tile  # noqa: F401 (profile's API)

PROFILE_FORMAT = "tflite_flops.device_profile"
PROFILE_VERSION = 1
JSON_FILE_CAP = 256 * MiB  # a calibration pack's manifest
DRIFT_FACTOR_MAX = 100.0  # a drift check's factor (now / then) applied between 1/100 and 100 (DeviceProfile.drifted)
PROFILE_FILE_CAP = 2 * MiB  # a device profile: a full calibration is well under 1 MiB (see PROFILE_SCHEMA)

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


class ProfileError(TfliteFlopsError):
    """A device profile that cannot be read: missing, not JSON, not a profile, or of another version."""


def read_json(path: str, missing: str, what: str, cap: int = JSON_FILE_CAP) -> Any:
    """The JSON document in ``path`` (at most ``cap`` bytes); ProfileError with ``missing`` when there is no such
    file, else one line naming ``what`` (a device profile, a calibration pack's manifest) and why it cannot be read."""
    try:
        return json.loads(read_capped(path, cap, "r", encoding="utf-8"))
    except FileNotFoundError:
        raise ProfileError(missing) from None
    except json.JSONDecodeError as exc:
        raise ProfileError(f"{path}: not {what} (invalid JSON at line {exc.lineno})") from None
    except ValueError as exc:  # an integer of more digits than Python converts (sys.get_int_max_str_digits)
        raise ProfileError(f"{path}: not {what} ({str(exc).split(':')[0]})") from None
    except RecursionError:
        raise ProfileError(f"{path}: not {what} (its JSON is nested too deeply)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError(f"{path}: cannot read {what} ({exc})") from None


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
        """Other processes took a good part of the CPU while the reference was timed."""
        return self.cpu_share is not None and self.cpu_share < BUSY_SHARE

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
    source: str = ""  # "calibrate" (timed here) or "import" (benchmark_model op profiles)
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
            raise ProfileError(f"{where}: device profile version {_echo(version)}; this tool reads version "
                               f"{PROFILE_VERSION} (run calibrate again)")
        r = _Reader(where)
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
                      cache_curve=_curve(r, d.get("cache_curve"), "cache_curve"),
                      cache_curves={p: _curve(r, c, f"cache_curves.{p}")
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


# ---- the schema of a device profile's JSON -------------------------------------------------------------------------
# Every number a profile holds has a declared range (finite; of its sign; within what a machine allows, with a wide
# margin), checked when the profile is read, so that no figure made from it can overflow: a coefficient at most
# COEF_US_MAX times the largest feature an op can have (a float) and an op's time is checked finite where it is
# predicted (predict.OP_US_MAX). A value out of its range is one line naming the file, the field and the range.

COEF_US_MAX = 1e6  # µs per unit of any feature (per op, MAC, byte, trip): a second; fits give ~1e-3 per MAC
TIME_US_MAX = 1e7  # µs of an overhead or of a reference point's median: ten seconds
REFERENCE_US_MIN = 1e-3  # µs: no reference point runs in less than a nanosecond (a drift is now / then)
LOG_RANGE_MAX = 10.0  # |ln(measured / predicted)| of a law's range: e^10 ≈ 22,000 times either way
CACHE_BYTES_MAX = 1 << 40  # a cache one core sees: 1 TiB
DISTANCE_MAX = 1 << 50  # a reuse distance on a cache curve: 1 PiB
FEATURE_MAX = 1e30  # an end of a law's fitted domain (MACs, bytes, elements of the calibration points)
NAME_MAX = 256  # characters of a name (CPU, runtime, version, law family, feature, ...)
NOTE_MAX = 65_536  # characters of one note
LAWS_MAX, TERMS_MAX, NOTES_MAX = 10_000, 64, 1_000  # laws; coefficients (and domain entries) a law; notes
CURVE_ROWS_MAX, CURVES_MAX, REFERENCE_MAX, CACHES_MAX = 1_024, 64, 10_000, 16


@dataclass(frozen=True)
class Bound:
    """The range of one numeric field: ``lo <= value <= hi`` (``<`` at an open end), an integer when ``integer``."""

    lo: float
    hi: float
    unit: str
    integer: bool = False
    open_ends: bool = False

    def holds(self, value: float) -> bool:
        """Whether ``value`` (finite or not, an int of any size) is in range."""
        if self.open_ends:
            return self.lo < value < self.hi
        return self.lo <= value <= self.hi  # False for NaN

    def text(self) -> str:
        """"an integer from 1 to 65,536 (threads)"."""
        what = "an integer" if self.integer else "a number"
        lo, hi = (f"{v:,}" if self.integer else f"{v:g}" for v in (self.lo, self.hi))
        ends = f"between {lo} and {hi}" if self.open_ends else f"from {lo} to {hi}"
        return f"{what} {ends} ({self.unit})"


# the numeric fields of a profile, by JSON path ("*": any key, "[]": any index); docs: the profiles section of
# docs/contributing.md
PROFILE_SCHEMA: Mapping[str, Bound] = {
    "machine.cores": Bound(1, 65_536, "cores", integer=True),
    "machine.threads": Bound(1, 65_536, "threads", integer=True),
    "machine.caches.*": Bound(0, CACHE_BYTES_MAX, "bytes one core sees", integer=True),
    "invoke_overhead_us": Bound(0, TIME_US_MAX, "µs per invoke"),
    "partition_overhead_us": Bound(0, TIME_US_MAX, "µs per partition run"),
    "laws[].coefficients.*": Bound(0, COEF_US_MAX, "µs per unit of the feature"),
    "laws[].log_low": Bound(-LOG_RANGE_MAX, LOG_RANGE_MAX, "ln of measured / predicted"),
    "laws[].log_high": Bound(-LOG_RANGE_MAX, LOG_RANGE_MAX, "ln of measured / predicted"),
    "laws[].points": Bound(0, 1_000_000_000, "calibration points", integer=True),
    "laws[].median_abs_error": Bound(0, 1e6, "|measured / predicted - 1|"),
    "laws[].domain.*[]": Bound(0, FEATURE_MAX, "the feature's value"),
    "range_rate": Bound(0, 1, "the range's nominal coverage", open_ends=True),
    "cache_curve[][0]": Bound(0, DISTANCE_MAX, "bytes of reuse distance", integer=True),
    "cache_curve[][1]": Bound(0, COEF_US_MAX, "µs per byte"),
    "cache_curve[][2]": Bound(0, TIME_US_MAX, "µs per op"),
    "cache_curve[][3]": Bound(0, TIME_US_MAX, "µs per invoke"),
    "reference.*": Bound(REFERENCE_US_MIN, TIME_US_MAX, "µs, a reference point's median"),
}
_CURVE_FIELDS = ("cache_curve[][0]", "cache_curve[][1]", "cache_curve[][2]", "cache_curve[][3]")


def _kind(value: Any) -> str:
    """What a JSON value is, in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return {str: "a string", list: "a list", dict: "an object", int: "an integer", float: "a number"}.get(
        type(value), type(value).__name__)


def _echo(value: Any) -> str:
    """``value`` as an error line shows it: short, never a 400-digit integer or a control character."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        if abs(value) < 10**15:
            return repr(value)
        return f"an integer of {len(str(value)) if value.bit_length() < 14_000 else 'thousands of'} digits"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:40] + "…")
    return _kind(value)


class _Reader:
    """Reads the fields of a profile's JSON, each checked for its type (and a number for its PROFILE_SCHEMA range);
    a field that fails is one ProfileError naming the file, the field and what it must be."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, path: str, why: str, malformed: bool = True) -> ProfileError:
        head = "malformed device profile" if malformed else "device profile out of range"
        return ProfileError(f"{self.where}: {head}: {path} {why}")

    def _get(self, d: Any, key: str, path: str, required: bool) -> Any:
        if not isinstance(d, dict):  # a JSON object (a dict: faster to test than Mapping)
            raise self.fail(path.rsplit(".", 1)[0] if "." in path else path, f"is {_kind(d)}, not an object")
        if key not in d and required:
            raise self.fail(path, "is missing")
        return d.get(key)

    def obj(self, d: Any, key: str, path: str, required: bool = False) -> Mapping[str, Any]:
        value = self._get(d, key, path, required)
        if value is None and not required:
            return {}
        if not isinstance(value, dict):
            raise self.fail(path, f"is {_kind(value)}, not an object")
        return value

    def items(self, d: Any, key: str, path: str, limit: int) -> list[tuple[str, Any]]:
        """The entries of an object field (at most ``limit``), their keys checked as names."""
        value = self.obj(d, key, path)
        if len(value) > limit:
            raise self.fail(path, f"has {len(value):,} entries (at most {limit:,})")
        return [(self.text(k, f"{path} key", value=True), v) for k, v in value.items()]

    def array(self, d: Any, key: str, path: str, limit: int, required: bool = False) -> list[Any]:
        value = self._get(d, key, path, required)
        if value is None and not required:
            return []
        return self.sequence(value, path, limit)

    def sequence(self, value: Any, path: str, limit: int) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(path, f"is {_kind(value)}, not a list")
        if len(value) > limit:
            raise self.fail(path, f"has {len(value):,} entries (at most {limit:,})")
        return value

    def text(self, d: Any, key: str = "", path: str = "", required: bool = False, limit: int = NAME_MAX,
             value: bool = False) -> str:
        """A string field of ``d`` ("" when absent and not ``required``), or the string ``d`` itself with
        ``value`` (``key`` is then its path): printable (no control character, which would forge a line of
        the tool's output), at most ``limit`` characters."""
        if value:
            path, s = key, d
        else:
            s = self._get(d, key, path, required)
            if s is None and not required:
                return ""
        if not isinstance(s, str):
            raise self.fail(path, f"is {_kind(s)}, not a string")
        if len(s) > limit:
            raise self.fail(path, f"has {len(s):,} characters (at most {limit:,})")
        if not s.isprintable() and printable(s) != s:  # isprintable: the quick test (no control character)
            raise self.fail(path, f"is {printable(_echo(s))}: a control character (a newline, an escape, a "
                                  "direction override) is not allowed in it")
        return s

    def flag(self, d: Any, key: str, path: str) -> bool:
        value = self._get(d, key, path, True)
        if not isinstance(value, bool):
            raise self.fail(path, f"is {_kind(value)}, not true or false")
        return value

    def num(self, d: Any, key: str, path: str, field: str | None = None, default: float | None = None) -> Any:
        """A numeric field of ``d`` at ``path`` (its PROFILE_SCHEMA key ``field``, else ``path``); ``default``
        when absent (required when None)."""
        value = self._get(d, key, path, default is None)
        if value is None and default is not None:
            return default
        return self.number(value, path, field or path)

    def number(self, value: Any, path: str, field: str) -> Any:
        """``value`` checked against PROFILE_SCHEMA[field]: an int for an integer field (an integral float too),
        else a float; finite and in range, else one line naming ``path`` and the range."""
        bound = PROFILE_SCHEMA[field]
        kind = type(value)
        if (kind is float or kind is int) and bound.lo <= value <= bound.hi and not bound.open_ends:  # the usual case
            if kind is float and not bound.integer:
                return value
            if kind is int:
                return value if bound.integer else float(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(path, f"is {_kind(value)}, not {bound.text()}")
        if bound.integer and isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
            raise self.fail(path, f"is {_echo(value)}, not {bound.text()}", malformed=False)
        if not bound.holds(value):  # compared as Python numbers: an int of 400 digits is out of range, not an error
            raise self.fail(path, f"is {_echo(value)}, out of range: {bound.text()}", malformed=False)
        return int(value) if bound.integer else float(value)


def _read_law(r: _Reader, x: Any, path: str) -> Law:
    """One law of a profile's JSON (``laws[i]``), checked."""
    if not isinstance(x, dict):
        raise r.fail(path, f"is {_kind(x)}, not an object")
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
              domain=_domain(r, r.obj(x, "domain", f"{path}.domain"), f"{path}.domain"))
    if law.log_low > law.log_high:
        raise r.fail(f"{path}.log_low", f"{law.log_low} is above log_high {law.log_high}: the range "
                     f"{law.log_low}..{law.log_high} is empty", malformed=False)
    return law


def _domain(r: _Reader, dom: Mapping[str, Any], path: str) -> dict[str, tuple[float, float]]:
    """A law's fitted domain (``{feature: [low, high]}``), checked: two numbers in range, low <= high."""
    if len(dom) > TERMS_MAX:
        raise r.fail(path, f"has {len(dom):,} entries (at most {TERMS_MAX})")
    out = {}
    for k, v in dom.items():
        name = r.text(k, f"{path} key", value=True)
        pair = r.sequence(v, f"{path}.{name}", 2)
        if len(pair) != 2:
            raise r.fail(f"{path}.{name}", f"has {len(pair)} value(s), not [low, high]")
        lo = r.number(pair[0], f"{path}.{name}[0]", "laws[].domain.*[]")
        hi = r.number(pair[1], f"{path}.{name}[1]", "laws[].domain.*[]")
        if lo > hi:
            raise r.fail(f"{path}.{name}", f"is [{lo:g}, {hi:g}]: its low end is above its high end", malformed=False)
        out[name] = (lo, hi)
    return out


def _curve(r: _Reader, rows: Any, path: str) -> tuple[tuple[int, float, float, float], ...]:
    """A cache curve of its JSON form (``[[distance, us per byte, us per op, us per invoke], ...]``), checked:
    each row four numbers in range, the distances non-decreasing."""
    if rows is None:
        return ()
    out = []
    for i, row in enumerate(r.sequence(rows, path, CURVE_ROWS_MAX)):
        cells = r.sequence(row, f"{path}[{i}]", 4)
        if len(cells) != 4:
            raise r.fail(f"{path}[{i}]", f"has {len(cells)} value(s), not [distance, µs per byte, per op, per invoke]")
        d, b, k, v = (r.number(c, f"{path}[{i}][{j}]", f) for j, (c, f) in enumerate(zip(cells, _CURVE_FIELDS)))
        if out and d < out[-1][0]:
            raise r.fail(f"{path}[{i}][0]", f"is {d:,}, below the row before's {out[-1][0]:,}: distances increase",
                         malformed=False)
        out.append((d, b, k, v))
    return tuple(out)


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
