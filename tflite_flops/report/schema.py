"""The JSON schema of a report, shipped with the package: ``tflite_flops/schema/report.schema.json``.

Its ``$id`` and its ``schema_version`` constant are the report's :data:`~tflite_flops.report.SCHEMA_VERSION`:
a report of another version does not validate. It lists every key :meth:`Report.to_dict
<tflite_flops.report.Report.to_dict>` writes, its type and whether it is always there (draft 2020-12);
tests/report_schema.py makes it from the records, and tests/test_schema.py validates every JSON output
against it; reading a report back (``Report.load``, ``Report.from_json``) checks it against this file first
(:mod:`tflite_flops.report.loading`). Use it from any language, or in Python::

    import jsonschema
    from tflite_flops.report.schema import report_schema
    jsonschema.validate(json.loads(text), report_schema())
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "schema" / "report.schema.json"


def report_schema() -> dict[str, Any]:
    """The shipped JSON schema of a report, as a dict."""
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
