"""The func dialect: `func.func`, `func.return` and `func.call`, with MLIR's custom syntax.

    func.func private @decl(i32 {my.attr}) -> i32
    func.func @f(%arg0: i32) -> (i32, i1) attributes {llvm.emit_c_interface} {
      %0:2 = call @g(%arg0) : (i32) -> (i32, i1)
      return %0#0, %0#1 : i32, i1
    }

Inside a `func.func` body, ops of this dialect are written without their `func.` prefix.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

from loom.ir.attributes import (
    UNKNOWN_LOC,
    ArrayAttr,
    Attribute,
    DictionaryAttr,
    Location,
    StringAttr,
    SymbolRefAttr,
    TypeAttr,
    UnitAttr,
    keyword_or_string,
)
from loom.ir.core import Block, Operation, Region, Value
from loom.ir.opdef import (
    Constraint,
    Dialect,
    HasParent,
    IsolatedFromAbove,
    OpBase,
    Pure,
    ReturnLike,
    Symbol,
    SymbolTable,
    Terminator,
    has_trait,
    opt_prop,
    prop,
    region_def,
    register_dialect,
    var_operand,
    var_result,
)
from loom.ir.types import FunctionType, Type

FunctionTypeAttr = Constraint(lambda a: isinstance(a, TypeAttr) and isinstance(a.value, FunctionType),
                              "type attribute of function type")
DictArrayAttr = Constraint(lambda a: isinstance(a, ArrayAttr) and all(isinstance(d, DictionaryAttr) for d in a),
                           "array of dictionary attributes")
FlatSymbolRef = Constraint(lambda a: isinstance(a, SymbolRefAttr) and not a.nested, "flat symbol reference attribute")

# Inherent attributes the signature syntax spells out; the rest go to `attributes {...}`.
_SIGNATURE_ATTRS = frozenset({"sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs"})
_VISIBILITIES = ("private", "public", "nested")


def _symbol_name(op: Operation) -> str | None:
    sym = op.read_properties().get("sym_name") or op.read_attributes().get("sym_name")
    return sym.value if isinstance(sym, StringAttr) else None


# symbol table op -> {name: op}; entries are checked on use and the map rebuilt when stale, so
# verifying many calls costs one scan of the table rather than one per call.
_SYMBOLS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def lookup_symbol(start: Operation, name: str) -> Operation | None:
    """The op named `name` in the nearest symbol table enclosing `start`, or None."""
    table = start.parent_op
    while table is not None and not has_trait(table, SymbolTable):
        table = table.parent_op
    if table is None:
        return None
    symbols = _SYMBOLS.get(table)
    op = symbols.get(name) if symbols is not None else None
    if op is not None and op.parent_op is table and _symbol_name(op) == name:
        return op
    symbols = {}
    for region in table.regions:
        for block in region.blocks:
            for op in block.ops:
                sym = _symbol_name(op)
                if sym is not None:
                    symbols.setdefault(sym, op)
    _SYMBOLS[table] = symbols
    return symbols.get(name)


def _dict_array(dicts: Sequence[dict[str, Attribute]]) -> ArrayAttr | None:
    """MLIR drops `arg_attrs`/`res_attrs` when every dictionary is empty."""
    if not any(dicts):
        return None
    return ArrayAttr(tuple(DictionaryAttr.get(d) for d in dicts))


def _split_inherent(cls: type, attrs: dict[str, Attribute], props: dict[str, Attribute]) -> None:
    """Move the op's inherent attributes from a parsed attribute dictionary into `props`."""
    for key in [k for k in attrs if k in cls.definition.prop_names]:
        props[key] = attrs.pop(key)


