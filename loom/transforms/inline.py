"""inline: inline calls to callables whose body is one block ending in a return (MLIR's Inliner).

The pass is op-agnostic through `loom.rewrite.interfaces`: callables (`CallableOpInterface`,
e.g. func.func) and calls (`CallOpInterface`, e.g. func.call). It follows MLIR's algorithm:

* build the call graph of the callables nested in the op, and visit its strongly connected
  components callees first;
* for each component: run the optimization pipeline (`default-pipeline`, canonicalize) on its
  callables, then inline the calls in them, and repeat while something was inlined (at most
  `max-iterations` times);
* a call is inlined when the callee is not recursive (not in a call-graph cycle), is not an
  ancestor of the call, has a single block ending in a return-like terminator, contains only
  registered ops (as MLIR, which needs each dialect's consent), and neither side is `no_inline`;
* inlined ops get `callsite(callee_loc at call_loc)` locations;
* private callables left without any symbol use are erased at the end.
"""

from __future__ import annotations

from collections import Counter

from loom.ir.attributes import CallSiteLoc, Location
from loom.ir.core import Operation, Region
from loom.ir.opdef import IsolatedFromAbove, Terminator, has_trait
from loom.rewrite.effects import is_pure
from loom.rewrite.interfaces import (
    call_arguments,
    callable_region,
    callee_symbol,
    has_no_inline,
    is_call,
    is_callable,
    is_return_like,
)
from loom.rewrite.pass_manager import OpPassManager
from loom.rewrite.passes import Option, Pass, register_pass
from loom.rewrite.pipeline import parse_pipeline_text
from loom.transforms.symbol_utils import (
    SymbolTableCollection,
    can_discard_on_use_empty,
    is_private,
    is_symbol,
    is_symbol_table,
    symbol_uses,
)


class CallGraphNode:
    """A callable region, with its call edges (callees) and child edges (nested callables)."""

    __slots__ = ("op", "region", "parent", "children", "callees")

    def __init__(self, op: Operation, region: Region, parent: CallGraphNode | None) -> None:
        self.op = op
        self.region = region
        self.parent = parent
        self.children: list[CallGraphNode] = []
        self.callees: dict[CallGraphNode, None] = {}

    def __repr__(self) -> str:
        return f"<CallGraphNode {self.op.get_attr('sym_name')}>"


class CallGraph:
    """The callables nested in an op and the calls between them."""

    def __init__(self, root: Operation, tables: SymbolTableCollection) -> None:
        self.tables = tables
        self.nodes: list[CallGraphNode] = []
        self.by_region: dict[Region, CallGraphNode] = {}
        # One walk finds the nodes and the calls; calls are resolved once every node is known.
        calls: list[tuple[Operation, CallGraphNode]] = []
        self._collect(root, None, calls)
        for call, parent in calls:
            target = self.resolve(call)
            if target is not None:
                parent.callees[target] = None

    def _collect(self, op: Operation, parent: CallGraphNode | None, calls: list) -> None:
        if is_call(op):
            if parent is not None:
                calls.append((op, parent))
            return
        if is_callable(op):
            region = callable_region(op)
            if region is None:
                return
            node = self.by_region.get(region)
            if node is None:
                node = CallGraphNode(op, region, parent)
                self.nodes.append(node)
                self.by_region[region] = node
                if parent is not None:
                    parent.children.append(node)
            parent = node
        for region in op.regions:
            for block in region.blocks:
                nested = block._first
                while nested is not None:
                    self._collect(nested, parent, calls)
                    nested = nested._next

    def resolve(self, call: Operation) -> CallGraphNode | None:
        """The node a call op calls, or None (unknown or external callee)."""
        ref = callee_symbol(call)
        if ref is None:
            return None
        target = self.tables.lookup_nearest(call, ref)
        if target is None or not is_callable(target):
            return None
        region = callable_region(target)
        return self.by_region.get(region) if region is not None else None

    def sccs(self) -> list[list[CallGraphNode]]:
        """Strongly connected components, callees before callers (Tarjan, from the top-level
        callables in program order, as LLVM's scc_iterator from the external node)."""
        index: dict[CallGraphNode, int] = {}
        low: dict[CallGraphNode, int] = {}
        stack: list[CallGraphNode] = []
        on_stack: set[CallGraphNode] = set()
        out: list[list[CallGraphNode]] = []

        def successors(n: CallGraphNode) -> list[CallGraphNode]:
            return [*n.children, *n.callees]

        for root in [n for n in self.nodes if n.parent is None]:
            if root in index:
                continue
            index[root] = low[root] = len(index)
            stack.append(root)
            on_stack.add(root)
            work = [(root, iter(successors(root)))]
            while work:
                v, it = work[-1]
                w = next(it, None)
                if w is not None:
                    if w not in index:
                        index[w] = low[w] = len(index)
                        stack.append(w)
                        on_stack.add(w)
                        work.append((w, iter(successors(w))))
                    elif w in on_stack:
                        low[v] = min(low[v], index[w])
                    continue
                work.pop()
                if work:
                    u = work[-1][0]
                    low[u] = min(low[u], low[v])
                if low[v] == index[v]:
                    scc = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        scc.append(w)
                        if w is v:
                            break
                    out.append(scc)
        return out


