"""The JSON schema of a report, made from the Report's records and written to the file the package ships.

    python tests/report_schema.py --update    # write tflite_flops/schema/report.schema.json
    python tests/report_schema.py             # say whether the file is up to date (exit 1 and a diff if not)

The shipped file (``tflite_flops.report.schema.SCHEMA_FILE``) is the contract other tools read: every
key a JSON report has, its type, and whether it is always there. It is made here from the frozen
records' fields and type hints (:mod:`tflite_flops.report.records`, ``measured``, ``prediction``) and
the per-op columns (:mod:`tflite_flops.report.columns`), following how ``Report.to_dict`` writes each
record: which keys it leaves out when not set. tests/test_schema.py checks that the file is what this
script makes (a record changed without ``--update`` fails) and validates every JSON output against it
(a field renamed or retyped by the writer fails). When a change is meant to alter the JSON, run
``--update`` and commit the file with the change: the reviewer reads the schema's diff.

Objects are closed (``additionalProperties: false``) except the records that keep the keys of a newer
version (those with an ``extra`` field: measured latency, throughput, roofline, delegation,
prediction), ``settings`` and the bundle's free-form metadata. Every integer and number is at least 0
(``minimum``) but a shape's dimensions and the differences in :data:`SIGNED`; the op's status and phase
are enums (:data:`ENUMS`); ``settings`` and the mappings of fixed keys (:data:`FIXED`) are typed here.
The same file is what ``Report.from_json`` checks a saved report against (tflite_flops/report/loading.py).
"""

from __future__ import annotations

import argparse
import collections.abc
import difflib
import json
import sys
import types
import typing
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any, Mapping

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tflite_flops import report as report_package  # noqa: E402
from tflite_flops.report import records  # noqa: E402
from tflite_flops.report.columns import DELEGATE_FIELDS, OP_COLUMNS  # noqa: E402
from tflite_flops.report.schema import SCHEMA_FILE  # noqa: E402

# keys a record's JSON form leaves out unless set (Report.to_dict and the records' own to_dict)
OPTIONAL: dict[str, set[str]] = {
    "Report": {"notes", "bundle", "prediction", "advice", "what_if"},
    "OpRecord": {"predicted_ms"},
    "Prediction": {"cache_ms", "drift"},
    "SignatureReport": {"prediction"},
    "TokenFigures": {"predicted_latency_ms", "predicted_tokens_per_s", "predicted_time_to_first_token_ms",
                     "model_latency_ms", "model_tokens_per_s"},
}
# records whose every field is written only when set (sparse_dict), and those it keeps when null
SPARSE = {"LatencyStats": set(), "Throughput": set(),
          "Roofline": {"peak_flops_per_s", "peak_bytes_per_s", "ridge_intensity", "ops", "counts", "above_roof",
                       "above_roof_note"}}
_COUNT = {"type": "integer", "minimum": 0}  # a count, a size or an index
_AMOUNT = {"type": "number", "minimum": 0}  # a time, a rate, a ratio
# keys a record's JSON form adds to its fields (computed when written: report/headline.py memory_json): the
# report's own memory has them, a signature's does not
DERIVED: dict[str, dict[str, Any]] = {
    "MemorySummary": {"runtime_total_bytes": {"type": ["integer", "null"], "minimum": 0},
                      "runtime_total_parts": {"anyOf": [{"type": "object", "properties": {
                          k: _COUNT for k in ("arena_bytes", "xnnpack_bytes", "interpreter_bytes",
                                              "weights_mapped_bytes")},
                          "required": ["arena_bytes", "xnnpack_bytes", "weights_mapped_bytes"],
                          "additionalProperties": False}, {"type": "null"}]},
                      "runtime_total_threads": {"type": ["integer", "null"], "minimum": 0},
                      "target_class": {"enum": ["phone", "mcu"]}, "target_class_reason": {"type": "string"}},
}
# free-form mappings: their keys are not the tool's (input names, metadata) or not fixed
OPEN = {"system_metadata"}
# the analysis settings a report records (analysis/assemble.py): the keys the renderers read typed, any other key
# free (a setting a newer version records)
SETTINGS = {"type": "object", "properties": {
    "input_shapes": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "integer"}}},
    "batch": {"type": ["integer", "null"], "minimum": 1}, "assumed_batch": {"type": ["integer", "null"], "minimum": 1},
    "while_trips": {"type": "integer", "minimum": 0}, "entry_subgraph": {"type": "integer", "minimum": 0},
    "count_zeros": {"type": ["boolean", "null"]}}}
