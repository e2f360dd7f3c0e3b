"""The printer: MLIR's generic form byte for byte, and the custom (pretty) form of ops that
define one.

Values are named as MLIR's SSANameState names them: entry-block arguments `%argN`, everything
else `%N`, one number per op (its results are `%N#i`), regions numbered after the ops of their
parent region in LIFO order. In the generic form the counters run on across sibling regions; in
the custom form each region restarts from its parent's counters, and ops may suggest names
(`%c0_i32`, `%cst`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable

from loom.ir.attributes import (
    UNIT,
    Attribute,
    CallSiteLoc,
    DictionaryAttr,
    FusedLoc,
    Location,
    NameLoc,
    OpaqueBuiltinAttr,
    attribute_text,
    dictionary_body,
)
from loom.ir.types import FunctionType, Type

if TYPE_CHECKING:
    from loom.ir.core import Block, Operation, Region, Value

_SIG_CACHE: dict[tuple, str] = {}


def signature_text(ins: tuple[Type, ...], outs: tuple[Type, ...]) -> str:
    key = (ins, outs)
    s = _SIG_CACHE.get(key)
    if s is None:
        a = ", ".join(map(str, ins))
        if len(outs) == 1 and not isinstance(outs[0], FunctionType):
            s = f"({a}) -> {outs[0]}"
        else:
            s = f"({a}) -> ({', '.join(map(str, outs))})"
        _SIG_CACHE[key] = s
    return s


class ExplicitProperties(dict):
    """Properties of an unregistered op written as `<{...}>`: printed even when empty."""


_SANITIZE = re.compile(r"[^A-Za-z0-9_$.-]")


class Printer:
    """Prints ops; custom printers (`print_custom(p)`) call its helpers."""

    def __init__(self, generic: bool = False, debuginfo: bool = False, skip_regions: bool = False) -> None:
        self.generic = generic
        self.debuginfo = debuginfo
        self.skip_regions = skip_regions
        self.out: list[str] = []
        self.names: dict[Value, str] = {}
        self.def_names: dict[Operation, str] = {}
        self.block_names: dict[Block, str] = {}
        self.block_order: dict[Block, int] = {}
        self.indent = 0
        self.loc_aliases: dict[Location, str] | None = None
        # Ops of these dialects print without their prefix (innermost last), as MLIR's
        # OpAsmOpInterface::getDefaultDialect: `return` inside `func.func`.
        self.default_dialects: list[str] = []

    # Naming -------------------------------------------------------------------------------
    def number(self, root: Operation) -> None:
        """Assign SSA and block names for `root` and everything nested in it."""
        names = self.names
        def_names = self.def_names
        generic = self.generic
        state = [0, 0, 0]  # next value id, next argument id, next conflict id
        used: set[str] = set()

        def number_op(op: Operation) -> None:
            results = op.results
            if not results:
                return
            base = None
            if not generic:
                hint = getattr(op, "asm_result_name", None)
                if hint is not None:
                    h = hint()
                    if h:
                        base = unique(h)
            if base is None:
                base = str(state[0])
                state[0] += 1
            def_names[op] = base
            if len(results) == 1:
                names[results[0]] = "%" + base
            else:
                for i, r in enumerate(results):
                    names[r] = f"%{base}#{i}"

        def unique(name: str) -> str:
            name = _SANITIZE.sub("_", name)
            if name[0].isdigit():
                name = "_" + name
            if name not in used:
                used.add(name)
                return name
            while True:
                probe = f"{name}_{state[2]}"
                state[2] += 1
                if probe not in used:
                    used.add(probe)
                    return probe

        number_op(root)
        stack = [(r, tuple(state), frozenset(used)) for r in root.regions]
        while stack:
            region, saved, saved_used = stack.pop()
            if not generic:
                state[:] = saved
                used = set(saved_used)
            for bi, block in enumerate(region.blocks):
                self.block_names[block] = f"^bb{bi}"
                self.block_order[block] = bi
                entry = bi == 0
                for arg in block.args:
                    if entry:
                        names[arg] = f"%arg{state[1]}"
                        state[1] += 1
                    else:
                        names[arg] = f"%{state[0]}"
                        state[0] += 1
                op = block._first
                while op is not None:
                    number_op(op)
                    op = op._next
            snap = tuple(state)
            snap_used = frozenset(used) if not generic else frozenset()
            for block in region.blocks:
                op = block._first
                while op is not None:
                    for r in op.regions:
                        stack.append((r, snap, snap_used))
                    op = op._next

    # Helpers for custom printers ----------------------------------------------------------
    def write(self, s: str) -> None:
        self.out.append(s)

    def value(self, v: Value) -> str:
        try:
            return self.names[v]
        except KeyError:
            return "<<UNKNOWN SSA VALUE>>"

    def operand(self, v: Value) -> None:
        self.out.append(self.value(v))

    def operands(self, vals: Iterable[Value]) -> None:
        self.out.append(", ".join(self.value(v) for v in vals))

    def type(self, t: Type) -> None:
        self.out.append(str(t))

    def types(self, ts: Iterable[Type]) -> None:
        self.out.append(", ".join(map(str, ts)))

    def attr(self, a: Attribute, elide_type: bool = False) -> None:
        self.out.append(attribute_text(a, elide_type))

    def attr_dict(self, attrs: dict[str, Attribute], elided: Iterable[str] = (), keyword: bool = False) -> None:
        """` {a = 1, ...}` of the attributes not in `elided` (` attributes {...}` with `keyword`)."""
        skip = set(elided)
        items = [(k, v) for k, v in attrs.items() if k not in skip]
        if not items:
            return
        items.sort(key=lambda kv: kv[0].encode("utf-8", "surrogateescape"))
        self.out.append((" attributes {" if keyword else " {") + dictionary_body(items) + "}")

    def op_name(self, op: Operation) -> str:
        """The op's name as a custom form writes it (prefix elided in its default dialect)."""
        name = op.name
        if self.default_dialects:
            d = self.default_dialects[-1]
            if name.startswith(d) and name[len(d):len(d) + 1] == ".":
                return name[len(d) + 1:]
        return name

    def block_name(self, b: Block) -> str:
        return self.block_names.get(b, "^INVALIDBLOCK")

    def newline(self) -> None:
        self.out.append("\n" + "  " * self.indent)

    def region(self, region: Region, print_entry_args: bool = True, print_terminators: bool = True,
               print_empty_block: bool = False) -> None:
        out = self.out
        if self.skip_regions:
            out.append("{...}")
            return
        out.append("{\n")
        if region.blocks:
            entry = region.blocks[0]
            header = (print_empty_block and entry._first is None) or (print_entry_args and bool(entry.args))
            self.block(entry, header, print_terminators)
            for b in region.blocks[1:]:
                self.block(b, True, True)
        out.append("  " * self.indent + "}")

    def block(self, block: Block, header: bool, print_terminator: bool) -> None:
        out = self.out
        if header:
            out.append("  " * self.indent + self.block_name(block))
            if block.args:
                parts = []
                for a in block.args:
                    s = f"{self.value(a)}: {a.type}"
                    if self.debuginfo:
                        s += f" loc({a.location})"
                    parts.append(s)
                out.append("(" + ", ".join(parts) + ")")
            out.append(":")
            uses = block._uses
            if not uses:
                if not block.is_entry:
                    out.append("  // no predecessors")
            else:
                preds = [u.owner.parent for u in uses]
                if len(preds) == 1:
                    out.append("  // pred: " + self.block_name(preds[0]))
                else:
                    preds.sort(key=lambda b: self.block_order.get(b, 0))
                    out.append(f"  // {len(preds)} preds: " + ", ".join(self.block_name(b) for b in preds))
            out.append("\n")
        self.indent += 1
        op = block._first
        last = block._last
        while op is not None:
            if op is last and not print_terminator:
                break
            self.op(op)
            out.append("\n")
            op = op._next
        self.indent -= 1

    # Ops ----------------------------------------------------------------------------------
    def op(self, op: Operation) -> None:
        out = self.out
        out.append("  " * self.indent)
        results = op.results
        if results:
            base = self.def_names.get(op)
            if len(results) == 1:
                out.append(f"%{base} = ")
            else:
                out.append(f"%{base}:{len(results)} = ")
        custom = None if self.generic else type(op).print_custom if op.definition is not None else None
        if custom is not None:
            custom(op, self)
        else:
            self.generic_op(op)
        if self.debuginfo:
            out.append(f" loc({self.location_text(op.location)})")

    def generic_op(self, op: Operation) -> None:
        out = self.out
        names = self.names
        name = op.name
        try:
            operands = ", ".join([names[u.value] for u in op._operands])
        except KeyError:
            operands = ", ".join(self.value(u.value) for u in op._operands)
        out.append(f'"{name}"({operands})' if '"' not in name and "\\" not in name else
                   f'"{_escape(name)}"({operands})')
        if op._successors:
            out.append("[" + ", ".join(self.block_name(s.block) for s in op._successors) + "]")
        props = op.properties
        if props or type(props) is ExplicitProperties:
            out.append(" <" + _dict_text(props) + ">")
        if op.regions:
            out.append(" (")
            first = True
            for r in op.regions:
                if not first:
                    out.append(", ")
                first = False
                self.region(r, True, True, True)
            out.append(")")
        if op.attributes:
            out.append(" " + _dict_text(op.attributes))
        out.append(" : ")
        out.append(signature_text(tuple(u.value.type for u in op._operands), tuple(r.type for r in op.results)))

    # Locations ----------------------------------------------------------------------------
    def location_text(self, loc: Location) -> str:
        aliases = self.loc_aliases
        if aliases is not None:
            a = aliases.get(loc)
            if a is not None:
                return a
        return self._loc_body(loc)

    def _loc_body(self, loc: Location) -> str:
        aliases = self.loc_aliases or {}

        def sub(x: Location) -> str:
            return aliases.get(x) or self._loc_body(x)

        if isinstance(loc, NameLoc):
            from loom.ir.attributes import UnknownLoc, escape_string
            s = f'"{escape_string(loc.name)}"'
            return s if isinstance(loc.child, UnknownLoc) else s + f"({sub(loc.child)})"
        if isinstance(loc, CallSiteLoc):
            return f"callsite({sub(loc.callee)} at {sub(loc.caller)})"
        if isinstance(loc, FusedLoc):
            meta = "" if loc.metadata is None else f"<{loc.metadata}>"
            return f"fused{meta}[{', '.join(sub(x) for x in loc.locations)}]"
        return str(loc)


