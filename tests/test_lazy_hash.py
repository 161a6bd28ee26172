"""The file's SHA-256 is computed only when a report reader needs it (ModelInfo.sha256 is lazy)."""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

import pytest

import tflite_flops
from tflite_flops import files as files_module
from tflite_flops.render import render
from tflite_flops.render.formats.table import SUMMARY_HASH_MAX_BYTES

from tflite_builder import fc_model


def _no_hashing(*_args):
    raise AssertionError("the file was hashed")


def test_analysis_does_not_hash_the_file(tmp_path, monkeypatch):
    path = tmp_path / "fc.tflite"
    path.write_bytes(fc_model())
    real = files_module.sha256_file
    monkeypatch.setattr(files_module, "sha256_file", _no_hashing)
    report = tflite_flops.analyze(path)  # not hashed: _no_hashing would raise
    assert report.totals.macs == 12
    calls = []
    monkeypatch.setattr(files_module, "sha256_file", lambda p: calls.append(p) or real(p))
    # The first read computes it, once; JSON carries the real digest.
    assert report.to_dict()["model"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert report.model.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert len(calls) == 1


def test_pickling_a_report_resolves_the_hash(tmp_path):
    path = tmp_path / "fc.tflite"
    path.write_bytes(fc_model())
    copy = pickle.loads(pickle.dumps(tflite_flops.analyze(path)))  # batch workers send reports back
    assert copy.model.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_summaries_of_a_large_file_do_not_hash_it(tmp_path, monkeypatch):
    # A sparse file just over the summary limit: its pages are holes, nothing is written to disk.
    data = fc_model()
    path = tmp_path / "big.tflite"
    with open(path, "wb") as f:
        f.write(data)
        f.truncate(SUMMARY_HASH_MAX_BYTES + 1)
    monkeypatch.setattr(files_module, "sha256_file", _no_hashing)
    report = tflite_flops.analyze(path)
    for fmt in ("table", "md", "csv"):
        text = render(report, fmt)
        if fmt != "csv":
            assert "sha256 not computed for a large file" in text
    with pytest.raises(AssertionError, match="hashed"):
        render(report, "json")  # the archival formats do need it


@pytest.mark.parametrize("from_bytes", [False, True], ids=["path", "bytes"])
def test_a_report_does_not_keep_the_parsed_model_alive(tmp_path, monkeypatch, from_bytes):
    """The lazy hash holds the file's path and bytes, not the Model: its tensors and ops are freed
    once the report's deferred sections are computed (report.lazy: until then they need the model),
    and the digest read later is still the file's."""
    import weakref

    from tflite_flops import api  # analyze() reads the model (then the entry's analysis and the studies)

    data = fc_model()
    path = tmp_path / "fc.tflite"
    path.write_bytes(data)
    loaded = []
    real_load = api.load_model
    monkeypatch.setattr(api, "load_model", lambda src, *rest: loaded.append(real_load(src, *rest)) or loaded[-1])
    report = tflite_flops.analyze(data if from_bytes else path)
    model = weakref.ref(loaded.pop())
    report.to_dict()  # every deferred section computed: what computed them is dropped
    assert model() is None  # nothing in the report refers to it
    assert report.model.sha256 == hashlib.sha256(data).hexdigest()


def test_a_model_and_its_reports_share_one_digest(tmp_path, monkeypatch):
    path = tmp_path / "fc.tflite"
    path.write_bytes(fc_model())
    model = tflite_flops.load_model(path)
    first, second = tflite_flops.analyze(model), tflite_flops.analyze(model)
    calls = []
    real = files_module.sha256_file
    monkeypatch.setattr(files_module, "sha256_file", lambda p: calls.append(p) or real(p))
    assert first.model.sha256 == second.model.sha256 == model.sha256()
    assert len(calls) == 1  # computed once, for the model and both reports


@pytest.mark.parametrize("size, hashed", [(None, 1), (SUMMARY_HASH_MAX_BYTES + 1, 0)], ids=["shown", "large"])
def test_the_command_line_hashes_a_file_once_beside_the_analysis(tmp_path, monkeypatch, capsys, size, hashed):
    """``analyze`` starts the digest of a file its table shows the hash of (from 256 KiB up to the summary
    limit) on a thread before reading the model; the report then reads that digest, so the file is hashed once.
    A file over the limit is not hashed at all."""
    from tflite_flops.cli import main

    data = (Path(__file__).resolve().parent.parent / "sample_models" / "tiny_decoder.tflite").read_bytes()
    assert len(data) >= files_module.HASH_THREAD_MIN_BYTES  # big enough for a thread of its own
    path = tmp_path / "model.tflite"
    with open(path, "wb") as f:
        f.write(data)
        if size is not None:
            f.truncate(size)  # a sparse tail after the flatbuffer: nothing is written to disk
    calls = []
    real = files_module.sha256_file
    monkeypatch.setattr(files_module, "sha256_file", lambda p: calls.append(p) or real(p))
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    assert len(calls) == hashed
    if hashed:
        assert f"sha256 {hashlib.sha256(data).hexdigest()[:12]}" in out
    else:
        assert "sha256 not computed for a large file" in out
