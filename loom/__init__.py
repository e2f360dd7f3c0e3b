"""loom: a machine-learning compiler stack in Python."""

__version__ = "0.1.0"