class _UseList:
    """How many symbol uses each discardable callable has (MLIR's CGUseList)."""

    def __init__(self, root: Operation, graph: CallGraph) -> None:
        self.graph = graph
        self.discardable: dict[CallGraphNode, int] = {}
        self.user_refs: dict[CallGraphNode, Counter] = {}
        always_live: set[CallGraphNode] = set()
        all_visible_root = root.parent is None
        for table in root.walk():
            if not is_symbol_table(table) or not table.regions:
                continue
            visible = all_visible_root or not is_symbol(table) or is_private(table)
            for block in table.regions[0].blocks:
                for op in block.ops:
                    if is_callable(op):
                        region = callable_region(op)
                        node = graph.by_region.get(region) if region is not None else None
                        if node is not None:
                            if is_symbol(op) and (visible or is_private(op)) and can_discard_on_use_empty(op):
                                self.discardable.setdefault(node, 0)
                            continue
                    for target in self._referenced(op):
                        always_live.add(target)
        for node in always_live:
            self.discardable.pop(node, None)
        for node in graph.nodes:
            self.recompute(node)

    def _referenced(self, op: Operation) -> list[CallGraphNode]:
        uses = symbol_uses(op, strict=False)
        if not uses:
            return []
        table_start = op.parent_op if op.parent_op is not None else op
        out = []
        for ref in uses:
            target = self.graph.tables.lookup_nearest(table_start, ref)
            if target is not None and is_callable(target):
                region = callable_region(target)
                node = self.graph.by_region.get(region) if region is not None else None
                if node is not None:
                    out.append(node)
        return out

    def _add(self, refs: Counter, node: CallGraphNode, count: int) -> None:
        refs[node] += count
        if node in self.discardable:
            self.discardable[node] += count

    def recompute(self, node: CallGraphNode) -> None:
        old = self.user_refs.get(node)
        if old:
            for target, count in old.items():
                if target in self.discardable:
                    self.discardable[target] -= count
        refs: Counter = Counter()
        for block in node.region.blocks:
            for op in block.ops:
                for target in self._referenced(op):
                    self._add(refs, target, 1)
        self.user_refs[node] = refs

    def drop_call_uses(self, source: CallGraphNode, call: Operation) -> None:
        refs = self.user_refs.setdefault(source, Counter())
        for target in self._referenced(call):
            self._add(refs, target, -1)

    def merge_uses_after_inlining(self, target: CallGraphNode, source: CallGraphNode) -> None:
        refs = self.user_refs.setdefault(source, Counter())
        for node, count in self.user_refs.get(target, Counter()).items():
            self._add(refs, node, count)

    def is_dead(self, node: CallGraphNode) -> bool:
        op = node.op
        if not is_symbol(op):
            return is_pure(op) and all(not r.uses for r in op.results)
        return self.discardable.get(node, -1) == 0