class FuncOp(OpBase):
    """A function: a symbol with a `FunctionType` and a body region (empty for a declaration)."""

    name = "func.func"
    sym_name = prop(StringAttr)
    function_type = prop(FunctionTypeAttr)
    sym_visibility = opt_prop(StringAttr)
    arg_attrs = opt_prop(DictArrayAttr)
    res_attrs = opt_prop(DictArrayAttr)
    no_inline = opt_prop(UnitAttr)
    body = region_def()
    traits = (IsolatedFromAbove, Symbol)

    @staticmethod
    def build(sym_name: str, function_type: FunctionType, visibility: str | None = None,
              declaration: bool = False, location: Location = UNKNOWN_LOC) -> FuncOp:
        """A function whose body is one block with arguments of the input types (no ops), or no
        block at all for a declaration."""
        props: dict[str, Attribute] = {"sym_name": StringAttr(sym_name), "function_type": TypeAttr(function_type)}
        if visibility is not None:
            props["sym_visibility"] = StringAttr(visibility)
        region = Region() if declaration else Region([Block(function_type.inputs)])
        return Operation.create(FuncOp.name, (), (), props, {}, [region], (), location)

    @property
    def type(self) -> FunctionType:
        return self.properties["function_type"].value

    @property
    def is_declaration(self) -> bool:
        return not self.regions[0].blocks

    @property
    def entry_block(self) -> Block:
        return self.regions[0].blocks[0]

    def verify_(self) -> None:
        fn_type = self.type
        for key, count, what in (("arg_attrs", len(fn_type.inputs), "argument"),
                                 ("res_attrs", len(fn_type.results), "result")):
            attrs = self.read_properties().get(key)
            if attrs is not None and len(attrs) != count:
                self.emit_error(f"expects {what} attribute array to have the same number of elements as the number "
                                f"of function {what}s, got {len(attrs)}, but expected {count}")
        if self.is_declaration:
            return
        args = self.entry_block.args
        if len(args) != len(fn_type.inputs):
            self.emit_error(f"entry block must have {len(fn_type.inputs)} arguments to match function signature")
        for i, (arg, t) in enumerate(zip(args, fn_type.inputs)):
            if arg.type is not t:
                self.emit_error(f"type of entry block argument #{i}('{arg.type}') must match the type of the "
                                f"corresponding argument in function signature('{t}')")

    @classmethod
    def parse_custom(cls, parser, n_results: int) -> Operation:
        props: dict[str, Attribute] = {}
        for vis in _VISIBILITIES:
            if parser.accept_keyword(vis):
                props["sym_visibility"] = StringAttr(vis)
                break
        props["sym_name"] = StringAttr(parser.parse_symbol_name())
        parser.expect("(", "in function signature")
        named: list[tuple[tuple[str, int, int], Type, Location]] = []
        inputs: list[Type] = []
        arg_dicts: list[dict[str, Attribute]] = []
        if not parser.accept(")"):
            while True:
                if parser.peek("%"):
                    if inputs and not named:
                        raise parser.error("expected type instead of SSA identifier")
                    ref = parser.parse_operand_ref()
                    parser.expect(":", "after argument name")
                    t = parser.parse_type()
                    arg_dicts.append(parser.parse_optional_attr_dict())
                    loc = parser.parse_optional_trailing_loc() or parser.loc_at(ref[2])
                    named.append((ref, t, loc))
                else:
                    if named:
                        raise parser.error("expected SSA identifier")
                    t = parser.parse_type()
                    arg_dicts.append(parser.parse_optional_attr_dict())
                inputs.append(t)
                if parser.accept(")"):
                    break
                parser.expect(",", "or ')' in argument list")
        results: list[Type] = []
        res_dicts: list[dict[str, Attribute]] = []
        if parser.accept("->"):
            if parser.accept("("):
                if not parser.accept(")"):
                    while True:
                        results.append(parser.parse_type())
                        res_dicts.append(parser.parse_optional_attr_dict())
                        if parser.accept(")"):
                            break
                        parser.expect(",", "or ')' in result list")
            else:
                results.append(parser.parse_type())
                res_dicts.append({})
        props["function_type"] = TypeAttr(FunctionType(tuple(inputs), tuple(results)))
        for key, dicts in (("arg_attrs", arg_dicts), ("res_attrs", res_dicts)):
            array = _dict_array(dicts)
            if array is not None:
                props[key] = array
        attrs: dict[str, Attribute] = {}
        if parser.accept_keyword("attributes"):
            attrs = parser.parse_optional_attr_dict()
            _split_inherent(cls, attrs, props)
        if parser.peek("{"):
            if inputs and not named:
                raise parser.error("expected named arguments for a function with a body")
            parser.default_dialects.append("func")
            try:
                region = parser.parse_region(isolated=True, entry_args=named)
            finally:
                parser.default_dialects.pop()
        else:
            region = Region()
        return Operation.create(cls.name, (), (), props, attrs, [region])

    def print_custom(self, p) -> None:
        props = self.properties
        p.write(p.op_name(self))
        vis = props.get("sym_visibility")
        if isinstance(vis, StringAttr):
            p.write(" " + vis.value)
        p.write(" @" + keyword_or_string(props["sym_name"].value))
        fn_type = self.type
        arg_attrs = props.get("arg_attrs")
        region = self.regions[0]
        parts = []
        for i, t in enumerate(fn_type.inputs):
            extra = _attr_dict_text(arg_attrs[i]) if arg_attrs is not None and i < len(arg_attrs) else ""
            if region.blocks and i < len(region.blocks[0].args):
                arg = region.blocks[0].args[i]
                text = f"{p.value(arg)}: {arg.type}{extra}"
                if p.debuginfo:
                    text += f" loc({p._loc_body(arg.location)})"
            else:
                text = f"{t}{extra}"
            parts.append(text)
        p.write("(" + ", ".join(parts) + ")")
        if fn_type.results:
            res_attrs = props.get("res_attrs")
            extras = [_attr_dict_text(res_attrs[i]) if res_attrs is not None and i < len(res_attrs) else ""
                      for i in range(len(fn_type.results))]
            texts = [f"{t}{extra}" for t, extra in zip(fn_type.results, extras)]
            parens = len(texts) > 1 or isinstance(fn_type.results[0], FunctionType) or bool(extras[0])
            p.write(" -> " + ("(" + ", ".join(texts) + ")" if parens else texts[0]))
        others = {k: v for k, v in props.items() if k not in _SIGNATURE_ATTRS}
        others.update(self.attributes)
        p.attr_dict(others, keyword=True)
        if region.blocks:
            p.write(" ")
            p.default_dialects.append("func")
            try:
                p.region(region, print_entry_args=False, print_terminators=True)
            finally:
                p.default_dialects.pop()


