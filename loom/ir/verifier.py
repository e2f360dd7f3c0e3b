"""The verifier: structure first (dominance, terminators, successors, isolation, symbols), then
traits, then each op's own rule. Every error names the op, gives its location and prints it."""

from __future__ import annotations

from typing import NoReturn, cast

from loom.ir.attributes import StringAttr
from loom.ir.core import Block, BlockArgument, Operation, OpResult, Region, Value, paused_gc
from loom.ir.diagnostics import VerifyError
from loom.ir.dominance import DominatorTree
from loom.ir.opdef import (
    GraphRegions,
    IsolatedFromAbove,
    NoTerminator,
    OpBase,
    SymbolTable,
    Terminator,
)


def _fail(op: Operation, message: str) -> NoReturn:
    raise VerifyError(op, message)


def verify(root: Operation) -> None:
    """Verify `root` and everything nested in it; raise VerifyError on the first problem."""
    with paused_gc():
        _verify_op(root, [])


def _verify_op(op: Operation, scopes: list[_Scope]) -> None:
    definition = type(op).definition
    if definition is not None:
        _verify_structure_against_definition(op, definition)
    for i, region in enumerate(op.regions):
        _verify_region(op, i, region, definition, scopes)
    if definition is not None:
        for trait in definition.traits:
            msg = trait.verify(op)
            if msg:
                _fail(op, msg)
        cast("OpBase", op).verify_()
    if definition is not None and SymbolTable in definition.trait_set:
        _verify_symbol_table(op)


def _verify_structure_against_definition(op: Operation, d) -> None:
    operands, results = op._operands, op.results
    n_ops = len(operands)
    fixed = d.n_fixed_operands
    if d._operand_variadics == 0 and n_ops != fixed:
        _fail(op, f"expected {fixed} operands, but found {n_ops}")
    if n_ops < fixed:
        _fail(op, f"expected at least {fixed} operands, but found {n_ops}")
    fixed_r = d.n_fixed_results
    if d._result_variadics == 0 and len(results) != fixed_r:
        _fail(op, f"requires {fixed_r} result{'s' if fixed_r != 1 else ''}, but found {len(results)}")
    n_regions = len(d.regions)
    if len(op.regions) < n_regions or (len(op.regions) > n_regions and not d.variadic_regions):
        _fail(op, f"requires {n_regions} region{'s' if n_regions != 1 else ''}")
    for f in d.constrained_operands:
        lo, hi = d.operand_range(op, f.index)
        for i in range(lo, hi):
            t = operands[i].value.type
            if not f.constraint.holds(t):
                _fail(op, f"operand #{i} must be {f.constraint.description}, but got '{t}'")
    for f in d.constrained_results:
        lo, hi = d.result_range(op, f.index)
        for i in range(lo, hi):
            t = results[i].type
            if not f.constraint.holds(t):
                _fail(op, f"result #{i} must be {f.constraint.description}, but got '{t}'")
    for p in d.props:
        v = op.read_properties().get(p.name)
        if v is None:
            if not p.optional:
                _fail(op, f"requires attribute '{p.name}'")
            continue
        if p.constraint is not None and not p.constraint.check(v):
            _fail(op, f"attribute '{p.name}' failed to satisfy constraint: {p.constraint.description}")
    for k in op.read_properties():
        if k not in d.prop_names:
            _fail(op, f"has unknown inherent attribute '{k}'")


class _Scope:
    """A block being verified: what its ops may use. `defined` holds the block's arguments and the
    results of the ops before the one being verified, so a use nested at any depth inside that op
    is checked against it in O(depth) without walking the nest again."""

    __slots__ = ("region", "block", "defined", "graph", "dom", "isolated", "owner")

    def __init__(self, region: Region, block: Block, graph: bool, dom, isolated: bool, owner: Operation) -> None:
        self.region = region
        self.block = block
        self.defined: set[Value] = set(block.args)
        self.graph = graph
        self.dom = dom
        self.isolated = isolated
        self.owner = owner


