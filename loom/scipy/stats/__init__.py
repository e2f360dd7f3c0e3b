"""`loom.scipy.stats`: probability distributions (`norm`)."""

from loom.scipy.stats import norm

__all__ = ["norm"]
