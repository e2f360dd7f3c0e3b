"""`stablehlo.rng`: random numbers of shape `shape`, uniform over `[a, b)` or normal with mean `a`
and standard deviation `b`.

The spec leaves the generator to the implementation ("they may or may not be deterministic, and
they may or may not use hidden state"). loom's: every rng op of a compiled program (an executable,
or the function `loom.compile(..., executor="interpreter")` returns) holds a numpy PCG64
generator, seeded from the op's position in its module; each call draws the next numbers (hidden
state). So a program compiled afresh repeats its numbers, the executors (interpreter, compiled on
numpy, compiled on torch: the same numpy kernel, on the host) draw the same ones, and two rng ops
of one program draw independent streams.

Integers (and booleans) are uniform over `a, a + 1, ..., b - 1`; floats are drawn in float64 and
rounded to the result type, a value that rounds up to `b` taking the largest one below it. `a >=
b` (uniform) and `b < 0` (normal) are undefined in the spec: an `ExecutionError` naming the op.
`rng` carries no derivative (random numbers) and is not batched (producers batch keys with
rng_bit_generator).
"""

from __future__ import annotations

import numpy as np

from loom.backend import common
from loom.backend import kernels as kn
from loom.backend.common import TORCH_KERNELS, ExecutionError, enum, torch_kernels_in
from loom.backend.kernels import KERNELS, Kernel, Operand, kernel, result_dtype, result_shape
from loom.ir.core import Operation
from loom.ops.registry import declare, register, unsupported

# Kernels -----------------------------------------------------------------------------------------

# numpy kernels here; torch kernels in loom.ops.rng_torch (imported with torch)

@kernel("stablehlo.rng_bit_generator")
def _rng_bit_generator(op: Operation) -> Kernel:
    from loom.backend.rng import rng_bit_generator
    algorithm = common.enum(op.get_attr("rng_algorithm"), "DEFAULT")
    return Kernel(rng_bit_generator, Operand(0), algorithm, result_shape(op, 1), result_dtype(op, 1))


torch_kernels_in("loom.ops.rng_torch")

SEED = 0x5EED  # with the op's position in its module: the seed of the op's generator


def _position(op: Operation) -> int:
    """The index of `op` in a walk of its whole module (its top-level ancestor)."""
    top = op
    while top.parent_op is not None:
        top = top.parent_op
    return next(i for i, o in enumerate(top.walk()) if o is op)


class RngKernel:
    """One rng op's draw: its generator, distribution, result dtype and location."""

    def __init__(self, op: Operation) -> None:
        self.generator = np.random.Generator(np.random.PCG64(np.random.SeedSequence([SEED, _position(op)])))
        self.distribution = enum(op.get_attr("rng_distribution"), "UNIFORM")
        self.dtype = kn.result_dtype(op)
        self.where = f"{op.name} (at {op.location})"

    def __call__(self, a, b, shape):
        a, b = np.asarray(a).reshape(()), np.asarray(b).reshape(())
        shape = tuple(int(n) for n in np.asarray(shape).reshape(-1))
        if self.distribution == "NORMAL":
            if not b >= 0:
                raise ExecutionError(f"{self.where}: the standard deviation b = {b} must not be negative")
            return (self.generator.normal(float(a), float(b), shape)).astype(self.dtype)
        if not a < b:
            raise ExecutionError(f"{self.where}: uniform over [a, b) needs a < b, got a = {a}, b = {b}")
        if self.dtype.kind in "iub":
            values = self.generator.integers(int(a), int(b), shape, dtype=np.int64, endpoint=False)
            return values.astype(self.dtype)
        values = self.generator.uniform(float(a), float(b), shape).astype(self.dtype)
        # rounding to a narrow type may reach b: take the largest value below it instead
        below = np.nextafter(b.astype(self.dtype), a.astype(self.dtype))
        return np.where(values >= b.astype(self.dtype), below, values).astype(self.dtype)


def _rng_kernel(op: Operation) -> Kernel:
    return Kernel(RngKernel(op), Operand(0), Operand(1), Operand(2))


def _on_the_host(op: Operation) -> None:
    """The torch backend runs the numpy kernel on the tensors' values (the same numbers)."""
    return None


register(KERNELS, "stablehlo.rng", _rng_kernel)
register(TORCH_KERNELS, "stablehlo.rng", _on_the_host)
declare("stablehlo.rng", unsupported("random numbers: no derivative; producers batch keys with rng_bit_generator"),
        tables=("jvp", "vjp", "batching"))
