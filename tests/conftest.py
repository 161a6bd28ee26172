"""Shared pytest setup.

* ``TF_CPP_MIN_LOG_LEVEL=2`` before anything can import TensorFlow (hides its C++ INFO/WARNING logs).
* Tests marked ``tf`` are skipped when TensorFlow cannot be imported, tests marked
  ``runtime`` when the LiteRT interpreter (``ai_edge_litert``) cannot be imported. The
  markers are declared in pyproject.toml. Tests marked ``micro`` need the ``tflite-micro`` package,
  ``bundle`` the official LiteRT-LM builder (``litert-lm-builder``), ``engine`` the LiteRT-LM engine
  (``litert-lm-api``).
  With ``CI=true`` nothing is skipped for a missing package: those tests fail. Test bodies never
  call ``pytest.importorskip`` for these packages (a missing one then errors).
* Every ``tf`` test is also ``slow``: importing TensorFlow takes seconds and each of these tests
  converts a Keras model (or runs TensorFlow) on top of it, so ``pytest -m "not slow"`` (the quick
  lane) leaves them all out, including those of a module that forgot the marker.
* The garbage collector is off while the tests are collected; then the objects that exist (the modules, the
  collected tests) are moved out of its sight (``gc.freeze``): they live as long as the session, and every full
  collection walked them again. The syntax trees a test module read through ``source_trees`` are freed after its tests.
* ``samples_dir``: the repository's ``sample_models/`` directory.
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import gc  # noqa: E402
import importlib  # noqa: E402
from functools import lru_cache  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

import source_trees  # noqa: E402

SAMPLES_DIR = Path(__file__).resolve().parent.parent / "sample_models"

# marker -> (module that must import, reason shown in the skip message)
_OPTIONAL = {
    "tf": ("tensorflow", "TensorFlow is not installed (pip install tensorflow-cpu)"),
    "runtime": ("ai_edge_litert.interpreter", "the LiteRT interpreter is not installed (pip install ai-edge-litert)"),
    "micro": ("tflite_micro", "the TensorFlow Lite Micro interpreter is not installed (pip install --pre tflite-micro)"),
    "bundle": ("litert_lm_builder.litertlm_builder", "the LiteRT-LM builder is not installed (pip install litert-lm-builder)"),
    "engine": ("litert_lm", "the LiteRT-LM engine is not installed (pip install litert-lm-api)"),
}


@lru_cache(maxsize=None)
def _importable(module: str) -> bool:
    """True when ``module`` imports. A real import (not find_spec), so a broken install also skips."""
    try:
        importlib.import_module(module)
    except Exception:  # ImportError, or a broken binary install raising something else
        return False
    return True


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects: the added ``slow`` must count there
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("tf") is not None and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)


def pytest_configure(config):
    gc.disable()  # until the tests are collected: importing and collecting them makes no garbage cycle worth a pass


def pytest_collection_finish(session):
    gc.collect()
    gc.freeze()
    gc.enable()


def pytest_runtest_setup(item):
    # Only a test that runs imports the (slow) optional module it needs; a deselected one does not.
    # In CI (CI=true) a missing optional package is an install bug, not a reason to skip:
    # the tests that need it fail instead, so a green CI really ran everything.
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        return
    for marker, (module, reason) in _OPTIONAL.items():
        if item.get_closest_marker(marker) is not None and not _importable(module):
            pytest.skip(reason)


@pytest.fixture(autouse=True, scope="module")
def _forget_source_trees():
    """The syntax trees a test module parsed (``source_trees``) are freed with it."""
    yield
    source_trees.forget()


@pytest.fixture(scope="session")
def samples_dir() -> Path:
    """Path of ``sample_models/`` (regenerate its files with ``python sample_models/make_samples.py``)."""
    return SAMPLES_DIR
