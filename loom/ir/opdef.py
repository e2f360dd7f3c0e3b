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

An op's custom (pretty) syntax is one declarative `assembly_format`, as MLIR ODS's, which gives
both its parser and its printer (see AssemblyFormat):

    class SliceOp(StableHLOOp):
        name = "stablehlo.slice"
        assembly_format = ("$operand custom<SliceRanges>($start_indices, $limit_indices, $strides) "
                           "attr-dict `:` functional-type(operands, results)")

Syntax no format can express is written as the op's `parse_custom`/`print_custom` hooks, in the
same class.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from loom.ir.attributes import Attribute, DenseArrayAttr
from loom.ir.core import _OP_CLASSES, Operation, Region, Value
from loom.ir.types import Type, i1

if TYPE_CHECKING:
    from loom.ir.parser import Parser
    from loom.ir.printer import Printer

SINGLE, OPTIONAL, VARIADIC = "single", "optional", "variadic"


class Constraint:
    """A predicate on a type or attribute with a description for error messages."""

    __slots__ = ("check", "description", "_types_ok", "syntax")

    def __init__(self, check: Callable[[Any], bool], description: str, syntax: AttrSyntax | None = None) -> None:
        self.check = check
        self.description = description
        self._types_ok: set[Type] = set()
        # How an attribute of this constraint is written as `$name` in an assembly format (None:
        # the full attribute text).
        self.syntax = syntax

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
        if d is None:
            raise AttributeError(f"'{type(op).__name__}' is not a registered op: it has no fields")
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
        if d is None:
            raise AttributeError(f"'{type(op).__name__}' is not a registered op: it has no fields")
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
        v = op.read_properties().get(self.name)
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
        vis = op.get_attr("sym_visibility")
        if vis is not None and (not isinstance(vis, StringAttr) or vis.value not in ("public", "private", "nested")):
            return f'visibility expected to be one of ["public", "private", "nested"], but got {vis}'
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


# Assembly formats ---------------------------------------------------------------------------
#
# An op's custom syntax is declared as MLIR ODS's `assemblyFormat`, one string that gives both the
# parser and the printer:
#
#     assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"
#
# Elements: `$field` (an operand, a property in its `AttrSyntax`, or a region), `operands`,
# `` `literal` `` (`` ` ` `` a space, `` `` `` no space), `attr-dict`, `attr-dict-with-keyword`,
# `type(x)` and `functional-type(operands, results)` where x is `$field`, `operands` or `results`,
# `custom<Name>(args)` (a directive registered with `register_directive`; args are `$field`,
# `type(...)` and `ref(...)`, the last passing an already parsed value in), and optional groups
# `( ... $anchor^ ... )?` printed when the anchor is present (an operand group that is not empty,
# a property that is set), with an optional else group: `(...):(...)?`. Spacing follows ODS's
# generated printers.
# Syntax no format can express is an op's own `parse_custom`/`print_custom`.


class AttrSyntax:
    """How an attribute is written where a format names it as `$prop`: `print(attr) -> str`,
    `parse(parser) -> Attribute` (MLIR's stripped form: `DEFAULT` for an enum, `5` for an i64)."""

    __slots__ = ("print", "parse")

    def __init__(self, print: Callable[[Attribute], str], parse: Callable[[Any], Attribute]) -> None:
        self.print = print
        self.parse = parse


DIRECTIVES: dict[str, tuple[Callable, Callable]] = {}


def register_directive(name: str, parse: Callable, print: Callable) -> None:
    """`custom<name>(args)` of assembly formats. `print(p, op, *values)` receives each argument's
    value (a Value or list of them, a Type or list, an Attribute or None); `parse(parser, n, *refs)`
    receives the values of the `ref(...)` arguments and returns the values of the n other
    arguments (one value itself when n is 1): an operand reference (or list), a Type (or list) or
    an Attribute (or None)."""
    DIRECTIVES[name] = (parse, print)


