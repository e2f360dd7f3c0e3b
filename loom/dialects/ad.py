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

- `ad.custom_vjp`: a function's outputs with a derivative given by the user (`loom.custom_vjp`,
  as `jax.custom_vjp`). Its operands are the function's inputs, its outputs as the user's forward
  function computed them, and that function's residuals (`operandSegmentSizes`); its results are
  the outputs, unchanged. Its one region is the backward function: block arguments the residuals
  and one cotangent per result, returning one cotangent per input.

      %y = "ad.custom_vjp"(%x, %fy, %r) <{operandSegmentSizes = array<i32: 1, 1, 1>}> ({
      ^bb0(%r0: tensor<4xf32>, %ct: tensor<4xf32>):
        %g = "stablehlo.multiply"(%ct, %r0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
        "stablehlo.return"(%g) : (tensor<4xf32>) -> ()
      }) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>

  Reverse mode gives the inputs the cotangents the region computes (the forward function's own
  ops get none: it is not differentiated); forward mode and vmap refuse it, as JAX's forward mode
  does; the executors run it as the identity on the outputs. `lower-stop-gradient` replaces it by
  its outputs too.
"""

from __future__ import annotations

from collections.abc import Sequence

from loom.ir.attributes import DenseArrayAttr, Location
from loom.ir.builder import Builder
from loom.ir.core import Operation, Region, Value
from loom.ir.opdef import (
    AttrSizedOperandSegments,
    Dialect,
    OpBase,
    Pure,
    operand,
    prop,
    region_def,
    register_dialect,
    result_def,
    var_operand,
    var_result,
)
from loom.ir.types import i32


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


class CustomVjpOp(OpBase):
    """Outputs with a user-given derivative (`jax.custom_vjp`): the `outputs` operands as results,
    `backward` mapping (residuals, result cotangents) to input cotangents."""

    name = "ad.custom_vjp"
    traits = (Pure, AttrSizedOperandSegments)
    inputs = var_operand()
    outputs = var_operand()
    residuals = var_operand()
    operandSegmentSizes = prop()  # noqa: N815 - MLIR's name
    results_ = var_result()
    backward = region_def()

    def verify_(self) -> None:
        outs, res, ins = self.operands_of("outputs"), self.operands_of("residuals"), self.operands_of("inputs")
        if [v.type for v in outs] != list(self.result_types):
            self.emit_error("result types must be the types of the outputs operands")
        blocks = self.regions[0].blocks
        if len(blocks) != 1:
            self.emit_error("the backward region must have one block")
        want = [v.type for v in res] + list(self.result_types)
        if [a.type for a in blocks[0].args] != want:
            self.emit_error("the backward block's arguments must be the residuals' types, then the results' types")
        term = blocks[0].last_op
        if term is None or [v.type for v in term.operands] != [v.type for v in ins]:
            self.emit_error("the backward region must return one cotangent of each input's type")

    def operands_of(self, group: str) -> list[Value]:
        sizes = self.properties["operandSegmentSizes"].values
        start = {"inputs": 0, "outputs": sizes[0], "residuals": sizes[0] + sizes[1]}[group]
        n = sizes[("inputs", "outputs", "residuals").index(group)]
        return list(self.operands[start:start + n])

    @classmethod
    def build(cls, builder: Builder, inputs: Sequence[Value], outputs: Sequence[Value], residuals: Sequence[Value],
              backward: Region, location: Location | None = None) -> Operation:
        sizes = DenseArrayAttr.get(i32, [len(inputs), len(outputs), len(residuals)])
        op = Operation.create(cls.name, [*inputs, *outputs, *residuals], [v.type for v in outputs],
                              {"operandSegmentSizes": sizes}, regions=[backward],
                              location=location if location is not None else builder.location)
        return builder.insert(op)


DIALECT = register_dialect(Dialect("ad", [StopGradientOp, CustomVjpOp]))

__all__ = ["DIALECT", "CustomVjpOp", "StopGradientOp", "stop_gradient"]
