"""LiteRT-LM bundles (``.litertlm``): the header, the section table and the metadata.

A bundle is a container. Its first 32 bytes are the header: the magic ``LITERTLM``, the format
version (major, minor, patch as little-endian uint32 at 8, 12, 16), and at byte 24 a uint64 that
says where the header's flatbuffer ends. The flatbuffer (schema ``litert.lm.schema.LiteRTLMMetaData``,
no file identifier) starts at byte 32: the system metadata (key/value pairs) and one
``SectionObject`` per section (its byte range ``[begin_offset, end_offset)`` in the file, its data
type and its own key/value items such as ``model_type`` and ``backend_constraint``). The sections'
data follow, each aligned to 16 KiB: TFLite models, externalised TFLite weights, a tokenizer
(SentencePiece, or a zlib-compressed Hugging Face JSON), and protobuf metadata (``LlmMetadata``).

Everything here is read from a memory map and checked before it is used: every offset, vector
length, string, union and section range is bounded by the file (or the header), and a bad one is a
:class:`~tflite_flops.errors.ModelFormatError` naming what is wrong. Nothing reads a section's
data except the small ``LlmMetadata`` protobuf (capped at :data:`MAX_PROTO_BYTES`): a model section
becomes a zero-copy view for :func:`tflite_flops.reader.load.load_model`, and weights sections are
counted by their ranges.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

from ..errors import ModelFormatError

MAGIC = b"LITERTLM"
HEADER_BYTES = 32  # magic, three version words, padding, the uint64 end of the header's flatbuffer
BLOCK_SIZE = 16 * 1024  # sections start on a multiple of this (the format's rule; not needed to read)

# litert.lm.schema.AnySectionDataType, in the schema's order (the enum is append-only)
SECTION_TYPES: tuple[str, ...] = (
    "NONE", "GenericBinaryData", "Deprecated", "TFLiteModel", "SP_Tokenizer", "LlmMetadataProto",
    "HF_Tokenizer_Zlib", "TFLiteWeights", "EmbeddingMetadataProto", "ExecutorMetadataProto",
    "TtsMetadataProto", "AsrMetadataProto")
MODEL_SECTION = "TFLiteModel"
WEIGHTS_SECTION = "TFLiteWeights"
TOKENIZER_KINDS = {"SP_Tokenizer": "sentencepiece", "HF_Tokenizer_Zlib": "huggingface (zlib JSON)"}
DEFAULT_MODEL_TYPE = "tf_lite_prefill_decode"  # the main LLM model, analysed by default

# The LlmMetadata protobuf is read only up to this size (a real one is a few KiB; the rest is skipped).
MAX_PROTO_BYTES = 1 << 20
# More entries than this in one vector of the header is not a bundle (a real one has a few dozen).
MAX_ENTRIES = 100_000
# Nor are more sections than this (a real bundle has about ten). ``--all-sections`` loads and analyses
# each model section: with at most MAX_SECTIONS of them, none overlapping another, that work is bounded
# by the file's size (each section's by its own bytes, columnar.TYPE_LIMITS, DISTINCT_LIMITS) plus a fixed cost each.
MAX_SECTIONS = 256

_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U64 = struct.Struct("<Q")

# litert.lm.schema.VData union members: tag -> (struct format, name); 9 is StringValue (a table)
_VDATA = {1: ("<B", "uint8"), 2: ("<b", "int8"), 3: ("<H", "uint16"), 4: ("<h", "int16"), 5: ("<I", "uint32"),
          6: ("<i", "int32"), 7: ("<f", "float32"), 8: ("<?", "bool"), 10: ("<Q", "uint64"), 11: ("<q", "int64"),
          12: ("<d", "double")}
_STRING_VALUE = 9


@dataclass(frozen=True)
class Section:
    """One section of a bundle: where its data lies and what it is."""

    index: int
    kind: str  # an AnySectionDataType name, or "unknown(<n>)" for a type this reader does not know
    begin: int  # byte offset of its data in the file
    end: int  # one past its last byte
    items: Mapping[str, Any]  # the section's own key/value metadata (model_type, backend_constraint, ...)

    @property
    def size(self) -> int:
        """Bytes of the section's data."""
        return self.end - self.begin

    @property
    def model_type(self) -> str | None:
        """The ``model_type`` item (``tf_lite_prefill_decode``, ``tf_lite_embedder``, ...), if any."""
        value = self.items.get("model_type")
        return value if isinstance(value, str) else None

    @property
    def backend_constraint(self) -> str | None:
        """The ``backend_constraint`` item (``cpu``, ``gpu, npu``, ...), if any."""
        value = self.items.get("backend_constraint")
        return value if isinstance(value, str) else None

    @property
    def label(self) -> str:
        """``#<index> <model_type or kind>``: how messages and reports name the section."""
        return f"#{self.index} {self.model_type or self.kind}"


