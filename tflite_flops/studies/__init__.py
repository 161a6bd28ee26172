"""Many analyses at once: shape sweeps, KV-length sweeps, scaling laws, a model zoo in batch."""
