"""Everything that runs a model: runtime adapters, the timing harness, latency, per-op isolation,
the roofline, the model writer and token rates (calibration, which also runs models, is in
:mod:`tflite_flops.latency`). Never parses flatbuffers, never renders.
"""
