"""Golden outputs: every static report, compare, batch, sweep and ops output is byte-identical to the
recorded one (tests/golden/digests.json, made by ``python tests/golden_outputs.py --update``).

A refactor must not change what users see. When a change is meant to, dump the outputs before and
after (``python tests/golden_outputs.py --dump DIR`` on both versions), read the diff, then record.
"""

from __future__ import annotations

import json

import pytest

from golden_outputs import DIGESTS, cases, digests, outputs


@pytest.mark.slow
def test_every_output_is_the_recorded_one():
    recorded = json.loads(DIGESTS.read_text())
    assert sorted(recorded) == sorted(cases("chain"))  # every case has a recorded digest, and no stale ones
    now = digests(outputs())
    changed = sorted(name for name in recorded if now.get(name) != recorded[name])
    assert not changed, f"outputs differ from the golden ones: {changed}"