_FORMAT_TOKEN = re.compile(r"\s*(`[^`]*`|\$\w+|custom<\w+>|functional-type|attr-dict-with-keyword|attr-dict|"
                           r"[A-Za-z_][\w-]*|[(),?^:])")


def _tokens(text: str, op_name: str) -> list[str]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _FORMAT_TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"bad assembly format of {op_name} at {text[pos:]!r}")
        out.append(m.group(1))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


class AssemblyFormat:
    """A compiled `assembly_format`: `print(op, p)` and `parse(cls, parser, n_results)`."""

    def __init__(self, text: str, definition: OpDef) -> None:
        self.d = definition
        self.operands = {f.name: f for f in definition.operands}
        self.results = {f.name: f for f in definition.results}
        self.props = {f.name: f for f in definition.props}
        self.regions = {f.name: f for f in definition.regions}
        self.toks = _tokens(text, definition.name)
        self.i = 0
        self.elements = self._elements(())
        self.used_props: set[str] = set()
        self._collect(self.elements)

    # Compiling -----------------------------------------------------------------------------
    def _elements(self, stop: tuple[str, ...]) -> list[tuple]:
        out = []
        while self.i < len(self.toks) and self.toks[self.i] not in stop:
            out.append(self._element())
        return out

    def _peek(self) -> str:
        if self.i >= len(self.toks):
            raise ValueError(f"assembly format of {self.d.name} ends early")
        return self.toks[self.i]

    def _next(self) -> str:
        if self.i >= len(self.toks):
            raise ValueError(f"assembly format of {self.d.name} ends early")
        t = self.toks[self.i]
        self.i += 1
        return t

    def _expect(self, t: str) -> None:
        if self._next() != t:
            raise ValueError(f"expected {t!r} in assembly format of {self.d.name}")

    def _var(self, tok: str) -> tuple:
        name = tok[1:]
        if name in self.operands:
            return ("operand", name)
        if name in self.results:
            return ("result", name)
        if name in self.props:
            return ("attr", name)
        if name in self.regions:
            return ("region", name)
        raise ValueError(f"'{name}' is not a field of {self.d.name}")

    def _arg(self) -> tuple:
        t = self._next()
        if t.startswith("$"):
            return self._var(t)
        if t in ("operands", "results"):
            return (t,)
        if t in ("type", "ref"):
            self._expect("(")
            inner = self._arg()
            self._expect(")")
            return (t, inner)
        raise ValueError(f"unexpected {t!r} in assembly format of {self.d.name}")

    def _element(self) -> tuple:
        t = self._next()
        if t.startswith("`"):
            return ("lit", t[1:-1])
        if t.startswith("$") or t in ("operands", "type"):
            self.i -= 1
            return self._arg()
        if t in ("attr-dict", "attr-dict-with-keyword"):
            return ("attr-dict", t == "attr-dict-with-keyword")
        if t == "functional-type":
            self._expect("(")
            a = self._arg()
            self._expect(",")
            b = self._arg()
            self._expect(")")
            return ("functional", a, b)
        if t.startswith("custom<"):
            self._expect("(")
            args = []
            while True:
                args.append(self._arg())
                if self._next() == ")":
                    break
            return ("custom", t[7:-1], args)
        if t == "(":
            then, anchor = [], None
            while self._peek() != ")":
                e = self._element()
                if self._peek() == "^":
                    self.i += 1
                    anchor = e
                then.append(e)
            self.i += 1
            other: list[tuple] = []
            if self._peek() == ":":
                self.i += 1
                self._expect("(")
                other = self._elements((")",))
                self.i += 1
            self._expect("?")
            if anchor is None:
                raise ValueError(f"optional group without an anchor (`^`) in assembly format of {self.d.name}")
            return ("optional", then, other, anchor)
        raise ValueError(f"unexpected {t!r} in assembly format of {self.d.name}")

    def _collect(self, elements: list[tuple]) -> None:
        for e in elements:
            if e[0] == "attr":
                self.used_props.add(e[1])
            elif e[0] == "custom":
                self._collect(e[2])
            elif e[0] in ("ref", "type"):
                self._collect([e[1]])
            elif e[0] == "optional":
                self._collect(e[1])
                self._collect(e[2])

    def _syntax(self, prop_name: str) -> AttrSyntax | None:
        c = self.props[prop_name].constraint
        return c.syntax if c is not None else None

    # Printing ------------------------------------------------------------------------------
    def value(self, op: Operation, arg: tuple) -> Any:
        kind = arg[0]
        if kind in ("operand", "result"):
            f = (self.operands if kind == "operand" else self.results)[arg[1]]
            return getattr(op, f.name) if f.kind == SINGLE else list(getattr(op, f.name) or ())
        if kind == "operands":
            return list(op.operands)
        if kind == "results":
            return list(op.results)
        if kind == "attr":
            return op.read_properties().get(arg[1])
        if kind == "region":
            return op.regions[self.regions[arg[1]].index]
        if kind == "ref":
            return self.value(op, arg[1])
        v = self.value(op, arg[1])  # type(...)
        return [x.type for x in v] if isinstance(v, list) else v.type

    def present(self, op: Operation, anchor: tuple) -> bool:
        v = self.value(op, anchor)
        if isinstance(v, list):
            return bool(v)
        # A `false` flag is absent: ODS anchors on a defaulted attribute test it against its
        # default, which for StableHLO's and CHLO's flags is `false`.
        return v is not None and not (anchor[0] == "attr" and getattr(v, "type", None) is i1 and not v.value)

    def print(self, op: Operation, p: Printer) -> None:
        p.write(p.op_name(op))
        self._print(op, p, self.elements, [True, False])

    def _print(self, op: Operation, p: Printer, elements: list[tuple], state: list[bool]) -> None:
        for e in elements:
            kind = e[0]
            if kind == "lit":
                text = e[1]
                if text == " ":
                    p.write(" ")
                    state[:] = [False, False]
                    continue
                if text == "":
                    state[:] = [False, True]
                    continue
                if state[0] and _space_before(text, state[1]):
                    p.write(" ")
                p.write(text)
                state[:] = [len(text) != 1 or text not in "<({[", text[0] != "_" and not text[0].isalpha()]
                continue
            if kind == "optional":
                if self.present(op, e[3]):
                    self._print(op, p, e[1], state)
                else:
                    self._print(op, p, e[2], state)
                continue
            if kind == "attr-dict":
                props = {k: v for k, v in op.read_properties().items() if k not in self.used_props}
                props.update(op.read_attributes())
                p.attr_dict(props, keyword=e[1])
            else:
                if state[0]:
                    p.write(" ")
                self._print_element(op, p, e)
            state[:] = [True, False]

    def _print_element(self, op: Operation, p: Printer, e: tuple) -> None:
        kind = e[0]
        if kind == "custom":
            DIRECTIVES[e[1]][1](p, op, *[self.value(op, a) for a in e[2]])
        elif kind == "functional":
            from loom.ir.printer import signature_text
            ins, outs = self.value(op, ("type", e[1])), self.value(op, ("type", e[2]))
            p.write(signature_text(tuple(_as_list(ins)), tuple(_as_list(outs))))
        elif kind == "attr":
            a = op.read_properties().get(e[1])
            syntax = self._syntax(e[1])
            if a is not None:
                p.write(syntax.print(a) if syntax is not None else p.attr_text(a))
        elif kind == "region":
            p.region(self.value(op, e), print_entry_args=True)
        else:
            v = self.value(op, e)
            if kind == "type":
                p.write(", ".join(map(str, v)) if isinstance(v, list) else str(v))
            else:
                p.write(", ".join(map(p.value, v)) if isinstance(v, list) else p.value(v))

    # Parsing -------------------------------------------------------------------------------
    def parse(self, cls: type[OpBase], parser: Parser, n_results: int) -> Operation:
        st = _ParseState()
        self._parse(parser, self.elements, st)
        return self._build(cls, parser, st, n_results)

    def _parse(self, parser: Parser, elements: list[tuple], st: _ParseState) -> None:
        for e in elements:
            kind = e[0]
            if kind == "lit":
                text = e[1]
                if text.strip():
                    if text[0].isalpha() or text[0] == "_":
                        parser.expect_keyword(text)
                    else:
                        parser.expect(text)
            elif kind == "optional":
                first = e[1][0]
                taken = (parser.accept(first[1]) if first[0] == "lit" and not first[1][0].isalpha()
                         else parser.accept_keyword(first[1]) if first[0] == "lit"
                         else parser.peek("%"))
                if taken:
                    self._parse(parser, e[1][1:] if first[0] == "lit" else e[1], st)
                else:
                    self._parse(parser, e[2], st)
            elif kind == "attr-dict":
                if not e[1] or parser.accept_keyword("attributes"):
                    for k, v in parser.parse_optional_attr_dict().items():
                        (st.props if k in self.props else st.attrs)[k] = v
            elif kind == "custom":
                refs = [self._current(st, a[1]) for a in e[2] if a[0] == "ref"]
                targets = [a for a in e[2] if a[0] != "ref"]
                outs = DIRECTIVES[e[1]][0](parser, len(targets), *refs)
                if len(targets) == 1:
                    outs = (outs,)
                for a, v in zip(targets, outs):
                    self._store(st, a, v)
            elif kind == "functional":
                ins, outs = parser.parse_signature()
                self._store(st, ("type", e[1]), list(ins))
                self._store(st, ("type", e[2]), list(outs))
            elif kind == "attr":
                syntax = self._syntax(e[1])
                st.props[e[1]] = syntax.parse(parser) if syntax is not None else _parse_untyped_attribute(parser)
            elif kind == "region":
                st.regions[e[1]] = parser.parse_region()
            elif kind == "type":
                target = e[1]
                if target[0] in ("operands", "results") or self._variadic(target):
                    self._store(st, e, _parse_type_list(parser))
                else:
                    self._store(st, e, parser.parse_type())
            else:  # operands
                if kind == "operands" or self._variadic(e):
                    self._store(st, e, _parse_operand_list(parser))
                else:
                    self._store(st, e, parser.parse_operand_ref())

    def _variadic(self, arg: tuple) -> bool:
        fields = self.operands if arg[0] == "operand" else self.results
        return fields[arg[1]].kind != SINGLE

    def _store(self, st: _ParseState, arg: tuple, v: Any) -> None:
        if arg[0] == "type":
            st.types[arg[1]] = v
        elif arg[0] == "attr":
            if v is not None:
                st.props[arg[1]] = v
        else:
            st.refs[arg] = v

    def _current(self, st: _ParseState, arg: tuple) -> Any:
        if arg[0] == "type":
            return st.types.get(arg[1])
        return st.refs.get(arg)

    def _build(self, cls: type[OpBase], parser: Parser, st: _ParseState, n_results: int) -> Operation:
        d = self.d
        if ("operands",) in st.refs:
            refs = _as_list(st.refs[("operands",)])
        else:
            refs = []
            for f in d.operands:
                r = st.refs.get(("operand", f.name), [])
                refs.extend(_as_list(r))
        types = self._types(st, d.operands, "operand", "operands", len(refs), parser)
        operands = [parser.resolve_operand(r, t) for r, t in zip(refs, types)]
        if not d.results or any(("result", f.name) in st.types for f in d.results) or ("results",) in st.types:
            result_types = self._types(st, d.results, "result", "results", None, parser)
        else:  # no result type written: the op infers it (InferTypeOpInterface)
            inferred = cls.infer_result_types([v.type for v in operands], st.props)
            if inferred is None:
                raise parser.error(f"cannot infer the result types of '{d.name}'")
            result_types = inferred
        regions = [st.regions[r.name] for r in d.regions if r.name in st.regions]
        return Operation.create(cls.name, operands, result_types, st.props, st.attrs, regions)

    def _types(self, st: _ParseState, fields: list, kind: str, group: str, count: int | None,
               parser: Parser) -> list[Type]:
        if (group,) in st.types:
            types = list(st.types[(group,)])
        else:
            types = []
            for f in fields:
                t = st.types.get((kind, f.name))
                if t is None:
                    if f.kind != SINGLE and not st.refs.get(("operand", f.name)):
                        continue
                    raise parser.error(f"no type given for '{f.name}' of '{self.d.name}'")
                types.extend(_as_list(t))
        if count is not None and len(types) != count:
            raise parser.error(f"'{self.d.name}' has {count} operands but {len(types)} operand types")
        return types


