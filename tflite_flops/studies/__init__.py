"""Many analyses at once: shape sweeps, KV-length sweeps, scaling laws, a model zoo in batch, every
signature of a model (``signatures``) and every section of a LiteRT-LM bundle (``sections``)."""
