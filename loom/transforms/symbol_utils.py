"""Symbol tables as MLIR defines them: symbol ops, visibility, symbol uses and lookup."""

from __future__ import annotations

from loom.ir.attributes import ArrayAttr, Attribute, DictionaryAttr, StringAttr, SymbolRefAttr
from loom.ir.core import Operation
from loom.ir.opdef import Symbol, SymbolTable, has_trait


def symbol_name(op: Operation) -> str | None:
    name = op.get_attr("sym_name")
    return name.value if isinstance(name, StringAttr) else None


def is_symbol(op: Operation) -> bool:
    """Ops with the Symbol trait, and named symbol tables (a `builtin.module` with a `sym_name` is
    a symbol, an unnamed one is not, as MLIR's optional symbols)."""
    return has_trait(op, Symbol) or (has_trait(op, SymbolTable) and isinstance(op.get_attr("sym_name"), StringAttr))


def is_symbol_table(op: Operation) -> bool:
    return has_trait(op, SymbolTable)


def visibility(op: Operation) -> str:
    v = op.get_attr("sym_visibility")
    return v.value if isinstance(v, StringAttr) else "public"


def is_private(op: Operation) -> bool:
    return visibility(op) == "private"


def can_discard_on_use_empty(op: Operation) -> bool:
    """Whether an unused symbol may be erased: private and nested ones (not public), unless the op
    says otherwise with a `can_discard_on_use_empty()` method."""
    hook = getattr(op, "can_discard_on_use_empty", None)
    if callable(hook):
        return bool(hook())
    return visibility(op) != "public"


def _attr_refs(attr: Attribute, out: list[SymbolRefAttr]) -> None:
    if isinstance(attr, SymbolRefAttr):
        out.append(attr)
    elif isinstance(attr, ArrayAttr):
        for e in attr.elements:
            _attr_refs(e, out)
    elif isinstance(attr, DictionaryAttr):
        for _, v in attr.items:
            _attr_refs(v, out)


def op_refs(op: Operation, out: list[SymbolRefAttr]) -> None:
    """The symbol references in the attributes and properties of `op` alone."""
    for d in (op.properties, op.attributes):
        if d:
            for v in d.values():
                _attr_refs(v, out)


def is_potentially_unknown_symbol_table(op: Operation) -> bool:
    """MLIR's rule: an unregistered op with exactly one region might be a symbol table."""
    return type(op).definition is None and len(op.regions) == 1


def symbol_uses(op: Operation, strict: bool = True) -> list[SymbolRefAttr] | None:
    """The symbol references held by `op` and the ops nested in it, not looking inside nested
    symbol tables (MLIR's `SymbolTable::getSymbolUses`). With `strict`, None if a nested op might
    be an unknown symbol table, in which case the uses cannot be known; otherwise such ops are
    looked into like any other."""
    if strict and is_potentially_unknown_symbol_table(op):
        return None
    out: list[SymbolRefAttr] = []
    op_refs(op, out)
    if is_symbol_table(op):
        return out
    stack = [op]
    while stack:
        for region in stack.pop().regions:
            for block in region.blocks:
                nested = block._first
                while nested is not None:
                    if strict and is_potentially_unknown_symbol_table(nested):
                        return None
                    op_refs(nested, out)
                    if nested.regions and not is_symbol_table(nested):
                        stack.append(nested)
                    nested = nested._next
    return out


class SymbolTableCollection:
    """Caches the name -> op map of each symbol table op it is asked about."""

    def __init__(self) -> None:
        self.tables: dict[Operation, dict[str, Operation]] = {}

    def table(self, table_op: Operation) -> dict[str, Operation]:
        t = self.tables.get(table_op)
        if t is None:
            t = {}
            for region in table_op.regions[:1]:
                for block in region.blocks:
                    for op in block.ops:
                        name = symbol_name(op)
                        if name is not None and name not in t:
                            t[name] = op
            self.tables[table_op] = t
        return t

    def invalidate(self, table_op: Operation) -> None:
        self.tables.pop(table_op, None)

    def lookup_in(self, table_op: Operation, ref: SymbolRefAttr) -> list[Operation] | None:
        """Every op along the path `@root::@nested...` from `table_op`, or None if it fails. A
        private symbol is not visible from outside its table, so a nested reference cannot name it."""
        found = []
        op = self.table(table_op).get(ref.root)
        if op is None:
            return None
        found.append(op)
        for name in ref.nested:
            if not is_symbol_table(op):
                return None
            op = self.table(op).get(name)
            if op is None or is_private(op):
                return None
            found.append(op)
        return found

    def lookup_nearest(self, start: Operation, ref: SymbolRefAttr) -> Operation | None:
        """The op `ref` names, looked up from the nearest symbol table enclosing (or being) `start`."""
        table = start
        while table is not None and not is_symbol_table(table):
            table = table.parent_op
        if table is None:
            return None
        path = self.lookup_in(table, ref)
        return path[-1] if path else None


__all__ = ["SymbolTableCollection", "can_discard_on_use_empty", "is_potentially_unknown_symbol_table",
           "is_private", "is_symbol", "is_symbol_table", "op_refs", "symbol_name", "symbol_uses", "visibility"]
