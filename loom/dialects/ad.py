"""The ad dialect: markers that automatic differentiation reads.

- `ad.stop_gradient`: the identity in value; its result carries no derivative. Reverse mode gives
  its operand no cotangent, forward mode gives its result a zero tangent, vmap maps it to itself on
  the batched operand, and both executors run it as the identity (the compiled executor emits no
  statement for it, only an alias).

      %y = "ad.stop_gradient"(%x) : (tensor<4xf32>) -> tensor<4xf32>

It is an op of its own rather than a StableHLO op so that no rewrite can mistake it for the
identity: it has no folder and no canonicalization pattern, so `canonicalize` and `cse` keep it
through the jit pipeline, and `loom.grad` can still differentiate the IR of a function that has
already been traced and optimised. It is `Pure` (no side effects; `dce` erases it when unused, and
`cse` may merge two of them on the same operand, which changes nothing).

StableHLO has no such op (JAX's `stop_gradient` lowers to its operand), so a module exported for
XLA runs the `lower-stop-gradient` pass (`loom.transforms.autodiff.LowerStopGradientPass`) first,
after every differentiation: it replaces each `ad.stop_gradient` by its operand.
"""

from __future__ import annotations

from loom.ir.attributes import Location
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.opdef import Dialect, OpBase, Pure, operand, register_dialect, result_def


class StopGradientOp(OpBase):
    """The identity whose result has no derivative (`jax.lax.stop_gradient`)."""

    name = "ad.stop_gradient"
    traits = (Pure,)
    operand = operand()
    result = result_def()

    def verify_(self) -> None:
        if self.operands[0].type is not self.results[0].type:
            self.emit_error(f"result type '{self.results[0].type}' differs from operand type "
                            f"'{self.operands[0].type}'")

    @classmethod
    def build(cls, builder: Builder, value: Value, location: Location | None = None) -> Operation:
        op = Operation.create(cls.name, [value], [value.type],
                              location=location if location is not None else builder.location)
        return builder.insert(op)


def stop_gradient(builder: Builder, value: Value, location: Location | None = None) -> Value:
    """Insert `ad.stop_gradient` of `value`; return its result."""
    return StopGradientOp.build(builder, value, location).results[0]


DIALECT = register_dialect(Dialect("ad", [StopGradientOp]))

__all__ = ["DIALECT", "StopGradientOp", "stop_gradient"]