class _ParseState:
    __slots__ = ("refs", "types", "props", "attrs", "regions")

    def __init__(self) -> None:
        self.refs: dict[tuple, Any] = {}
        self.types: dict[tuple, Any] = {}
        self.props: dict[str, Attribute] = {}
        self.attrs: dict[str, Attribute] = {}
        self.regions: dict[str, Region] = {}


def _as_list(v: Any) -> list:
    return v if isinstance(v, list) else [v]


def _space_before(text: str, last_was_punctuation: bool) -> bool:
    """ODS's rule for a space before a literal."""
    if len(text) != 1 and text != "->":
        return True
    if last_was_punctuation:
        return text[0] not in ">)}],"
    return text[0] not in "<>(){}[],"


def _parse_untyped_attribute(parser: Parser) -> Attribute:
    """An attribute where a format names it: a string takes no `: type` suffix there."""
    if parser.peek('"'):
        from loom.ir.attributes import StringAttr
        return StringAttr(parser.parse_string())
    return parser.parse_attribute()


def _parse_operand_list(parser: Parser) -> list:
    """Operand references separated by commas (possibly none); a comma not followed by `%` is
    left for the next element."""
    refs: list = []
    while parser.peek("%"):
        refs.append(parser.parse_operand_ref())
        save = parser.pos
        if not (parser.accept(",") and parser.peek("%")):
            parser.pos = save
            break
    return refs


