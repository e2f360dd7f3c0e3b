"""Pausing Python's cyclic garbage collector during bulk IR rewriting."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """IR objects form many reference cycles (op, results, uses), so a rewrite that allocates
    triggers full collections that rescan the whole program; pausing the collector while a pass
    runs keeps rewriting linear. Nested uses are fine."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
