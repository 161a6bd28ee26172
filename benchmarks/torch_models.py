"""Held-out benchmark models from converters this project does not otherwise run: litert-torch and MediaPipe.

Run in a separate virtualenv that has ``litert-torch`` and ``torchvision`` (never in the project's own
environment: litert-torch pins its own ai-edge-litert and pulls torch, JAX and transformers)::

    python benchmarks/torch_models.py --out DIR                  # every torch model below
    python benchmarks/torch_models.py --out DIR --only resnet    # names containing 'resnet'
    python benchmarks/torch_models.py --mediapipe DIR            # copy the .tflite files MediaPipe ships
    python benchmarks/torch_models.py --manifest DIR             # (project env) DIR/manifest.json for
                                                                 # predict_accuracy.py --external DIR
    python benchmarks/torch_models.py --leaderboard DIR          # the leaderboard's torchvision files, rebuilt
                                                                 # (benchmarks/leaderboard.py)

Torch models (random weights, ``weights=None``, seeded; nothing is downloaded), each converted with
``litert_torch.convert(model.eval(), (sample,))`` and written with ``.export(path)``:

* seventeen torchvision classifiers in float32 (one of them, a 6-layer ViT-Tiny, built from torchvision's
  ``VisionTransformer``), named ``tv_<arch>_<res>_float32.tflite``;
* for five of them, PT2E-quantized variants: ``_dynint8`` (dynamic-range, int8 per-channel weights, float
  activations) and ``_int8`` (static int8 activations and weights, calibrated on random images);
* ``gpt4x256_64_float32.tflite``: a small GPT written in plain torch (4 pre-norm decoder layers, d_model 256,
  4 heads, causal attention, GELU MLP, token and position embeddings, LM head over a vocabulary of 1000) on
  64 token ids, in float32 and dynamic-range int8. The GPT's ``_dynint8`` comes from ai-edge-quantizer's
  ``dynamic_wi8_afp32`` recipe applied to the float32 file: litert-torch's PT2E dynamic mode quantizes the
  embedding table with a non-zero zero point, which LiteRT's EMBEDDING_LOOKUP refuses at ``allocate_tensors``.

MediaPipe's legacy solutions bundle ``mediapipe/modules/**.tflite`` in its wheels up to 0.10.21 only (later
releases ship no model); ``--mediapipe`` copies them as ``mp_<file stem>.tflite`` (the directory is dropped,
the stems are unique), and needs only the ``mediapipe`` package to be importable.

Conversions run one at a time in this process; an existing output is kept unless ``--force``.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Callable

# (torchvision builder, input resolution, quantized variants to make as well)
TORCHVISION: dict[str, tuple[int, tuple[str, ...]]] = {
    "resnet18": (224, ("dynint8", "int8")),
    "shufflenet_v2_x0_5": (224, ()),
    "regnet_x_400mf": (160, ()),
    "efficientnet_b0": (160, ()),
    "mobilenet_v3_small": (224, ("dynint8", "int8")),
    "mnasnet0_5": (224, ()),
    "squeezenet1_1": (224, ()),
    # held out in the round after (2026-11-28, sixth session): converted before any change of that round
    "googlenet": (160, ()),
    "densenet121": (128, ()),
    "regnet_y_400mf": (160, ("int8",)),
    "mobilenet_v2": (224, ("dynint8", "int8")),
    "vit_tiny": (224, ()),
    # held out in the round after (2026-11-28, seventh session): converted before this round's law changes were
    # measured on any of them
    "resnext50_32x4d": (128, ()),
    "mobilenet_v3_large": (160, ("dynint8", "int8")),
    "convnext_tiny": (128, ()),
    "efficientnet_v2_s": (128, ()),
    "inception_v3": (160, ()),
}
# builders of the models torchvision has no function for (given the torchvision module)
CUSTOM: dict[str, Callable[[Any], Any]] = {
    # ViT-Tiny's shape (patch 16, width 192, 3 heads, MLP 768) at 6 layers: 196 tokens + the class token
    "vit_tiny": lambda tv: tv.models.VisionTransformer(image_size=224, patch_size=16, num_layers=6, num_heads=3,
                                                       hidden_dim=192, mlp_dim=768),
}
GPT_LAYERS, GPT_DIM, GPT_HEADS, GPT_SEQ, GPT_VOCAB = 4, 256, 4, 64, 1000
GPT_VARIANTS: tuple[str, ...] = ("aeq:dynint8",)  # "aeq:" = by ai-edge-quantizer


def build_gpt(torch: Any) -> Any:
    """A small decoder-only transformer: returns the logits of every position, shape (1, seq, vocab)."""
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(GPT_DIM), nn.LayerNorm(GPT_DIM)
            self.qkv = nn.Linear(GPT_DIM, 3 * GPT_DIM)
            self.proj = nn.Linear(GPT_DIM, GPT_DIM)
            self.fc1, self.fc2 = nn.Linear(GPT_DIM, 4 * GPT_DIM), nn.Linear(4 * GPT_DIM, GPT_DIM)
            mask = torch.full((GPT_SEQ, GPT_SEQ), float("-inf")).triu(1)
            self.register_buffer("mask", mask, persistent=False)

        def attention(self, x: Any) -> Any:
            b, t, _ = x.shape
            head = GPT_DIM // GPT_HEADS
            q, k, v = self.qkv(x).view(b, t, 3, GPT_HEADS, head).permute(2, 0, 3, 1, 4)
            scores = q @ k.transpose(-1, -2) * head ** -0.5 + self.mask[:t, :t]
            y = F.softmax(scores, dim=-1) @ v
            return self.proj(y.transpose(1, 2).reshape(b, t, GPT_DIM))

        def forward(self, x: Any) -> Any:
            x = x + self.attention(self.ln1(x))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tok = nn.Embedding(GPT_VOCAB, GPT_DIM)
            self.pos = nn.Parameter(torch.randn(1, GPT_SEQ, GPT_DIM) * 0.02)
            self.blocks = nn.ModuleList(Block() for _ in range(GPT_LAYERS))
            self.ln_f = nn.LayerNorm(GPT_DIM)
            self.head = nn.Linear(GPT_DIM, GPT_VOCAB, bias=False)

        def forward(self, ids: Any) -> Any:
            x = self.tok(ids) + self.pos[:, : ids.shape[1]]
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln_f(x))

    return GPT()


def quantize(torch: Any, model: Any, sample: tuple[Any, ...], mode: str) -> tuple[Any, Any]:
    """PT2E-quantizes ``model`` for litert-torch; returns the converted graph module and its QuantConfig."""
    from litert_torch.quantize import pt2e_quantizer as pq
    from litert_torch.quantize.quant_config import QuantConfig
    from torchao.quantization.pt2e import quantize_pt2e

    config = pq.get_symmetric_quantization_config(is_per_channel=True, is_dynamic=mode == "dynint8")
    quantizer = pq.PT2EQuantizer().set_global(config)
    graph = quantize_pt2e.prepare_pt2e(torch.export.export(model, sample).module(), quantizer)
    for _ in range(1 if mode == "dynint8" else 8):  # calibration on random inputs
        graph(*(torch.randn_like(x) if x.is_floating_point() else x for x in sample))
    return quantize_pt2e.convert_pt2e(graph, fold_quantize=False), QuantConfig(pt2e_quantizer=quantizer)


def quantize_file(src: Path, dst: Path) -> None:
    """Dynamic-range int8 by ai-edge-quantizer (installed with litert-torch) from an already converted float file."""
    from ai_edge_quantizer import quantizer, recipe

    if not src.exists():
        raise FileNotFoundError(f"{src.name} must be converted first")
    qt = quantizer.Quantizer(str(src))
    qt.load_quantization_recipe(recipe.dynamic_wi8_afp32())
    qt.quantize().export_model(str(dst), overwrite=True)


def jobs(torch: Any) -> list[tuple[str, Callable[[], tuple[Any, tuple[Any, ...]]], str]]:
    """(output name, builder of (model, sample), variant) for every torch model, in conversion order."""
    import torchvision

    out: list[tuple[str, Callable[[], tuple[Any, tuple[Any, ...]]], str]] = []
    for arch, (res, variants) in TORCHVISION.items():
        def make(arch: str = arch, res: int = res) -> tuple[Any, tuple[Any, ...]]:
            model = CUSTOM[arch](torchvision) if arch in CUSTOM else getattr(torchvision.models, arch)(weights=None)
            return model.eval(), (torch.randn(1, 3, res, res),)

        for variant in ("float32", *variants):
            out.append((f"tv_{arch}_{res}_{variant}", make, variant))

    def make_gpt() -> tuple[Any, tuple[Any, ...]]:
        return build_gpt(torch).eval(), (torch.randint(0, GPT_VOCAB, (1, GPT_SEQ)),)

    for variant in ("float32", *GPT_VARIANTS):
        out.append((f"gpt{GPT_LAYERS}x{GPT_DIM}_{GPT_SEQ}_{variant.split(':')[-1]}", make_gpt, variant))
    return out


def convert_all(out_dir: Path, only: str | None, seed: int, force: bool) -> int:
    """Converts every selected torch model into ``out_dir``; returns the number of failures."""
    import litert_torch
    import torch

    def step(name: str, make: Callable[[], tuple[Any, tuple[Any, ...]]], variant: str) -> Callable[[Path], None]:
        def run(path: Path) -> None:
            if variant.startswith("aeq:"):
                quantize_file(out_dir / f"{name.removesuffix(variant[4:])}float32.tflite", path)
                return
            model, sample = make()
            kwargs: dict[str, Any] = {}
            if variant != "float32":
                model, kwargs["quant_config"] = quantize(torch, model, sample, variant)
            litert_torch.convert(model, sample, **kwargs).export(str(path))
        return run

    return sum(not _converted(torch, out_dir / f"{name}.tflite", step(name, make, variant), seed, force)
               for name, make, variant in jobs(torch) if not only or only in name)


# LiteRT's leaderboard (shared reference): its torchvision files, named as its rows' ``file``, at their inputs
# (builder keyword arguments, resolution); torchvision's GoogLeNet and Inception-V3 without their auxiliary heads,
# the segmentation models' "out" alone. Rebuilt with random weights: the rows' latency and memory do not depend on
# weight values. MobileNetV2's two quantized rows come from the float file by ai-edge-quantizer.
LEADERBOARD: dict[str, tuple[dict[str, Any], int]] = {
    "mobilenet_v2": ({}, 224), "mobilenet_v3_small": ({}, 224), "mobilenet_v3_large": ({}, 224),
    "efficientnet_b0": ({}, 224), "resnet18": ({}, 224), "resnet50": ({}, 224), "squeezenet1_1": ({}, 224),
    "shufflenet_v2_x0_5": ({}, 224), "googlenet": ({"aux_logits": False, "init_weights": True, "transform_input": True}, 224),
    "inception_v3": ({"aux_logits": False, "init_weights": True, "transform_input": True}, 299),
    "convnext_tiny": ({}, 224),
    "efficientnet_v2_s": ({}, 384),
    "lraspp_mobilenet_v3_large": ({"weights_backbone": None}, 520),
    "deeplabv3_resnet50": ({"weights_backbone": None, "aux_loss": False}, 520),
}
SEGMENTATION = ("lraspp_mobilenet_v3_large", "deeplabv3_resnet50")


def leaderboard_model(torch: Any, name: str) -> tuple[Any, tuple[Any, ...]]:
    """(model, sample) of one leaderboard architecture."""
    import torchvision

    kwargs, res = LEADERBOARD[name]
    if name not in SEGMENTATION:
        return getattr(torchvision.models, name)(weights=None, **kwargs).eval(), (torch.randn(1, 3, res, res),)
    inner = getattr(torchvision.models.segmentation, name)(weights=None, **kwargs)

    class OutOnly(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, x: Any) -> Any:
            return self.inner(x)["out"]

    return OutOnly().eval(), (torch.randn(1, 3, res, res),)


def static_int8_file(src: Path, dst: Path, seed: int) -> None:
    """Full int8 (ai-edge-quantizer's static_wi8_ai8 recipe) of an already converted float file, calibrated on 8
    random N(0, 1) images."""
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter
    from ai_edge_quantizer import quantizer, recipe

    signature, spec = next(iter(Interpreter(model_path=str(src)).get_signature_list().items()))
    rng = np.random.default_rng(seed)
    data = {signature: [{spec["inputs"][0]: rng.standard_normal((1, 3, 224, 224), dtype=np.float32)}
                        for _ in range(8)]}
    qt = quantizer.Quantizer(str(src))
    qt.load_quantization_recipe(recipe.static_wi8_ai8())
    qt.quantize(qt.calibrate(data)).export_model(str(dst), overwrite=True)


def convert_leaderboard(out_dir: Path, seed: int, force: bool) -> int:
    """Rebuilds the leaderboard's files into ``out_dir``; returns the number of failures."""
    import litert_torch
    import torch

    def convert(name: str) -> Callable[[Path], None]:
        def run(path: Path) -> None:
            model, sample = leaderboard_model(torch, name)
            litert_torch.convert(model, sample).export(str(path))
        return run

    float_file = out_dir / "mobilenet_v2.tflite"
    steps: dict[str, Callable[[Path], None]] = {name: convert(name) for name in LEADERBOARD}
    steps["mobilenet_v2_dynamic_wi8_afp32"] = lambda path: quantize_file(float_file, path)
    steps["mobilenet_v2_int8_channelwise"] = lambda path: static_int8_file(float_file, path, seed)
    return sum(not _converted(torch, out_dir / f"{name}.tflite", step, seed, force) for name, step in steps.items())


def _converted(torch: Any, path: Path, step: Callable[[Path], None], seed: int, force: bool) -> bool:
    """Runs ``step(path)`` unless ``path`` exists (and not ``force``), seeded, timed and printed; False when it
    failed (one model's failure must not stop the others)."""
    name = path.stem
    if path.exists() and not force:
        print(f"{name}: kept ({path.stat().st_size:,} bytes)")
        return True
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    start = time.perf_counter()
    try:
        step(path)
    except Exception as err:  # noqa: BLE001 (reported, and counted as a failure)
        print(f"{name}: FAILED {type(err).__name__}: {str(err)[:300]}", flush=True)
        return False
    print(f"{name}: {path.stat().st_size:,} bytes in {time.perf_counter() - start:.0f} s", flush=True)
    return True


def copy_mediapipe(out_dir: Path) -> int:
    """Copies every .tflite inside the installed mediapipe package; returns how many were copied."""
    spec = importlib.util.find_spec("mediapipe")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("mediapipe is not installed in this environment")
    root = Path(next(iter(spec.submodule_search_locations)))
    out_dir.mkdir(parents=True, exist_ok=True)
    found = sorted(root.rglob("*.tflite"))
    for src in found:
        dst = out_dir / f"mp_{src.stem}.tflite"
        shutil.copyfile(src, dst)
        print(f"{dst.name}: {dst.stat().st_size:,} bytes (from {src.relative_to(root)})")
    if not found:
        print("no .tflite inside mediapipe (releases after 0.10.21 ship none)")
    return len(found)


# MediaPipe's variants of one architecture (lite/full, short/long range, portrait/landscape, with attention): one
# family, so that a family held out is held out whole
MEDIAPIPE_VARIANTS = ("_with_attention", "_full_range_sparse", "_short_range", "_landscape", "_full", "_lite")
PRECISION_LABELS = {"float32": "float32", "dynint8": "dynamic", "int8": "int8"}  # file suffix -> benchmark label


def manifest_row(path: Path) -> dict[str, str] | None:
    """The benchmark's row for one model file (benchmarks/predict_accuracy.py --external): its family (the
    converter before a colon), model and precision; None for a file this script did not write."""
    stem = path.stem
    if stem.startswith("mp_"):
        name = stem[3:]
        family = name
        for suffix in MEDIAPIPE_VARIANTS:
            family = family.removesuffix(suffix)
        import tflite_flops  # the project's own environment: MediaPipe ships fp16 weights (DEQUANTIZE) or float32

        fp16 = any(op.op_type == "DEQUANTIZE" and op.precision == "float16" for op in tflite_flops.analyze(path).ops)
        return {"file": path.name, "family": f"mediapipe:{family}", "model": name,
                "precision": "fp16" if fp16 else "float32"}
    head, _, suffix = stem.rpartition("_")
    if suffix not in PRECISION_LABELS or not (stem.startswith("tv_") or stem.startswith("gpt")):
        return None
    arch = head.removeprefix("tv_").rsplit("_", 1)[0] if stem.startswith("tv_") else "gpt"
    return {"file": path.name, "family": f"litert-torch:{arch}", "model": head.removeprefix("tv_"),
            "precision": PRECISION_LABELS[suffix]}


def write_manifest(folder: Path, runnable: bool = True) -> int:
    """Writes ``folder/manifest.json`` for every model of this script's in it (and, when ``runnable``, that LiteRT
    can invoke: MediaPipe's face landmark with attention needs its custom ops); returns how many rows."""
    import json

    rows = []
    for path in sorted(folder.glob("*.tflite")):
        row = manifest_row(path)
        if row is None:
            continue
        if runnable:
            from ai_edge_litert.interpreter import Interpreter

            try:
                Interpreter(model_path=str(path)).allocate_tensors()
            except (RuntimeError, ValueError) as err:
                print(f"{path.name}: left out ({str(err).splitlines()[0][:120]})")
                continue
        rows.append(row)
    (folder / "manifest.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    print(f"{folder / 'manifest.json'}: {len(rows)} models")
    return len(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write the converted torch models here")
    parser.add_argument("--mediapipe", type=Path, metavar="DIR", help="copy MediaPipe's bundled models here")
    parser.add_argument("--leaderboard", type=Path, metavar="DIR",
                        help="rebuild the leaderboard's torchvision files here (benchmarks/leaderboard.py)")
    parser.add_argument("--only", help="convert only the models whose name contains this")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--force", action="store_true", help="convert again even when the output exists")
    parser.add_argument("--manifest", type=Path, metavar="DIR",
                        help="write DIR/manifest.json for benchmarks/predict_accuracy.py --external (run in the "
                             "project's environment: it reads the models with tflite_flops and ai_edge_litert)")
    args = parser.parse_args(argv)
    if args.leaderboard is not None:
        return 1 if convert_leaderboard(args.leaderboard, args.seed, args.force) else 0
    if args.out is None and args.mediapipe is None and args.manifest is None:
        parser.error("give --out DIR, --mediapipe DIR and/or --manifest DIR")
    if args.manifest is not None:
        return 0 if write_manifest(args.manifest) else 1
    failures = 0
    if args.mediapipe is not None:
        failures += copy_mediapipe(args.mediapipe) == 0
    if args.out is not None:
        failures += convert_all(args.out, args.only, args.seed, args.force)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