def _escape(s: str) -> str:
    from loom.ir.attributes import escape_string
    return escape_string(s)


_DICT_CACHE: dict[tuple, str] = {}


def _dict_text(d: dict[str, Attribute]) -> str:
    key = tuple(d.items())
    s = _DICT_CACHE.get(key)
    if s is None:
        items = sorted(d.items(), key=lambda kv: kv[0].encode("utf-8", "surrogateescape"))
        s = "{" + dictionary_body(items) + "}"
        if len(_DICT_CACHE) > 100000:
            _DICT_CACHE.clear()
        _DICT_CACHE[key] = s
    return s


def _loc_children(loc: Location) -> tuple[Location, ...]:
    if isinstance(loc, NameLoc):
        from loom.ir.attributes import UnknownLoc
        return () if isinstance(loc.child, UnknownLoc) else (loc.child,)
    if isinstance(loc, CallSiteLoc):
        return (loc.callee, loc.caller)
    if isinstance(loc, FusedLoc):
        return loc.locations
    return ()


def _collect_loc_aliases(root: Operation) -> tuple[dict[Location, str], list[Location], list[Location]]:
    """MLIR's alias numbering for locations: first-visit order, then stably by nesting depth.
    Locations first seen on block arguments are defined before the top-level op."""
    order: dict[Location, int] = {}
    early: set[Location] = set()
    depth_cache: dict[Location, int] = {}

    def depth(loc: Location) -> int:
        d = depth_cache.get(loc)
        if d is None:
            kids = _loc_children(loc)
            d = 1 + max(depth(k) for k in kids) if kids else 0
            depth_cache[loc] = d
        return d

    def visit(loc: Location, from_arg: bool) -> None:
        if loc in order:
            return
        from loom.ir.attributes import UnknownLoc
        if isinstance(loc, UnknownLoc):
            pass
        order[loc] = len(order)
        if from_arg:
            early.add(loc)
        for k in _loc_children(loc):
            visit(k, from_arg)

    def visit_op(op: Operation) -> None:
        visit(op.location, False)
        for region in op.regions:
            for block in region.blocks:
                for a in block.args:
                    visit(a.location, True)
                for o in block.ops:
                    visit_op(o)

    visit_op(root)
    ranked = sorted(order, key=lambda loc: (depth(loc), order[loc]))
    aliases = {}
    for i, loc in enumerate(ranked):
        aliases[loc] = "#loc" if i == 0 else f"#loc{i}"
    top = [loc for loc in ranked if loc in early]
    bottom = [loc for loc in ranked if loc not in early]
    return aliases, top, bottom


