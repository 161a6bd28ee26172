"""Red-team cases of the device profile (``--predict PROFILE``; issue 44): huge and overflowing numbers, laws
that predict nothing, control characters in its strings, wrong types, size and depth; each through ``analyze``
and through ``batch``, ``compare``, ``sweep`` or the library, where an outside tester broke it.

The profile's schema (every field's type and range) is ``tflite_flops.latency.profile.PROFILE_SCHEMA``; a
profile that breaks it is one ``error:`` line naming the file and the field (exit 1), and a profile that loads
never puts NaN or Infinity in an output, nor predicts 0 ms for ops it cannot predict. The per-field sweep of
every range runs in-process in ``tests/test_hostile_profiles.py`` (quick lane).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any, Callable

from redteam import CNN, SAMPLES, Case, cli, huge_dims_model, write

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "predict_profile.json"
KIND = "profiles"


def _base() -> dict:
    return json.loads(FIXTURE.read_text())


def profile_text(change: Callable[[dict], Any] | None = None) -> str:
    """The fixture profile's JSON after ``change(d)`` (which edits ``d`` in place)."""
    d = copy.deepcopy(_base())
    if change is not None:
        change(d)
    return json.dumps(d)


def prof(tmp: Path, change: Callable[[dict], Any] | None = None, text: str | None = None, name: str = "p.json") -> str:
    """A profile at ``tmp/name``: the fixture changed by ``change``, or ``text`` as it is."""
    return write(tmp, name, (text if text is not None else profile_text(change)).encode("utf-8"))


def models_dir(tmp: Path, data: bytes | None = None) -> str:
    """``tmp/models`` holding the sample CNN (or ``data``): a batch's input."""
    return write(tmp, "models/m.tflite", data if data is not None else Path(CNN).read_bytes()) and str(tmp / "models")


def _set(path: str, value: Any) -> Callable[[dict], None]:
    """A change that sets the field at ``path`` ("machine.caches.L3", "laws.0.log_high") to ``value``."""
    def change(d: dict) -> None:
        *head, last = path.split(".")
        for part in head:
            d = d[int(part)] if isinstance(d, list) else d.setdefault(part, {})
        d[int(last) if isinstance(d, list) else last] = value
    return change


def _all_coefficients(coefficients: dict) -> Callable[[dict], None]:
    def change(d: dict) -> None:
        for law in d["laws"]:
            law["coefficients"] = dict(coefficients)
    return change


def _raw(path: str, literal: str) -> Callable[[Path], str]:
    """The fixture with the field at ``path`` written as the JSON ``literal`` (a 401-digit integer, ``1e999``)."""
    def make(tmp: Path) -> str:
        text = profile_text(_set(path, "@@RAW@@"))
        return prof(tmp, text=text.replace('"@@RAW@@"', literal))
    return make


BIG_INT = "1" + "0" * 400  # 10**400: a JSON int of 401 digits


def _lib(make_profile: Callable[[Path], Any], model: Any = CNN, **kwargs: Any) -> Callable[[Path], Callable[[], Any]]:
    """``tflite_flops.analyze(model, predict=<the profile>, force=True, **kwargs)``."""
    def make(tmp: Path) -> Callable[[], Any]:
        import tflite_flops

        profile = make_profile(tmp)
        return lambda: tflite_flops.analyze(model, predict=profile, force=True, **kwargs)
    return make


def plib(name: str, run: Callable[[Path], Callable[[], Any]], raises: type | None, needle: str | None = None,
         **kw: Any) -> Case:
    """A library case of this surface (kind "profiles")."""
    return Case(name, KIND, run, frozenset(), needle, raises=raises, mode="library", **kw)


def _errors() -> Any:
    from tflite_flops.latency.profile import ProfileError

    return ProfileError


ProfileError = _errors()


def _input_spec_error() -> type:
    from tflite_flops.errors import InputSpecError

    return InputSpecError

# ---- checks on a finished run ----------------------------------------------------------------------------------

_NON_FINITE = re.compile(r"\b(NaN|nan|Infinity|inf)\b")


def finite_output(*files: str) -> Callable[[Any, Path], None]:
    """stdout and ``tmp/<file>`` for each of ``files`` hold no NaN or Infinity (JSON, table, CSV, HTML)."""
    def check(proc: Any, tmp: Path) -> None:
        for name, text in [("stdout", proc.stdout), *((f, (tmp / f).read_text()) for f in files)]:
            text = re.sub(r"<script>.*?</script>", "", text, flags=re.S)  # the page's own code (its sort's -Infinity)
            found = _NON_FINITE.search(text)
            assert found is None, (name, text[max(found.start() - 200, 0):found.end() + 50])
    return check


