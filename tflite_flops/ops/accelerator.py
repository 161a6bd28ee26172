"""Accelerator-compiled custom ops: one op that holds a whole compiled graph.

An Edge TPU model (``edgetpu_compiler``), a LiteRT NPU model (compiled ahead of time for a
vendor NPU and run through the dispatch delegate) and an Arm Ethos-U model (Vela) keep a
single custom op in place of the ops they compiled. The graph inside is machine code for the
accelerator: its ops, their number and their cost are not in the file in a form we can read.

These ops are registered with status ``opaque`` (never ``ok`` with 0 FLOPs): the report says
"compiled for an accelerator; the N ops inside are not visible", flags ``totals.opaque_ops``
and ``--strict`` fails on them. What the file does tell is reported with the op:

* the size of the compiled payload in the op's custom options (Edge TPU keeps its compiled
  executable there; the dispatch op keeps a reference to its bytecode), and the keys of the
  options when they form a FlexBuffer map;
* the constant inputs of the op and their bytes (Vela passes its command stream and its
  compressed weights as constant uint8 tensors);
* the op's input and output tensors (shape and dtype), in the op record as for any op.

The number of ops inside is not stored by any of these formats, so it is reported as unknown
rather than guessed.
"""

from __future__ import annotations

from typing import Any, Mapping

from .registry import register_opaque

EDGETPU = "CUSTOM:edgetpu-custom-op"
DISPATCH = "CUSTOM:DISPATCH_OP"
ETHOS_U = "CUSTOM:ethos-u"

ACCELERATORS = {EDGETPU: "Edge TPU", DISPATCH: "NPU (LiteRT dispatch)", ETHOS_U: "Arm Ethos-U (Vela)"}

for _op_type, _name in ACCELERATORS.items():
    register_opaque(_op_type, _name)


def opaque_note(accelerator: str, custom_options_size: int, options: Mapping[str, Any],
                constant_inputs: tuple[int, int]) -> str:
    """The line that describes an opaque op: what it is, that its inside is hidden, what is known.

    Args:
        accelerator: the target's name (the registry entry's note).
        custom_options_size: bytes of the op's custom options (the compiled payload or its descriptor).
        options: the decoded custom options (a FlexBuffer map), empty when they are not one.
        constant_inputs: (count, bytes) of the op's constant input tensors.
    """
    known = [f"custom options {custom_options_size:,} bytes"]
    keys = [str(k) for k in options if k != "raw_int32"]
    if keys:
        known.append("option keys " + ", ".join(sorted(keys)[:8]) + ("…" if len(keys) > 8 else ""))
    count, size = constant_inputs
    if count:
        known.append(f"{count} constant input(s) of {size:,} bytes (compiled weights / command stream)")
    return (f"compiled for an accelerator ({accelerator}); the ops inside are not visible (their number is not "
            f"stored in the file) and their work is not in the totals; known: {'; '.join(known)}")
