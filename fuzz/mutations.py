"""The JSON-aware mutations the atheris harnesses of files from outside share (``fuzz_profile.py``, ``fuzz_pack.py``):
the places of a document a mutation can set, and the hostile values it sets them to."""

from __future__ import annotations

from typing import Any, Sequence

import atheris


def slots(node: Any, out: list) -> list:
    """Every (container, key) of ``node``, depth first: the places a mutation can set."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        out.append((node, key))
        slots(value, out)
    return out


def value(fdp: atheris.FuzzedDataProvider, picks: Sequence[Any] = ()) -> Any:
    """A hostile value: an integer of up to 1,600 bits, any float (NaN, the infinities, denormals), a string with
    control characters, a list, an object, null, a bool, a small integer, a float past 1.8e308, or one of ``picks``
    (the harness's own: paths out of a pack, say) in place of a regular float."""
    kind = fdp.ConsumeIntInRange(0, 9)
    if kind == 0:
        return fdp.ConsumeInt(fdp.ConsumeIntInRange(1, 200))
    if kind == 1:
        return fdp.ConsumeFloat()
    if kind == 2:
        return fdp.PickValueInList(list(picks)) if picks else fdp.ConsumeRegularFloat()
    if kind == 3:
        return fdp.ConsumeUnicode(fdp.ConsumeIntInRange(0, 40))
    if kind == 4:
        return [value(fdp, picks) for _ in range(fdp.ConsumeIntInRange(0, 4))] if fdp.remaining_bytes() else []
    if kind == 5:
        return {fdp.ConsumeUnicode(8): value(fdp, picks) for _ in range(fdp.ConsumeIntInRange(0, 3))} \
            if fdp.remaining_bytes() else {}
    if kind == 6:
        return None
    if kind == 7:
        return fdp.ConsumeBool()
    if kind == 8:
        return fdp.ConsumeIntInRange(-2, 4)
    return float(f"{fdp.ConsumeIntInRange(1, 9999)}e{fdp.ConsumeIntInRange(-330, 330)}")


def mutate(document: Any, fdp: atheris.FuzzedDataProvider, picks: Sequence[Any] = ()) -> Any:
    """``document`` (changed in place, returned) with one to four of its places set to :func:`value` or deleted."""
    for _ in range(fdp.ConsumeIntInRange(1, 4)):
        places = slots(document, [])
        if not places:
            break
        node, key = places[fdp.ConsumeIntInRange(0, len(places) - 1)]
        if fdp.ConsumeIntInRange(0, 7) == 0 and isinstance(node, dict):
            del node[key]
        else:
            node[key] = value(fdp, picks)
    return document
