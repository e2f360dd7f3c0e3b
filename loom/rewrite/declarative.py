"""Declarative rewrite patterns: MLIR's DRR `Pat<source, result, constraints>` written in Python.

    DeclarativePattern("AddIAddConstant", (AddIOp, (AddIOp, "x", "#c0"), "#c1"),
                       lambda m, b: b(AddIOp, m.x, b.integer(m.c0.value + m.c1.value)),
                       constant_op="arith.constant")

* `source` is `(OpClass, operand, ...)`. An operand is a nested tuple (matching its defining op),
  a name (binding the value; a name used twice must be the same value, `_` binds nothing), `#name`
  (a constant scalar integer, DRR's APIntAttr) or `$name` (a constant of any kind).
* `where(m)` holds the constraints. `build(m, b)` returns the root's replacement, creating ops with
  `b(OpClass, *operands, **properties)` and constants with `b.const` / `b.integer`, operands first,
  as generated code does. `m.name` is what `name` bound, `m.ops` the matched ops (root first).

The benefit is the number of ops in the source (tblgen's), new ops get the fused location of the
matched ops, and the root is replaced; the ops it used are left to dead-code elimination. A dialect
says how its ops' result types follow from their operands (`result_type`) and which op makes its
constants (`constant_op`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from loom.ir.attributes import Attribute, IntegerAttr, Location
from loom.ir.core import Operation, OpResult, Value
from loom.ir.opdef import OpBase
from loom.ir.types import Type
from loom.rewrite.folding import constant_value
from loom.rewrite.pattern import FunctionPattern
from loom.rewrite.rewriter import PatternRewriter

ResultType = Callable[[type[OpBase], Sequence[Value], Type], Type]
"""`result_type(op_class, operands, root_type)`: the result type of a new op of `op_class`."""


def last_operand_type(cls: type[OpBase], operands: Sequence[Value], root_type: Type) -> Type:
    """The default `result_type`: the type of the new op's last operand."""
    return operands[-1].type


class Match(dict):
    """What a pattern's source bound: values and constant attributes by name, and the matched ops."""

    def __init__(self, root: Operation) -> None:
        super().__init__()
        self.ops: list[Operation] = []
        self.trace = [root]  # tblgen_ops: the root, then every matched op (constants too) after its operands

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def type(self) -> Type:
        """The root's result type."""
        return self.ops[0].results[0].type

    def prop(self, name: str, i: int = 0) -> Attribute | None:
        """Property `name` of the `i`-th matched op (0: the root)."""
        return self.ops[i].properties.get(name)


def match_source(source: tuple, op: Operation | None, m: Match) -> bool:
    """Match `op` against `source`, binding into `m`; False at the first mismatch."""
    cls, *args = source
    if op is None or op.name != cls.name or len(op._operands) != len(args):
        return False
    m.ops.append(op)
    for arg, u in zip(args, op._operands):
        v = u.value
        if isinstance(arg, tuple) or arg[0] in "#$":
            producer = v.owner_op
            if producer is None:
                return False
            if isinstance(arg, tuple):
                ok = match_source(arg, producer, m)
            else:
                attr = m[arg[1:]] = constant_value(v)
                ok = attr is not None and (arg[0] == "$" or isinstance(attr, IntegerAttr))
            if not ok:
                return False
            m.trace.append(producer)
        elif arg != "_" and m.setdefault(arg, v) is not v:
            return False
    return True


class PatternBuilder:
    """Creates a pattern's ops before the root, at the fused location of the matched ops."""

    def __init__(self, rewriter: PatternRewriter, m: Match, constant_op: str, result_type: ResultType) -> None:
        from loom.ir.parser import make_fused_loc
        self.rewriter = rewriter
        self.root_type = m.type
        self.constant_op = constant_op
        self.result_type = result_type
        # As generated code: the fused location of the first (number of ops in the source) traced ops.
        self.location: Location = make_fused_loc([op.location for op in m.trace[:len(m.ops)]])

    def __call__(self, cls: type[OpBase], *operands: Value, **props: Attribute | None) -> Value:
        """A new `cls` op (None properties left out), of the type `result_type` gives."""
        t = self.result_type(cls, operands, self.root_type)
        attrs = {k: v for k, v in props.items() if v is not None}
        return self.rewriter.create(cls.name, operands, [t], attrs, location=self.location).results[0]

    def const(self, value: Attribute) -> Value:
        if value.type is None:
            raise TypeError(f"a constant needs a typed attribute, not {value}")
        return self.rewriter.create(self.constant_op, (), [value.type], {"value": value},
                                    location=self.location).results[0]

    def integer(self, value: int) -> Value:
        """A constant of the root's type (AddIntAttrs and co.: wraps at its width)."""
        return self.const(IntegerAttr(self.root_type, value))


def _count_ops(source: tuple) -> int:
    return 1 + sum(_count_ops(a) for a in source[1:] if isinstance(a, tuple))


class DeclarativePattern(FunctionPattern):
    """A pattern from a source tree, a `build` of the replacement and an optional `where` constraint
    (see the module docstring); its root is the source's op and `debug_name` is `name`."""

    def __init__(self, name: str, source: tuple, build: Callable[[Match, PatternBuilder], Value],
                 where: Callable[[Match], bool] | None = None, *, constant_op: str,
                 result_type: ResultType = last_operand_type) -> None:
        n_operands = len(source) - 1
        # Most ops fail on their operands' defining ops: check those names before building a match.
        nested = tuple((i, arg[0].name) for i, arg in enumerate(source[1:]) if isinstance(arg, tuple))

        def apply(op: Operation, rewriter: PatternRewriter) -> bool:
            operands = op._operands
            if len(operands) != n_operands:
                return False
            for i, op_name in nested:
                v = operands[i].value
                if v.__class__ is not OpResult or v.op.name != op_name:
                    return False
            m = Match(op)
            if not match_source(source, op, m) or (where is not None and not where(m)):
                return False
            rewriter.replace_op(op, [build(m, PatternBuilder(rewriter, m, constant_op, result_type))])
            return True

        super().__init__(apply, source[0].name, _count_ops(source))
        self.debug_name = name


__all__ = ["DeclarativePattern", "Match", "PatternBuilder", "ResultType", "last_operand_type", "match_source"]
