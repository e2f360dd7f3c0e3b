"""Declarative op definitions, traits and the dialect registry.

An op is one class:

    class AddIOp(Operation):
        '''Integer addition.'''
        name = "arith.addi"
        lhs = operand(AnyInteger)
        rhs = operand(AnyInteger)
        result = result_def(AnyInteger)
        overflowFlags = prop(DialectAttr, default=...)
        traits = (Pure, Commutative, SameOperandsAndResultType)

The field descriptors double as typed accessors (`op.lhs`, `op.overflowFlags`). Rules that belong
to a transformation (its VJP, its lowering) live in that transformation's own table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from loom.ir.attributes import Attribute, DenseArrayAttr
from loom.ir.core import _OP_CLASSES, Operation, Region, Value
from loom.ir.types import Type

SINGLE, OPTIONAL, VARIADIC = "single", "optional", "variadic"


class Constraint:
    """A predicate on a type or attribute with a description for error messages."""

    __slots__ = ("check", "description", "_types_ok")

    def __init__(self, check: Callable[[Any], bool], description: str) -> None:
        self.check = check
        self.description = description
        self._types_ok: set[Type] = set()

    def holds(self, x: Any) -> bool:
        """`check(x)`, remembered for types: they are interned and few, and the verifier asks
        the same question for every op."""
        if x in self._types_ok:
            return True
        if not self.check(x):
            return False
        if isinstance(x, Type):
            self._types_ok.add(x)
        return True

    def __or__(self, other: Constraint) -> Constraint:
        return Constraint(lambda x: self.check(x) or other.check(x), f"{self.description} or {other.description}")


def constraint(c: Any) -> Constraint | None:
    if c is None or isinstance(c, Constraint):
        return c
    if isinstance(c, type):
        return Constraint(lambda x: isinstance(x, c), c.__name__)
    if isinstance(c, tuple):
        return Constraint(lambda x: isinstance(x, c), " or ".join(t.__name__ for t in c))
    if isinstance(c, (Type, Attribute)):
        return Constraint(lambda x: x is c, f"'{c}'")
    raise TypeError(f"not a constraint: {c!r}")


class _Field:
    kind = SINGLE

    def __init__(self, constr: Any = None, kind: str = SINGLE) -> None:
        self.constraint = constraint(constr)
        self.kind = kind
        self.name = ""
        self.index = 0

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name


class operand(_Field):
    """An operand (constraint on its type). `operand(kind=VARIADIC)` or `var_operand()`."""

    def __get__(self, op: Operation | None, owner: type) -> Any:
        if op is None:
            return self
        d = op.definition
        if d._operand_variadics == 0:  # the common case: one operand per field, no range to compute
            return op._operands[self.index].value
        lo, hi = d.operand_range(op, self.index)
        vals = op.operands[lo:hi]
        if self.kind == SINGLE:
            return vals[0]
        if self.kind == OPTIONAL:
            return vals[0] if vals else None
        return vals


def var_operand(constr: Any = None) -> operand:
    return operand(constr, VARIADIC)


def opt_operand(constr: Any = None) -> operand:
    return operand(constr, OPTIONAL)


class result_def(_Field):
    """A result (constraint on its type)."""

    def __get__(self, op: Operation | None, owner: type) -> Any:
        if op is None:
            return self
        d = op.definition
        if d._result_variadics == 0:
            return op.results[self.index]
        lo, hi = d.result_range(op, self.index)
        vals = op.results[lo:hi]
        if self.kind == SINGLE:
            return vals[0]
        if self.kind == OPTIONAL:
            return vals[0] if vals else None
        return vals


def var_result(constr: Any = None) -> result_def:
    return result_def(constr, VARIADIC)


class prop(_Field):
    """An inherent attribute, stored in `op.properties` (constraint on the attribute)."""

    def __init__(self, constr: Any = None, default: Attribute | None = None, optional: bool = False) -> None:
        super().__init__(constr)
        self.default = default
        self.optional = optional or default is not None

    def __get__(self, op: Operation | None, owner: type) -> Any:
        if op is None:
            return self
        v = op.properties.get(self.name)
        return self.default if v is None else v

    def __set__(self, op: Operation, value: Attribute | None) -> None:
        if value is None:
            op.properties.pop(self.name, None)
        else:
            op.properties[self.name] = value


def opt_prop(constr: Any = None) -> prop:
    return prop(constr, optional=True)


class region_def(_Field):
    def __get__(self, op: Operation | None, owner: type) -> Any:
        if op is None:
            return self
        if self.kind == VARIADIC:
            return op.regions[self.index:]
        return op.regions[self.index]


class successor_def(_Field):
    def __get__(self, op: Operation | None, owner: type) -> Any:
        if op is None:
            return self
        if self.kind == VARIADIC:
            return op.successors[self.index:]
        return op.successors[self.index]


# Traits -------------------------------------------------------------------------------------

class Trait:
    """A property of an op that passes can query and the verifier can check."""

    @classmethod
    def verify(cls, op: Operation) -> str | None:
        """Return an error message, or None if `op` satisfies the trait."""
        return None


class Pure(Trait):
    """No side effects: removable when unused, movable, CSE-able."""


class Commutative(Trait):
    """Operands may be reordered (canonicalization moves constants to the right)."""


class ConstantLike(Trait):
    """Materialises a constant: one result, no operands, folds to its `value` attribute."""


class Terminator(Trait):
    @classmethod
    def verify(cls, op: Operation) -> str | None:
        if op.parent is not None and op.parent._last is not op:
            return "must be the last operation in the parent block"
        return None


class ReturnLike(Trait):
    pass


class NoTerminator(Trait):
    """Single-block regions whose block needs no terminator."""


class SingleBlock(Trait):
    @classmethod
    def verify(cls, op: Operation) -> str | None:
        for i, r in enumerate(op.regions):
            if len(r.blocks) > 1:
                return f"expects region #{i} to have 0 or 1 blocks"
        return None


class IsolatedFromAbove(Trait):
    """Regions may not use values defined outside the op."""


class SymbolTable(Trait):
    """The op's single region holds symbols whose names must be unique."""