def _attr_dict_text(d: DictionaryAttr) -> str:
    return f" {d}" if d.items else ""


def _enclosing_func(op: Operation) -> FuncOp | None:
    parent = op.parent_op
    return parent if isinstance(parent, FuncOp) else None


class ReturnOp(OpBase):
    """Returns from the enclosing `func.func`; the operand types must match its results."""

    name = "func.return"
    values = var_operand()
    traits = (Pure, HasParent("func.func"), ReturnLike, Terminator)

    @staticmethod
    def build(values: Sequence[Value] = (), location: Location = UNKNOWN_LOC) -> ReturnOp:
        return Operation.create(ReturnOp.name, values, (), {}, {}, (), (), location)

    def verify_(self) -> None:
        fn = _enclosing_func(self)
        if fn is None or not isinstance(fn.read_properties().get("function_type"), TypeAttr):
            return
        results = fn.type.results
        name = fn.properties["sym_name"].value if isinstance(fn.read_properties().get("sym_name"), StringAttr) else "?"
        operands = self.operands
        if len(operands) != len(results):
            self.emit_error(f"has {len(operands)} operands, but enclosing function (@{name}) returns {len(results)}")
        for i, (v, t) in enumerate(zip(operands, results)):
            if v.type is not t:
                self.emit_error(f"type of return operand {i} ('{v.type}') doesn't match function result type ('{t}') "
                                f"in function @{name}")

    @classmethod
    def parse_custom(cls, parser, n_results: int) -> Operation:
        attrs = parser.parse_optional_attr_dict()
        operands: list[Value] = []
        if parser.peek("%"):
            refs = [parser.parse_operand_ref()]
            while parser.accept(","):
                refs.append(parser.parse_operand_ref())
            parser.expect(":")
            types = [parser.parse_type()]
            while len(types) < len(refs):
                parser.expect(",")
                types.append(parser.parse_type())
            operands = [parser.resolve_operand(r, t) for r, t in zip(refs, types)]
        return Operation.create(cls.name, operands, (), {}, attrs)

    def print_custom(self, p) -> None:
        p.write(p.op_name(self))
        p.attr_dict(self.read_attributes())
        operands = self.operands
        if operands:
            p.write(" ")
            p.operands(operands)
            p.write(" : ")
            p.types(v.type for v in operands)


