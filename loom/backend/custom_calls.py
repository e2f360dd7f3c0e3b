"""Kernels for `stablehlo.custom_call`, keyed by `call_target_name`.

A custom call runs only where a kernel is registered for its target; otherwise running it is an
error that names the target. Register one with

    register_custom_call("my_target", lambda x, y: x + y)          # a plain function of arrays

or, for kernels that read the op's attributes, `CUSTOM_CALLS["my_target"] = maker` with
`maker(op) -> Kernel`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from loom.backend import common
from loom.backend.common import MissingRuleError
from loom.backend.kernels import Kernel, identity, values_tuple
from loom.ir.core import Operation

CUSTOM_CALLS: dict[str, Callable[[Operation], Kernel]] = {}


def register_custom_call(target: str, fn: Callable) -> None:
    """Run `fn(*operands)` for custom calls to `target`; it returns one array or a tuple."""
    CUSTOM_CALLS[target] = lambda op: Kernel(fn)


def custom_call_target(op: Operation) -> str:
    return common.string(op.get_attr("call_target_name"))


def custom_call_kernel(op: Operation, executor: str) -> Kernel:
    target = custom_call_target(op)
    maker = CUSTOM_CALLS.get(target)
    if maker is None:
        raise MissingRuleError(op.name, executor, f"no kernel registered for custom_call target '{target}'")
    return maker(op)


def _pass_through(op: Operation) -> Kernel:
    return Kernel(identity) if len(op.results) == 1 else Kernel(values_tuple)


def shape_assertion(op: Operation) -> Kernel:
    message = common.string(op.get_attr("error_message"), "shape assertion failed")

    def check(predicate, *values):
        if not bool(np.asarray(predicate)):
            raise common.ExecutionError(message.format(*(int(np.asarray(v)) for v in values)))
    return Kernel(check)


# Sharding annotations are no-ops on one device.
for _target in ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "annotate_device_placement",
                "X64Combine"):
    CUSTOM_CALLS[_target] = _pass_through
CUSTOM_CALLS["shape_assertion"] = shape_assertion