def _verify_region(op: Operation, index: int, region: Region, definition, scopes: list[_Scope]) -> None:
    # Regions of unregistered ops may be graph regions, so dominance is not checked there (as MLIR).
    graph = definition is None or GraphRegions in definition.trait_set
    no_terminator = definition is not None and NoTerminator in definition.trait_set
    if region.blocks:
        entry = region.blocks[0]
        if entry._uses:
            _fail(op, f"entry block of region #{index} may not have predecessors")
    isolated = definition is not None and IsolatedFromAbove in definition.trait_set
    for block in region.blocks:
        last = block._last
        if not graph and not no_terminator and definition is not None:
            if last is None:
                _fail(op, f"empty block: expect at least a terminator (region #{index})")
            if last.definition is not None and Terminator not in last.definition.trait_set:
                _fail(last, "block with no terminator, has " + _op_summary(last))
        for child in block.ops:
            if child._successors:
                for s in child._successors:
                    if s.block.parent is not region:
                        _fail(child, "branching to block of a different region")
                if child is not last:
                    _fail(child, "operation with block successors must terminate its parent block")
            d = child.definition
            if d is not None and Terminator in d.trait_set and child is not last:
                _fail(child, "must be the last operation in the parent block")
    # Dominance in SSACFG regions: within a block, operands must be defined earlier; across
    # blocks, in a dominating block. Values from enclosing regions must not cross isolation.
    dom = None if graph or len(region.blocks) <= 1 else _Dominance(region)
    for block in region.blocks:
        scope = _Scope(region, block, graph, dom, isolated, op)
        defined = scope.defined
        scopes.append(scope)
        for child in block.ops:
            for u in child._operands:
                v = u.value
                if v.uses is None or u not in v.uses:
                    _fail(child, "operand use list is corrupt")
                if v.__class__ is not BlockArgument and cast(OpResult, v).op.parent is block:
                    if v in defined or graph:
                        continue
                    _fail(child, f"operand #{u.index} does not dominate this use")
                _check_operand(child, u.index, v, scopes)
            _verify_op(child, scopes)
            defined.update(child.results)
        scopes.pop()


def _check_operand(user: Operation, index: int, v: Value, scopes: list[_Scope]) -> None:
    """`v` is used by `user`, nested in the innermost scope: find the scope whose region holds the
    definition and check dominance there, failing if an isolated region lies in between."""
    vblock = v.parent_block
    if vblock is None:
        _fail(user, f"operand #{index} uses a value that is not in any block (erased or detached)")
    vregion = vblock.parent
    for scope in reversed(scopes):
        if scope.region is vregion:
            if scope.graph:
                return
            if vblock is scope.block:
                if v in scope.defined:
                    return
            elif scope.dom is not None and scope.dom.dominates(vblock, scope.block):
                return
            _fail(user, f"operand #{index} does not dominate this use")
        if scope.isolated:
            _fail(user, f"using value defined outside the region (operand #{index}); '{scope.owner.name}' is "
                        "isolated from above")
    # Defined above the op being verified: fine if it encloses the use.
    if not scopes or not _encloses(vblock, scopes[0].region):
        _fail(user, f"operand #{index} does not dominate this use")


def _encloses(vblock: Block, region: Region) -> bool:
    r: Region | None = region
    while r is not None:
        p = r.parent
        if p is None:
            return False
        pb = p.parent
        if pb is None:
            return False
        if pb is vblock:
            return True
        r = pb.parent
    return False


class _Dominance(DominatorTree):
    """Dominance as the verifier needs it: uses in unreachable blocks are not checked (as MLIR)."""

    def dominates(self, a: Block, b: Block) -> bool:
        return not self.is_reachable(b) or super().dominates(a, b)


def _op_summary(op: Operation) -> str:
    return f"'{op.name}'"


def _verify_symbol_table(op: Operation) -> None:
    seen: dict[str, Operation] = {}
    for region in op.regions:
        for block in region.blocks:
            for child in block.ops:
                name = child.read_properties().get("sym_name") or child.read_attributes().get("sym_name")
                if isinstance(name, StringAttr):
                    prev = seen.get(name.value)
                    if prev is not None:
                        _fail(child, f"redefinition of symbol named '{name.value}'")
                    seen[name.value] = child
