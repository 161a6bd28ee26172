"""The memory pass's share of the static analysis: ``analyze()`` with and without it, in one run.

    python benchmarks/memory_overhead.py            # the 600-op chain (and 5,000 ops)
    python benchmarks/memory_overhead.py --ops 600 --repeat 30
    python benchmarks/memory_overhead.py --model M.tflite ...   # real-looking models (static_speed.py caches some)

The chain is the generated MobileNet-like model of ``static_speed.py`` (written with the
flatbuffers Builder, never committed). "without" replaces the memory pass with a no-op, so the
difference is what the pass costs; both are the best of ``--repeat`` calls on one parsed model
file, alternating over several rounds, so that machine noise hits both alike; the pass is also
timed alone on the walk's shapes (the steadier figure). Target: under 20% of the analysis.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from static_speed import make_chain  # noqa: E402

import tflite_flops  # noqa: E402
from tflite_flops.analysis import assemble  # noqa: E402
from tflite_flops.analysis.walk import Walk, walk_model  # noqa: E402
from tflite_flops.reader.load import load_model  # noqa: E402
from tflite_flops.settings import Settings  # noqa: E402


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ops", type=int, nargs="+", default=[600, 5000], help="chain sizes (default 600 5000)")
    p.add_argument("--repeat", type=int, default=10, help="calls per variant and round (best is kept)")
    p.add_argument("--rounds", type=int, default=8, help="alternating rounds (best over all is kept)")
    p.add_argument("--model", nargs="+", default=[], metavar="PATH", help="measure these models instead of chains")
    args = p.parse_args(argv)
    real_memory = assemble.memory
    with tempfile.TemporaryDirectory() as tmp:
        paths = [Path(m) for m in args.model]
        for n in ([] if paths else args.ops):
            paths.append(Path(tmp) / f"chain_{n}.tflite")
            paths[-1].write_bytes(make_chain(n))
        for path in paths:
            report = tflite_flops.analyze(path)
            model = load_model(path)
            walk = Walk(model, Settings(count_zeros=False))
            walk_model(walk, 0, {}, None)
            with_pass = without = alone = float("inf")
            for _ in range(args.rounds):  # alternate the variants, so that noise hits all of them
                assemble.memory = real_memory
                with_pass = min(with_pass, best_of(lambda: tflite_flops.analyze(path), args.repeat))
                alone = min(alone, best_of(lambda: real_memory(walk, 0), args.repeat))
                assemble.memory = lambda walk, entry, xnnpack=None: (None, {})
                without = min(without, best_of(lambda: tflite_flops.analyze(path), args.repeat))
            assemble.memory = real_memory
            print(f"{path.stem} ({report.model.operators} ops): analyze {without * 1e3:.2f} ms without the memory "
                  f"pass, {with_pass * 1e3:.2f} ms with it (+{100 * (with_pass - without) / without:.1f}%); "
                  f"the pass alone {alone * 1e3:.2f} ms = {100 * alone / without:.1f}% "
                  f"(arena {report.memory.arena_bytes:,} B, TFLM {report.memory.tflm_arena_bytes:,} B)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
