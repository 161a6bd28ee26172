"""The package version, a leaf every module may import."""

__version__ = "0.1.0"
