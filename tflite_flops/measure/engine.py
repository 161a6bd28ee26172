"""The LiteRT-LM engine's own measurement of a bundle (``litert_lm.Benchmark``, package ``litert-lm-api``).

With ``--latency`` on a bundle, the engine loads the bundle as an application would (its tokenizer,
its LLM metadata, its own KV cache and sampler), prefills a prompt and decodes, and reports prefill
and decode tokens/s, the time to the first token and its init time. It runs in a child process:
the engine is native code that logs to stderr and may abort on a bundle it cannot handle, and
neither may reach the caller. When it cannot run the bundle here, :class:`EngineRun` says why in
one line (taken from the engine's own error), and the signature runner's figures stand alone.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import replace
from typing import Any

from ..report import EngineRun, Report
from .runtime import RuntimeSettings

ENGINE_PACKAGE = "litert_lm"
INSTALL_HINT = "pip install litert-lm-api"
DEFAULT_DECODE_TOKENS = 16
DEFAULT_PREFILL_TOKENS = 16
TIMEOUT_S = 600.0


def engine_available() -> bool:
    """True when the engine's package can be imported (found without importing it)."""
    return importlib.util.find_spec(ENGINE_PACKAGE) is not None


def add_engine_run(report: Report, settings: RuntimeSettings = RuntimeSettings(), *,
                   prefill_tokens: int | None = None, decode_tokens: int | None = None,
                   timeout_s: float = TIMEOUT_S) -> Report:
    """``report`` (of a bundle) with ``report.bundle.engine`` set: the engine's figures or why there are none.

    Args:
        report: a report whose ``bundle`` is set.
        settings: the threads to give the engine's CPU backend.
        prefill_tokens: prompt tokens to prefill (default: the prefill signature's token count, else 16).
        decode_tokens: tokens to decode (default 16).
        timeout_s: the child process's limit.
    """
    bundle = report.bundle
    if bundle is None:
        return report
    if prefill_tokens is None:
        prefill = [s.tokens.tokens for s in report.signatures.values() if s.tokens and s.tokens.role == "prefill"]
        prefill_tokens = max(prefill) if prefill else DEFAULT_PREFILL_TOKENS
    run = run_engine(bundle.path, settings.threads, prefill_tokens, decode_tokens or DEFAULT_DECODE_TOKENS, timeout_s)
    return replace(report, bundle=replace(bundle, engine=run))


def run_engine(path: str | None, threads: int, prefill_tokens: int, decode_tokens: int,
               timeout_s: float = TIMEOUT_S) -> EngineRun:
    """Benchmark a bundle file with the LiteRT-LM engine on CPU, in a child process."""
    if path is None:
        return EngineRun(False, "the engine reads a bundle file; this one was given as bytes")
    if not engine_available():
        return EngineRun(False, f"the LiteRT-LM engine is not installed ({INSTALL_HINT})")
    args = [sys.executable, "-m", __name__, os.fspath(path), str(threads), str(prefill_tokens), str(decode_tokens)]
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return EngineRun(False, f"the engine did not finish within {timeout_s:g} s")
    result = _last_json(done.stdout)
    if result is None:
        return EngineRun(False, _engine_error(done.stderr) or f"the engine stopped (exit status {done.returncode})")
    if result.get("error"):
        return EngineRun(False, _engine_error(done.stderr) or result["error"], version=result.get("version"))
    why = _engine_error(done.stderr) or "no reason given"
    if not result["prefill_tokens"] and not result["decode_tokens"]:
        return EngineRun(False, f"the engine loaded the bundle but generated no tokens: {why}",
                         version=result.get("version"), init_s=result["init_s"])
    decoded = result["decode_tokens"] > 0
    return EngineRun(True, None if decoded else f"the engine prefilled but decoded no tokens: {why}", "cpu",
                     result.get("version"), result["prefill_tokens"], result["prefill_tokens_per_s"],
                     result["decode_tokens"], result["decode_tokens_per_s"] if decoded else None,
                     result["time_to_first_token_s"] if decoded else None, result["init_s"])


def _last_json(stdout: str) -> dict[str, Any] | None:
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                return None
            return value if isinstance(value, dict) else None
    return None


def _engine_error(stderr: str) -> str | None:
    """The engine's own one-line error: the message of its last error log line (``E.... file:line] msg``)."""
    for line in reversed(stderr.splitlines()):
        text = line.strip()
        if text.startswith("E") and "] " in text and text[1:5].isdigit():
            message = text.split("] ", 1)[1].strip()
            for prefix in ("Failed to generate content: ", "Failed to create engine: "):
                message = message.removeprefix(prefix)
            return message[:300]
    return None


def _child(path: str, threads: int, prefill_tokens: int, decode_tokens: int) -> dict[str, Any]:
    """Run ``litert_lm.Benchmark`` once (in the child process) and return its figures."""
    import litert_lm
    from litert_lm import interfaces

    try:
        from importlib.metadata import version
        engine_version = version("litert-lm-api")
    except Exception:  # noqa: BLE001 - the version is informational
        engine_version = None
    try:
        # the engine caches its compiled kernels next to the model unless told otherwise: a temporary
        # directory keeps the user's folder clean (and every run starts cold, as init_s says)
        with tempfile.TemporaryDirectory(prefix="tflite_flops-engine-") as cache:
            info = litert_lm.Benchmark(model_path=path, backend=interfaces.CPU(thread_count=threads),
                                       prefill_tokens=prefill_tokens, decode_tokens=decode_tokens,
                                       cache_dir=cache).run()
    except Exception as exc:  # noqa: BLE001 - reported to the parent as one line
        return {"error": f"{type(exc).__name__}: {exc}", "version": engine_version}
    return {"version": engine_version, "init_s": float(info.init_time_in_second),
            "time_to_first_token_s": float(info.time_to_first_token_in_second),
            "prefill_tokens": int(info.last_prefill_token_count),
            "prefill_tokens_per_s": float(info.last_prefill_tokens_per_second),
            "decode_tokens": int(info.last_decode_token_count),
            "decode_tokens_per_s": float(info.last_decode_tokens_per_second)}


if __name__ == "__main__":  # the child process of run_engine
    print(json.dumps(_child(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))), flush=True)
