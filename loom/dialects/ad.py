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

- `ad.custom_jvp`: the same for a forward-mode derivative (`loom.custom_jvp`, as
  `jax.custom_jvp`): operands the inputs and the outputs, one region `jvp` whose block arguments
  are the inputs and one tangent per input and which returns one tangent per result. Forward mode
  inlines the region; reverse mode transposes it (the VJP of the region with respect to the
  tangents, which it is linear in); vmap batches it.
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


class _CustomDerivativeOp(OpBase):
    """Shared by `ad.custom_vjp` and `ad.custom_jvp`: operand groups sized by
    `operandSegmentSizes` (`GROUPS`), results equal to the `outputs` operands, one region of one
    block whose arguments are `_region_args()` and which returns `_region_results()`."""

    GROUPS: tuple[str, ...] = ()
    REGION = ""
    traits = (Pure, AttrSizedOperandSegments)

    def operands_of(self, group: str) -> list[Value]:
        sizes = self.properties["operandSegmentSizes"].values
        k = self.GROUPS.index(group)
        start = sum(sizes[:k])
        return list(self.operands[start:start + sizes[k]])

    def verify_(self) -> None:
        if [v.type for v in self.operands_of("outputs")] != list(self.result_types):
            self.emit_error("result types must be the types of the outputs operands")
        blocks = self.regions[0].blocks
        if len(blocks) != 1:
            self.emit_error(f"the {self.REGION} region must have one block")
        args, results = self._region_types()
        if [a.type for a in blocks[0].args] != args:
            self.emit_error(f"the {self.REGION} block's arguments must be {self.ARGS_TEXT}")
        term = blocks[0].last_op
        if term is None or [v.type for v in term.operands] != results:
            self.emit_error(f"the {self.REGION} region must return {self.RESULTS_TEXT}")

    @classmethod
    def _build(cls, builder: Builder, groups: Sequence[Sequence[Value]], region: Region,
               location: Location | None) -> Operation:
        sizes = DenseArrayAttr.get(i32, [len(g) for g in groups])
        outputs = groups[cls.GROUPS.index("outputs")]
        op = Operation.create(cls.name, [v for g in groups for v in g], [v.type for v in outputs],
                              {"operandSegmentSizes": sizes}, regions=[region],
                              location=location if location is not None else builder.location)
        return builder.insert(op)


class CustomVjpOp(_CustomDerivativeOp):
    """Outputs with a user-given reverse-mode derivative (`jax.custom_vjp`): the `outputs`
    operands as results, `backward` mapping (residuals, result cotangents) to input cotangents."""

    name = "ad.custom_vjp"
    GROUPS = ("inputs", "outputs", "residuals")
    REGION, ARGS_TEXT = "backward", "the residuals' types, then the results' types"
    RESULTS_TEXT = "one cotangent of each input's type"
    inputs = var_operand()
    outputs = var_operand()
    residuals = var_operand()
    operandSegmentSizes = prop()  # noqa: N815 - MLIR's name
    results_ = var_result()
    backward = region_def()

    def _region_types(self) -> tuple[list, list]:
        return ([v.type for v in self.operands_of("residuals")] + list(self.result_types),
                [v.type for v in self.operands_of("inputs")])

    @classmethod
    def build(cls, builder: Builder, inputs: Sequence[Value], outputs: Sequence[Value], residuals: Sequence[Value],
              backward: Region, location: Location | None = None) -> Operation:
        return cls._build(builder, [inputs, outputs, residuals], backward, location)


class CustomJvpOp(_CustomDerivativeOp):
    """Outputs with a user-given forward-mode derivative (`jax.custom_jvp`): the `outputs`
    operands as results, `jvp` mapping (inputs, input tangents) to the results' tangents, linear
    in the tangents (reverse mode transposes it)."""

    name = "ad.custom_jvp"
    GROUPS = ("inputs", "outputs")
    REGION, ARGS_TEXT = "jvp", "the inputs' types, then the inputs' types again (their tangents)"
    RESULTS_TEXT = "one tangent of each result's type"
    inputs = var_operand()
    outputs = var_operand()
    operandSegmentSizes = prop()  # noqa: N815 - MLIR's name
    results_ = var_result()
    jvp = region_def()

    def _region_types(self) -> tuple[list, list]:
        ins = [v.type for v in self.operands_of("inputs")]
        return ins + ins, list(self.result_types)

    @classmethod
    def build(cls, builder: Builder, inputs: Sequence[Value], outputs: Sequence[Value], jvp: Region,
              location: Location | None = None) -> Operation:
        return cls._build(builder, [inputs, outputs], jvp, location)


DIALECT = register_dialect(Dialect("ad", [StopGradientOp, CustomVjpOp, CustomJvpOp]))

__all__ = ["DIALECT", "CustomJvpOp", "CustomVjpOp", "StopGradientOp", "stop_gradient"]