class CallOp(OpBase):
    """Calls a function by symbol; checked against the callee's type when the nearest symbol
    table holds it. Not pure: the callee may have side effects."""

    name = "func.call"
    callee = prop(FlatSymbolRef)
    arg_attrs = opt_prop(DictArrayAttr)
    res_attrs = opt_prop(DictArrayAttr)
    no_inline = opt_prop(UnitAttr)
    inputs = var_operand()
    outputs = var_result()

    @staticmethod
    def build(callee: str, args: Sequence[Value], result_types: Sequence[Type],
              location: Location = UNKNOWN_LOC) -> CallOp:
        return Operation.create(CallOp.name, args, result_types, {"callee": SymbolRefAttr(callee)}, {}, (), (),
                                location)

    def verify_(self) -> None:
        callee = self.read_properties().get("callee")
        if not isinstance(callee, SymbolRefAttr):
            return
        fn = lookup_symbol(self, callee.root)
        if fn is None:
            table = self.parent_op
            while table is not None and not has_trait(table, SymbolTable):
                table = table.parent_op
            if table is None or callee.nested:
                return  # not inside a symbol table (a detached op): nothing to resolve against
            self.emit_error(f"'{callee.root}' does not reference a valid function")
        if not isinstance(fn, FuncOp) or not isinstance(fn.read_properties().get("function_type"), TypeAttr):
            self.emit_error(f"'{callee.root}' does not reference a valid function")
        fn_type = fn.type
        operands = self.operands
        if len(fn_type.inputs) != len(operands):
            self.emit_error("incorrect number of operands for callee")
        for i, (v, t) in enumerate(zip(operands, fn_type.inputs)):
            if v.type is not t:
                self.emit_error(f"operand type mismatch: expected operand type '{t}', but provided '{v.type}' for "
                                f"operand number {i}")
        if len(fn_type.results) != len(self.results):
            self.emit_error("incorrect number of results for callee")
        for i, (r, t) in enumerate(zip(self.results, fn_type.results)):
            if r.type is not t:
                self.emit_error(f"result type mismatch at index {i}")

    @classmethod
    def parse_custom(cls, parser, n_results: int) -> Operation:
        props: dict[str, Attribute] = {"callee": SymbolRefAttr(parser.parse_symbol_name())}
        parser.expect("(")
        refs = []
        if not parser.accept(")"):
            while True:
                refs.append(parser.parse_operand_ref())
                if parser.accept(")"):
                    break
                parser.expect(",", "or ')' in operand list")
        attrs = parser.parse_optional_attr_dict()
        _split_inherent(cls, attrs, props)
        parser.expect(":")
        pos = parser.ws()
        ins, outs = parser.parse_signature()
        if len(ins) != len(refs):
            raise parser.error(f"expected {len(refs)} operand types but had {len(ins)}", pos)
        operands = [parser.resolve_operand(r, t) for r, t in zip(refs, ins)]
        return Operation.create(cls.name, operands, outs, props, attrs)

    def print_custom(self, p) -> None:
        from loom.ir.printer import signature_text
        p.write(p.op_name(self) + " ")
        p.attr(self.properties["callee"])
        p.write("(")
        p.operands(self.operands)
        p.write(")")
        shown = {k: v for k, v in self.read_properties().items() if k != "callee"}
        shown.update(self.attributes)
        p.attr_dict(shown)
        p.write(" : " + signature_text(self.operand_types, self.result_types))


register_dialect(Dialect("func", [FuncOp, ReturnOp, CallOp]))

__all__ = ["CallOp", "FuncOp", "ReturnOp", "lookup_symbol"]