def _remap_locations(ops: list[Operation], call_loc: Location) -> None:
    cache: dict[Location, Location] = {}

    def remap(loc: Location) -> Location:
        new = cache.get(loc)
        if new is None:
            new = cache[loc] = CallSiteLoc(loc, call_loc)
        return new

    for top in ops:
        for op in top.walk():
            op.location = remap(op.location)
            for region in op.regions:
                for block in region.blocks:
                    for arg in block.args:
                        arg.location = remap(arg.location)


def _legal_to_inline(region: Region) -> bool:
    """Every op in the callee is registered and does not refuse inlining (`inlinable = False`)."""
    for block in region.blocks:
        for op in block.ops:
            for nested in op.walk():
                cls = type(nested)
                if cls.definition is None or getattr(cls, "inlinable", True) is False:
                    return False
    return True


class Inliner:
    """One run of the inliner over the callables nested in `root`."""

    def __init__(self, inline_pass: InlinerPass, root: Operation, pipelines: dict[str, OpPassManager],
                 default_pipeline: OpPassManager | None, max_iterations: int) -> None:
        self.pass_ = inline_pass
        self.root = root
        self.pipelines = pipelines
        self.default_pipeline = default_pipeline
        self.max_iterations = max_iterations
        self.tables = SymbolTableCollection()
        self.graph = CallGraph(root, self.tables)
        self.uses = _UseList(root, self.graph)
        self.recursive: set[CallGraphNode] = set()
        self.dead: dict[CallGraphNode, None] = {}
        self.inlined_calls = 0

    def run(self) -> None:
        sccs = self.graph.sccs()
        for scc in sccs:
            if len(scc) > 1 or scc[0] in scc[0].callees:
                self.recursive.update(scc)
        for scc in sccs:
            self.inline_scc(scc)
        for node in self.dead:
            op = node.op
            if op.parent is not None:
                op.erase()

    def inline_scc(self, scc: list[CallGraphNode]) -> None:
        scc = list(scc)
        iteration = 0
        while True:
            self.optimize_scc(scc)
            if not self.inline_calls_in_scc(scc):
                break
            iteration += 1
            if iteration >= self.max_iterations:
                break

    def optimize_scc(self, scc: list[CallGraphNode]) -> None:
        visited = []
        for node in scc:
            if node.children or not has_trait(node.op, IsolatedFromAbove):
                continue
            pipeline = self.pipelines.get(node.op.name, self.default_pipeline)
            if pipeline is None or not pipeline.items:
                continue
            self.pass_.run_pipeline(pipeline, node.op)
            visited.append(node)
        for node in visited:
            self.uses.recompute(node)

    def collect_calls(self, blocks, source: CallGraphNode, calls: list, traverse_nested: bool) -> None:
        worklist = [(b, source) for b in blocks]
        by_region = self.graph.by_region
        while worklist:
            block, src = worklist.pop()
            for op in block.ops:
                if is_call(op):
                    ref = callee_symbol(op)
                    if ref is None or ref.nested:
                        continue
                    target = self.graph.resolve(op)
                    if target is not None:
                        calls.append((op, src, target))
                    continue
                for region in op.regions:
                    nested = by_region.get(region)
                    if traverse_nested or nested is None:
                        worklist.extend((b, nested or src) for b in region.blocks)

    def inline_calls_in_scc(self, scc: list[CallGraphNode]) -> bool:
        dead: dict[CallGraphNode, None] = {}
        calls: list[tuple[Operation, CallGraphNode, CallGraphNode]] = []
        for node in scc:
            if self.uses.is_dead(node):
                dead[node] = None
            else:
                self.collect_calls(node.region.blocks, node, calls, traverse_nested=False)
        inlined_any = False
        i = 0
        while i < len(calls):
            call, source, target = calls[i]
            i += 1
            if source in dead or call.parent is None or not self.should_inline(call, target):
                continue
            new_ops = self.inline_call(call, target)
            inlined_any = True
            self.inlined_calls += 1
            self.collect_calls([_OpsAsBlock(new_ops)], source, calls, traverse_nested=True)
            self.uses.drop_call_uses(source, call)
            self.uses.merge_uses_after_inlining(target, source)
            call.erase()
            if self.uses.is_dead(target) and is_symbol(target.op):
                dead[target] = None
        for node in dead:
            if node in scc:
                scc.remove(node)
            self.dead[node] = None
        return inlined_any

    def should_inline(self, call: Operation, target: CallGraphNode) -> bool:
        if has_trait(call, Terminator) or target in self.recursive:
            return False
        if has_no_inline(call) or has_no_inline(target.op):
            return False
        region = target.region
        if region.is_ancestor_of(call) or len(region.blocks) != 1:
            return False
        block = region.blocks[0]
        term = block.last_op
        if term is None or not is_return_like(term):
            return False
        args = call_arguments(call)
        if len(args) != len(block.args) or any(a.type is not b.type for a, b in zip(args, block.args)):
            return False
        if len(call.results) != len(term.operands) or \
                any(r.type is not v.type for r, v in zip(call.results, term.operands)):
            return False
        return _legal_to_inline(region)

    def inline_call(self, call: Operation, target: CallGraphNode) -> list[Operation]:
        """Clone the callee body before `call` and rewire its results; the call stays for the
        caller to erase."""
        block = target.region.blocks[0]
        mapping: dict = dict(zip(block.args, call_arguments(call)))
        dest = call.parent
        term = block.last_op
        new_ops = []
        for op in block.ops:
            if op is term:
                break
            new = op.clone(mapping)
            dest.insert_before(new, call)
            new_ops.append(new)
        _remap_locations(new_ops, call.location)
        for result, value in zip(call.results, term.operands):
            result.replace_all_uses_with(mapping.get(value, value))
        return new_ops


