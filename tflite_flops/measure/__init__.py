"""Everything that runs a model: runtime adapters, the timing harness, latency, per-op isolation,
the roofline, device profiles, the model writer and token rates. Never parses flatbuffers, never renders.
"""
