"""The shipped JSON schema of a report (tflite_flops/schema/report.schema.json) holds every JSON output.

The schema is made from the report's records by tests/report_schema.py (``--update`` rewrites it);
here it must be what that script makes, carry the report's version, ship in the package data, and
validate every JSON report the tool writes: every sample model (and the TFLite Micro ones), every
signature, a bundle with every section, a predicted report, a measured one (latency, per-op times,
roofline), a device profile import, and ``--latency`` with the runtime. It must also refuse a renamed,
retyped or unknown field. Counts are checked as JSON integers (a ``1.0`` is not an integer here).
"""

from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path

import cli_process
import jsonschema
import pytest
import render_helpers
import report_schema

from lanes import slow_cases
import tflite_flops
from tflite_flops.report import SCHEMA_VERSION
from tflite_flops.report.schema import SCHEMA_FILE, report_schema as shipped

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_models"
GOLDEN = Path(__file__).resolve().parent / "golden" / "analyze"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

# JSON Schema counts 1.0 as an integer; a report's counts are ints, so here only a JSON integer is one
_STRICT = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda checker, value: type(value) is int))


@pytest.fixture(scope="module")
def validator():
    schema = shipped()
    jsonschema.Draft202012Validator.check_schema(schema)
    return _STRICT(schema)


def errors(validator, data) -> list[str]:
    """Every violation, one line each (path: message), with those under a failed ``anyOf`` (a record or null)."""
    out = []

    def walk(found):
        for e in found:
            out.append(f"{'/'.join(map(str, e.absolute_path))}: {e.message}")
            walk(e.context or ())

    walk(validator.iter_errors(data))
    return out


def test_the_shipped_schema_is_the_one_the_records_make():
    assert SCHEMA_FILE.read_text(encoding="utf-8") == report_schema.text(), \
        "the report's records changed: run python tests/report_schema.py --update and commit the schema"


def test_the_schema_carries_the_reports_version():
    schema = shipped()
    assert schema["properties"]["schema_version"] == {"const": SCHEMA_VERSION}
    assert schema["$id"].endswith(f":{SCHEMA_VERSION}")


def test_the_schema_ships_in_the_package_data():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    rel = SCHEMA_FILE.relative_to(ROOT / "tflite_flops")
    assert any(rel.match(pattern) for pattern in data.get("tflite_flops", []))


def _json_reports(directory: Path) -> list[Path]:
    return sorted(p for p in directory.glob("*.json") if not p.name.endswith((".me.json", ".html.json")))


# the decoders' reports and the 600-op chain are the costly ones to validate: the slow lane's
_SLOW_GOLDEN = {"chain_600.json", "tiny_decoder.json", "tiny_decoder_kv.json", "tiny_decoder-all.json",
                "tiny_decoder-bundle.json"}
_SLOW_SAMPLES = {"tiny_decoder.tflite", "tiny_decoder_kv.tflite", "tiny_decoder.litertlm",
                 "tiny_decoder_engine.litertlm"}


@pytest.mark.parametrize("path", slow_cases(_json_reports(GOLDEN), _SLOW_GOLDEN, key=lambda p: p.name),
                         ids=lambda p: p.name)
def test_every_golden_json_report_validates(validator, path):
    # every sample model, --all-signatures, a bundle, a dynamic model at a shape, the 600-op chain
    assert errors(validator, json.loads(path.read_text(encoding="utf-8"))) == []


@pytest.mark.parametrize("path", slow_cases(sorted(SAMPLES.glob("**/*.tflite")) + sorted(SAMPLES.glob("*.litertlm")),
                                            _SLOW_SAMPLES, key=lambda p: p.relative_to(SAMPLES).as_posix()),
                         ids=lambda p: p.relative_to(SAMPLES).as_posix())
def test_every_sample_with_every_signature_validates(validator, path):
    kwargs = {"all_sections": True} if path.suffix == ".litertlm" else {}
    report = tflite_flops.analyze(path, all_signatures=True, **kwargs)
    assert errors(validator, json.loads(report.to_json())) == []


def test_a_predicted_report_validates(validator):
    for name in ("cnn_float.tflite", "tiny_decoder.tflite"):  # a prediction per op, per signature, per token
        report = tflite_flops.analyze(SAMPLES / name, all_signatures=True, predict=render_helpers.PREDICT_PROFILE)
        d = json.loads(report.to_json())
        assert "prediction" in d and "predicted_ms" in d["ops"][0]
        assert errors(validator, d) == []


def test_a_measured_report_validates(validator):
    # latency, throughput, per-op times and the roofline, as a timed run fills them
    d = json.loads(render_helpers.measured_report().to_json())
    assert d["roofline"]["ops"] and d["latency"]["median_ms"]
    assert errors(validator, d) == []


def test_an_imported_device_profile_validates(validator, tmp_path):
    out = tmp_path / "r.json"
    r = cli_process.run(["import-profile", str(SAMPLES / "cnn_float.tflite"),
                         str(FIXTURES / "benchmark_model_op_profile.csv"), "-o", str(out)], cwd=ROOT)
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    assert d["latency"]["source"]
    assert errors(validator, d) == []


@pytest.mark.runtime
@pytest.mark.slow
def test_a_timed_report_validates(validator, tmp_path):
    out = tmp_path / "r.json"
    r = cli_process.run(["analyze", str(SAMPLES / "cnn_float.tflite"), "--latency", "--runs", "3", "--warmup", "1",
                         "-o", str(out)], cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    assert d["latency"]["median_ms"] > 0
    assert errors(validator, d) == []


@pytest.fixture(scope="module")
def sample_json():
    return json.loads(tflite_flops.analyze(SAMPLES / "cnn_float.tflite").to_json())


def _broken(d, path, change):
    """A copy of ``d`` with ``change(parent, key)`` applied at ``path``."""
    d = copy.deepcopy(d)
    parent = d
    for key in path[:-1]:
        parent = parent[key]
    change(parent, path[-1])
    return d


def _rename(parent, key):
    parent[f"{key}_renamed"] = parent.pop(key)


@pytest.mark.parametrize("path, change, expected", [
    (("totals", "macs"), _rename, "'macs' is a required property"),
    (("ops", 0, "flops"), _rename, "'flops' is a required property"),
    (("memory", "arena_bytes"), _rename, "'arena_bytes' is a required property"),
    (("model", "sha256"), _rename, "'sha256' is a required property"),
    (("totals", "macs"), lambda p, k: p.__setitem__(k, float(p[k])), "is not of type 'integer'"),
    (("ops", 0, "macs"), lambda p, k: p.__setitem__(k, str(p[k])), "is not of type 'integer'"),
    (("ops", 0, "inputs"), lambda p, k: p.__setitem__(k, "1x32x32x3"), "is not of type 'array'"),
    (("ops", 0, "xnnpack"), lambda p, k: p.__setitem__(k, 1), "is not of type 'boolean', 'null'"),
    (("ops", 0, "unknown_key"), lambda p, k: p.__setitem__(k, 1), "Additional properties are not allowed"),
    (("memory", "runtime_xnnpack", "total_bytes"), lambda p, k: p.__setitem__(k, None), "is not of type 'integer'"),
    (("schema_version",), lambda p, k: p.__setitem__(k, SCHEMA_VERSION + 1), "was expected"),
])
def test_a_renamed_or_retyped_field_fails(validator, sample_json, path, change, expected):
    assert errors(validator, sample_json) == []
    found = errors(validator, _broken(sample_json, path, change))
    assert found and any(expected in e for e in found), found
