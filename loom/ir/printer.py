"""The printer: MLIR's generic form byte for byte, and the custom (pretty) form of ops that
define one.

Values are named as MLIR's SSANameState names them: entry-block arguments `%argN`, everything
else `%N`, one number per op (its results are `%N#i`), regions numbered after the ops of their
parent region in LIFO order. In the generic form the counters run on across sibling regions; in
the custom form each region restarts from its parent's counters, and ops may suggest names:
`asm_result_name()` for their results (`%c0_i32`, `%cst`), `asm_result_names()` one per result
(`%values, %indices = ...`), `asm_block_arg_names(region_index)` for a region's entry arguments
(`%iterArg`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from loom.ir.attributes import (
    UNIT,
    ArrayAttr,
    Attribute,
    CallSiteLoc,
    DictionaryAttr,
    FusedLoc,
    Location,
    NameLoc,
    OpaqueBuiltinAttr,
    TypeAttr,
    UnknownLoc,
    attribute_text,
    dictionary_body,
    escape_string,
    keyword_or_string,
)
from loom.ir.opdef import OpBase, Terminator
from loom.ir.types import FunctionType, Type

if TYPE_CHECKING:
    from loom.ir.core import Block, BlockArgument, Operation, Region, Value

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


_QUOTED_NAMES: dict[str, str] = {}
_SANITIZE = re.compile(r"[^A-Za-z0-9_$.-]")


class Printer:
    """Prints ops; custom printers (`print_custom(p)`) call its helpers."""

    def __init__(self, generic: bool = False, debuginfo: bool = False, skip_regions: bool = False) -> None:
        self.generic = generic
        self.debuginfo = debuginfo
        self.skip_regions = skip_regions
        self.out: list[str] = []
        self.names: dict[Value, str] = {}
        self.def_names: dict[Operation, str | list[str]] = {}
        self.block_names: dict[Block, str] = {}
        self.block_order: dict[Block, int] = {}
        self.indent = 0
        self.loc_aliases: dict[Location, str] | None = None
        self.attr_loc_aliases: dict[Location, str] = {}
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
                per_result = getattr(op, "asm_result_names", None)
                each = per_result() if per_result is not None else None
                if each:
                    # One name per result, printed `%a, %b = ...` (OpAsmOpInterface's
                    # getAsmResultNames naming each result).
                    group = [unique(n) for n in each]
                    def_names[op] = group
                    for r, n in zip(results, group):
                        names[r] = "%" + n
                    return
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
            arg_names = None
            if not generic and region.parent is not None:
                hook = getattr(region.parent, "asm_block_arg_names", None)
                if hook is not None:
                    arg_names = hook(region.parent.regions.index(region))
            for bi, block in enumerate(region.blocks):
                self.block_names[block] = f"^bb{bi}"
                self.block_order[block] = bi
                entry = bi == 0
                for ai, arg in enumerate(block.args):
                    if entry and arg_names is not None and ai < len(arg_names):
                        names[arg] = "%" + unique(arg_names[ai])
                    elif entry:
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

    def region_argument(self, arg: BlockArgument) -> str:
        """`%name: type` of a block argument (with its location in debug form)."""
        s = f"{self.value(arg)}: {arg.type}"
        return s + f" loc({self._loc_body(arg.location)})" if self.debuginfo else s

    def block_name(self, b: Block | None) -> str:
        """`^bbN`; `^INVALIDBLOCK` for a block not numbered or none (a detached predecessor)."""
        return self.block_names.get(b, "^INVALIDBLOCK") if b is not None else "^INVALIDBLOCK"

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
                        s += f" loc({self._loc_body(a.location)})"
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
                    preds.sort(key=lambda b: self.block_order.get(b, 0) if b is not None else 0)
                    out.append(f"  // {len(preds)} preds: " + ", ".join(self.block_name(b) for b in preds))
            out.append("\n")
        self.indent += 1
        op = block._first
        last = block._last
        if not print_terminator and last is not None and not _is_terminator(last):
            last = None  # as MLIR: only an op with the Terminator trait is elided
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
            if isinstance(base, list):
                out.append("%" + ", %".join(base) + " = ")
            elif len(results) == 1:
                out.append(f"%{base} = ")
            else:
                out.append(f"%{base}:{len(results)} = ")
        custom = (type(op).print_custom if not self.generic and isinstance(op, OpBase) and op.definition is not None
                  else None)
        if op.regions and not self.generic:
            # Inside an op's regions no dialect is elided unless the op names one (as func.func
            # does for its body): MLIR's default-dialect stack.
            self.default_dialects.append("")
            try:
                custom(op, self) if custom is not None else self.generic_op(op)
            finally:
                self.default_dialects.pop()
        elif custom is not None:
            custom(op, self)
        else:
            self.generic_op(op)
        if self.debuginfo:
            out.append(f" loc({self.location_text(op.location)})")

    def generic_op(self, op: Operation) -> None:
        out = self.out
        names = self.names
        quoted = _QUOTED_NAMES.get(op.name)
        if quoted is None:
            quoted = _QUOTED_NAMES[op.name] = f'"{escape_string(op.name)}"('
        uses = op._operands
        try:
            operands = ", ".join([names[u.value] for u in uses])
        except KeyError:
            operands = ", ".join(self.value(u.value) for u in uses)
        out.append(quoted + operands + ")")
        if op._successors:
            out.append("[" + ", ".join(self.block_name(s.block) for s in op._successors) + "]")
        props = op.read_properties()
        if props or type(props) is ExplicitProperties:
            out.append(" <" + (self._dict_text(props) if self.attr_loc_aliases else _dict_text(props)) + ">")
        if op.regions:
            out.append(" (")
            first = True
            for r in op.regions:
                if not first:
                    out.append(", ")
                first = False
                self.region(r, True, True, True)
            out.append(")")
        attrs = op.read_attributes()
        if attrs:
            out.append(" " + (self._dict_text(attrs) if self.attr_loc_aliases else _dict_text(attrs)))
        out.append(" : " + signature_text(tuple([u.value.type for u in uses]), tuple([r.type for r in op.results])))

    def _dict_text(self, d: Mapping[str, Attribute]) -> str:
        parts = []
        for k in sorted(d, key=lambda k: k.encode("utf-8", "surrogateescape")):
            v = d[k]
            parts.append(keyword_or_string(k) if v is UNIT else f"{keyword_or_string(k)} = {self.attr_text(v)}")
        return "{" + ", ".join(parts) + "}"

    def attr_text(self, a: Attribute, elide_type: bool = False) -> str:
        """Attribute text using location aliases (which cached attribute text cannot know)."""
        if isinstance(a, Location):
            alias = self.attr_loc_aliases.get(a)
            return alias if alias is not None else f"loc({self._attr_loc_body(a)})"
        if isinstance(a, ArrayAttr):
            return "[" + ", ".join(self.attr_text(e, True) for e in a.elements) + "]"
        if isinstance(a, DictionaryAttr):
            return self._dict_text(dict(a.items))
        return attribute_text(a, elide_type)

    def _attr_loc_body(self, loc: Location) -> str:
        saved = self.loc_aliases
        self.loc_aliases = self.attr_loc_aliases
        try:
            return self._loc_body(loc)
        finally:
            self.loc_aliases = saved

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
            s = f'"{escape_string(loc.name)}"'
            return s if isinstance(loc.child, UnknownLoc) else s + f"({sub(loc.child)})"
        if isinstance(loc, CallSiteLoc):
            return f"callsite({sub(loc.callee)} at {sub(loc.caller)})"
        if isinstance(loc, FusedLoc):
            meta = "" if loc.metadata is None else f"<{loc.metadata}>"
            return f"fused{meta}[{', '.join(sub(x) for x in loc.locations)}]"
        return loc.body


def _is_terminator(op: Operation) -> bool:
    d = op.definition
    return d is not None and Terminator in d.trait_set


_DICT_CACHE: dict[tuple, str] = {}


def _dict_text(d: Mapping[str, Attribute]) -> str:
    key = tuple(d.items())
    s = _DICT_CACHE.get(key)
    if s is None:
        items = sorted(d.items(), key=lambda kv: kv[0].encode("utf-8", "surrogateescape"))
        s = "{" + dictionary_body(items) + "}"
        if len(_DICT_CACHE) > 100000:
            _DICT_CACHE.clear()
        _DICT_CACHE[key] = s
    return s


def _loc_children(loc: Location) -> tuple[Attribute, ...]:
    if isinstance(loc, NameLoc):
        return () if isinstance(loc.child, UnknownLoc) else (loc.child,)
    if isinstance(loc, CallSiteLoc):
        return (loc.callee, loc.caller)
    if isinstance(loc, FusedLoc):
        return loc.locations if loc.metadata is None else (loc.metadata, *loc.locations)
    return ()


class _Aliases:
    """MLIR's AliasInitializer for the builtin aliases (`#loc`, `#map`, `#set`): attributes are
    visited in print order; names are numbered per prefix in order of (nesting depth, first
    visit); aliases that may be deferred (op locations) print after the top-level op."""

    def __init__(self, debuginfo: bool, generic: bool = True) -> None:
        self.debuginfo = debuginfo
        self.generic = generic
        self.order: dict[Location | OpaqueBuiltinAttr, int] = {}
        self.deferred: dict[Attribute, bool] = {}
        self.depth: dict[Location | OpaqueBuiltinAttr, int] = {}

    def visit(self, a: Attribute, deferred: bool) -> int:
        """Visit `a` and what it contains; return its alias depth (-1 when it takes no alias)."""
        if isinstance(a, Location):
            if a in self.order:
                if not deferred:
                    self._undefer(a)
                return self.depth[a]
            self.order[a] = len(self.order)
            self.deferred[a] = deferred
            d = 0
            for k in _loc_children(a):
                d = max(d, self.visit(k, deferred) + 1)
            self.depth[a] = d
            return d
        if isinstance(a, OpaqueBuiltinAttr) and a.type is None and _AFFINE.match(a.text):
            if a not in self.order:
                self.order[a] = len(self.order)
                self.deferred[a] = False
                self.depth[a] = 0
            return 0
        if isinstance(a, ArrayAttr):
            for e in a.elements:
                self.visit(e, False)
        elif isinstance(a, DictionaryAttr):
            for _, v in a.items:
                self.visit(v, False)
        elif isinstance(a, TypeAttr):
            self.visit_type(a.value)
        return -1

    def _undefer(self, a: Attribute) -> None:
        if self.deferred.get(a):
            self.deferred[a] = False
            if isinstance(a, Location):
                for k in _loc_children(a):
                    self._undefer(k)

    def visit_type(self, t: Type) -> None:
        layout = getattr(t, "layout", None)
        if layout is not None:
            self.visit(layout, False)

    def visit_op(self, op: Operation) -> None:
        if self.debuginfo:
            self.visit(op.location, True)
        attrs = op.read_attributes()
        if attrs:
            for k in sorted(attrs, key=lambda k: k.encode("utf-8", "surrogateescape")):
                self.visit(attrs[k], False)
        for r in op.results:
            self.visit_type(r.type)
        # A custom form may leave out a region ("none"), its entry block's arguments ("body") or
        # print them in another order (a list of indices); what is not printed takes no alias
        # (MLIR collects aliases by a dry run of the printer).
        hook = getattr(op, "asm_printed_regions", None)
        shown: Sequence[str | Sequence[int]] | None = hook() if hook is not None and not self.generic else None
        for i, region in enumerate(op.regions):
            what = shown[i] if shown is not None else "all"
            if what == "none":
                continue
            for bi, block in enumerate(region.blocks):
                args = block.args
                if bi == 0 and what != "all":
                    args = [] if isinstance(what, str) else [args[k] for k in what]  # "body": none
                for a in args:
                    self.visit_type(a.type)
                    if self.debuginfo:
                        self.visit(a.location, False)
                for o in block.ops:
                    self.visit_op(o)

    def names(self) -> dict[Location | OpaqueBuiltinAttr, str]:
        ranked = sorted(self.order, key=lambda a: (self.depth[a], self.order[a]))
        counts: dict[str, int] = {}
        names = {}
        for a in ranked:
            prefix = "loc" if isinstance(a, Location) else "map" if a.text.startswith("affine_map") else "set"
            n = counts.get(prefix, 0)
            counts[prefix] = n + 1
            names[a] = f"#{prefix}" if n == 0 else f"#{prefix}{n}"
        return names


_AFFINE = re.compile(r"affine_(map|set)<")
_ALIASABLE: dict[Attribute | Type, bool] = {}


def _aliasable(a: Attribute | Type) -> bool:
    """Whether `a` is or contains something that prints as an alias (cached: it is interned)."""
    r = _ALIASABLE.get(a)
    if r is None:
        if isinstance(a, Type):
            layout = getattr(a, "layout", None)
            r = layout is not None and _aliasable(layout)
        elif isinstance(a, Location):
            r = True
        elif isinstance(a, OpaqueBuiltinAttr):
            r = a.type is None and _AFFINE.match(a.text) is not None
        elif isinstance(a, ArrayAttr):
            r = any(_aliasable(e) for e in a.elements)
        elif isinstance(a, DictionaryAttr):
            r = any(_aliasable(v) for _, v in a.items)
        elif isinstance(a, TypeAttr):
            r = _aliasable(a.value)
        else:
            r = False
        _ALIASABLE[a] = r
    return r


def _may_need_aliases(root: Operation) -> bool:
    """A cheap pre-scan: most programs have no affine maps or location-valued attributes."""
    get = _ALIASABLE.get
    for op in root.walk():
        for v in op.read_attributes().values():
            if get(v, True) and _aliasable(v):
                return True
        for r in op.results:
            if get(r.type, True) and _aliasable(r.type):
                return True
        for region in op.regions:
            for b in region.blocks:
                for a in b.args:
                    if _aliasable(a.type):
                        return True
    return False


def _alias_key(name: str) -> tuple[str, int]:
    """`#map12` -> ("map", 12), `#map` -> ("map", -1)."""
    prefix = name.rstrip("0123456789")
    return prefix[1:], int(name[len(prefix):] or -1)


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
    if nested:
        p.op(op)
        return "".join(p.out)
    al = _Aliases(debuginfo, generic)
    if debuginfo or _may_need_aliases(op):
        al.visit_op(op)
    names = al.names() if al.order else {}
    loc_names = {a: n for a, n in names.items() if isinstance(a, Location)}
    if debuginfo:
        p.loc_aliases = loc_names
    p.attr_loc_aliases = loc_names
    p.op(op)
    text = "".join(p.out)
    # Attribute values print through their cached text; swap in alias names afterwards,
    # longest text first so that a containing attribute wins over its parts.
    subs = []
    for a, n in names.items():
        if not isinstance(a, Location):
            subs.append((str(a), n))
    subs.sort(key=lambda s: -len(s[0]))

    def substitute(t: str) -> str:
        for body, alias in subs:
            if body in t:
                t = t.replace(body, alias)
        return t

    if subs:
        text = substitute(text)
    top: list[tuple[str, str]] = []
    bottom: list[tuple[str, str]] = []
    for a, n in names.items():
        if isinstance(a, Location):
            saved, p.loc_aliases = p.loc_aliases, {k: v for k, v in loc_names.items() if k is not a}
            body = f"loc({p._loc_body(a)})"
            p.loc_aliases = saved
        else:
            body = a.text
        line = f"{n} = {substitute_inner(body, subs, a)}"
        (bottom if al.deferred[a] else top).append((n, line))
    top.sort(key=lambda x: _alias_key(x[0]))
    bottom.sort(key=lambda x: _alias_key(x[0]))
    head = "".join(line + "\n" for _, line in top)
    tail = "".join(line + "\n" for _, line in bottom)
    return head + text + "\n" + tail + _resource_text(op)


def substitute_inner(body: str, subs: list[tuple[str, str]], own: Attribute) -> str:
    own_text = str(own)
    for t, alias in subs:
        if t != own_text and t in body:
            body = body.replace(t, alias)
    return body


def _resource_text(op: Operation) -> str:
    resources = getattr(op, "resources", None)
    if not resources:
        return ""
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


__all__ = ["ExplicitProperties", "Printer", "print_op", "signature_text"]
