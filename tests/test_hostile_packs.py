"""Quick checks of issue 44's ``packs`` surface (the red-team cases, ``tests/redteam_packs.py``, run them all end to
end in the slow lane): what the tool writes replaces only a new name or a regular file (never a device, FIFO,
folder or symbolic link; a read-only file only with ``--overwrite``), and a calibration pack's import reads only
regular files inside its folder, the models its manifest recorded, under caps, with a validated manifest."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import cli_process
import pytest

from tflite_flops.files import NotARegularFile, NotReplaced, check_output, read_capped, write_atomic
from tflite_flops.latency import pack_manifest as pm
from tflite_flops.latency.profile import ProfileError

ROOT = Path(__file__).resolve().parent.parent
CNN = str(ROOT / "sample_models" / "cnn_float.tflite")
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="FIFOs, device nodes, symbolic links")


def _no_temporaries(folder: Path) -> None:
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".tflite_flops-")]


def test_an_output_replaces_only_a_new_name_or_a_writable_regular_file(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tmp_path / "link").symlink_to(victim)
    ro = tmp_path / "ro"
    ro.write_text("keep")
    ro.chmod(0o444)
    for name, why in [("fifo", "a FIFO"), ("dir", "a directory"), ("link", "a symbolic link"), ("ro", "read-only")]:
        with pytest.raises(NotReplaced, match=why):
            write_atomic(tmp_path / name, "new")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "fifo").st_mode) and victim.read_text() == "keep" == ro.read_text()
    _no_temporaries(tmp_path)
    # --overwrite: a read-only file, or the link itself (never what it points to), is replaced
    write_atomic(ro, "new", overwrite=True)
    write_atomic(tmp_path / "link", b"new bytes", overwrite=True)
    assert ro.read_text() == "new" and (tmp_path / "link").read_bytes() == b"new bytes" and victim.read_text() == "keep"
    with pytest.raises(NotReplaced, match="a FIFO"):  # never a FIFO or a device, whatever is asked
        check_output(tmp_path / "fifo", overwrite=True)
    check_output(tmp_path / "new-name")  # a new name is fine


def test_a_device_node_is_never_replaced(tmp_path):
    node = tmp_path / "null"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # in tmp, never in /dev
    except OSError as exc:
        pytest.skip(f"cannot make a device node here ({exc})")
    with pytest.raises(NotReplaced, match="a character device"):
        write_atomic(node, "x", overwrite=True)
    assert stat.S_ISCHR(os.lstat(node).st_mode)
    _no_temporaries(tmp_path)


def test_an_executable_is_made_so_before_it_takes_its_name(tmp_path):
    write_atomic(tmp_path / "run.sh", "#!/bin/sh\n", executable=True)
    assert os.stat(tmp_path / "run.sh").st_mode & 0o111


def test_a_read_without_following_links_refuses_a_link(tmp_path):
    (tmp_path / "f").write_text("x")
    (tmp_path / "l").symlink_to(tmp_path / "f")
    assert read_capped(tmp_path / "l", 10) == b"x"
    with pytest.raises(NotARegularFile, match="a symbolic link"):
        read_capped(tmp_path / "l", 10, follow=False)


def test_the_cli_refuses_before_any_work_and_overwrite_replaces(tmp_path):
    ro = tmp_path / "r.json"
    ro.write_text("keep")
    ro.chmod(0o444)
    r = cli_process.run(["analyze", CNN, "-o", str(ro)], cwd=ROOT, timeout=60)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "read-only" in r.stderr and ro.read_text() == "keep"
    r = cli_process.run(["analyze", CNN, "-o", str(ro), "--overwrite"], cwd=ROOT, timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(ro.read_text())["totals"]["macs"] > 0


# ---- the pack's manifest and files -----------------------------------------------------------------------


def _manifest(**change) -> dict:
    point = {"key": "ADD@x", "id": "ADD", "delegate": True, "model": "models/ADD.tflite", "model_sha256": "a" * 64,
             "log": "profiles/ADD_x.log", "profile": "profiles/ADD_x.csv", "json": "profiles/ADD_x.json"}
    base = {"format": pm.PACK_FORMAT, "version": pm.PACK_VERSION, "threads": 1, "xnnpack": True, "quick": True,
            "budget": {"num_runs": 5}, "estimate": {"runs": 1, "models": 1, "bytes": 10, "max_s": 1.0},
            "points": [point]}
    for key, value in change.items():
        if key.startswith("p_"):
            point[key[2:]] = value
        else:
            base[key] = value
    return base


@pytest.mark.parametrize("change, field", [
    ({"p_log": "/etc/passwd"}, "points[0].log"),
    ({"p_log": "profiles/../../x.log"}, "points[0].log"),
    ({"p_model": "models/../manifest.json"}, "points[0].model"),
    ({"p_model": "models/sub/x.tflite"}, "points[0].model"),
    ({"p_json": "profiles\\..\\x"}, "points[0].json"),
    ({"p_model_sha256": "xyz"}, "points[0].model_sha256"),
    ({"p_delegate": 1}, "points[0].delegate"),
    ({"threads": True}, "threads"),
    ({"threads": 10 ** 9}, "threads"),
    ({"xnnpack": "yes"}, "xnnpack"),
    ({"budget": {"num_runs": -1}}, "budget.num_runs"),
    ({"estimate": {"runs": 0}}, "estimate.runs"),
    ({"only": [3]}, "only"),
    ({"points": []}, "points"),
])
def test_the_manifest_schema_names_the_field(change, field):
    with pytest.raises(ProfileError, match=rf"m\.json: field {field.replace('[', '.').replace(']', '.')}"):
        pm.validate(_manifest(**change), "m.json")
    pm.validate(_manifest(), "m.json")


def test_the_manifest_is_read_under_its_caps(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps(_manifest(budget=json.loads("[" * 20 + "]" * 20))))
    with pytest.raises(ProfileError, match="nested more than 8 levels"):
        pm.load(str(tmp_path))
    with open(tmp_path / "manifest.json", "wb") as f:
        f.truncate(pm.MANIFEST_CAP + 1)
    with pytest.raises(ProfileError, match="larger than 4 MiB"):
        pm.load(str(tmp_path))
    (tmp_path / "manifest.json").write_text(json.dumps(_manifest(threads=float("nan"))))
    with pytest.raises(ProfileError, match="NaN"):
        pm.load(str(tmp_path))
    assert pm.nesting_depth('{"a": "[[[[", "b": [[1]]}', 8) == 3  # brackets in strings are not nesting


def test_a_pack_file_never_leaves_the_folder(tmp_path):
    outside = tmp_path / "outside.log"
    outside.write_text("x")
    folder = tmp_path / "pack"
    (folder / "profiles").mkdir(parents=True)
    (folder / "profiles" / "a.log").symlink_to(outside)
    with pytest.raises(ProfileError, match="a symbolic link"):
        pm.pack_file(str(folder), "profiles/a.log", "a log")
    (folder / "models").symlink_to(tmp_path)
    with pytest.raises(ProfileError, match="a symbolic link"):
        pm.pack_file(str(folder), "models/outside.log", "a model")
    os.mkfifo(folder / "profiles" / "b.log")
    with pytest.raises(ProfileError, match="not a regular file"):
        pm.pack_file(str(folder), "profiles/b.log", "a log")
    assert pm.pack_file(str(folder), "profiles/missing.log", "a log").endswith("missing.log")


def test_device_txt_is_capped_and_its_values_escaped_and_bounded(tmp_path):
    (tmp_path / "profiles").mkdir()
    device = tmp_path / "profiles" / "device.txt"
    device.write_bytes(b"cores=4\nmodel=\x1b]0;x\x07Pixel " + b"9" * 500 + b"\nother=ignored\n")
    facts = pm.device_facts(str(tmp_path))
    assert facts["cores"] == "4" and "\x1b" not in facts["model"] and "\\x1b" in facts["model"]
    assert len(facts["model"]) == pm.DEVICE_VALUE_MAX and "other" not in facts
    with open(device, "wb") as f:  # sparse: never read whole
        f.truncate(400 << 20)
    with pytest.raises(ProfileError, match="larger than 64 KiB"):
        pm.device_facts(str(tmp_path))


def test_an_exported_pack_records_each_model_s_sha256_and_refuses_another(tmp_path):
    pytest.importorskip("ai_edge_litert")
    import hashlib

    from tflite_flops.latency.pack import export_pack, import_pack
    from tflite_flops.measure.runtime import RuntimeSettings

    folder = tmp_path / "pack"
    manifest = export_pack(str(folder), RuntimeSettings(), True, ("overhead-add1",))
    for e in manifest["points"]:
        assert e["model_sha256"] == hashlib.sha256((folder / e["model"]).read_bytes()).hexdigest()
    assert manifest["version"] == 2 and os.stat(folder / "run_calibration.sh").st_mode & 0o111
    e = manifest["points"][0]
    (folder / "profiles").mkdir()
    (folder / e["log"]).write_text("Inference timings in us: Init: 1, First inference: 2, Warmup (avg): 3, "
                                   "Inference (avg): 40\n")
    other = next(x for x in manifest["points"] if x["model"] != e["model"])
    (folder / e["model"]).write_bytes((folder / other["model"]).read_bytes())
    with pytest.raises(ProfileError, match="not the model this pack exported"):
        import_pack(str(folder))
    # a second export over the first replaces its files; a link planted in it is refused, its target untouched
    (folder / "README.txt").unlink()
    (folder / "README.txt").symlink_to(tmp_path / "victim")
    (tmp_path / "victim").write_text("keep")
    with pytest.raises(NotReplaced, match="a symbolic link"):
        export_pack(str(folder), RuntimeSettings(), True, ("overhead-add1",))
    assert (tmp_path / "victim").read_text() == "keep"


def test_the_library_s_write_refuses_a_read_only_report_unless_asked(tmp_path):
    import tflite_flops
    from tflite_flops.errors import OutputFormatError
    from tflite_flops.render import write

    report = tflite_flops.analyze(CNN)
    ro = tmp_path / "r.json"
    ro.write_text("keep")
    ro.chmod(0o444)
    with pytest.raises(OutputFormatError, match="read-only"):
        write(report, str(ro))
    assert ro.read_text() == "keep"
    write(report, str(ro), overwrite=True)
    assert json.loads(ro.read_text())["totals"]["macs"] > 0


def test_calibrate_s_one_output_is_not_split_into_characters(tmp_path):
    # `calibrate -o x.json` is one path: its "." was taken for an output, and `--import .` for that same file
    r = cli_process.run(["calibrate", "--import", ".", "-o", "x.json"], cwd=tmp_path, timeout=60)
    assert r.returncode == 1 and "not a calibration pack" in r.stderr, r.stderr


def test_the_export_checks_every_file_before_writing_one(tmp_path):
    pytest.importorskip("ai_edge_litert")
    from tflite_flops.latency.pack import export_pack
    from tflite_flops.measure.runtime import RuntimeSettings

    folder = tmp_path / "pack"
    (folder / "models").mkdir(parents=True)
    os.mkfifo(folder / "models" / "overhead-add16.tflite")
    with pytest.raises(NotReplaced, match="a FIFO"):
        export_pack(str(folder), RuntimeSettings(), True, ("overhead-add1",))
    assert sorted(p.name for p in (folder / "models").iterdir()) == ["overhead-add16.tflite"]
    assert sorted(p.name for p in folder.iterdir()) == ["models"]


# ---- a short coverage-guided run of the pack import harness ----------------------------------------------------


@pytest.mark.slow  # ~20 s: 200 seeded inputs of fuzz/fuzz_pack.py (libFuzzer via atheris)
@pytest.mark.runtime
@pytest.mark.skipif(__import__("platform").machine() != "x86_64" or not sys.platform.startswith("linux"),
                    reason="atheris (the test extra) has wheels for Linux x86-64 only")
def test_a_short_coverage_guided_fuzz_run_of_the_pack_import_finds_nothing(tmp_path):
    import atheris  # noqa: F401 - in the test extra on Linux x86-64

    from fuzz_corpus import run_atheris

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(8):
        (corpus / f"seed{i}").write_bytes(bytes(range(i * 29 % 256, 256))[:40 + 13 * i])
    run_atheris("fuzz_pack.py", corpus, 200, tmp_path)


@pytest.mark.runtime
def test_a_pack_whose_runs_fit_no_law_says_so(tmp_path):
    """Only the overhead chains came back: one line that says their runs fit no law, not "nothing was timed"."""
    from tflite_flops.latency.pack import export_pack, import_pack
    from tflite_flops.latency.profile import ProfileError
    from tflite_flops.measure.runtime import RuntimeSettings

    pack = tmp_path / "pack"
    manifest = export_pack(str(pack), RuntimeSettings(), True, ("overhead-add1",))
    (pack / "profiles").mkdir(exist_ok=True)
    for entry in manifest["points"]:
        (pack / entry["log"]).write_text(
            f"INFO: Graph: [{entry['model']}]\nINFO: Use xnnpack: [{int(entry['delegate'])}]\n"
            "INFO: count=40 first=120 curr=120 min=118 max=125 avg=120 std=1 p5=118 median=120 p95=124\n\n"
            "INFO: Inference timings in us: Init: 900, First inference: 130, Warmup (avg): 121, Inference (avg): 120\n")
    with pytest.raises(ProfileError, match="run\\(s\\) that came back fit no law"):
        import_pack(str(pack))