def _parse_type_list(parser: Parser) -> list:
    types = [parser.parse_type()]
    while True:
        save = parser.pos
        if not parser.accept(","):
            return types
        parser.ws()
        c = parser.src[parser.pos:parser.pos + 1]
        if not (c.isalpha() or c in "!("):
            parser.pos = save
            return types
        types.append(parser.parse_type())


# Definitions --------------------------------------------------------------------------------

class OpDef:
    """The structure of a registered op, collected from its class body."""

    def __init__(self, cls: type[OpBase]) -> None:
        self.name: str = cls.name
        self.operands: list[operand] = []
        self.results: list[result_def] = []
        self.props: list[prop] = []
        self.regions: list[region_def] = []
        self.successors: list[successor_def] = []
        for klass in reversed(cls.__mro__):
            for attr_name, v in vars(klass).items():
                if isinstance(v, operand):
                    _declare(self.operands, attr_name, v)
                elif isinstance(v, result_def):
                    _declare(self.results, attr_name, v)
                elif isinstance(v, prop):
                    _declare(self.props, attr_name, v)
                elif isinstance(v, region_def):
                    _declare(self.regions, attr_name, v)
                elif isinstance(v, successor_def):
                    _declare(self.successors, attr_name, v)
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
        self.default_props = MappingProxyType(dict(self.prop_defaults))  # the properties of an op given none
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
        segs = op.read_properties().get(seg_attr)
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


