"""Red-team cases of issue 44's ``packs`` surface: a calibration pack brought back from a phone (``calibrate
--import``) and everything the tool writes (``calibrate --export-pack``, ``-o`` of reports and device profiles).

A pack is an archive from outside: its import reads only regular files inside the pack's folder (a manifest path
that is absolute or holds ``..``, a symbolic link that leaves the folder: refused), checks each model against the
SHA-256 its manifest recorded, validates the manifest's fields under a size and a nesting cap, reads
``profiles/device.txt`` under a cap and prints its device name escaped and bounded. What the tool writes, it
writes onto a new name or a regular file only: never through a symbolic link, never onto a device, a FIFO or a
folder (refused before anything is written), and never over a read-only file without ``--overwrite``.

Kinds: ``packs`` (the import's input), ``writes`` (the export and ``-o``). No case writes to /dev: a device node
is made in the case's own folder (``os.mknod``, as root; else the case is skipped), a FIFO likewise.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any, Callable

import pytest

from redteam import CNN, cli, unchanged, write

LOG = ("INFO: Graph: [models/{model}]\nINFO: Use xnnpack: [{xnn}]\n"
       "INFO: count=40 first={t} curr={t} min={t} max={t} avg={t} std=1 p5={t} median={t} p95={t}\n\n"
       "INFO: Inference timings in us: Init: 900, First inference: {t}, Warmup (avg): {t}, Inference (avg): {t}\n")
POINTS = ("ADD-float32", "overhead-add1")  # 16 runs of 8 models: a pack made and fitted in well under a second


def pack(tmp: Path, logs: bool = True) -> tuple[Path, dict[str, Any]]:
    """A pack exported to ``tmp/pack`` (and, with ``logs``, a benchmark_model log for each of its runs)."""
    pytest.importorskip("ai_edge_litert")  # the runtime's schema writes the pack's models
    from tflite_flops.latency.pack import export_pack
    from tflite_flops.measure.runtime import RuntimeSettings

    folder = tmp / "pack"
    manifest = export_pack(str(folder), RuntimeSettings(), True, POINTS)
    if logs:
        (folder / "profiles").mkdir()
        for i, e in enumerate(manifest["points"]):
            (folder / e["log"]).write_text(LOG.format(model=Path(e["model"]).name, xnn=int(e["delegate"]),
                                                      t=100.0 + 10 * i))
    return folder, manifest


def importing(folder: Path, tmp: Path, *more: str) -> list[str]:
    return ["calibrate", "--import", str(folder), "-o", str(tmp / "phone.json"), *more]


def with_manifest(change: Callable[[dict[str, Any], Path, Path], None]) -> Callable[[Path], list[str]]:
    """A logged pack whose manifest ``change(manifest, pack, tmp)`` edited (and may add files)."""
    def run(tmp: Path) -> list[str]:
        folder, manifest = pack(tmp)
        change(manifest, folder, tmp)
        (folder / "manifest.json").write_text(json.dumps(manifest))
        return importing(folder, tmp)
    return run


def with_pack(change: Callable[[dict[str, Any], Path, Path], None], *more: str) -> Callable[[Path], list[str]]:
    """A logged pack that ``change(manifest, pack, tmp)`` altered (its manifest as exported)."""
    def run(tmp: Path) -> list[str]:
        folder, manifest = pack(tmp)
        change(manifest, folder, tmp)
        return importing(folder, tmp, *more)
    return run


SECRET_LOG = LOG.format(model="overhead-add1.tflite", xnn=1, t=5.0)  # a valid log, outside the pack


def _secret(tmp: Path) -> str:
    return write(tmp, "outside/secret.log", SECRET_LOG.encode())


def _abs_log(m: dict, p: Path, t: Path) -> None:
    m["points"][0]["log"] = _secret(t)


def _abs_model(m: dict, p: Path, t: Path) -> None:
    m["points"][0]["model"] = str(p / m["points"][0]["model"])


def _dotdot_log(m: dict, p: Path, t: Path) -> None:
    _secret(t)
    m["points"][0]["log"] = "profiles/../../outside/secret.log"


def _dotdot_model(m: dict, p: Path, t: Path) -> None:
    other = t / "outside" / "m.tflite"
    other.parent.mkdir(exist_ok=True)
    other.write_bytes((p / m["points"][0]["model"]).read_bytes())
    m["points"][0]["model"] = "models/../../outside/m.tflite"


def _log_symlink(m: dict, p: Path, t: Path) -> None:
    log = p / m["points"][0]["log"]
    log.unlink()
    log.symlink_to(_secret(t))


def _profiles_symlink(m: dict, p: Path, t: Path) -> None:
    os.rename(p / "profiles", t / "elsewhere")
    (p / "profiles").symlink_to(t / "elsewhere")


def _model_symlink(m: dict, p: Path, t: Path) -> None:
    model = p / m["points"][0]["model"]
    copy = t / "copy.tflite"
    copy.write_bytes(model.read_bytes())  # the very same bytes: the link alone is refused
    model.unlink()
    model.symlink_to(copy)


def _manifest_symlink(m: dict, p: Path, t: Path) -> None:
    os.rename(p / "manifest.json", t / "manifest.json")
    (p / "manifest.json").symlink_to(t / "manifest.json")


def _capture_symlink(m: dict, p: Path, t: Path) -> None:
    (p / "profiles" / "farm_logcat.txt").symlink_to(_secret(t))


def _model_replaced(m: dict, p: Path, t: Path) -> None:
    models = sorted({e["model"] for e in m["points"]})
    (p / models[0]).write_bytes((p / models[1]).read_bytes())  # another model of the suite, a valid one


def _log_of_another_model(m: dict, p: Path, t: Path) -> None:
    e = m["points"][0]
    other = next(x for x in m["points"] if x["model"] != e["model"])
    (p / e["log"]).write_text(LOG.format(model=Path(other["model"]).name, xnn=int(e["delegate"]), t=77.0))


def _log_fifo(m: dict, p: Path, t: Path) -> None:
    log = p / m["points"][0]["log"]
    log.unlink()
    os.mkfifo(log)


def _device_txt_sparse(m: dict, p: Path, t: Path) -> None:
    with open(p / "profiles" / "device.txt", "wb") as f:  # 400 MB, sparse: read whole it took 837 MB
        f.truncate(400 << 20)


def _device_txt_escapes(m: dict, p: Path, t: Path) -> None:
    (p / "profiles" / "device.txt").write_bytes(b"cores=8\nmodel=\x1b[2J\x1b]0;owned\x07Pixel\rerror: fake" +
                                                b"X" * 5000 + b"\nmachine=aarch64\n")


def _no_escapes(proc: Any, tmp: Path) -> None:
    out = proc.stdout + proc.stderr
    assert "\x1b" not in out and "\x07" not in out and "\r" not in out, repr(out[:500])
    assert "Pixel" in out and "X" * 100 not in out, out[:500]  # printed escaped, and cut short
    cpu = json.loads((tmp / "phone.json").read_text())["machine"]["cpu"]
    assert "\x1b" not in cpu and len(cpu) <= 80, cpu


def _big_manifest(m: dict, p: Path, t: Path) -> None:
    m["only"] = ["x" * 100] * 50_000  # 5 MB


def _deep_manifest(m: dict, p: Path, t: Path) -> None:
    m["budget"] = json.loads("[" * 50 + "]" * 50)


def _nan_threads(m: dict, p: Path, t: Path) -> None:
    m["threads"] = float("nan")  # json.dumps writes NaN


def _zero_runs(m: dict, p: Path, t: Path) -> None:
    m["estimate"]["runs"] = 0


def _path_not_string(m: dict, p: Path, t: Path) -> None:
    m["points"][1]["profile"] = ["profiles", "x.csv"]


def _huge_threads(m: dict, p: Path, t: Path) -> None:
    m["threads"] = 10 ** 400


def _huge_threads_text(tmp: Path) -> list[str]:
    folder, manifest = pack(tmp)
    text = json.dumps({**manifest, "threads": 0}).replace('"threads": 0', '"threads": 1' + "0" * 5000)
    (folder / "manifest.json").write_text(text)
    return importing(folder, tmp)


# ---- what the tool writes ------------------------------------------------------------------------------


def victim(tmp: Path, name: str = "victim.txt", data: bytes = b"keep me\n") -> Path:
    path = tmp / name
    path.write_bytes(data)
    return path


def exporting(prepare: Callable[[Path, Path], None], *more: str) -> Callable[[Path], list[str]]:
    """``calibrate --export-pack tmp/pack`` after ``prepare(pack, tmp)`` laid a trap in the folder."""
    def run(tmp: Path) -> list[str]:
        pytest.importorskip("ai_edge_litert")
        folder = tmp / "pack"
        folder.mkdir()
        prepare(folder, tmp)
        return ["calibrate", "--export-pack", str(folder), "--quick", "--points", ",".join(POINTS), *more]
    return run


def _victim_untouched(name: str = "victim.txt", mode: int = 0o644) -> Callable[[Any, Path], None]:
    def check(proc: Any, tmp: Path) -> None:
        path = tmp / name
        assert path.read_bytes() == b"keep me\n", path.read_bytes()[:100]
        assert stat.S_IMODE(os.stat(path).st_mode) == mode, oct(os.stat(path).st_mode)
    return check


def _manifest_link(folder: Path, tmp: Path) -> None:
    (folder / "manifest.json").symlink_to(victim(tmp))


def _script_link(folder: Path, tmp: Path) -> None:
    v = victim(tmp)
    v.chmod(0o644)
    (folder / "run_calibration.sh").symlink_to(v)


def _readme_link(folder: Path, tmp: Path) -> None:
    (folder / "README.txt").symlink_to(victim(tmp))


def _models_link(folder: Path, tmp: Path) -> None:
    (tmp / "elsewhere").mkdir()
    (folder / "models").symlink_to(tmp / "elsewhere")


def _nothing_in(name: str) -> Callable[[Any, Path], None]:
    def check(proc: Any, tmp: Path) -> None:
        assert not list((tmp / name).iterdir()), list((tmp / name).iterdir())
    return check


def _models_file(folder: Path, tmp: Path) -> None:
    (folder / "models").write_bytes(b"keep me\n")


def _manifest_read_only(folder: Path, tmp: Path) -> None:
    (folder / "manifest.json").write_bytes(b"keep me\n")
    (folder / "manifest.json").chmod(0o444)


def _manifest_fifo(folder: Path, tmp: Path) -> None:
    os.mkfifo(folder / "manifest.json")


def char_device(tmp: Path, name: str) -> str:
    """A character device node (1, 3: the null device) made in ``tmp``, never in /dev; the case is skipped
    where this process may not make one (not root)."""
    path = tmp / name
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node here ({exc})")
    return str(path)


def _still(name: str, test: Callable[[int], bool]) -> Callable[[Any, Path], None]:
    def check(proc: Any, tmp: Path) -> None:
        assert test(os.lstat(tmp / name).st_mode), oct(os.lstat(tmp / name).st_mode)
        assert not [p for p in tmp.iterdir() if p.name.startswith(".tflite_flops-")], "a temporary file left"
    return check


def read_only(tmp: Path, name: str) -> str:
    path = victim(tmp, name)
    path.chmod(0o444)
    return str(path)


def _replaced(name: str) -> Callable[[Any, Path], None]:
    def check(proc: Any, tmp: Path) -> None:
        assert (tmp / name).read_bytes() != b"keep me\n"
    return check


def link_to_victim(tmp: Path, name: str) -> str:
    (tmp / name).symlink_to(victim(tmp))
    return str(tmp / name)


def _dir(tmp: Path, name: str) -> str:
    (tmp / name).mkdir()
    return str(tmp / name)


def _side_link(tmp: Path) -> list[str]:
    link_to_victim(tmp, "p.json.points.jsonl")
    return ["calibrate", "-o", str(tmp / "p.json"), "--quick", "--points", "overhead-add1"]


CASES = [
    # A. the import reads only regular files inside the pack, and fits only the models the pack exported
    cli("pack-manifest-absolute-log", "packs", with_manifest(_abs_log), {1}, "field points[0].log: not profiles/NAME"),
    cli("pack-manifest-absolute-model", "packs", with_manifest(_abs_model), {1}, "field points[0].model"),
    cli("pack-manifest-dotdot-log", "packs", with_manifest(_dotdot_log), {1}, "field points[0].log"),
    cli("pack-manifest-dotdot-model", "packs", with_manifest(_dotdot_model), {1}, "field points[0].model"),
    cli("pack-log-symlink-outside", "packs", with_pack(_log_symlink), {1}, "a symbolic link"),
    cli("pack-profiles-symlink", "packs", with_pack(_profiles_symlink), {1}, "a symbolic link"),
    cli("pack-capture-symlink", "packs", with_pack(_capture_symlink), {1}, "a symbolic link"),
    cli("pack-model-symlink", "packs", with_pack(_model_symlink), {1}, "a symbolic link"),
    cli("pack-manifest-symlink", "packs", with_pack(_manifest_symlink), {1}, "a symbolic link"),
    cli("pack-model-replaced", "packs", with_pack(_model_replaced), {1}, "not the model this pack exported"),
    cli("pack-log-of-another-model", "packs", with_pack(_log_of_another_model), {1}, "a run of ADD-float32-"),
    cli("pack-log-fifo", "packs", with_pack(_log_fifo), {1}, "not a regular file"),
    # D. bounded reads, and the device's name escaped
    cli("pack-device-txt-400mb", "packs", with_pack(_device_txt_sparse), {1}, "larger than 64 KiB"),
    cli("pack-device-name-escapes", "packs", with_pack(_device_txt_escapes), {0}, check=_no_escapes),
    cli("pack-manifest-5mb", "packs", with_manifest(_big_manifest), {1}, "larger than 4 MiB"),
    cli("pack-manifest-deep", "packs", with_manifest(_deep_manifest), {1}, "nested more than 8 levels"),
    cli("pack-manifest-nan-threads", "packs", with_manifest(_nan_threads), {1}, "NaN is not a number JSON allows"),
    cli("pack-manifest-huge-threads", "packs", with_manifest(_huge_threads), {1}, "field threads"),
    cli("pack-manifest-5000-digit-threads", "packs", _huge_threads_text, {1}, "a number of thousands of digits"),
    cli("pack-manifest-zero-runs", "packs", with_manifest(_zero_runs), {1}, "field estimate.runs: 0"),
    cli("pack-manifest-path-not-string", "packs", with_manifest(_path_not_string), {1}, "field points[1].profile"),
    # B. the export never writes outside its folder
    cli("export-manifest-symlink", "writes", exporting(_manifest_link), {2}, "a symbolic link",
        check=_victim_untouched()),
    cli("export-script-symlink", "writes", exporting(_script_link), {2}, "a symbolic link",
        check=_victim_untouched()),
    cli("export-readme-symlink", "writes", exporting(_readme_link), {2}, "a symbolic link", check=_victim_untouched()),
    cli("export-models-symlink", "writes", exporting(_models_link), {2}, "a symbolic link",
        check=_nothing_in("elsewhere")),
    cli("export-models-a-file", "writes", exporting(_models_file), {2}, "not a folder",
        check=lambda p, t: (t / "pack" / "models").read_bytes() == b"keep me\n"),
    cli("export-manifest-read-only", "writes", exporting(_manifest_read_only), {2}, "read-only",
        check=_victim_untouched("pack/manifest.json", 0o444)),
    cli("export-manifest-read-only-overwrite", "writes", exporting(_manifest_read_only, "--overwrite"), {0},
        check=_replaced("pack/manifest.json")),
    cli("export-manifest-fifo", "writes", exporting(_manifest_fifo), {2}, "a FIFO",
        check=_still("pack/manifest.json", stat.S_ISFIFO)),
    # C. -o writes a regular file, atomically, and replaces only what it may
    cli("output-char-device", "writes", lambda t: ["analyze", CNN, "-o", char_device(t, "dev.json")], {2},
        "a character device", check=_still("dev.json", stat.S_ISCHR)),
    cli("output-char-device-overwrite", "writes",
        lambda t: ["analyze", CNN, "-o", char_device(t, "dev.json"), "--overwrite"], {2}, "a character device",
        check=_still("dev.json", stat.S_ISCHR)),
    cli("output-fifo", "writes", lambda t: ["analyze", CNN, "-o", str(t / "f.json")] if os.mkfifo(t / "f.json")
        is None else [], {2}, "a FIFO", check=_still("f.json", stat.S_ISFIFO)),
    cli("output-existing-folder", "writes", lambda t: ["analyze", CNN, "-o", _dir(t, "d.json")], {2}, "a directory",
        check=_still("d.json", stat.S_ISDIR)),
    cli("output-read-only", "writes", lambda t: ["analyze", CNN, "-o", read_only(t, "r.json")], {2}, "read-only",
        check=_victim_untouched("r.json", 0o444)),
    cli("output-read-only-overwrite", "writes",
        lambda t: ["analyze", CNN, "-o", read_only(t, "r.json"), "--overwrite"], {0}, check=_replaced("r.json")),
    cli("output-symlink", "writes", lambda t: ["analyze", CNN, "-o", link_to_victim(t, "r.json")], {2},
        "a symbolic link", check=_victim_untouched()),
    cli("output-batch-char-device", "writes",
        lambda t: ["batch", str(Path(CNN).parent), "-o", char_device(t, "rows.csv")], {2}, "a character device",
        check=_still("rows.csv", stat.S_ISCHR)),
    cli("calibrate-import-o-fifo", "writes",
        lambda t: importing(pack(t)[0], t)[:-2] + ["-o", str(t / "p.json")] if os.mkfifo(t / "p.json") is None
        else [], {2}, "a FIFO", check=_still("p.json", stat.S_ISFIFO)),
    cli("calibrate-import-o-read-only", "writes",
        lambda t: importing(pack(t)[0], t)[:-2] + ["-o", read_only(t, "p.json")], {2}, "read-only",
        check=_victim_untouched("p.json", 0o444)),
    cli("calibrate-side-file-symlink", "writes", _side_link, {2}, "a symbolic link", check=_victim_untouched()),
    cli("output-is-input-still-refused", "writes", lambda t: ["analyze", write(t, "m.txt", Path(CNN).read_bytes()),
                                                              "-o", str(t / "m.txt")], {2},
        "that is an input of this command", check=unchanged("m.txt", lambda: Path(CNN).read_bytes())),
]