_AFFINE = re.compile(r"affine_(map|set)<")


def print_op(op: Operation, generic: bool = False, debuginfo: bool = False, nested: bool = False,
             skip_regions: bool = False) -> str:
    """Text of `op`. At top level (not `nested`), aliases and the resource section are added
    and the text ends with a newline, as MLIR's `Operation::print` does."""
    from loom.ir.core import paused_gc
    with paused_gc():
        return _print_op(op, generic, debuginfo, nested, skip_regions)


def _print_op(op: Operation, generic: bool, debuginfo: bool, nested: bool, skip_regions: bool) -> str:
    p = Printer(generic=generic, debuginfo=debuginfo, skip_regions=skip_regions)
    p.number(op)
    top_lines: list[str] = []
    bottom_lines: list[str] = []
    if debuginfo:
        aliases, top, bottom = _collect_loc_aliases(op)
        p.loc_aliases = {}
        for loc in top + bottom:
            body = p._loc_body(loc)
            (top_lines if loc in top else bottom_lines).append(f"{aliases[loc]} = loc({body})")
            p.loc_aliases[loc] = aliases[loc]
    p.op(op)
    text = "".join(p.out)
    if nested:
        return text
    text = _alias_affine(op, text)
    head = "".join(line + "\n" for line in top_lines)
    tail = "".join(line + "\n" for line in bottom_lines)
    return head + text + "\n" + tail + _resource_text(op)


