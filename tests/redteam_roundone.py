"""Red-team cases of issue 44's round-one leftovers: the cases of issue 32 (``tests/redteam.py``) that still broke.

* huge counts (a rank-40 tensor of int32-max dims, ~1e373 elements) rendered to HTML and compared: the
  charts drew them with float arithmetic (OverflowError); 600 such dims made a count str() refuses (a rank above
  64 is refused at load);
* a 5,000-digit input index in ``--input-shape`` (int() refuses past 4,300 digits), 100,000 threads, 100,000
  batch workers;
* ``--latency`` on a WHILE that never ends, without ``--time-limit`` (the default limit was minutes), and on
  an int32 RANGE whose output alone takes 1 GiB (more than the run may allocate);
* ``--all-sections --strict`` on a bundle whose other sections are broken (exit 0);
* dense valid models (a 20,000-op chain in 1.4 MB, a 100,000-op one in 6.8 MB) refused by the operator
  density cap, meant for files whose operator vectors name one table many times.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np

from bundle_helpers import TFLITE_MODEL, bundle_bytes
from redteam import (CNN, RANGE, SAMPLES, cli, huge_dims_model, lib, shared_operator, while_forever,
                     write)
from tflite_builder import ADD, build_model


def _errors() -> Any:
    from tflite_flops import errors

    return errors


E = _errors()


def range32_model(limit: int, delta: int = 1) -> bytes:
    """RANGE(0, limit, delta) on constant int32 scalars: an int32 output of ``limit/delta`` elements."""
    consts = [np.int32(v).tobytes() for v in (0, limit, delta)]
    sg = {"tensors": [{"name": n, "shape": [], "type": 2, "buffer": i + 1} for i, n in enumerate("sld")]
          + [{"name": "out", "shape": [1], "shape_signature": [-1], "type": 2}],
          "inputs": [], "outputs": [3], "operators": [{"opcode": 0, "inputs": [0, 1, 2], "outputs": [3]}]}
    return build_model([sg], [RANGE], buffers=[None, *consts])


def chain_model(n: int) -> bytes:
    """A valid chain of ``n`` ADDs (each adds its input to itself) over [1, 4] tensors, named ``t0``..: ~68
    bytes an op, as dense as a real model gets (a real op's tensor has a longer name, a quantization)."""
    tensors = [{"name": f"t{i}", "shape": [1, 4]} for i in range(n + 1)]
    ops = [{"opcode": 0, "inputs": [i, i], "outputs": [i + 1]} for i in range(n)]
    return build_model([{"tensors": tensors, "operators": ops, "inputs": [0], "outputs": [n]}], [ADD])


def distinct_operators(n: int) -> bytes:
    """One subgraph of ``n`` distinct ADD tables that all name one inputs vector and one outputs vector: 16 bytes an
    operator (its slot and a 12-byte table), fewer than any real operator holds."""
    import flatbuffers
    import tflite

    import tflite_builder as tb
    from redteam import _finish

    b = flatbuffers.Builder(n * 16 + 1024)
    inputs, outputs = tb._ints(b, [0, 0]), tb._ints(b, [1])
    ops = []
    for _ in range(n):
        tflite.OperatorStart(b)
        tflite.OperatorAddInputs(b, inputs)
        tflite.OperatorAddOutputs(b, outputs)
        ops.append(tflite.OperatorEnd(b))
    vec = tb._tables(b, ops)
    tensors = tb._tables(b, [tb._tensor(b, {"shape": [1, 4]}), tb._tensor(b, {"shape": [1, 4]})])
    sg_in, sg_out = tb._ints(b, [0]), tb._ints(b, [1])
    tflite.SubGraphStart(b)
    tflite.SubGraphAddTensors(b, tensors)
    tflite.SubGraphAddOperators(b, vec)
    tflite.SubGraphAddInputs(b, sg_in)
    tflite.SubGraphAddOutputs(b, sg_out)
    return _finish(b, [tflite.SubGraphEnd(b)], [ADD])


def broken_sections_bundle() -> bytes:
    """A bundle: the MLP sample as its prefill_decode section, then an embedder section that is no flatbuffer
    and an auxiliary one cut after 200 bytes."""
    model = (SAMPLES / "mlp_dynamic_batch.tflite").read_bytes()
    return bundle_bytes([(TFLITE_MODEL, model, {"model_type": "tf_lite_prefill_decode"}),
                         (TFLITE_MODEL, b"garbage!" * 10, {"model_type": "tf_lite_embedder"}),
                         (TFLITE_MODEL, model[:200], {"model_type": "tf_lite_aux"})])


def html_has(text: str) -> Callable[[Any, Path], None]:
    """The page ``tmp/x.html`` holds ``text``."""
    def check(proc: Any, tmp: Path) -> None:
        assert text in (tmp / "x.html").read_text(encoding="utf-8")
    return check


def _lib_analyze_data(data_of: Callable[[], bytes], **kwargs: Any) -> Callable[[Path], Callable[[], Any]]:
    def make(tmp: Path) -> Callable[[], Any]:
        import tflite_flops

        data = data_of()
        return lambda: tflite_flops.analyze(data, **kwargs)
    return make


def _huge(t: Path) -> str:
    return write(t, "m.tflite", huge_dims_model())


def _chain(t: Path, n: int) -> str:
    return write(t, f"c{n}.tflite", chain_model(n))


CASES = [
    # 1. counts past a float, drawn and compared
    cli("roundone-huge-dims-html", "crafted", lambda t: ["analyze", _huge(t), "-o", str(t / "x.html")], {0},
        check=html_has("e+373")),
    cli("roundone-huge-dims-format-html", "crafted", lambda t: ["analyze", _huge(t), "--format", "html"], {0}),
    cli("roundone-huge-dims-compare-itself", "crafted", lambda t: ["compare", _huge(t), str(t / "m.tflite")], {0}),
    cli("roundone-huge-dims-compare-html", "crafted",
        lambda t: ["compare", _huge(t), str(t / "m.tflite"), "-o", str(t / "x.html")], {0}, check=html_has("e+373")),
    cli("roundone-huge-dims-compare-cnn-html", "crafted", lambda t: ["compare", _huge(t), CNN, "-f", "html"], {0}),
    cli("roundone-huge-dims-rank-64-json", "crafted",
        lambda t: ["analyze", write(t, "m.tflite", huge_dims_model(64)), "-f", "json"], {0}),
    cli("roundone-huge-dims-rank-64-html", "crafted",
        lambda t: ["analyze", write(t, "m.tflite", huge_dims_model(64)), "-o", str(t / "x.html")], {0}),
    cli("roundone-huge-dims-rank-600", "crafted",
        lambda t: ["analyze", write(t, "m.tflite", huge_dims_model(600))], {1},
        "has 600 dims (a TFLite tensor has at most 64)"),  # a count of 5,600 digits: past what str() writes
    # 2. and 3. options: an input index of 5,000 digits, 100,000 threads
    cli("roundone-shape-index-5000-digits", "options",
        lambda t: ["analyze", str(SAMPLES / "fcn_dynamic.tflite"), "--input-shape", "9" * 5000 + "=1x32x32x3"], {2},
        "input index of 5,000 digits"),
    cli("roundone-shape-index-superscript", "options",
        lambda t: ["analyze", str(SAMPLES / "fcn_dynamic.tflite"), "--input-shape", "\u00b2=1x32x32x3"], {2},
        "no input named"),
    cli("roundone-latency-threads-100000", "options",
        lambda t: ["analyze", CNN, "--latency", "--threads", "100000"], {2},
        "must be at most 1024"),
    cli("roundone-compare-threads-100000", "options",
        lambda t: ["compare", CNN, CNN, "--latency", "--threads", "100000"],
        {2}, "must be at most 1024"),
    cli("roundone-batch-jobs-100000", "options", lambda t: ["batch", str(SAMPLES), "--jobs", "100000"], {2},
        "must be at most 256"),
    lib("roundone-analyze-threads-100000", lambda t: (lambda: __import__("tflite_flops").analyze(CNN, threads=100_000)),
        E.InputSpecError, "at most 1,024"),
    # 4. and 5. the measuring child: a WHILE that never ends (default limit), a RANGE too large to allocate
    cli("roundone-latency-while-forever-default-limit", "crafted",
        lambda t: ["analyze", write(t, "m.tflite", while_forever()), "--latency"], {1}, "first run"),
    cli("roundone-latency-range-int32-1gib", "crafted",
        lambda t: ["analyze", write(t, "m.tflite", range32_model(2**28)), "--latency"], {1}, "may still allocate"),
    cli("roundone-latency-range-int32-max", "crafted",
        lambda t: ["analyze", write(t, "m.tflite", range32_model(2**31 - 1)), "--latency"], {1}, "may still allocate"),
    # 6. --strict sees the broken sections of a bundle
    cli("roundone-all-sections-strict-broken", "crafted",
        lambda t: ["analyze", write(t, "b.litertlm", broken_sections_bundle()), "--all-sections", "--strict"], {1},
        "2 model section(s) could not be analysed: #1 (tf_lite_embedder), #2 (tf_lite_aux)"),
    cli("roundone-all-sections-broken-not-strict", "crafted",
        lambda t: ["analyze", write(t, "b.litertlm", broken_sections_bundle()), "--all-sections"], {0}),
    lib("roundone-analyze-all-sections-strict",
        _lib_analyze_data(broken_sections_bundle, all_sections=True, strict=True),
        E.ModelFormatError, "could not be analysed"),
    # 7. dense valid models are analysed, compared and drawn; one table named many times is still refused
    cli("roundone-chain-20000-ops", "crafted", lambda t: ["analyze", _chain(t, 20_000)], {0}),
    cli("roundone-chain-20000-ops-html", "crafted",
        lambda t: ["analyze", _chain(t, 20_000), "-o", str(t / "x.html")], {0}),
    cli("roundone-chain-20000-ops-compare", "crafted",
        lambda t: ["compare", _chain(t, 20_000), str(t / "c20000.tflite")],
        {0}),
    cli("roundone-chain-100000-ops", "crafted", lambda t: ["analyze", _chain(t, 100_000)], {0}),  # ~12-18 s of CPU, 450 MB
    lib("roundone-shared-operator-10k", _lib_analyze_data(lambda: shared_operator(10_000)), E.ModelFormatError,
        "Operator tables named again"),
    lib("roundone-distinct-operators-60k", _lib_analyze_data(lambda: distinct_operators(60_000)), E.ModelFormatError,
        "distinct Operator tables"),
]
