"""The interpreter's own structures: what LiteRT allocates on the heap when it builds the interpreter, before any
arena or delegate.

The headline's other parts (the arenas, XNNPACK's own bytes, the weights mapped from the file) missed it: an int8
MobileNetV2's heap grew 7,500,400 bytes for a headline of 7,036,548 (issue 43), 0.46 MB, of which 410,000 were
there once the interpreter was built (glibc's bytes in use, ``tests/litert_arena.py``), against 124,560 for the
float32 model. The difference is the quantization parameters: building the interpreter copies every quantized
tensor's scales and zero points into a ``TfLiteAffineQuantization`` (a float and an int per channel: 8 bytes per
scale), and the int8 model has 35,178 of them.

The figure (:func:`interpreter_bytes`), per model, for every subgraph (LiteRT builds them all, whichever runs):

* a constant for the interpreter and its op resolver;
* per subgraph, the subgraph object, its planner and its vectors;
* per tensor, its ``TfLiteTensor`` (112 bytes on a 64-bit build) and its dims arrays;
* per op, its node and registration;
* per quantization scale, its float and its zero point.

The bytes are the least-squares fit of the heap the interpreter holds once built, measured on 18 models (the
samples, the MCU samples, Keras MobileNetV2 float32 and int8 and an Embedding + LSTM text model) with ai-edge-litert
2.3 on x86-64 (within 6% of each; the int8 MobileNetV2 within 1.3%). They are a 64-bit build's, the same on
Arm: the emulated Cortex-A53, A76 and an Armv9 core hold 412,896, 413,536 and 413,328 bytes for that int8 model
(``benchmarks/targets_measured.json``), 410,000 here. A 32-bit build's structures are smaller and not modelled.
"""

from __future__ import annotations

from ..reader.model import Model

# bytes, ai-edge-litert 2.3, 64-bit (module docstring): fitted together on the 18 models
INTERPRETER_BASE = 63_372  # the interpreter and its op resolver
PER_TENSOR = 163  # TfLiteTensor (112) and its dims arrays
PER_OP = 11  # the node and its registration, past what the tensors' fit takes
PER_SCALE = 8  # a quantization scale (float) and its zero point (int32)
PER_SUBGRAPH = 37_572  # a subgraph: the object, its planner and its vectors


def interpreter_bytes(model: Model) -> int:
    """The heap the interpreter's own structures take for ``model`` (every subgraph), an estimate."""
    tensors = ops = scales = 0
    for sg in model.subgraphs:
        tensors += len(sg.tensors)
        ops += len(sg.operators)
        scales += sum(t.quantization.num_scales for t in sg.tensors if t.quantization is not None)
    return (INTERPRETER_BASE + PER_TENSOR * tensors + PER_OP * ops + PER_SCALE * scales
            + PER_SUBGRAPH * len(model.subgraphs))
