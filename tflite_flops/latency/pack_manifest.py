"""A calibration pack's manifest and the files it names, read as untrusted input (issue 44).

A pack comes back from a phone, a device farm or a colleague: its ``manifest.json`` is parsed under a size
cap (:data:`MANIFEST_CAP`) and a nesting cap (:data:`MANIFEST_DEPTH`), then validated field by field
(:func:`validate`) before any value is used; each failure is one :class:`ProfileError` line naming the file
and the field. The files the manifest names are only ever read inside the pack's folder (:func:`pack_file`):
a model is ``models/NAME.tflite`` and a run's outputs ``profiles/NAME``, one plain name each (no ``/``, no
``..``, never absolute); ``models/``, ``profiles/`` and the files in them are refused when they are symbolic
links, and a file that is not regular is refused too. Each model's SHA-256, recorded at export, is checked at
import (:func:`check_model`): a model replaced by another is refused, not fitted.

``profiles/device.txt`` (what the runner recorded of the device) is read under :data:`DEVICE_TXT_CAP`; each of
its values is made printable (:func:`tflite_flops.units.printable`) and cut to :data:`DEVICE_VALUE_MAX`
characters (:func:`device_facts`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
from typing import Any

from ..files import MiB, NotARegularFile, TooLarge, read_capped
from ..units import printable
from .profile import ProfileError

PACK_FORMAT = "tflite_flops.calibration_pack"
PACK_VERSION = 2  # 2: each point records its model's sha256 (model_sha256)
MANIFEST_CAP = 4 * MiB  # the full suite's manifest is ~150 KB
MANIFEST_DEPTH = 8  # levels of JSON nesting (the manifest has 3)
MAX_POINTS = 20_000  # runs a manifest may name (the full suite has a few hundred)
MAX_NAME = 200  # characters of a key, id, path or other string field
MAX_THREADS = 1024
MAX_PROFILE_FILES = 50_000  # entries of profiles/ looked at for captures of many runs
DEVICE_TXT_CAP = 64 << 10  # profiles/device.txt: a few short lines (and a feature-flags line of a few KB)
DEVICE_VALUE_MAX = 80  # characters kept of each of its values (a device name)
FEATURES_MAX = 4096  # characters kept of its CPU's feature flags (an x86 flags line is ~1,500)
MODEL_CAP = 64 * MiB  # a pack's model, read back at import (the suite's largest is a few MB)
OUTPUT_KEYS = ("log", "profile", "json")  # a run's outputs, each profiles/NAME
_HEX64 = re.compile(r"[0-9a-f]{64}")


def _fail(path: str, field: str, why: str) -> ProfileError:
    return ProfileError(f"{path}: field {field}: {why}")


def nesting_depth(text: str, limit: int) -> int:
    """The deepest nesting of ``[``/``{`` in the JSON ``text`` (strings skipped), counted in one pass; stops at
    ``limit + 1``."""
    depth = deepest = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif c in "]}":
            depth -= 1
    return deepest


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def load(folder: str) -> dict[str, Any]:
    """The pack's manifest, read and validated (:func:`validate`).

    Raises:
        ProfileError: no manifest (not a pack), a manifest that is a link or not a regular file, over
            :data:`MANIFEST_CAP`, nested deeper than :data:`MANIFEST_DEPTH`, not JSON, or invalid (one line).
    """
    path = os.path.join(folder, "manifest.json")
    try:
        text = read_capped(pack_file(folder, "manifest.json", "the pack's manifest"), MANIFEST_CAP, "r",
                           encoding="utf-8", follow=False)
    except FileNotFoundError:
        raise ProfileError(f"{folder}: not a calibration pack (no manifest.json; make one with --export-pack)") \
            from None
    except TooLarge:
        raise ProfileError(f"{path}: larger than {MANIFEST_CAP // MiB} MiB, the most read of a pack's manifest") \
            from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError(f"{path}: cannot read the pack's manifest ({exc})") from None
    if nesting_depth(text, MANIFEST_DEPTH) > MANIFEST_DEPTH:
        raise ProfileError(f"{path}: not a calibration pack manifest (its JSON is nested more than "
                           f"{MANIFEST_DEPTH} levels deep)")
    try:
        manifest = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ProfileError(f"{path}: not a calibration pack manifest (invalid JSON at line {exc.lineno})") from None
    except (ValueError, RecursionError) as exc:  # NaN / Infinity; an integer of thousands of digits
        why = "a number of thousands of digits" if "digits" in str(exc) else str(exc)
        raise ProfileError(f"{path}: not a calibration pack manifest ({why})") from None
    return validate(manifest, path)


def validate(manifest: Any, path: str) -> dict[str, Any]:
    """``manifest`` when it is a calibration pack manifest of this version with every field in range; else one
    ProfileError line naming ``path`` and the field.

    Fields: ``format`` (the pack format), ``version`` (:data:`PACK_VERSION`), ``threads`` (1 to
    :data:`MAX_THREADS`), ``xnnpack`` and ``quick`` (booleans), ``points`` (1 to :data:`MAX_POINTS` runs, each
    with ``key`` and ``id`` strings, ``delegate`` a boolean, ``model`` ``models/NAME.tflite``, ``model_sha256``
    64 lower-case hex digits, and ``log``, ``profile``, ``json`` each ``profiles/NAME``); optional: ``budget``
    (finite numbers >= 0), ``estimate`` (``runs`` and ``models`` > 0, ``bytes`` >= 0, seconds finite >= 0),
    ``only`` (strings), ``runtime`` and ``runtime_version`` (strings), ``family``, ``precision`` of a point.
    """
    if not isinstance(manifest, dict) or manifest.get("format") != PACK_FORMAT:
        raise ProfileError(f"{path}: not a tflite_flops calibration pack manifest")
    version = manifest.get("version")
    if version != PACK_VERSION or isinstance(version, bool):
        raise ProfileError(f"{path}: calibration pack version {printable(repr(version)[:40])}; this tool reads "
                           f"version {PACK_VERSION} (export the pack again)")
    threads = manifest.get("threads")
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= MAX_THREADS:
        raise _fail(path, "threads", f"{printable(repr(threads)[:40])} is not a thread count (an integer from 1 "
                                     f"to {MAX_THREADS})")
    for key in ("xnnpack", "quick"):
        if not isinstance(manifest.get(key), bool):
            raise _fail(path, key, "not true or false")
    for key in ("runtime", "runtime_version"):
        if key in manifest and not _short_string(manifest[key]):
            raise _fail(path, key, f"not a string of at most {MAX_NAME} characters")
    only = manifest.get("only", [])
    if not isinstance(only, list) or len(only) > MAX_POINTS or not all(_short_string(o) for o in only):
        raise _fail(path, "only", f"not a list of strings of at most {MAX_NAME} characters")
    _numbers(manifest, "budget", path, {})
    _numbers(manifest, "estimate", path, {"runs": 1, "models": 1})
    points = manifest.get("points")
    if not isinstance(points, list):
        raise _fail(path, "points", "not a list (the pack's list of runs)")
    if not 1 <= len(points) <= MAX_POINTS:
        raise _fail(path, "points", f"{len(points)} runs (a pack has 1 to {MAX_POINTS})")
    for i, entry in enumerate(points):
        _point(entry, f"points[{i}]", path)
    return manifest


def _short_string(value: Any) -> bool:
    return isinstance(value, str) and 0 < len(value) <= MAX_NAME


def _numbers(manifest: dict[str, Any], key: str, path: str, positive: dict[str, int]) -> None:
    """``manifest[key]``, when there, is an object of finite numbers >= 0 (those in ``positive`` >= their value)."""
    if key not in manifest:
        return
    table = manifest[key]
    if not isinstance(table, dict) or len(table) > 64:
        raise _fail(path, key, "not an object of numbers")
    for name, value in table.items():
        least = positive.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or value < least:
            raise _fail(path, f"{key}.{printable(str(name)[:40])}",
                        f"{printable(repr(value)[:40])} is not a finite number >= {least}")


def _point(entry: Any, field: str, path: str) -> None:
    if not isinstance(entry, dict):
        raise _fail(path, field, "not an object (a run: its key, id, model and outputs)")
    for key in ("key", "id"):
        if not _short_string(entry.get(key)):
            raise _fail(path, f"{field}.{key}", f"missing, or not a string of at most {MAX_NAME} characters")
    for key in ("family", "precision"):
        if key in entry and not isinstance(entry[key], str):
            raise _fail(path, f"{field}.{key}", "not a string")
    if not isinstance(entry.get("delegate"), bool):
        raise _fail(path, f"{field}.delegate", "not true or false")
    model = entry.get("model")
    if not _in_pack(model, "models") or not model.endswith(".tflite"):
        raise _fail(path, f"{field}.model", "not models/NAME.tflite (a pack's model is read only from its models/ "
                                            "folder: no '..', no other folder, never an absolute path)")
    sha = entry.get("model_sha256")
    if not isinstance(sha, str) or not _HEX64.fullmatch(sha):
        raise _fail(path, f"{field}.model_sha256", "not a SHA-256 (64 hexadecimal digits)")
    for key in OUTPUT_KEYS:
        if not _in_pack(entry.get(key), "profiles"):
            raise _fail(path, f"{field}.{key}", "not profiles/NAME (a run's outputs are read only from the pack's "
                                                "profiles/ folder: no '..', no other folder, never an absolute path)")


def _in_pack(rel: Any, folder: str) -> bool:
    """``rel`` is ``folder/NAME``: one plain file name in that folder of the pack."""
    if not isinstance(rel, str) or len(rel) > MAX_NAME:
        return False
    head, sep, name = rel.partition("/")
    return (head == folder and sep == "/" and name not in ("", ".", "..") and "/" not in name
            and "\\" not in name and "\0" not in name)


def pack_file(folder: str, rel: str, what: str, directory: bool = False) -> str:
    """The path of ``rel`` (``NAME`` or ``DIR/NAME``, validated) in the pack ``folder``, checked to stay inside
    it: no part of it below ``folder`` is a symbolic link, and it resolves inside ``folder``. The file itself
    need not exist (the caller's read says so); when it does, it must be a regular file (a folder with
    ``directory``).

    Raises:
        ProfileError: a symbolic link, something other than a regular file, or a path that leaves the folder
            (one line naming it and ``what`` it is).
    """
    path = folder
    parts = rel.split("/")
    for i, part in enumerate(parts):
        path = os.path.join(path, part)
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            return path
        except OSError as exc:
            raise ProfileError(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
        if stat.S_ISLNK(mode):
            raise ProfileError(f"{path}: a symbolic link: {what} is read only from a file inside the pack's folder")
        last = i == len(parts) - 1
        if not last and not stat.S_ISDIR(mode):
            return os.path.join(folder, rel)  # not there: a file under a file does not exist
        if last and directory and not stat.S_ISDIR(mode):
            raise ProfileError(f"{path}: not a folder: {what} must be a folder")
        if last and not directory and not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            raise ProfileError(f"{path}: {kind}: {what} must be a regular file")
    real, root = os.path.realpath(path), os.path.realpath(folder)
    if os.path.commonpath([real, root]) != root:
        raise ProfileError(f"{path}: outside the pack's folder: {what} is read only inside it")
    return path


def check_model(path: str, data: bytes, entry: dict[str, Any]) -> None:
    """``data`` (read from ``path``) is the model the manifest's ``entry`` recorded at export."""
    if hashlib.sha256(data).hexdigest() != entry["model_sha256"]:
        raise ProfileError(f"{path}: not the model this pack exported (its SHA-256 differs from the manifest's "
                           f"model_sha256): export the pack again, or restore the model")


# What the runner records of the device (run_calibration.sh), beside the ``cache_L*`` sizes of its last core.
DEVICE_KEYS = ("cores", "model", "machine", "tool", "features", "core")


def device_facts(folder: str) -> dict[str, str]:
    """What the runner recorded of the device (``profiles/device.txt``: cores, model, machine, tool, the CPU's
    feature flags, the core whose caches follow, ``cache_L1d``, ``cache_L2``, ``cache_L3``), each value
    printable and at most :data:`DEVICE_VALUE_MAX` characters; empty when it is not there.

    Raises:
        ProfileError: a device.txt that is a link, not a regular file, or over :data:`DEVICE_TXT_CAP`.
    """
    path = pack_file(folder, "profiles/device.txt", "the device's description")
    try:
        text = read_capped(path, DEVICE_TXT_CAP, "r", encoding="utf-8", errors="replace", follow=False)
    except FileNotFoundError:
        return {}
    except TooLarge:
        raise ProfileError(f"{path}: larger than {DEVICE_TXT_CAP >> 10} KiB, the most read of the device's "
                           "description (a few short lines)") from None
    except (NotARegularFile, OSError) as exc:
        raise ProfileError(f"{path}: cannot read the device's description ({exc.strerror or exc})") from None
    facts: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if sep and (key in DEVICE_KEYS or key.startswith("cache_L")) and value:
            facts[key] = bounded(value, FEATURES_MAX if key == "features" else DEVICE_VALUE_MAX)
    return facts


def bounded(value: str, limit: int = DEVICE_VALUE_MAX) -> str:
    """``value`` printable (control characters escaped) and at most ``limit`` characters ("..." when cut)."""
    text = printable(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."
