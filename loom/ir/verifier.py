"""The verifier: structure first (dominance, terminators, successors, isolation, symbols), then
traits, then each op's own rule. Every error names the op, gives its location and prints it."""

from __future__ import annotations

from loom.ir.attributes import StringAttr
from loom.ir.core import Block, Operation, Region, Value
from loom.ir.diagnostics import VerifyError
from loom.ir.dominance import DominatorTree
from loom.ir.opdef import (
    SINGLE,
    GraphRegions,
    IsolatedFromAbove,
    NoTerminator,
    SymbolTable,
    Terminator,
)


def _fail(op: Operation, message: str) -> None:
    raise VerifyError(op, message)


def verify(root: Operation) -> None:
    """Verify `root` and everything nested in it; raise VerifyError on the first problem."""
    from loom.ir.core import paused_gc
    with paused_gc():
        _verify_op(root)


def _verify_op(op: Operation) -> None:
    definition = type(op).definition
    if definition is not None:
        _verify_structure_against_definition(op, definition)
    for i, region in enumerate(op.regions):
        _verify_region(op, i, region, definition)
    if definition is not None:
        for trait in definition.traits:
            msg = trait.verify(op)
            if msg:
                _fail(op, msg)
        op.verify_()
    if definition is not None and SymbolTable in definition.trait_set:
        _verify_symbol_table(op)


def _verify_structure_against_definition(op: Operation, d) -> None:
    n_ops = len(op._operands)
    fixed = sum(f.kind == SINGLE for f in d.operands)
    if len(d.operands) == fixed and n_ops != fixed:
        _fail(op, f"expected {fixed} operands, but found {n_ops}")
    if n_ops < fixed:
        _fail(op, f"expected at least {fixed} operands, but found {n_ops}")
    fixed_r = sum(f.kind == SINGLE for f in d.results)
    if len(d.results) == fixed_r and len(op.results) != fixed_r:
        _fail(op, f"requires {fixed_r} result{'s' if fixed_r != 1 else ''}, but found {len(op.results)}")
    if len(op.regions) < len(d.regions) or (len(op.regions) > len(d.regions) and
                                            not any(r.kind != SINGLE for r in d.regions)):
        _fail(op, f"requires {len(d.regions)} region{'s' if len(d.regions) != 1 else ''}")
    for f in d.operands:
        if f.constraint is None:
            continue
        lo, hi = d.operand_range(op, f.index)
        for i in range(lo, hi):
            t = op._operands[i].value.type
            if not f.constraint.check(t):
                _fail(op, f"operand #{i} must be {f.constraint.description}, but got '{t}'")
    for f in d.results:
        if f.constraint is None:
            continue
        lo, hi = d.result_range(op, f.index)
        for i in range(lo, hi):
            t = op.results[i].type
            if not f.constraint.check(t):
                _fail(op, f"result #{i} must be {f.constraint.description}, but got '{t}'")
    for p in d.props:
        v = op.properties.get(p.name)
        if v is None:
            if not p.optional:
                _fail(op, f"requires attribute '{p.name}'")
            continue
        if p.constraint is not None and not p.constraint.check(v):
            _fail(op, f"attribute '{p.name}' failed to satisfy constraint: {p.constraint.description}")
    for k in op.properties:
        if k not in d.prop_names:
            _fail(op, f"has unknown inherent attribute '{k}'")


def _verify_region(op: Operation, index: int, region: Region, definition) -> None:
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
    if isolated and index == 0:
        _verify_isolation(op)
    # Dominance in SSACFG regions: within a block, operands must be defined earlier; across
    # blocks, in a dominating block. Values from enclosing regions must not cross isolation.
    dom = None if graph or len(region.blocks) <= 1 else _Dominance(region)
    for block in region.blocks:
        defined: set[Value] = set(block.args)
        for child in block.ops:
            for u in child._operands:
                v = u.value
                if v.uses is None or u not in v.uses:
                    _fail(child, "operand use list is corrupt")
                _check_operand(child, u.index, v, block, region, defined, graph, isolated, dom, op)
            if child.regions:
                _verify_nested_uses(child, region, block, defined, graph, isolated, dom, op)
            _verify_op(child)
            defined.update(child.results)


def _check_operand(user: Operation, index: int, v: Value, block: Block, region: Region, defined: set[Value],
                   graph: bool, isolated: bool, dom, owner: Operation) -> None:
    vblock = v.parent_block
    if vblock is None:
        _fail(user, f"operand #{index} uses a value that is not in any block (erased or detached)")
    if vblock is block:
        if graph or v in defined:
            return
        _fail(user, f"operand #{index} does not dominate this use")
    if vblock.parent is region:
        if graph or (dom is not None and dom.dominates(vblock, block)):
            return
        _fail(user, f"operand #{index} does not dominate this use")
    # Defined outside this region.
    if isolated:
        _fail(user, f"using value defined outside the region (operand #{index}); '{owner.name}' is isolated "
                    "from above")
    if not _encloses(vblock, region):
        _fail(user, f"operand #{index} does not dominate this use")


def _verify_nested_uses(child: Operation, region: Region, block: Block, defined: set[Value], graph: bool,
                        isolated: bool, dom, owner: Operation) -> None:
    """Values used inside `child`'s regions that come from this region must dominate `child`."""
    for nested in child.walk():
        if nested is child:
            continue
        for u in nested._operands:
            v = u.value
            vblock = v.parent_block
            if vblock is None or vblock.parent is not region:
                continue
            if vblock is block:
                if not graph and v not in defined:
                    _fail(nested, f"operand #{u.index} does not dominate this use")
            elif not graph and dom is not None and not dom.dominates(vblock, block):
                _fail(nested, f"operand #{u.index} does not dominate this use")


def _verify_isolation(op: Operation) -> None:
    """No op nested anywhere inside `op` may use a value defined outside it."""
    inside: set[Block] = set()
    for region in op.regions:
        inside.update(region.blocks)
    for nested in op.walk():
        if nested is op:
            continue
        for region in nested.regions:
            inside.update(region.blocks)
        for u in nested._operands:
            b = u.value.parent_block
            if b is not None and b not in inside and b.parent is not None:
                _fail(nested, f"using value defined outside the region (operand #{u.index}); '{op.name}' is "
                              "isolated from above")


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
                name = child.properties.get("sym_name") or child.attributes.get("sym_name")
                if isinstance(name, StringAttr):
                    prev = seen.get(name.value)
                    if prev is not None:
                        _fail(child, f"redefinition of symbol named '{name.value}'")
                    seen[name.value] = child
