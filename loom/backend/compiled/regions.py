"""Region analysis for the code generation rules: which region bodies are elementwise (so they
apply to whole arrays at once), which are one binary op numpy reduces natively, and jax's
argmax / argmin reducer."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from loom.backend import common
from loom.backend.common import dtype_of
from loom.backend.compiled.codegen import BINARY_UFUNCS, ELEMENTWISE
from loom.dialects import stablehlo
from loom.ir.core import Operation, Region, Value


def is_elementwise_region(region: Region) -> bool:
    """Whether a region's body is made only of elementwise ops (it applies to whole arrays)."""
    if len(region.blocks) != 1:
        return False
    for op in region.blocks[0].ops:
        if op.name in ELEMENTWISE:
            continue
        if op.name in ("stablehlo.broadcast_in_dim", "stablehlo.reshape") and \
                op.operands[0].type is op.results[0].type:
            continue
        return False
    return True


def reducer_ufunc(region: Region) -> np.ufunc | None:
    op = stablehlo.single_op_body(region)
    if op is None:
        return None
    return BINARY_UFUNCS.get(op.name)


def defining_op(value: Value, name: str) -> Operation | None:
    owner = value.owner_op
    return owner if owner is not None and owner.name == name else None


def is_compare(value: Value, direction: str | tuple[str, ...], lhs: Value, rhs: Value) -> bool:
    op = defining_op(value, "stablehlo.compare")
    if op is None or common.enum(op.get_attr("comparison_direction")) not in (
            direction if isinstance(direction, tuple) else (direction,)):
        return False
    return op.operands == (lhs, rhs)


def argreduce_direction(op: Operation) -> bool | None:
    """For a two-operand reduce whose body is jax's argmax/argmin reducer (value, index) over
    an iota of the one reduced dimension: True for argmax, False for argmin; else None."""
    if len(op.results) != 2 or len(op.regions[0].blocks) != 1:
        return None
    dims = common.ints(op.get_attr("dimensions"))
    if len(dims) != 1:
        return None
    iota = defining_op(op.operands[1], "stablehlo.iota")
    if iota is None or common.integer(iota.get_attr("iota_dimension")) != dims[0]:
        return None
    block = op.regions[0].blocks[0]
    if len(block.args) != 4:
        return None
    va, ia, vb, ib = block.args
    ret = block.terminator
    if ret is None or len(ret.operands) != 2:
        return None
    sel_v = defining_op(ret.operands[0], "stablehlo.select")
    sel_i = defining_op(ret.operands[1], "stablehlo.select")
    if sel_v is None or sel_i is None or sel_v.operands[1:] != (va, vb) or sel_i.operands[1:] != (ia, ib):
        return None
    pick = sel_v.operands[0]
    direction = None
    for d in ("GT", "LT"):
        if is_compare(pick, d, va, vb):
            direction = d
    or_op = defining_op(pick, "stablehlo.or")
    if direction is None and or_op is not None:
        for a, b in (or_op.operands, or_op.operands[::-1]):
            for d in ("GT", "LT"):
                if is_compare(a, d, va, vb) and is_compare(b, "NE", va, va):
                    direction = d
    if direction is None:
        return None
    if direction and dtype_of(va.type).kind in "fVc" and or_op is None:
        return None  # without the NaN term the body does not pick NaN the way np.argmax does
    tie = defining_op(sel_i.operands[0], "stablehlo.or")
    if tie is None or pick not in tie.operands:
        return None
    other = tie.operands[1] if tie.operands[0] is pick else tie.operands[0]
    and_op = defining_op(other, "stablehlo.and")
    if and_op is None:
        return None
    x, y = and_op.operands
    if not ((is_compare(x, "EQ", va, vb) and is_compare(y, "LT", ia, ib)) or
            (is_compare(y, "EQ", va, vb) and is_compare(x, "LT", ia, ib))):
        return None
    return direction == "GT"



def has_shell_dtypes(values: Sequence[Value]) -> bool:
    """Whether a value is of an element type torch stores but does not compute on (uint16/32/64)."""
    from loom.backend.torch_kernels import SHELL_DTYPES as shell  # imports torch: only torch code asks
    for v in values:
        try:
            if dtype_of(v.type) in shell:
                return True
        except Exception:  # tuples, tokens
            return True
    return False