# mappings of fixed keys the renderers read (not records): each key required here
_PRECISION_SPLIT = {"type": "object", "additionalProperties": {
    "type": "object", "properties": {k: {"type": "integer", "minimum": 0} for k in ("macs", "flops", "ops")},
    "required": ["macs", "flops", "ops"], "additionalProperties": False}}
_DRIFT = {"type": "object", "properties": {
    "applied": {"type": "boolean"}, "why": {"type": "string"},
    **{k: {"type": ["number", "null"], "minimum": 0} for k in ("factor", "reference_ms_then", "reference_ms_now",
                                                               "cpu_share")}},
    "required": ["applied"]}
_TOOL = {"type": "object", "properties": {"name": {"type": "string"}, "version": {"type": "string"}},
         "required": ["name", "version"], "additionalProperties": {"type": "string"}}
FIXED = {"by_precision": _PRECISION_SPLIT, "drift": {"anyOf": [_DRIFT, {"type": "null"}]}, "tool": _TOOL}
# A number is a count, a size, an index, a time, a rate or a ratio: at least 0 ("minimum"), but for a shape's
# dimensions (-1: dynamic) and these differences
SIGNED = {"LatencyStats": {"rss_load_bytes", "rss_first_invoke_bytes", "rss_peak_bytes"}, "Advice": {"saving_ms"}}
# text fields that take one of a few values (the renderers look them up)
ENUMS = {"OpRecord": {"status": records.STATUSES, "phase": records.PHASES}}
# the per-op figures' JSON types by column unit (a figure travels in OpRecord.figures: optional, may be null)
UNIT_TYPES = {"count": "integer", "bytes": "integer", "index": "integer", "ms": "number", "share": "number",
              "rate": "number", "ratio": "number", "text": "string", "flag": "boolean"}
_SCALARS = {int: "integer", float: "number", str: "string", bool: "boolean"}


