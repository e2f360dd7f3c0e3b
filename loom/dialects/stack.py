"""The stack dialect: per-iteration stacks of saved values for reverse mode through loops.

Reverse-mode differentiation of a `stablehlo.while` whose trip count depends on data (Yu et al.,
"Dynamic Control Flow in Large-Scale Machine Learning", EuroSys 2018) saves, in every forward
iteration, the values the backward pass needs on a stack created outside both loops; the backward
loop runs as many iterations, popping them in reverse. The stacks are ordinary IR:

    %s = "stack.new"() : () -> !stack.stack<tensor<4xf32>>
    "stack.push"(%s, %x) : (!stack.stack<tensor<4xf32>>, tensor<4xf32>) -> ()
    %y = "stack.pop"(%s) : (!stack.stack<tensor<4xf32>>) -> tensor<4xf32>
    %c = "stack.companion"(%s) : (!stack.stack<tensor<4xf32>>) -> !stack.stack<tensor<4xf32>>

`!stack.stack<T>` is the type of a stack of values of type `T` (a tensor type, or another stack
type for loops nested in loops: an inner loop's stack is created per outer iteration and the
handle itself is pushed on the outer loop's stack). The ops have side effects (they are not
`Pure`), so the rewriters never move, merge or erase them. Kernels for both executors live in
`loom.ops.stack`.

A stack made for a loop differentiated under the `offload` memory policy is marked by the unit
property `offload` of its `stack.new`:

    %s = "stack.new"() <{offload}> : () -> !stack.stack<tensor<4xf32>>

The mark changes no value, only where the values live while they wait for the backward loop: the
torch executor keeps the values of a marked stack in host memory (copied asynchronously from a
CUDA device, brought back when popped); values already in host memory stay where they are.
"""

from __future__ import annotations

from collections.abc import Sequence

from loom.ir.attributes import UNIT, UNKNOWN_LOC, Location, UnitAttr
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.opdef import Constraint, Dialect, OpBase, operand, opt_prop, register_dialect, result_def
from loom.ir.types import Type


class StackType(Type):
    """`!stack.stack<T>`: a last-in first-out stack of values of type `element_type`."""

    __slots__ = ("element_type",)
    _canonical_args = True

    def __init__(self, element_type: Type) -> None:
        self.element_type = element_type

    def _render(self) -> str:
        return f"!stack.stack<{self.element_type}>"


def parse_type(text: str) -> Type | None:
    """`!stack.stack<T>` from its text (the dialect's type parser); None for any other text."""
    from loom.ir.parser import parse_wrapped_type
    inner = parse_wrapped_type(text, "!stack.stack<")
    return None if inner is None else StackType(inner)


IsStack = Constraint(lambda t: isinstance(t, StackType), "stack")
IsUnit = Constraint(lambda a: isinstance(a, UnitAttr), "unit attribute")


class StackOp(OpBase):
    """Base of the stack ops: their `verify_` reports type mismatches through `emit_error`."""


class NewOp(StackOp):
    """An empty stack (one per execution of the op); with the `offload` property, a stack whose
    values the executor keeps in host memory."""

    name = "stack.new"
    result = result_def(IsStack)
    offload = opt_prop(IsUnit)

    @classmethod
    def build(cls, builder: Builder, element_type: Type, location: Location | None = None,
              offload: bool = False) -> Operation:
        op = Operation.create(cls.name, [], [StackType(element_type)], {"offload": UNIT} if offload else None,
                              location=location if location is not None else builder.location)
        return builder.insert(op)


class PushOp(StackOp):
    """Pushes `value` on `stack` (no results)."""

    name = "stack.push"
    stack = operand(IsStack)
    value = operand()

    def verify_(self) -> None:
        s, v = self.operands
        if s.type.element_type is not v.type:
            self.emit_error(f"pushes a value of type '{v.type}' on a stack of '{s.type.element_type}'")

    @classmethod
    def build(cls, builder: Builder, stack: Value, value: Value, location: Location | None = None) -> Operation:
        op = Operation.create(cls.name, [stack, value], [],
                              location=location if location is not None else builder.location)
        return builder.insert(op)


class PopOp(StackOp):
    """Pops the value pushed last on `stack`."""

    name = "stack.pop"
    stack = operand(IsStack)
    result = result_def()

    def verify_(self) -> None:
        s, r = self.operands[0], self.results[0]
        if s.type.element_type is not r.type:
            self.emit_error(f"pops a value of type '{r.type}' from a stack of '{s.type.element_type}'")

    @classmethod
    def build(cls, builder: Builder, stack: Value, location: Location | None = None) -> Operation:
        op = Operation.create(cls.name, [stack], [stack.type.element_type],
                              location=location if location is not None else builder.location)
        return builder.insert(op)


class CompanionOp(StackOp):
    """The companion of `stack`: a second stack of the same element type that belongs to that
    stack (created, empty, the first time it is asked for; the same one every time after). Reverse
    mode keeps the cotangents of the values popped from a stack on its companion, so the two stay
    paired wherever the stack's handle travels (pushed on an outer loop's stack and popped back).
    Not `Pure`: its first execution creates the companion."""

    name = "stack.companion"
    stack = operand(IsStack)
    result = result_def(IsStack)

    def verify_(self) -> None:
        if self.operands[0].type is not self.results[0].type:
            self.emit_error(f"companion of type '{self.results[0].type}' for a stack of type '{self.operands[0].type}'")

    @classmethod
    def build(cls, builder: Builder, stack: Value, location: Location | None = None) -> Operation:
        op = Operation.create(cls.name, [stack], [stack.type],
                              location=location if location is not None else builder.location)
        return builder.insert(op)


def companion(builder: Builder, stack: Value, location: Location | None = None) -> Value:
    """Insert `stack.companion` of `stack`; return the companion stack."""
    return CompanionOp.build(builder, stack, location).results[0]


def new(builder: Builder, element_type: Type, location: Location | None = None, offload: bool = False) -> Value:
    """Insert `stack.new` of element type `element_type` (marked `offload` if asked); return the
    stack."""
    return NewOp.build(builder, element_type, location, offload).results[0]


def is_offloaded(new_op: Operation) -> bool:
    """Whether a `stack.new` op is marked for the offload memory policy."""
    return isinstance(new_op.read_properties().get("offload"), UnitAttr)


def push(builder: Builder, stack: Value, value: Value, location: Location | None = None) -> Operation:
    """Insert `stack.push`; return the op."""
    return PushOp.build(builder, stack, value, location)


def pop(builder: Builder, stack: Value, location: Location | None = None) -> Value:
    """Insert `stack.pop`; return the popped value."""
    return PopOp.build(builder, stack, location).results[0]


def push_all(builder: Builder, stacks: Sequence[Value], values: Sequence[Value]) -> None:
    for s, v in zip(stacks, values):
        push(builder, s, v)


DIALECT = register_dialect(Dialect("stack", [NewOp, PushOp, PopOp, CompanionOp], type_parser=parse_type))

__all__ = ["DIALECT", "UNKNOWN_LOC", "CompanionOp", "NewOp", "PopOp", "PushOp", "StackType", "companion",
           "is_offloaded", "new", "parse_type", "pop", "push", "push_all"]