class _OpsAsBlock:
    """A list of ops seen as a block by `collect_calls`."""

    def __init__(self, ops: list[Operation]) -> None:
        self.ops = ops


def _parse_pipeline(text: str) -> OpPassManager:
    pm = OpPassManager("any")
    if text.strip():
        pm.add_pipeline(text)
    return pm


@register_pass
class InlinerPass(Pass):
    """Inline function calls (see the module docstring)."""

    name = "inline"
    summary = "Inline function calls"

    default_pipeline = Option(str, "canonicalize", "The optimizer pipeline used for callables that do not have a "
                                                   "dedicated optimizer pipeline in opPipelineList")
    inlining_threshold = Option(int, 4294967295, "If the ratio between the number of the operations in the callee "
                                                 "and the number of the operations in the caller exceeds this "
                                                 "value (in percentage), then the callee is not inlined even if "
                                                 "it is legal to inline it (accepted, not used)")
    max_iterations = Option(int, 4, "Maximum number of iterations when inlining within an SCC")
    op_pipelines = Option(list, [], "Callable operation specific optimizer pipelines (in the form of "
                                    "`dialect.op(pipeline)`)")

    def run(self, op: Operation) -> None:
        pipelines: dict[str, OpPassManager] = {}
        for text in self.op_pipelines:
            for el in parse_pipeline_text(text):
                pm = pipelines.setdefault(el.name, OpPassManager(el.name))
                if el.children is None:
                    raise self.fail(op, f"op pipeline '{text}' must be written 'op.name(passes)'")
                inner = text[el.position:]
                inner = inner[inner.index("(") + 1:inner.rindex(")")]
                pm.add_pipeline(inner)
        inliner = Inliner(self, op, pipelines, _parse_pipeline(self.default_pipeline), self.max_iterations)
        inliner.run()
        self.inlined_calls = inliner.inlined_calls
        if not inliner.inlined_calls:
            # Nothing inlined, so nothing erased: the IR is as the optimizer pipelines left it,
            # and the pass manager verified it after each of their passes.
            self.mark_all_analyses_preserved()


__all__ = ["CallGraph", "CallGraphNode", "Inliner", "InlinerPass"]