def partial_json(proc: Any, tmp: Path) -> None:
    """The JSON report on stdout has a partial prediction: no op predicted at 0 ms in its stead."""
    report = json.loads(proc.stdout)
    p = report["prediction"]
    assert p["complete"] is False and sum(p["ops_not_predicted"].values()) > 0, p
    timed = [o["predicted_ms"] for o in report["ops"] if o.get("predicted_ms") is not None]
    assert len(timed) == p["ops_fused"] and not any(timed), "an op the profile cannot predict got a time"
    finite_output()(proc, tmp)


def partial_sweep(proc: Any, tmp: Path) -> None:
    """Every point of the sweep's JSON has a partial prediction."""
    points = json.loads(proc.stdout)["points"]
    assert points and all(pt["prediction"]["complete"] is False for pt in points), points[0].get("prediction")
    finite_output()(proc, tmp)


def partial_batch_csv(proc: Any, tmp: Path) -> None:
    """The batch's CSV row flags its prediction partial."""
    import csv

    rows = list(csv.DictReader((tmp / "r.csv").read_text().splitlines()))
    assert rows and all("partial" in r["predicted_flags"].split(";") for r in rows), rows
    finite_output("r.csv")(proc, tmp)


def budget_fails_on_partial(make_profile: Callable[[Path], Any]) -> Callable[[Path], Callable[[], Any]]:
    """analyze with the profile, then ``check_budget(max_predicted_ms=0.001)``: it must report the prediction
    partial, never pass (the callable raises when it passes)."""
    def make(tmp: Path) -> Callable[[], Any]:
        import tflite_flops
        from tflite_flops.report.budget import check_budget

        profile = make_profile(tmp)

        def call() -> None:
            report = tflite_flops.analyze(CNN, predict=profile, force=True)
            violations = check_budget(report, max_predicted_ms=0.001)
            if not any("partial" in v for v in violations):
                raise ProfileError(f"a partial prediction passed the budget: {violations}")
        return call
    return make


def _library_object(change: Callable[[Any], Any]) -> Callable[[Path], Any]:
    """A DeviceProfile built in code (the fixture's, changed by ``change(profile) -> profile``)."""
    def make(tmp: Path) -> Any:
        from tflite_flops.latency.profile import DeviceProfile

        return change(DeviceProfile.load(str(FIXTURE)))
    return make


def _forged_cpu(p: Any) -> Any:
    from dataclasses import replace

    return replace(p, machine=replace(p.machine, cpu="x\nerror: forged"))


def _huge_coefficient(p: Any) -> Any:
    from dataclasses import replace

    return replace(p, laws=tuple(replace(law, coefficients={"1": 1e306}) for law in p.laws))


def _deep(depth: int) -> str:
    return profile_text().replace('"notes": [', '"notes": [' + "[" * depth + "]" * depth + ", ", 1)


SMALL_LAW = {"family": "*", "precision": "f", "placement": "x", "coefficients": {}}  # ~80 bytes of JSON
MAX_COEF = {"1": 1e6, "macs": 1e6, "flops": 1e6, "bytes": 1e6, "in": 1e6, "out": 1e6, "params": 1e6}

