"""Kernels of the ad dialect for both executors (imported by `loom.backend.stack_kernels`).

`ad.stop_gradient` is the identity at run time. Its kernel is numpy's `identity` kernel, which the
compiled executor recognises and turns into an alias (no statement in the generated code), and
which the reference interpreter calls like any other kernel.
"""

from __future__ import annotations

from loom.backend.kernels_numpy import KERNELS, Kernel, identity
from loom.ir.core import Operation


def _stop_gradient(op: Operation) -> Kernel:
    return Kernel(identity)


KERNELS["ad.stop_gradient"] = _stop_gradient

__all__: list[str] = []