_F = TypeVar("_F", bound=_Field)


def _declare(group: list[_F], attr_name: str, field: _F) -> None:
    """Add a field declared as `attr_name`; it replaces one of that name declared by a base class."""
    group[:] = [f for f in group if f.name != attr_name]
    group.append(field)


class CustomParser(Protocol):
    """An op class's `parse_custom` as read through the class: the op parsed from its custom form
    (the parser just past the op name), with `n_results` result names bound by the text."""

    def __call__(self, parser: Parser, n_results: int, /) -> Operation: ...


class OpBase(Operation):
    """Base of registered ops. Subclasses set `name` and declare fields; registration happens
    when the subclass is created."""

    name = ""
    traits: ClassVar[tuple] = ()

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if cls.__dict__.get("name"):
            cls.definition = OpDef(cls)
            text = cls.assembly_format
            if text is not None and "parse_custom" not in cls.__dict__:
                fmt = AssemblyFormat(text, cls.definition)
                cls.parse_custom = lambda parser, n_results: fmt.parse(cls, parser, n_results)
                cls.print_custom = fmt.print
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

    @classmethod
    def infer_result_types(cls, operand_types: Sequence[Type], properties: dict[str, Attribute],
                           regions: Sequence[Region] = ()) -> list[Type] | None:
        """The result types implied by the operands' types and the properties (MLIR's
        InferTypeOpInterface), or None where they are not: an assembly format that writes no
        result type needs them."""
        return None

    # Custom syntax: an `assembly_format` (see AssemblyFormat) or, for syntax no format can
    # express, the hooks `parse_custom(parser, n_results)` (classmethod) and
    # `print_custom(printer)`. Ops with neither always use the generic form.
    assembly_format: ClassVar[str | None] = None
    parse_custom: ClassVar[CustomParser | None] = None
    print_custom: ClassVar[Callable[[Operation, Printer], None] | None] = None