@dataclass(frozen=True)
class LlmMetadata:
    """What the bundle's ``LlmMetadata`` protobuf says (the fields a profile needs)."""

    model_type: str | None  # the LlmModelType member set (generic_model, gemma3, qwen3, ...)
    max_num_tokens: int | None  # the engine's context length (KV-cache slots)
    start_token: str | None  # "ids 2" or the token's text
    stop_tokens: tuple[str, ...]
    has_prompt_template: bool


@dataclass(frozen=True)
class Bundle:
    """A parsed bundle header. ``buf`` is the file's memory map (or bytes); sections are views into it."""

    path: str | None
    size_bytes: int
    version: str  # "major.minor.patch"
    system_metadata: Mapping[str, Any]
    sections: tuple[Section, ...]
    llm: LlmMetadata | None
    buf: Any

    @property
    def model_sections(self) -> tuple[Section, ...]:
        """The TFLite model sections, in file order."""
        return tuple(s for s in self.sections if s.kind == MODEL_SECTION)

    @property
    def tokenizer(self) -> str | None:
        """The tokenizer's kind (``sentencepiece``, ``huggingface (zlib JSON)``), None when there is none."""
        return next((TOKENIZER_KINDS[s.kind] for s in self.sections if s.kind in TOKENIZER_KINDS), None)

    def weights_for(self, section: Section) -> tuple[Section, ...]:
        """The weights sections whose ``model_type`` is the model section's (externalised weights)."""
        return tuple(s for s in self.sections if s.kind == WEIGHTS_SECTION and s.model_type == section.model_type)

    def view(self, section: Section) -> memoryview:
        """A zero-copy view of a section's data."""
        return memoryview(self.buf)[section.begin:section.end]

    def pick(self, which: str | int | None = None) -> Section:
        """The model section to analyse: ``which`` is an index, a ``model_type`` (with or without the
        ``tf_lite_`` prefix), or None for the ``tf_lite_prefill_decode`` model (else the first model).

        Raises:
            ModelFormatError: the bundle has no TFLite model section.
            InputSpecError: ``which`` names no model section.
        """
        from ..errors import InputSpecError

        models = self.model_sections
        if not models:
            kinds = ", ".join(s.kind for s in self.sections) or "none"
            raise ModelFormatError(f"bundle has no TFLite model section (sections: {kinds})")
        if which is None:
            return next((s for s in models if s.model_type == DEFAULT_MODEL_TYPE), models[0])
        text = str(which).strip()
        if text.lstrip("-").isdigit():
            index = int(text)
            hit = next((s for s in self.sections if s.index == index), None)
            if hit is None or hit.kind != MODEL_SECTION:
                what = "no section" if hit is None else f"a {hit.kind} section"
                raise InputSpecError(f"section {index} is {what}; model sections: {_names(models)}")
            return hit
        wanted = {text.lower(), "tf_lite_" + text.lower()}
        hit = next((s for s in models if (s.model_type or "").lower() in wanted), None)
        if hit is None:
            raise InputSpecError(f"no model section {text!r}; model sections: {_names(models)}")
        return hit


def _names(models: tuple[Section, ...]) -> str:
    return ", ".join(s.label for s in models)


def is_bundle(buf: Any) -> bool:
    """True when ``buf`` starts with the LiteRT-LM magic."""
    return len(buf) >= len(MAGIC) and bytes(buf[:len(MAGIC)]) == MAGIC


