"""cse: eliminate common subexpressions (MLIR's CSE pass).

Two ops are equivalent when they have the same name, properties, attributes, operands (as a
multiset for commutative ops), result types and successors, and equivalent regions. Only
effect-free ops are merged; the first occurrence wins. A scoped table follows the dominator tree
of each region, so an op is only replaced by an equivalent op that dominates it; ops that may be
isolated from above (and unregistered ops with regions) start a fresh table. Trivially dead ops
met on the way are erased too, as MLIR's CSE does.
"""

from __future__ import annotations

from loom.ir.attributes import UNKNOWN_LOC
from loom.ir.core import Block, Operation, Region, Value
from loom.ir.dominance import DominatorTree
from loom.ir.opdef import Commutative, GraphRegions, IsolatedFromAbove, Terminator
from loom.rewrite.effects import pure_class, regions_are_pure, removable_class
from loom.rewrite.passes import Pass, register_pass
from loom.rewrite.rewriter import PatternRewriter


def _dict_key(d: dict) -> frozenset | tuple:
    return frozenset(d.items()) if d else ()


# Op class -> (terminator, pure, commutative, removable when unused), computed once per class.
_CLASS_INFO: dict[type, tuple[bool, bool, bool, bool]] = {}


def _class_info(cls: type) -> tuple[bool, bool, bool, bool]:
    info = _CLASS_INFO.get(cls)
    if info is None:
        d = cls.definition
        traits = d.trait_set if d is not None else frozenset()
        info = _CLASS_INFO[cls] = (Terminator in traits, pure_class(cls), Commutative in traits,
                                   removable_class(cls))
    return info


def _op_key(op: Operation, commutative: bool | None = None) -> tuple:
    if commutative is None:
        commutative = _class_info(type(op))[2]
    operands = tuple([u.value for u in op._operands])
    if commutative:
        operands = tuple(sorted(operands, key=id))
    successors = tuple([s.block for s in op._successors]) if op._successors else ()
    return (op.name, _dict_key(op.properties), _dict_key(op.attributes), operands,
            tuple([r.type for r in op.results]), len(op.regions), successors)


class _ScopedTable:
    """Equivalence key -> ops, with scopes that are pushed and popped in LIFO order."""

    def __init__(self) -> None:
        self.entries: dict[tuple, list[Operation]] = {}
        self.scopes: list[list[tuple]] = []

    def push(self) -> None:
        self.scopes.append([])

    def pop(self) -> None:
        entries = self.entries
        for key in reversed(self.scopes.pop()):
            ops = entries[key]
            ops.pop()
            if not ops:
                del entries[key]

    def lookup(self, op: Operation, key: tuple | None = None) -> Operation | None:
        ops = self.entries.get(_op_key(op) if key is None else key)
        if not ops:
            return None
        if not op.regions:
            return ops[-1]
        for candidate in reversed(ops):
            if _regions_equivalent(candidate, op):
                return candidate
        return None

    def insert(self, op: Operation, key: tuple) -> None:
        self.entries.setdefault(key, []).append(op)
        self.scopes[-1].append(key)


def _regions_equivalent(a: Operation, b: Operation) -> bool:
    """The regions of `a` and `b` match op for op, values defined inside corresponding."""
    mapping: dict = {}

    def same_value(x: Value, y: Value) -> bool:
        return x is y or mapping.get(x) is y

    def same_op(x: Operation, y: Operation) -> bool:
        if (x.name != y.name or len(x._operands) != len(y._operands) or len(x.results) != len(y.results)
                or len(x.regions) != len(y.regions) or len(x._successors) != len(y._successors)
                or x.properties != y.properties or x.attributes != y.attributes):
            return False
        if any(rx.type is not ry.type for rx, ry in zip(x.results, y.results)):
            return False
        if not all(same_value(ux.value, uy.value) for ux, uy in zip(x._operands, y._operands)):
            return False
        if not all(mapping.get(sx) is sy for sx, sy in zip(x.successors, y.successors)):
            return False
        for rx, ry in zip(x.results, y.results):
            mapping[rx] = ry
        return all(same_region(rx, ry) for rx, ry in zip(x.regions, y.regions))

    def same_region(rx: Region, ry: Region) -> bool:
        if len(rx.blocks) != len(ry.blocks):
            return False
        for bx, by in zip(rx.blocks, ry.blocks):
            if len(bx.args) != len(by.args) or any(ax.type is not ay.type for ax, ay in zip(bx.args, by.args)):
                return False
            mapping[bx] = by
            for ax, ay in zip(bx.args, by.args):
                mapping[ax] = ay
        for bx, by in zip(rx.blocks, ry.blocks):
            if len(bx) != len(by):
                return False
            if not all(same_op(ox, oy) for ox, oy in zip(bx.ops, by.ops)):
                return False
        return True

    return all(same_region(rx, ry) for rx, ry in zip(a.regions, b.regions))