class Symbol(Trait):
    """The op defines a symbol named by its `sym_name` attribute."""

    @classmethod
    def verify(cls, op: Operation) -> str | None:
        from loom.ir.attributes import StringAttr
        if not isinstance(op.get_attr("sym_name"), StringAttr):
            return "requires string attribute 'sym_name'"
        return None


class GraphRegions(Trait):
    """Regions are graph regions: no dominance requirement, no terminator requirement."""


class SameOperandsAndResultType(Trait):
    @classmethod
    def verify(cls, op: Operation) -> str | None:
        first = op.results[0].type if op.results else op._operands[0].value.type if op._operands else None
        for u in op._operands:
            if u.value.type is not first:
                return "requires the same type for all operands and results"
        for r in op.results:
            if r.type is not first:
                return "requires the same type for all operands and results"
        return None


class SameTypeOperands(Trait):
    @classmethod
    def verify(cls, op: Operation) -> str | None:
        operands = op._operands
        if operands:
            first = operands[0].value.type
            for u in operands:
                if u.value.type is not first:
                    return "requires all operands to have the same type"
        return None


def HasParent(*parent_names: str) -> type[Trait]:
    """Trait factory: the op must be directly nested in an op of one of these names."""

    class _HasParent(Trait):
        parents = parent_names

        @classmethod
        def verify(cls, op: Operation) -> str | None:
            p = op.parent_op
            if p is None or p.name not in cls.parents:
                names = ", ".join(f"'{n}'" for n in cls.parents)
                return f"expects parent op {'to be one of ' if len(cls.parents) > 1 else ''}{names}"
            return None

    _HasParent.__name__ = f"HasParent({', '.join(parent_names)})"
    return _HasParent


class AttrSizedOperandSegments(Trait):
    """Variadic operand groups are sized by the `operandSegmentSizes` property."""


class AttrSizedResultSegments(Trait):
    """Variadic result groups are sized by the `resultSegmentSizes` property."""


# Definitions --------------------------------------------------------------------------------

class OpDef:
    """The structure of a registered op, collected from its class body."""

    def __init__(self, cls: type) -> None:
        self.name: str = cls.name
        self.operands: list[operand] = []
        self.results: list[result_def] = []
        self.props: list[prop] = []
        self.regions: list[region_def] = []
        self.successors: list[successor_def] = []
        for klass in reversed(cls.__mro__):
            for attr_name, v in vars(klass).items():
                if isinstance(v, _Field):
                    group = (self.operands if isinstance(v, operand) else self.results if isinstance(v, result_def)
                             else self.props if isinstance(v, prop) else self.regions if isinstance(v, region_def)
                             else self.successors)
                    group[:] = [f for f in group if f.name != attr_name]
                    group.append(v)
        for group in (self.operands, self.results, self.regions, self.successors):
            for i, f in enumerate(group):
                f.index = i
        traits: list[type[Trait]] = []
        for klass in reversed(cls.__mro__):
            for t in vars(klass).get("traits", ()):
                if t not in traits:
                    traits.append(t)
        self.traits = tuple(traits)
        self.trait_set = frozenset(traits)
        self.prop_names = frozenset(p.name for p in self.props)
        # Default-valued properties are always present, as MLIR stores them (and its generic
        # form prints them): `Operation.__init__` fills them in.
        self.prop_defaults = tuple((p.name, p.default) for p in self.props if p.default is not None)
        self._operand_variadics = sum(f.kind != SINGLE for f in self.operands)
        self._result_variadics = sum(f.kind != SINGLE for f in self.results)
        # What the verifier checks on every op, computed once.
        self.n_fixed_operands = len(self.operands) - self._operand_variadics
        self.n_fixed_results = len(self.results) - self._result_variadics
        self.constrained_operands = tuple(f for f in self.operands if f.constraint is not None)
        self.constrained_results = tuple(f for f in self.results if f.constraint is not None)
        self.variadic_regions = any(r.kind != SINGLE for r in self.regions)

    def _range(self, fields: list, n_actual: int, index: int, op: Operation, seg_attr: str) -> tuple[int, int]:
        variadics = sum(f.kind != SINGLE for f in fields)
        if variadics == 0:
            return index, index + 1
        segs = op.properties.get(seg_attr)
        if isinstance(segs, DenseArrayAttr):
            sizes = segs.values
            start = sum(sizes[:index])
            return start, start + sizes[index]
        fixed = len(fields) - variadics
        each = (n_actual - fixed) // variadics if variadics else 0
        start = 0
        for f in fields[:index]:
            start += 1 if f.kind == SINGLE else each
        size = 1 if fields[index].kind == SINGLE else each
        return start, start + size

    def operand_range(self, op: Operation, index: int) -> tuple[int, int]:
        if self._operand_variadics == 0:
            return index, index + 1
        return self._range(self.operands, len(op._operands), index, op, "operandSegmentSizes")

    def result_range(self, op: Operation, index: int) -> tuple[int, int]:
        if self._result_variadics == 0:
            return index, index + 1
        return self._range(self.results, len(op.results), index, op, "resultSegmentSizes")