def read_bundle(buf: Any, path: str | None = None) -> Bundle:
    """Parse a bundle's header, section table and metadata, checking every offset.

    Args:
        buf: the file's bytes or memory map (starting with ``LITERTLM``).
        path: the file's path, for the Bundle.

    Returns:
        The :class:`Bundle`.

    Raises:
        ModelFormatError: a truncated header, an offset or length outside the header or the file,
            a section range outside the file or overlapping the header, more than :data:`MAX_SECTIONS`
            sections, two model sections that overlap, a malformed union.
    """
    size = len(buf)
    if size < HEADER_BYTES:
        raise ModelFormatError(f"truncated LiteRT-LM header ({size} bytes, the fixed part alone is {HEADER_BYTES})")
    if bytes(buf[:8]) != MAGIC:
        raise ModelFormatError(f"not a LiteRT-LM bundle (magic {bytes(buf[:8])!r}, expected {MAGIC!r})")
    major, minor, patch = struct.unpack_from("<3I", buf, 8)
    (header_end,) = _U64.unpack_from(buf, 24)
    if not HEADER_BYTES + 8 <= header_end <= size:
        raise ModelFormatError(f"LiteRT-LM header ends at byte {header_end}, outside the {size}-byte file")
    if major > 1:
        raise ModelFormatError(f"LiteRT-LM format version {major}.{minor}.{patch} is newer than this reader (1.x)")
    fb = _Flat(buf, HEADER_BYTES, header_end)
    root = fb.root()
    system = fb.table(root, 0)
    entries = fb.table_vector(system, 0) if system is not None else ()
    section_meta = fb.table(root, 1)
    if section_meta is None:
        raise ModelFormatError("LiteRT-LM header has no section table")
    sections = []
    objects = fb.table_vector(section_meta, 0)
    if len(objects) > MAX_SECTIONS:
        raise ModelFormatError(f"LiteRT-LM header lists {len(objects):,} sections (limit {MAX_SECTIONS:,})")
    for i, obj in enumerate(objects):
        items = dict(fb.key_value(kv) for kv in fb.table_vector(obj, 0))
        begin, end, code = fb.scalar(obj, 1, _U64), fb.scalar(obj, 2, _U64), fb.scalar(obj, 3, "<B")
        kind = SECTION_TYPES[code] if code < len(SECTION_TYPES) else f"unknown({code})"
        if not header_end <= begin <= end <= size:
            raise ModelFormatError(f"section {i} ({kind}) spans bytes {begin}..{end}, outside the {size}-byte file "
                                   f"after the {header_end}-byte header")
        sections.append(Section(i, kind, begin, end, MappingProxyType(items)))
    models = sorted((s for s in sections if s.kind == MODEL_SECTION and s.size), key=lambda s: (s.begin, s.end))
    for a, b in zip(models, models[1:]):
        if b.begin < a.end:
            raise ModelFormatError(f"model sections {a.index} and {b.index} overlap (bytes {a.begin}..{a.end} and "
                                   f"{b.begin}..{b.end})")
    llm_section = next((s for s in sections if s.kind == "LlmMetadataProto"), None)
    llm = None
    if llm_section is not None and 0 < llm_section.size <= MAX_PROTO_BYTES:
        try:
            llm = parse_llm_metadata(bytes(buf[llm_section.begin:llm_section.end]))
        except ModelFormatError as exc:
            raise ModelFormatError(f"section {llm_section.index} (LlmMetadataProto): {exc}") from exc
    return Bundle(path=path, size_bytes=size, version=f"{major}.{minor}.{patch}",
                  system_metadata=MappingProxyType(dict(fb.key_value(kv) for kv in entries)),
                  sections=tuple(sections), llm=llm, buf=buf)


class _Flat:
    """A bounds-checked reader of the header's flatbuffer, which lies in ``buf[start:end]``.

    Offsets in the flatbuffer are relative to ``start``. Every read is checked against
    ``[start, end)``; vectors longer than :data:`MAX_ENTRIES` are refused.
    """

    def __init__(self, buf: Any, start: int, end: int) -> None:
        self.buf, self.start, self.end = buf, start, end

    def _at(self, pos: int, width: int, what: str) -> int:
        if not (self.start <= pos and pos + width <= self.end):
            raise ModelFormatError(f"LiteRT-LM header: {what} at byte {pos} lies outside the header "
                                   f"(bytes {self.start}..{self.end})")
        return pos

    def u32(self, pos: int, what: str) -> int:
        return _U32.unpack_from(self.buf, self._at(pos, 4, what))[0]

    def root(self) -> int:
        return self.start + self.u32(self.start, "root offset")

    def _field(self, table: int, index: int) -> int | None:
        """Absolute position of field ``index`` of ``table``, or None when absent."""
        vtable = table - _I32.unpack_from(self.buf, self._at(table, 4, "table"))[0]
        (vsize,) = _U16.unpack_from(self.buf, self._at(vtable, 4, "vtable"))
        self._at(vtable, vsize, "vtable")
        slot = 4 + 2 * index
        if slot + 2 > vsize:
            return None
        (off,) = _U16.unpack_from(self.buf, vtable + slot)
        return table + off if off else None

    def scalar(self, table: int, index: int, fmt: str | struct.Struct) -> Any:
        st = fmt if isinstance(fmt, struct.Struct) else struct.Struct(fmt)
        pos = self._field(table, index)
        return 0 if pos is None else st.unpack_from(self.buf, self._at(pos, st.size, "scalar"))[0]

    def _deref(self, pos: int) -> int:
        return pos + self.u32(pos, "offset")

    def table(self, table: int, index: int) -> int | None:
        pos = self._field(table, index)
        return None if pos is None else self._deref(pos)

    def table_vector(self, table: int, index: int) -> list[int]:
        pos = self._field(table, index)
        if pos is None:
            return []
        vec = self._deref(pos)
        n = self.u32(vec, "vector length")
        if n > MAX_ENTRIES:
            raise ModelFormatError(f"LiteRT-LM header: a vector of {n:,} entries (limit {MAX_ENTRIES:,})")
        self._at(vec + 4, 4 * n, "vector")
        return [self._deref(vec + 4 + 4 * i) for i in range(n)]

    def string(self, table: int, index: int) -> str | None:
        pos = self._field(table, index)
        if pos is None:
            return None
        at = self._deref(pos)
        n = self.u32(at, "string length")
        self._at(at + 4, n, "string")
        return bytes(self.buf[at + 4:at + 4 + n]).decode("utf-8", "replace")

    def key_value(self, kv: int) -> tuple[str, Any]:
        """A KeyValuePair: (key, value); the value as a Python int, float, bool or str."""
        key = self.string(kv, 0)
        if key is None:
            raise ModelFormatError("LiteRT-LM header: a metadata entry has no key")
        tag = self.scalar(kv, 1, "<B")
        value_at = self.table(kv, 2)
        if value_at is None or tag == 0:
            raise ModelFormatError(f"LiteRT-LM header: metadata entry {key!r} has no value")
        if tag == _STRING_VALUE:
            return key, self.string(value_at, 0) or ""
        member = _VDATA.get(tag)
        if member is None:
            raise ModelFormatError(f"LiteRT-LM header: metadata entry {key!r} has an unknown value type {tag}")
        st = struct.Struct(member[0])
        return key, st.unpack_from(self.buf, self._at(value_at, st.size, "value"))[0]


