"""The fuzz harness's seed corpus and mutator (shared by test_fuzz.py and test_columnar.py)."""

from __future__ import annotations

import random
import struct
from pathlib import Path

from tflite_builder import control_flow_model, fc_model

SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"
_INTERESTING = (0, 1, 2, 3, 4, 7, 8, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000,
                0xFFFFFFFF, 0xFFFFFFFE, 0x10000, 0x100000)


def seed_corpus() -> list[bytes]:
    """The sample models plus small in-memory models (control flow, custom op, unknown op)."""
    corpus = [p.read_bytes() for p in sorted(SAMPLES.glob("*.tflite"))]
    corpus.append(fc_model())
    corpus.append(fc_model({"builtin": 250, "deprecated": 127}))
    corpus.append(control_flow_model({0: ("WhileOptions", {"cond_subgraph_index": 1, "body_subgraph_index": 2}),
                                       2: ("IfOptions", {"then_subgraph_index": 3, "else_subgraph_index": 1})}, 4))
    return corpus


def mutate(rng: random.Random, data: bytes, corpus: list[bytes]) -> tuple[bytes, list[str]]:
    """Apply 1-3 random mutations; return the bytes and a description of what was done."""
    out = bytearray(data)
    done = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        n = len(out)
        kind = rng.choice(("bitflip", "bitflip", "byte", "u32", "u32", "u32", "truncate", "delete", "dup", "splice"))
        if n < 8:
            kind = "splice"
        if kind == "bitflip":
            for _ in range(rng.randint(1, 4)):
                pos = rng.randrange(n)
                out[pos] ^= 1 << rng.randrange(8)
            done.append(f"bitflip@{pos}")
        elif kind == "byte":
            pos = rng.randrange(n)
            k = rng.randint(1, 8)
            out[pos:pos + k] = rng.randbytes(k)
            done.append(f"bytes@{pos}+{k}")
        elif kind == "u32":
            pos = rng.randrange(0, max(n - 4, 1)) & ~3
            value = rng.choice(_INTERESTING) if rng.random() < 0.7 else rng.getrandbits(32)
            if rng.random() < 0.3:  # an offset nudged by a small amount
                value = (struct.unpack_from("<I", out, pos)[0] + rng.randint(-16, 16)) & 0xFFFFFFFF
            struct.pack_into("<I", out, pos, value)
            done.append(f"u32@{pos}={value:#x}")
        elif kind == "truncate":
            cut = rng.randrange(n)
            del out[cut:]
            done.append(f"truncate@{cut}")
        elif kind == "delete":
            pos = rng.randrange(n)
            k = rng.randint(1, 64)
            del out[pos:pos + k]
            done.append(f"delete@{pos}+{k}")
        elif kind == "dup":
            pos = rng.randrange(n)
            k = rng.randint(1, 64)
            out[pos:pos] = out[pos:pos + k]
            done.append(f"dup@{pos}+{k}")
        else:
            other = rng.choice(corpus)
            a, b = sorted(rng.randrange(len(other) + 1) for _ in range(2))
            pos = rng.randrange(max(n, 1))
            out[pos:pos + (b - a)] = other[a:b]
            done.append(f"splice@{pos}<-{a}:{b}")
    return bytes(out), done


def run_atheris(harness: str, corpus: Path, runs: int, tmp_path: Path) -> None:
    """Run ``fuzz/HARNESS`` (an atheris harness) over ``corpus`` for ``runs`` seeded inputs, bounded by a count, never
    a time: the same run every time. A crash, a leak or a hang (``-timeout`` per input, a hang detector) fails the
    calling test; the input is saved under ``tmp_path``."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run([sys.executable, str(root / "fuzz" / harness), str(corpus), f"-runs={runs}", "-seed=1",
                           "-timeout=60", "-rss_limit_mb=3072", f"-artifact_prefix={tmp_path}/"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"Done {runs} runs" in proc.stderr, proc.stderr[-3000:]