def _alias_affine(op: Operation, text: str) -> str:
    if "affine_" not in text:
        return text
    maps: dict[str, str] = {}
    counts = {"map": 0, "set": 0}
    for o in op.walk():
        for d in (o.properties, o.attributes):
            for v in d.values():
                _gather_affine(v, maps, counts)
        for r in o.results:
            _gather_affine_type(r.type, maps, counts)
        for region in o.regions:
            for b in region.blocks:
                for a in b.args:
                    _gather_affine_type(a.type, maps, counts)
    if not maps:
        return text
    for body, alias in sorted(maps.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(body, alias)
    defs = "".join(f"{alias} = {body}\n" for body, alias in maps.items())
    return defs + text


def _gather_affine(a: Attribute, maps: dict[str, str], counts: dict[str, int]) -> None:
    from loom.ir.attributes import ArrayAttr, TypeAttr
    if isinstance(a, OpaqueBuiltinAttr) and a.type is None and _AFFINE.match(a.text):
        if a.text not in maps:
            kind = "map" if a.text.startswith("affine_map") else "set"
            n = counts[kind]
            maps[a.text] = f"#{kind}" if n == 0 else f"#{kind}{n}"
            counts[kind] = n + 1
    elif isinstance(a, ArrayAttr):
        for e in a.elements:
            _gather_affine(e, maps, counts)
    elif isinstance(a, DictionaryAttr):
        for _, v in a.items:
            _gather_affine(v, maps, counts)
    elif isinstance(a, TypeAttr):
        _gather_affine_type(a.value, maps, counts)


def _gather_affine_type(t: Type, maps: dict[str, str], counts: dict[str, int]) -> None:
    layout = getattr(t, "layout", None)
    if layout is not None:
        _gather_affine(layout, maps, counts)


def _resource_text(op: Operation) -> str:
    resources = getattr(op, "resources", None)
    if not resources:
        return ""
    from loom.ir.attributes import keyword_or_string
    lines = ["", "{-#", "  dialect_resources: {"]
    dialects = list(resources.items())
    for di, (dialect, blobs) in enumerate(dialects):
        lines.append(f"    {dialect}: {{")
        items = list(blobs.items())
        for bi, (name, blob) in enumerate(items):
            comma = "," if bi < len(items) - 1 else ""
            lines.append(f'      {keyword_or_string(name)}: "{blob}"{comma}')
        lines.append("    }" + ("," if di < len(dialects) - 1 else ""))
    lines.append("  }")
    lines.append("#-}")
    return "\n".join(lines) + "\n"


def print_ir(op: Operation, generic: bool = False, debuginfo: bool = False) -> str:
    return print_op(op, generic=generic, debuginfo=debuginfo)


__all__ = ["Printer", "print_ir", "print_op", "signature_text", "UNIT"]