def _might_be_isolated(op: Operation) -> bool:
    d = type(op).definition
    return d is None or IsolatedFromAbove in d.trait_set


def _has_ssa_dominance(region: Region) -> bool:
    d = type(region.parent).definition if region.parent is not None else None
    return d is None or GraphRegions not in d.trait_set


class CSEDriver:
    """One run of CSE over the regions of an op; `changed` says whether anything was removed."""

    def __init__(self, rewriter: PatternRewriter | None = None) -> None:
        self.rewriter = rewriter if rewriter is not None else PatternRewriter()
        self.to_erase: list[Operation] = []
        self.num_cse = 0
        self.num_dce = 0

    def simplify(self, regions) -> bool:
        table = _ScopedTable()
        for region in regions:
            self.simplify_region(table, region)
        for op in self.to_erase:
            self.rewriter.erase_op(op)
        changed = bool(self.to_erase)
        self.to_erase = []
        return changed

    def simplify_region(self, table: _ScopedTable, region: Region) -> None:
        blocks = region.blocks
        if not blocks:
            return
        ssa = _has_ssa_dominance(region)
        if len(blocks) == 1:
            table.push()
            self.simplify_block(table, blocks[0], ssa)
            table.pop()
            return
        if not ssa:
            return
        tree = DominatorTree(region)
        table.push()
        self.simplify_block(table, tree.entry, ssa)
        stack = [iter(tree.children[tree.entry])]
        while stack:
            child = next(stack[-1], None)
            if child is None:
                stack.pop()
                table.pop()
                continue
            table.push()
            self.simplify_block(table, child, ssa)
            stack.append(iter(tree.children[child]))

    def simplify_block(self, table: _ScopedTable, block: Block, ssa: bool) -> None:
        op = block._first
        while op is not None:
            if op.regions:
                if _might_be_isolated(op):
                    nested = _ScopedTable()
                    for region in op.regions:
                        self.simplify_region(nested, region)
                else:
                    for region in op.regions:
                        self.simplify_region(table, region)
            self.simplify_operation(table, op, ssa)
            op = op._next

    def simplify_operation(self, table: _ScopedTable, op: Operation, ssa: bool) -> None:
        terminator, pure, commutative, removable = _CLASS_INFO.get(type(op)) or _class_info(type(op))
        if terminator:
            return
        regions = op.regions
        # Trivially dead (effects.is_op_trivially_dead, with the class answers above).
        for r in op.results:
            if r.uses:
                break
        else:
            if removable and (not regions or regions_are_pure(op)):
                self.to_erase.append(op)
                self.num_dce += 1
                return
        if not pure:
            return
        if regions:
            for r in regions:
                if len(r.blocks) > 1:
                    return
            if not regions_are_pure(op):
                return
        key = _op_key(op, commutative)
        existing = table.lookup(op, key)
        if existing is None:
            table.insert(op, key)
            return
        self._replace(table, op, existing, ssa)
        self.num_cse += 1

    def _replace(self, table: _ScopedTable, op: Operation, existing: Operation, ssa: bool) -> None:
        rewriter = self.rewriter
        if ssa:
            rewriter.replace_all_op_uses_with(op, existing.results)
            self.to_erase.append(op)
        else:
            # Without dominance, only uses by ops not known to the table are rewired (MLIR's rule).
            for r, e in zip(op.results, existing.results):
                rewriter.replace_uses_with_if(r, e, lambda use: table.lookup(use.owner) is None)
            if all(not r.uses for r in op.results):
                self.to_erase.append(op)
        if existing.location is UNKNOWN_LOC and op.location is not UNKNOWN_LOC:
            existing.location = op.location


def eliminate_common_subexpressions(op_or_region: Operation | Region, rewriter: PatternRewriter | None = None) -> bool:
    """Run CSE on the regions of an op (or on one region); True if anything was removed."""
    regions = [op_or_region] if isinstance(op_or_region, Region) else op_or_region.regions
    return CSEDriver(rewriter).simplify(regions)


@register_pass
class CSEPass(Pass):
    """Eliminate common sub-expressions."""

    name = "cse"
    summary = "Eliminate common sub-expressions"

    def run(self, op: Operation) -> None:
        driver = CSEDriver()
        changed = driver.simplify(op.regions)
        self.num_cse = driver.num_cse
        self.num_dce = driver.num_dce
        if not changed and not driver.num_cse:  # (in graph regions a merge may erase nothing)
            self.mark_all_analyses_preserved()


__all__ = ["CSEDriver", "CSEPass", "eliminate_common_subexpressions"]
