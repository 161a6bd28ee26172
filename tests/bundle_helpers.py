"""Hand-built LiteRT-LM bundles for the reader's tests, and a model whose weights are externalised.

``bundle_bytes`` writes the container with the ``flatbuffers`` package's low-level Builder, field by
field from the schema (``litert.lm.schema.LiteRTLMMetaData``), so that tests can write what the
official builder never would: unknown section types, ranges outside the file, a header that ends
past the file. ``externalise`` moves a .tflite model's large weights into external buffers with
the official LiteRT schema bindings (``ai_edge_litert.schema_py_generated``).
"""

from __future__ import annotations

import struct
from typing import Any, Sequence

import flatbuffers

BLOCK = 16 * 1024
TFLITE_MODEL, SP_TOKENIZER, LLM_METADATA, TFLITE_WEIGHTS = 3, 4, 5, 7


def _key_value(b: flatbuffers.Builder, key: str, value: Any) -> int:
    k = b.CreateString(key)
    if isinstance(value, str):
        s = b.CreateString(value)
        b.StartObject(1)
        b.PrependUOffsetTRelativeSlot(0, s, 0)
        val, tag = b.EndObject(), 9  # StringValue
    else:  # an Int32 struct, stored where the union's offset points
        b.Prep(4, 0)
        b.PrependInt32(int(value))
        val, tag = b.Offset(), 6
    b.StartObject(3)
    b.PrependUOffsetTRelativeSlot(0, k, 0)
    b.PrependUint8Slot(1, tag, 0)
    b.PrependUOffsetTRelativeSlot(2, val, 0)
    return b.EndObject()


def _vector(b: flatbuffers.Builder, offsets: Sequence[int]) -> int:
    b.StartVector(4, len(offsets), 4)
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def header_flatbuffer(sections: Sequence[tuple[int, int, int, dict[str, Any]]], system: dict[str, Any]) -> bytes:
    """The LiteRTLMMetaData flatbuffer: ``sections`` are (data type, begin, end, items)."""
    b = flatbuffers.Builder(1024)
    b.ForceDefaults(True)  # every field written, zeros too: the tests write zero offsets and type 0
    objs = []
    for kind, begin, end, items in sections:
        vec = _vector(b, [_key_value(b, k, v) for k, v in items.items()])
        b.StartObject(4)
        b.PrependUOffsetTRelativeSlot(0, vec, 0)
        b.PrependUint64Slot(1, begin, 0)
        b.PrependUint64Slot(2, end, 0)
        b.PrependUint8Slot(3, kind, 0)
        objs.append(b.EndObject())
    sec_vec = _vector(b, objs)
    b.StartObject(1)
    b.PrependUOffsetTRelativeSlot(0, sec_vec, 0)
    section_meta = b.EndObject()
    entries = _vector(b, [_key_value(b, k, v) for k, v in system.items()])
    b.StartObject(1)
    b.PrependUOffsetTRelativeSlot(0, entries, 0)
    system_meta = b.EndObject()
    b.StartObject(2)
    b.PrependUOffsetTRelativeSlot(0, system_meta, 0)
    b.PrependUOffsetTRelativeSlot(1, section_meta, 0)
    b.Finish(b.EndObject())
    return bytes(b.Output())


def bundle_bytes(sections: Sequence[tuple[int, bytes, dict[str, Any]]], system: dict[str, Any] | None = None, *,
                 version: tuple[int, int, int] = (1, 7, 0), ranges: dict[int, tuple[int, int]] | None = None,
                 header_end: int | None = None) -> bytes:
    """A bundle of ``sections`` (data type, data, items), each at a 16 KiB boundary after the header.

    ``ranges`` overrides the (begin, end) written for some sections; ``header_end`` the header's end.
    """
    placed, at = [], BLOCK
    for kind, data, items in sections:
        placed.append((kind, at, at + len(data), items))
        at = -(-(at + len(data)) // BLOCK) * BLOCK
    written = [(k, *(ranges or {}).get(i, (b, e)), items) for i, (k, b, e, items) in enumerate(placed)]
    fb = header_flatbuffer(written, system if system is not None else {"Authors": "tests"})
    assert 32 + len(fb) <= BLOCK, "the test header must fit in the first block"
    out = bytearray(b"LITERTLM" + struct.pack("<3I", *version) + b"\0" * 4
                    + struct.pack("<Q", header_end if header_end is not None else 32 + len(fb)) + fb)
    for (_kind, begin, _end, _items), (_, data, _) in zip(placed, sections):
        out += b"\0" * (begin - len(out))
        out += data
    return bytes(out)


def externalise(tflite: bytes, min_bytes: int = 1024) -> tuple[bytes, bytes]:
    """(model, weights): ``tflite`` with every buffer of at least ``min_bytes`` moved into one
    external buffer group (tensors that share a buffer share the external buffer)."""
    from ai_edge_litert import schema_py_generated as schema

    model = schema.ModelT.InitFromPackedBuf(tflite, 0)
    group = schema.ExternalBufferGroupT()
    group.name = "weights.bin"
    model.externalBufferGroups, model.externalBuffers = [group], []
    blob, ids = bytearray(), {}
    for sg in model.subgraphs:
        for t in sg.tensors:
            data = model.buffers[t.buffer].data if t.buffer else None
            if data is None or len(data) < min_bytes:
                continue
            if t.buffer not in ids:
                blob += b"\0" * (-len(blob) % 64)
                ext = schema.ExternalBufferT()
                ext.id, ext.group, ext.offset, ext.length = len(ids) + 1, 0, len(blob), len(data)
                blob += bytes(bytearray(data))
                ids[t.buffer] = ext.id
                model.externalBuffers.append(ext)
            t.externalBuffer = ids[t.buffer]
    for index in ids:
        model.buffers[index].data = None
    b = flatbuffers.Builder(1024)
    b.Finish(model.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output()), bytes(blob)