def has_trait(op: Operation, trait: type[Trait]) -> bool:
    d = type(op).definition
    return d is not None and trait in d.trait_set


# Registry -----------------------------------------------------------------------------------

class Dialect:
    """A namespace of ops, plus optional parsers for its own types and attributes.

    `type_parser(text) -> Type` and `attribute_parser(text) -> Attribute` receive the full text
    of a `!dialect...` or `#dialect...` entity; without them the text is kept opaque."""

    def __init__(self, name: str, ops: list[type[OpBase]] | None = None, type_parser: Callable | None = None,
                 attribute_parser: Callable | None = None, allow_unknown_ops: bool = False,
                 materialize_constant: Callable | None = None) -> None:
        self.name = name
        # `materialize_constant(builder, attr, type, location) -> Operation | None`: makes a
        # constant op of this dialect for a folded value (used by the canonicalizer).
        self.materialize_constant = materialize_constant
        self.ops: dict[str, type[OpBase]] = {}
        self.type_parser = type_parser
        self.attribute_parser = attribute_parser
        self.allow_unknown_ops = allow_unknown_ops
        for op in ops or ():
            self.ops[op.name] = op


DIALECTS: dict[str, Dialect] = {}
_OPS: dict[str, type[OpBase]] = _OP_CLASSES


def register_op(cls: type[OpBase]) -> None:
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


def lookup_op(name: str) -> type[OpBase] | None:
    return _OPS.get(name)


def lookup_dialect(name: str) -> Dialect | None:
    return DIALECTS.get(name)


__all__ = [
    "AssemblyFormat", "AttrSizedOperandSegments", "AttrSizedResultSegments", "AttrSyntax", "Commutative",
    "ConstantLike", "Constraint", "DIRECTIVES", "Dialect", "GraphRegions", "HasParent", "IsolatedFromAbove",
    "NoTerminator", "OpBase", "OpDef", "Pure", "Region", "ReturnLike", "SameOperandsAndResultType",
    "SameTypeOperands", "SingleBlock", "Symbol", "SymbolTable", "Terminator", "Trait", "has_trait",
    "lookup_dialect", "lookup_op", "operand", "opt_operand", "opt_prop", "prop", "region_def", "register_dialect",
    "register_directive", "register_op", "result_def", "successor_def", "var_operand", "var_result",
]