CASES: list[Case] = [
    # 1. huge numbers: one line naming the file, the field and its range; never "internal error"
    cli("profile-l3-10**400", KIND,
        lambda t: ["analyze", CNN, "--force", "--predict", _raw("machine.caches.L3", BIG_INT)(t)],
        {1}, "machine.caches.L3 is an integer of 401 digits, out of range"),
    cli("profile-l3-10**400-batch", KIND,
        lambda t: ["batch", models_dir(t), "--force", "--predict", _raw("machine.caches.L3", BIG_INT)(t)], {1},
        "machine.caches.L3"),
    plib("profile-l3-10**400-library", _lib(_raw("machine.caches.L3", BIG_INT)), ProfileError, "machine.caches.L3"),
    cli("profile-overhead-1e999", KIND,
        lambda t: ["analyze", CNN, "--force", "--predict", _raw("invoke_overhead_us", "1e999")(t)], {1},
        "invoke_overhead_us is inf, out of range"),
    cli("profile-coefficient-NaN-sweep", KIND,
        lambda t: ["sweep", CNN, "--batch", "1,2", "--force", "--predict", _raw("laws.0.coefficients.macs", "NaN")(t)],
        {1}, "laws[0].coefficients.macs is nan"),
    cli("profile-cores-5000-digits", KIND,
        lambda t: ["analyze", CNN, "--force", "--predict", _raw("machine.cores", "9" * 5000)(t)], {1},
        "not the device profile"),
    cli("profile-points-10**400-compare", KIND,
        lambda t: ["compare", CNN, CNN, "--force", "--predict", _raw("laws.1.points", BIG_INT)(t)], {1},
        "laws[1].points"),
    # 2. values that passed the checks and overflowed (exp(1000), 1e306 µs per op, a 5e-324 µs reference)
    *[cli(f"profile-log-high-1000-{cmd}", KIND, lambda t, c=cmd: [
        *({"analyze": ["analyze", CNN], "batch": ["batch", models_dir(t)], "compare": ["compare", CNN, CNN],
           "sweep": ["sweep", CNN, "--batch", "1,2"]}[c]),
        "--force", "--predict", prof(t, _set("laws.0.log_high", 1000))], {1}, "laws[0].log_high is 1000, out of range")
      for cmd in ("analyze", "batch", "compare", "sweep")],
    plib("profile-log-high-1000-library", _lib(lambda t: prof(t, _set("laws.0.log_high", 1000))), ProfileError,
         "laws[0].log_high"),
    cli("profile-coefficient-1e306", KIND,
        lambda t: ["analyze", CNN, "--force", "--predict", prof(t, _all_coefficients({"1": 1e306})), "-f", "json"], {1},
        "coefficients.1 is 1e+306, out of range"),
    cli("profile-coefficient-1e306-compare", KIND,
        lambda t: ["compare", CNN, CNN, "--force", "-f", "json", "--predict", prof(t, _all_coefficients({"1": 1e306}))],
        {1}, "coefficients.1 is 1e+306"),
    plib("profile-coefficient-1e306-object", _lib(_library_object(_huge_coefficient)), ProfileError,
         "coefficients.1 is 1e+306"),
    cli("profile-reference-5e-324", KIND,
        lambda t: ["analyze", CNN, "--force", "--predict", prof(t, _set("reference", {"x": 5e-324})), "-f", "json"],
        {1}, "reference.x is 5e-324, out of range"),
    plib("profile-reference-5e-324-library", _lib(lambda t: prof(t, _set("reference", {"x": 5e-324}))), ProfileError,
         "reference.x"),
    # in-range laws at their bounds on counts past a float: the ops are not predicted, nothing is infinite
    cli("profile-max-coefficients-huge-model-json", KIND,
        lambda t: ["analyze", write(t, "m.tflite", huge_dims_model()), "--force", "-f", "json",
                   "--predict", prof(t, _all_coefficients(MAX_COEF))], {0}, check=partial_json),
    cli("profile-max-coefficients-html", KIND,
        lambda t: ["analyze", str(SAMPLES / "lstm.tflite"), "--force", "-o", str(t / "r.html"),
                   "--predict", prof(t, _all_coefficients(MAX_COEF))], {0}, check=finite_output("r.html")),
    cli("profile-max-coefficients-huge-model-batch", KIND,
        lambda t: ["batch", models_dir(t, huge_dims_model()), "--force", "-o", str(t / "r.csv"),
                   "--predict", prof(t, _all_coefficients(MAX_COEF))], {0}, check=partial_batch_csv),
    cli("profile-max-everything-table", KIND,
        lambda t: ["analyze", str(SAMPLES / "lstm.tflite"), "--force", "--predict",
                   prof(t, lambda d: (_all_coefficients(MAX_COEF)(d), d.update(
                       invoke_overhead_us=1e7, partition_overhead_us=1e7,
                       cache_curve=[[0, 0, 0, 0], [1 << 50, 1e6, 1e7, 1e7]])))], {0}, check=finite_output()),
    # 3. laws with no usable term: not predicted (never 0 ms), the prediction partial, a budget on it fails
    cli("profile-no-terms-json", KIND,
        lambda t: ["analyze", CNN, "--force", "-f", "json", "--predict", prof(t, _all_coefficients({}))], {0},
        check=partial_json),
    cli("profile-unknown-terms-batch", KIND,
        lambda t: ["batch", models_dir(t), "--force", "-o", str(t / "r.csv"),
                   "--predict", prof(t, _all_coefficients({"bogus": 1.0}))], {0}, check=partial_batch_csv),
    cli("profile-zero-terms-sweep", KIND,
        lambda t: ["sweep", CNN, "--batch", "1,2", "--force", "-f", "json",
                   "--predict", prof(t, _all_coefficients({"1": 0.0, "macs": 0.0}))], {0}, check=partial_sweep),
    *[plib(f"profile-{what}-budget-library", budget_fails_on_partial(lambda t, c=coefs: prof(t, _all_coefficients(c))),
           None) for what, coefs in (("no-terms", {}), ("unknown-terms", {"bogus": 1.0}), ("zero-terms", {"1": 0.0}))],
    # 4. control characters and long strings: refused where the profile is read, never printed raw
    cli("profile-cpu-newline", KIND,
        lambda t: ["analyze", CNN, "--force", "--predict", prof(t, _set("machine.cpu", "x\nerror: forged"))], {1},
        "machine.cpu is 'x\\nerror: forged': a control character"),
    cli("profile-runtime-escape-batch", KIND,
        lambda t: ["batch", models_dir(t), "--force", "--predict", prof(t, _set("machine.runtime", "rt\x1b[2J"))], {1},
        "machine.runtime"),
    cli("profile-family-newline-compare", KIND,
        lambda t: ["compare", CNN, CNN, "--force", "--predict", prof(t, _set("laws.0.family", "CONV_2D\nerror: x"))],
        {1}, "laws[0].family"),
    cli("profile-version-bidi-sweep", KIND,
        lambda t: ["sweep", CNN, "--batch", "1", "--force",
                   "--predict", prof(t, _set("machine.runtime_version", "2.3\u202e0"))], {1},
        "machine.runtime_version"),
    cli("profile-cpu-100k-characters", KIND,
        lambda t: ["analyze", CNN, "--force", "--predict", prof(t, _set("machine.cpu", "x" * 100_000))], {1},
        "has 100,000 characters (at most 256)"),
    cli("profile-coefficient-name-newline", KIND,
        lambda t: ["analyze", CNN, "--force", "--predict", prof(t, _set("laws.0.coefficients", {"a\nerror: b": 1.0}))],
        {1}, "laws[0].coefficients key"),
    plib("profile-cpu-newline-object", _lib(_library_object(_forged_cpu)), ProfileError, "machine.cpu"),
    # wrong types, size and depth
    cli("profile-cores-string", KIND,
        lambda t: ["analyze", CNN, "--force", "--predict", prof(t, _set("machine.cores", "2"))],
        {1}, "machine.cores is a string, not an integer"),
    cli("profile-machine-list", KIND, lambda t: ["analyze", CNN, "--force", "--predict", prof(t, _set("machine", [1]))],
        {1}, "machine is a list, not an object"),
    cli("profile-laws-object-batch", KIND,
        lambda t: ["batch", models_dir(t), "--force", "--predict", prof(t, _set("laws", {"a": 1}))], {1},
        "laws is an object, not a list"),
    cli("profile-xnnpack-string", KIND,
        lambda t: ["analyze", CNN, "--force", "--predict", prof(t, _set("machine.xnnpack", "false"))], {1},
        "machine.xnnpack is a string, not true or false"),
    cli("profile-curve-row-short", KIND,
        lambda t: ["analyze", CNN, "--force", "--predict", prof(t, _set("cache_curve", [[1, 2]]))], {1},
        "cache_curve[0] has 2 value(s)"),
    cli("profile-laws-10001", KIND,
        lambda t: ["analyze", CNN, "--force", "--predict", prof(t, _set("laws", [SMALL_LAW] * 10_001))],
        {1}, "laws has 10,001 entries (at most 10,000)"),
    cli("profile-3mib", KIND,
        lambda t: ["analyze", CNN, "--force", "--predict",
                   prof(t, lambda d: d.update(notes=["n" * 60_000] * 50))], {1}, "larger than 2 MiB"),
    cli("profile-nested-100k", KIND, lambda t: ["analyze", CNN, "--predict", prof(t, text="[" * 100_000)], {1},
        "nested too deeply"),
    cli("profile-nested-notes-500", KIND, lambda t: ["analyze", CNN, "--force", "--predict", prof(t, text=_deep(500))],
        {1}, "notes[0] is a list, not a string"),
    plib("profile-nested-100k-library", _lib(lambda t: prof(t, text="[" * 100_000)), ProfileError, "nested too deeply"),
    plib("profile-predict-int-library", _lib(lambda t: 12), _input_spec_error(), "predict: expected a DeviceProfile"),
]