class OpBase(Operation):
    """Base of registered ops. Subclasses set `name` and declare fields; registration happens
    when the subclass is created."""

    name: ClassVar[str] = ""
    traits: ClassVar[tuple] = ()
    definition: ClassVar[OpDef | None] = None

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if cls.__dict__.get("name"):
            cls.definition = OpDef(cls)
            register_op(cls)

    @classmethod
    def has_trait(cls, trait: type[Trait]) -> bool:
        return cls.definition is not None and trait in cls.definition.trait_set

    def verify_(self) -> None:
        """The op's own invariants; raise loom.ir.VerifyError through `self.emit_error`."""

    def emit_error(self, message: str):
        from loom.ir.diagnostics import VerifyError
        raise VerifyError(self, message)

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        """Fold given the constant values of operands (None where unknown). Return one
        Attribute (a constant) or Value (an existing value) per result, or None."""
        return None

    @classmethod
    def canonicalization_patterns(cls) -> list:
        return []

    # Custom syntax hooks: `parse_custom(parser, result_names)` (classmethod) and
    # `print_custom(printer)`. Ops without them always use the generic form.
    parse_custom: ClassVar[Callable | None] = None
    print_custom: ClassVar[Callable | None] = None


def has_trait(op: Operation, trait: type[Trait]) -> bool:
    d = type(op).definition
    return d is not None and trait in d.trait_set


# Registry -----------------------------------------------------------------------------------

class Dialect:
    """A namespace of ops, plus optional parsers for its own types and attributes.

    `type_parser(text) -> Type` and `attribute_parser(text) -> Attribute` receive the full text
    of a `!dialect...` or `#dialect...` entity; without them the text is kept opaque."""

    def __init__(self, name: str, ops: list[type] | None = None, type_parser: Callable | None = None,
                 attribute_parser: Callable | None = None, allow_unknown_ops: bool = False,
                 materialize_constant: Callable | None = None) -> None:
        self.name = name
        # `materialize_constant(builder, attr, type, location) -> Operation | None`: makes a
        # constant op of this dialect for a folded value (used by the canonicalizer).
        self.materialize_constant = materialize_constant
        self.ops: dict[str, type] = {}
        self.type_parser = type_parser
        self.attribute_parser = attribute_parser
        self.allow_unknown_ops = allow_unknown_ops
        for op in ops or ():
            self.ops[op.name] = op


DIALECTS: dict[str, Dialect] = {}
_OPS: dict[str, type] = _OP_CLASSES


def register_op(cls: type) -> None:
    _OPS[cls.name] = cls
    dialect_name = cls.name.split(".", 1)[0]
    d = DIALECTS.get(dialect_name)
    if d is None:
        d = DIALECTS[dialect_name] = Dialect(dialect_name)
    d.ops[cls.name] = cls


def register_dialect(dialect: Dialect) -> Dialect:
    existing = DIALECTS.get(dialect.name)
    if existing is not None:
        dialect.ops = {**existing.ops, **dialect.ops}
    DIALECTS[dialect.name] = dialect
    for name, cls in dialect.ops.items():
        _OPS[name] = cls
    return dialect


def lookup_op(name: str) -> type | None:
    return _OPS.get(name)


def lookup_dialect(name: str) -> Dialect | None:
    return DIALECTS.get(name)


__all__ = [
    "AttrSizedOperandSegments", "AttrSizedResultSegments", "Commutative", "ConstantLike", "Constraint", "Dialect",
    "GraphRegions", "HasParent", "IsolatedFromAbove", "NoTerminator", "OpBase", "OpDef", "Pure", "Region",
    "ReturnLike", "SameOperandsAndResultType", "SameTypeOperands", "SingleBlock", "Symbol", "SymbolTable",
    "Terminator", "Trait", "has_trait", "lookup_dialect", "lookup_op", "operand", "opt_operand", "opt_prop",
    "prop", "region_def", "register_dialect", "register_op", "result_def", "successor_def", "var_operand",
    "var_result",
]
