"""Kernels of the ad dialect for both executors.

`ad.stop_gradient` is the identity at run time. Its kernel is numpy's `identity` kernel, which the
compiled executor recognises and turns into an alias (no statement in the generated code), and
which the reference interpreter calls like any other kernel. `ad.custom_vjp` is the identity on
its `outputs` operands, as is `ad.custom_jvp` (their regions run only once differentiation has
inlined them).
"""

from __future__ import annotations

from loom.backend.kernels import KERNELS, Kernel, Operand, identity, values_tuple
from loom.ir.core import Operation


def _stop_gradient(op: Operation) -> Kernel:
    return Kernel(identity)


def _outputs(op: Operation) -> Kernel:
    first = op.properties["operandSegmentSizes"].values[0]
    outputs = [Operand(first + i) for i in range(len(op.results))]
    return Kernel(identity, *outputs) if len(outputs) == 1 else Kernel(values_tuple, *outputs)


KERNELS["ad.stop_gradient"] = _stop_gradient
KERNELS["ad.custom_vjp"] = KERNELS["ad.custom_jvp"] = _outputs

__all__: list[str] = []
