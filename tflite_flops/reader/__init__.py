"""Bytes or a file -> :class:`~tflite_flops.reader.model.Model`: the schema bindings, the columnar
flatbuffer verifier and the flatbuffer layout. No runtime is needed; weights are memory-mapped, never copied.
"""
