"""The what-if rows of a report (``Report.what_if``, JSON ``what_if``): the model predicted in another precision
or with a static shape, nothing converted (:mod:`tflite_flops.studies.what_if` makes them)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping

VARIANT_LABELS = {"fp16": "fp16 weights", "dynamic_range": "dynamic-range int8", "int8": "full int8",
                  "static_shape": "static shape"}


@dataclass(frozen=True)
class WhatIf:
    """One variant of the model, re-costed with its precision's laws and placement rules.

    ``predicted_ms``: the whole model's predicted time (None without a profile); ``prediction_complete``:
    False when some op had no law (the time then leaves it out); ``memory_bytes``: the memory headline (the
    default runtime's total); ``weights_bytes``: the weights stored; ``ops``: the ops of the entry's report;
    the XNNPACK and GPU delegates' ops taken and partitions; ``changes``: what differs from the model as it is.
    """

    variant: str
    predicted_ms: float | None
    prediction_complete: bool | None
    memory_bytes: int | None
    weights_bytes: int | None
    ops: int
    xnnpack_delegated: int | None
    xnnpack_kept: int | None
    xnnpack_partitions: int | None
    gpu_delegated: int | None
    gpu_partitions: int | None
    changes: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """How a person reads the variant (``"full int8"``)."""
        return VARIANT_LABELS.get(self.variant, self.variant)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (every field; ``predicted_ms`` rounded to 4 decimals as the prediction's)."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["predicted_ms"] = None if self.predicted_ms is None else round(self.predicted_ms, 4)
        d["changes"] = list(self.changes)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "WhatIf":
        """Rebuild from :meth:`to_dict` output."""
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in d.items() if k in names}
        values["changes"] = tuple(values.get("changes") or ())
        return cls(**values)
