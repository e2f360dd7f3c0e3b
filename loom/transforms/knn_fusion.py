"""knn-fusion: a `stablehlo.dot_general` of queries against a database followed by a
`knn.approx_top_k` over the database axis becomes one `knn.fused_score_top_k`, whose kernels never
materialise the Q x N score matrix.

Matched forms (Q x D queries `q`, database `x` as N x D, or as D x N, e.g. `db.T`):

- inner product: `approx_top_k(dot_general(q, x), reduction_dimension = 1)`;
- L2 (the form JAX's docs recommend): `approx_top_k(subtract(broadcast_in_dim(h), dot_general(q, x)))`
  with `h` of shape N (or 1 x N) broadcast along the rows: `metric = "l2"`, `h` the half squared norms.

The dot must contract the feature axis of both sides with no batch dimensions, keep the operands'
element type, and have no other user (otherwise the scores are needed anyway). A database given
as D x N is used through its transpose's operand when it is a `stablehlo.transpose`, else
transposed once (the size of the database, not of the scores). An f16 / bf16 database widened to
f32 by a `stablehlo.convert` (e.g. `q @ db.T` with f32 queries) is taken before the convert: the
fused op scores it in f32 without a widened copy of it.
"""

from __future__ import annotations

from loom.dialects import knn, stablehlo
from loom.ir.core import Operation, Value
from loom.ir.types import bf16, f16, f32
from loom.rewrite.greedy import apply_patterns_greedily
from loom.rewrite.passes import Pass, register_pass
from loom.rewrite.pattern import RewritePattern
from loom.rewrite.rewriter import PatternRewriter


def _defining(v: Value, name: str) -> Operation | None:
    op = v.owner_op
    return op if op is not None and op.name == name else None


def _single_use(v: Value) -> bool:
    return len(v.users) == 1


def _ints(op: Operation, name: str) -> tuple[int, ...]:
    return stablehlo._ints(op.properties, name, ())


def _match_dot(v: Value) -> tuple[Operation, Value, Value | None, bool] | None:
    """(dot op, queries, database as N x D or None, whether the database must be transposed)."""
    dot = _defining(v, "stablehlo.dot_general")
    if dot is None or not _single_use(v):
        return None
    dn = dot.properties.get("dot_dimension_numbers")
    lhs, rhs = dot.operands
    if dn is None or dn.lhs_batching_dimensions or dn.rhs_batching_dimensions:
        return None
    if len(lhs.type.shape) != 2 or len(rhs.type.shape) != 2:
        return None
    et = lhs.type.element_type
    if rhs.type.element_type is not et or v.type.element_type is not et:
        return None
    if tuple(dn.lhs_contracting_dimensions) != (1,):
        return None
    if tuple(dn.rhs_contracting_dimensions) == (1,):
        return dot, lhs, rhs, False
    if tuple(dn.rhs_contracting_dimensions) == (0,):
        t = _defining(rhs, "stablehlo.transpose")
        if t is not None and _ints(t, "permutation") == (1, 0):
            return dot, lhs, t.operands[0], False
        return dot, lhs, rhs, True
    return None


def _widened(v: Value) -> Operation | None:
    """The `stablehlo.convert` from f16 / bf16 to f32 defining `v`, if it is one."""
    convert = _defining(v, "stablehlo.convert")
    if convert is None or convert.operands[0].type.element_type not in (f16, bf16) or v.type.element_type is not f32:
        return None
    return convert


def _transposed(v: Value) -> Operation | None:
    t = _defining(v, "stablehlo.transpose")
    return t if t is not None and _ints(t, "permutation") == (1, 0) else None


def _stored(db: Value, transposed: bool, dead: list[Operation]) -> tuple[Value, bool]:
    """The database as the program holds it, (value, whether it is D x N): through a widening
    `stablehlo.convert` from f16 / bf16 to f32 (and the transposes around it, as `q @ db.T` of a
    narrower `db` traces), whose ops join `dead` (erased when nothing else uses them). The fused
    op's kernels widen such a database a block at a time, where the convert materialised it."""
    chain: list[Operation] = []
    outer = _transposed(db)
    if outer is not None:
        chain.append(outer)
        db, transposed = outer.operands[0], not transposed
    convert = _widened(db)
    if convert is None:
        return (chain[0].results[0], not transposed) if chain else (db, transposed)
    chain.append(convert)
    db = convert.operands[0]
    inner = _transposed(db)
    if inner is not None:
        chain.append(inner)
        db, transposed = inner.operands[0], not transposed
    dead.extend(chain)
    return db, transposed


def _match_norms(v: Value, n: int) -> Value | None:
    """`h` (shape N or 1 x N) when `v` is `h` broadcast along the rows of a Q x N tensor."""
    bc = _defining(v, "stablehlo.broadcast_in_dim")
    if bc is None:
        return None
    h = bc.operands[0]
    dims = _ints(bc, "broadcast_dimensions")
    shape = tuple(h.type.shape)
    if shape == (n,) and dims == (1,):
        return h
    if shape == (1, n) and dims == (0, 1):
        return h
    return None


class FuseScoreTopK(RewritePattern):
    """`approx_top_k(dot_general(q, x))` (or of `h - dot_general(q, x)`) -> `knn.fused_score_top_k`."""

    root = "knn.approx_top_k"
    benefit = 2

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        scores = op.operands[0]
        if len(scores.type.shape) != 2 or int(op.properties["reduction_dimension"].value) != 1:
            return False
        n = scores.type.shape[1]
        norms = None
        dead: list[Operation] = []
        matched = _match_dot(scores)
        if matched is None:
            sub = _defining(scores, "stablehlo.subtract")
            if sub is None or not _single_use(scores):
                return False
            norms = _match_norms(sub.operands[0], n)
            matched = _match_dot(sub.operands[1])
            if norms is None or matched is None:
                return False
            dead.append(sub)
            dead.append(sub.operands[0].owner_op)
        dot, queries, database, transpose = matched
        dead.append(dot)
        t = _defining(dot.operands[1], "stablehlo.transpose")
        if t is not None and t.operands[0] is database:
            dead.append(t)
        rewriter.set_insertion_point_before(op)
        rewriter.location = op.location
        database, transpose = _stored(database, transpose, dead)
        if transpose:
            database = stablehlo.transpose(rewriter, database, [1, 0])
        if norms is not None and len(norms.type.shape) == 2:
            norms = stablehlo.reshape(rewriter, norms, (n,))
        p = op.properties
        fused = knn.FusedScoreTopKOp.build(
            rewriter, queries, database, norms, int(p["k"].value), p["recall_target"].value,
            bool(p["is_max_k"].value), int(p["reduction_input_size_override"].value),
            bool(p["aggregate_to_topk"].value), location=op.location)
        rewriter.replace_op(op, fused)
        for d in dead:
            if not any(r.has_uses for r in d.results):
                rewriter.erase_op(d)
        return True


def knn_fusion_patterns() -> list[RewritePattern]:
    return [FuseScoreTopK()]


@register_pass
class KnnFusionPass(Pass):
    """Fuse a distance `dot_general` and the approximate top-k that follows it into
    `knn.fused_score_top_k`."""

    name = "knn-fusion"
    summary = "Fuse dot_general + knn.approx_top_k into knn.fused_score_top_k"

    def run(self, op: Operation) -> None:
        apply_patterns_greedily(op, knn_fusion_patterns())


__all__ = ["FuseScoreTopK", "KnnFusionPass", "knn_fusion_patterns"]