# ---- the LlmMetadata protobuf (litert.lm.proto.LlmMetadata), read by field number ----------------

_LLM_MODEL_TYPES = {1: "generic_model", 2: "gemma3n", 3: "function_gemma", 4: "gemma3", 5: "qwen3", 7: "qwen2p5",
                    8: "gemma4", 9: "fast_vlm", 11: "lfm2", 12: "minicpm5", 13: "minicpmv4"}


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """The (field number, wire type, value) of a protobuf message, top level only, bounds-checked."""
    out = []
    pos, n = 0, len(data)
    while pos < n:
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > n:
                raise ModelFormatError(f"protobuf field {number} runs past the end ({length} bytes at {pos} of {n})")
            value, pos = data[pos:pos + length], pos + length
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            if pos + width > n:
                raise ModelFormatError(f"protobuf field {number} is truncated")
            value, pos = data[pos:pos + width], pos + width
        else:
            raise ModelFormatError(f"protobuf field {number} has wire type {wire}, which this reader does not read")
        out.append((number, wire, value))
    return out


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    for _ in range(10):
        if pos >= len(data):
            raise ModelFormatError("protobuf varint is truncated")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
    raise ModelFormatError("protobuf varint is longer than 10 bytes")


def _token(data: bytes) -> str:
    """A TokenUnion: ``ids 1 2`` (token_ids, packed or not) or the token's text."""
    for number, wire, value in _fields(data):
        if number == 2 and wire == 2:
            return bytes(value).decode("utf-8", "replace")
        if number == 1 and wire == 2:  # TokenIds { repeated int32 ids = 1; }
            ids = []
            for inner, inner_wire, item in _fields(value):
                if inner == 1 and inner_wire == 0:
                    ids.append(_signed32(item))
                elif inner == 1 and inner_wire == 2:
                    pos = 0
                    while pos < len(item):
                        got, pos = _varint(item, pos)
                        ids.append(_signed32(got))
            return "ids " + " ".join(map(str, ids))
    return "?"


def _signed32(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def parse_llm_metadata(data: bytes) -> LlmMetadata:
    """The fields of an ``LlmMetadata`` protobuf that a profile reports.

    Field numbers (litert.lm.proto.LlmMetadata): 1 start_token, 2 stop_tokens (TokenUnion), 3
    prompt_templates, 5 max_num_tokens, 6 llm_model_type (a oneof by field number), 7
    jinja_prompt_template. Other fields are skipped.

    Raises:
        ModelFormatError: the bytes are not a well-formed protobuf message.
    """
    model_type = max_tokens = start = None
    stops: list[str] = []
    template = False
    for number, wire, value in _fields(data):
        if number == 1 and wire == 2:
            start = _token(value)
        elif number == 2 and wire == 2:
            stops.append(_token(value))
        elif number in (3, 7) and wire == 2:
            template = True
        elif number == 5 and wire == 0:
            max_tokens = _signed32(value)
        elif number == 6 and wire == 2:
            inner = _fields(value)
            if inner:
                model_type = _LLM_MODEL_TYPES.get(inner[0][0], f"model_type_{inner[0][0]}")
    return LlmMetadata(model_type, max_tokens, start, tuple(stops), template)
