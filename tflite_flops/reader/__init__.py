"""Bytes or a file -> :class:`~tflite_flops.reader.model.Model`: :mod:`~tflite_flops.reader.load` reads,
:mod:`~tflite_flops.reader.columnar` verifies and decodes the flatbuffer's tables a column at a time
(:mod:`~tflite_flops.reader.flatbuffer_layout` describes them, :mod:`~tflite_flops.reader.schema` maps
the schema's names and codes); :mod:`~tflite_flops.reader.bundle` reads LiteRT-LM bundles, whose model
sections are read in place. No runtime is needed; weights are memory-mapped, never copied.
"""