def _type(hint: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """The schema of a value of type ``hint``; records go to ``defs``."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return {}
    if hint is int:
        return dict(_COUNT)
    if hint is float:
        return dict(_AMOUNT)
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    if origin in (typing.Union, types.UnionType):
        parts = [_type(a, defs) for a in args if a is not type(None)]
        nullable = type(None) in args
        if len(parts) == 1 and set(parts[0]) <= {"type", "minimum"} and isinstance(parts[0]["type"], str):
            return {**parts[0], "type": [parts[0]["type"], "null"] if nullable else parts[0]["type"]}
        return {"anyOf": parts + ([{"type": "null"}] if nullable else [])}
    if origin is tuple:
        item = args[0] if args else Any
        if item is int:  # a shape: its dimensions may be -1 (dynamic)
            return {"type": "array", "items": {"type": "integer"}}
        return {"type": "array", "items": _type(item, defs)}
    if origin in (collections.abc.Mapping, dict) or hint in (dict, Mapping):
        value = args[1] if len(args) == 2 else Any
        return {"type": "object", "additionalProperties": _type(value, defs)}
    if is_dataclass(hint):
        _record(hint, defs)
        return {"$ref": f"#/$defs/{hint.__name__}"}
    raise TypeError(f"no schema for the type {hint!r}")


# every record's name, for the annotations a module names only for type checkers (report/records.py loads the
# measured, predicted and generative records when a report holds them)
_RECORD_NAMES = {name: getattr(report_package, name) for name in report_package.__all__}


def _record(cls: type, defs: dict[str, Any]) -> None:
    """``defs[cls.__name__]``: the schema of a record's JSON form."""
    name = cls.__name__
    if name in defs:
        return
    defs[name] = {}  # a placeholder against recursion
    hints = typing.get_type_hints(cls, {**_RECORD_NAMES, **vars(sys.modules[cls.__module__])})
    names = [f.name for f in fields(cls) if f.name not in ("extra", "figures")]
    props: dict[str, Any] = {}
    for field_name in names:
        if field_name in OPEN:
            props[field_name] = {"type": "object"}
        elif field_name == "settings":
            props[field_name] = SETTINGS
        elif field_name in FIXED:
            props[field_name] = FIXED[field_name]
        elif name == "Report" and field_name == "delegation":  # the declared delegates, and the device's placement
            _record(records.DelegatePlacement, defs)
            props[field_name] = {"type": "object", "additionalProperties": False, "properties": {
                k: {"$ref": "#/$defs/DelegatePlacement"} for k in [*DELEGATE_FIELDS, "device"]}}
        elif field_name in ENUMS.get(name, {}):
            props[field_name] = {"enum": list(ENUMS[name][field_name])}
        else:
            props[field_name] = _type(hints[field_name], defs)
            if field_name in SIGNED.get(name, ()):
                props[field_name].pop("minimum", None)
    if name in SPARSE:
        required = [n for n in names if n in SPARSE[name]]
    else:
        required = [n for n in names if n not in OPTIONAL.get(name, ())]
    schema: dict[str, Any] = {"type": "object", "properties": props, "required": required,
                              "additionalProperties": any(f.name == "extra" for f in fields(cls))}
    if name in DERIVED:
        props.update(DERIVED[name])
    if name == "OpRecord":  # the per-op figures declared beside the fields: optional keys of the op
        for c in OP_COLUMNS:
            if "json" in c.outputs and c.name not in props:
                kind = UNIT_TYPES.get(c.unit)
                props[c.name] = {"type": [kind, "null"]} if kind else {}
                if kind in ("integer", "number"):
                    props[c.name]["minimum"] = 0
    if name == "Report":
        props.pop("schema_version")
        props = {"schema_version": {"const": records.SCHEMA_VERSION}, **props}
        schema["properties"] = props
        schema["required"] = ["schema_version"] + [n for n in required if n != "schema_version"]
    defs[name] = schema


def build() -> dict[str, Any]:
    """The report's JSON schema (draft 2020-12), its version that of the JSON (``schema_version``)."""
    defs: dict[str, Any] = {}
    _record(records.Report, defs)
    top = defs.pop("Report")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": f"urn:tflite_flops:report:{records.SCHEMA_VERSION}",
            "title": f"tflite_flops report, schema_version {records.SCHEMA_VERSION}",
            "description": "The JSON form of tflite_flops.report.Report (analyze --format json). Made by "
                           "tests/report_schema.py from the report's records; checked against every JSON output.",
            **top, "$defs": dict(sorted(defs.items()))}


def text() -> str:
    """The file's text."""
    return json.dumps(build(), indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help="write the schema file")
    args = parser.parse_args(argv)
    new = text()
    old = SCHEMA_FILE.read_text(encoding="utf-8") if SCHEMA_FILE.exists() else ""
    if args.update:
        SCHEMA_FILE.parent.mkdir(parents=True, exist_ok=True)
        SCHEMA_FILE.write_text(new, encoding="utf-8")
        print(f"wrote {SCHEMA_FILE.relative_to(ROOT)}")
        return 0
    if old == new:
        print("the schema file is up to date")
        return 0
    sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "shipped", "made"))
    return 1


if __name__ == "__main__":
    sys.exit(main())
