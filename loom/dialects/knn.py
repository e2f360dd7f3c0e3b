"""The knn dialect: approximate top-k (TPU-KNN's partial reduction) and the fused distance + top-k op.

- `knn.approx_top_k`: the approximate top-k of `operand` along `reduction_dimension`, as
  `jax.lax.approx_max_k` / `approx_min_k` define it. The dimension is split into `L` strided bins
  (element `j` goes to bin `j mod L`); each bin keeps its best element; with `aggregate_to_topk`
  the `L` survivors are sorted and the best `k` returned, otherwise all `L` are returned unsorted.
  `L` is XLA's `ApproxTopKReductionOutputSize`, bit for bit (`reduction_output_size`). Results:
  values (the operand's element type) and `i32` indices into the reduction dimension.
- `knn.fused_score_top_k`: `queries` (Q x D) against `database` (N x D): the scores
  `queries . database^T` (`metric = "ip"`), or `half_squared_norms - queries . database^T`
  (`metric = "l2"`, with the optional third operand of shape N), followed by the approximate
  top-k of each row, with the same attributes. The Q x N score matrix is never materialised by
  its kernels. An f16 / bf16 database may be searched by f32 queries (scored in f32, the
  database widened block by block by the kernels, never whole); the results take the queries'
  type. The `knn-fusion` pass (loom.transforms.knn_fusion) produces it.

For exact top-k loom reuses `chlo.top_k`.
"""

from __future__ import annotations

import math

import numpy as np

from loom.dialects.stablehlo import I64Attr, ShapeError, StableHLOOp, TensorOf, prop_int
from loom.ir.attributes import Attribute, BoolAttr, FloatAttr, IntegerAttr, Location, StringAttr
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.opdef import Constraint, Dialect, Pure, opt_operand, prop, register_dialect, result_def
from loom.ir.opdef import operand as operand_def
from loom.ir.types import DYNAMIC, RankedTensorType, bf16, f16, f32, i1, i32, i64

# TPU tiling constants of XLA's approx_topk_shape.cc: the reduction works on 128-lane tiles for
# rank >= 2 and on 1024-element chunks for rank 1.
TPU_LANE_TILING = 128
TPU_CHUNK_TILING = 1024

METRICS = ("ip", "l2")


def _log2_floor(x: int) -> int:
    return x.bit_length() - 1 if x > 0 else 0


def _log2_ceil(x: int) -> int:
    return (x - 1).bit_length() if x > 0 else 0


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def reduction_output_size(input_size: int, rank: int, top_k: int, recall_target: float,
                          aggregate_to_topk: bool, input_size_override: int = -1) -> tuple[int, int]:
    """XLA's `ApproxTopKReductionOutputSize`: (output size, log2 of the reduction; -1 when not
    applicable). Without `aggregate_to_topk` the output size is the number of bins `L`."""
    if aggregate_to_topk:
        return top_k, -1
    tiling = TPU_CHUNK_TILING if rank == 1 else TPU_LANE_TILING
    if input_size <= tiling:
        return input_size, 0
    if input_size_override >= 0 and input_size > input_size_override:
        raise ValueError(f"reduction_input_size_override ({input_size_override}) should be greater equals to "
                         f"the size of the reduction dimension ({input_size})")
    logical = input_size_override if input_size_override >= 0 else input_size
    if top_k == 1:
        return tiling, _log2_ceil(_ceil_div(logical, tiling))
    # recall_target is a C++ float in XLA: round it to float32 before taking the log.
    recall = float(np.float32(recall_target))
    if recall == 1.0:
        return input_size, 0
    if not 0.0 < recall <= 1.0:
        raise ValueError(f"recall_target should range in (0,1], but got {recall_target}")
    # (1 - K) / log(r), truncated toward zero as the uint64 conversion does, clamped to
    # [tiling, logical size] (current XLA clamps to the logical size; older code used input_size,
    # which differs under reduction_input_size_override; jaxlib agrees with this form).
    m = min(max(int((1.0 - top_k) / math.log(recall)), tiling), logical)
    log2_reduction = _log2_floor(logical // m)
    if log2_reduction == 0:
        return input_size, 0
    log2_reduction = min(log2_reduction, _log2_ceil(input_size // tiling))
    out = _ceil_div(_ceil_div(input_size, tiling), 1 << log2_reduction) * tiling
    return out, log2_reduction


def num_bins(input_size: int, rank: int, top_k: int, recall_target: float, input_size_override: int = -1) -> int:
    """The number of strided bins `L` the partial reduction keeps (at most `input_size`: `L >=
    input_size` means every element is its own bin, i.e. exact)."""
    out, _ = reduction_output_size(input_size, rank, top_k, recall_target, False, input_size_override)
    return min(out, input_size)


F32Attr = Constraint(lambda a: isinstance(a, FloatAttr) and a.type is f32, "32-bit float attribute")
BoolAttr_ = Constraint(lambda a: isinstance(a, IntegerAttr) and a.type is i1, "bool attribute")
MetricAttr = Constraint(lambda a: isinstance(a, StringAttr) and a.value in METRICS,
                        "string attribute \"ip\" or \"l2\"")


def _float_prop(props: dict[str, Attribute], name: str) -> float:
    a = props.get(name)
    if not isinstance(a, FloatAttr):
        raise ShapeError(f"requires 32-bit float attribute '{name}'")
    return a.value


def _bool_prop(props: dict[str, Attribute], name: str) -> bool:
    a = props.get(name)
    if not isinstance(a, IntegerAttr):
        raise ShapeError(f"requires bool attribute '{name}'")
    return bool(a.value)


def _check_common(props: dict[str, Attribute], size: int) -> tuple[int, bool]:
    """Check k, recall_target and reduction_input_size_override against the reduced size;
    return (k, aggregate_to_topk)."""
    k = prop_int(props, "k")
    recall = _float_prop(props, "recall_target")
    aggregate = _bool_prop(props, "aggregate_to_topk")
    override = prop_int(props, "reduction_input_size_override", -1)
    if k <= 0:
        raise ShapeError(f"k must be positive, but got {k}")
    if not 0.0 < recall <= 1.0:
        raise ShapeError(f"recall_target must be in (0, 1], but got {recall}")
    if size != DYNAMIC:
        if k > size:
            raise ShapeError(f"k ({k}) must be at most the size of the reduction dimension ({size})")
        if override >= 0 and override < size:
            raise ShapeError(f"reduction_input_size_override ({override}) must be at least the size of the reduction "
                             f"dimension ({size})")
    return k, aggregate


def _attrs(k: int, recall_target: float, is_max_k: bool, reduction_input_size_override: int,
           aggregate_to_topk: bool) -> dict[str, Attribute]:
    return {"k": IntegerAttr.get(k, i64), "recall_target": FloatAttr.get(float(recall_target), f32),
            "is_max_k": BoolAttr(is_max_k),
            "reduction_input_size_override": IntegerAttr.get(reduction_input_size_override, i64),
            "aggregate_to_topk": BoolAttr(aggregate_to_topk)}


class ApproxTopKOp(StableHLOOp):
    """Approximate top-k along `reduction_dimension` by strided-bin partial reduction (see the
    module docstring); with `recall_target = 1`, `k = 1` or `L >= N` it is exact."""

    name = "knn.approx_top_k"
    operand = operand_def(TensorOf("f"))
    k = prop(I64Attr)
    reduction_dimension = prop(I64Attr)
    recall_target = prop(F32Attr)
    is_max_k = prop(BoolAttr_)
    reduction_input_size_override = prop(I64Attr)
    aggregate_to_topk = prop(BoolAttr_)
    values = result_def(TensorOf("f"))
    indices = result_def(TensorOf("i"))
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t = operand_types[0]
        if not isinstance(t, RankedTensorType):
            raise ShapeError(f"operand must be a ranked tensor, but got '{t}'")
        if t.rank < 1:
            raise ShapeError(f"operand must have rank >= 1, but got '{t}'")
        dim = prop_int(properties, "reduction_dimension")
        if not -t.rank <= dim < t.rank:
            raise ShapeError(f"reduction_dimension {dim} is out of range for operand '{t}'")
        dim %= t.rank
        size = t.shape[dim]
        k, aggregate = _check_common(properties, size)
        if aggregate:
            width = k
        elif size == DYNAMIC:
            raise ShapeError("aggregate_to_topk = false needs a static reduction dimension")
        else:
            width = reduction_output_size(size, t.rank, k, _float_prop(properties, "recall_target"), False,
                                          prop_int(properties, "reduction_input_size_override", -1))[0]
        shape = t.shape[:dim] + (width,) + t.shape[dim + 1:]
        return [RankedTensorType(shape, t.element_type, None), RankedTensorType(shape, i32, None)]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, k: int, reduction_dimension: int = -1,
              recall_target: float = 0.95, is_max_k: bool = True, reduction_input_size_override: int = -1,
              aggregate_to_topk: bool = True, location: Location | None = None) -> Operation:
        rank = len(operand.type.shape)
        props = _attrs(k, recall_target, is_max_k, reduction_input_size_override, aggregate_to_topk)
        props["reduction_dimension"] = IntegerAttr.get(reduction_dimension % max(rank, 1), i64)
        return cls.insert(builder, [operand], props, location=location)


class FusedScoreTopKOp(StableHLOOp):
    """Scores of `queries` (Q x D) against `database` (N x D) followed by the approximate top-k of
    each row over N: `metric = "ip"` scores `q . x`; `metric = "l2"` scores
    `half_squared_norms - q . x` (half of `||x||^2`, an operand of shape N), whose minimum is the
    nearest neighbour in Euclidean distance. Results as `knn.approx_top_k` with
    `reduction_dimension = 1`: values (Q x k, or Q x L without `aggregate_to_topk`) and `i32`
    indices into the database."""

    name = "knn.fused_score_top_k"
    queries = operand_def(TensorOf("f", rank=2))
    database = operand_def(TensorOf("f", rank=2))
    half_squared_norms = opt_operand(TensorOf("f", rank=1))
    metric = prop(MetricAttr)
    k = prop(I64Attr)
    recall_target = prop(F32Attr)
    is_max_k = prop(BoolAttr_)
    reduction_input_size_override = prop(I64Attr)
    aggregate_to_topk = prop(BoolAttr_)
    values = result_def(TensorOf("f", rank=2))
    indices = result_def(TensorOf("i", rank=2))
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        if len(operand_types) not in (2, 3):
            raise ShapeError(f"expects 2 or 3 operands (queries, database, half_squared_norms), "
                             f"but got {len(operand_types)}")
        q, db = operand_types[0], operand_types[1]
        for what, t in (("queries", q), ("database", db)):
            if not isinstance(t, RankedTensorType) or t.rank != 2:
                raise ShapeError(f"{what} must be a 2D ranked tensor, but got '{t}'")
        if q.element_type is not db.element_type and not (q.element_type is f32 and db.element_type in (f16, bf16)):
            raise ShapeError(f"queries and database must have one element type (or f32 queries and an f16 / bf16 "
                             f"database), but got '{q}' and '{db}'")
        if DYNAMIC not in (q.shape[1], db.shape[1]) and q.shape[1] != db.shape[1]:
            raise ShapeError(f"queries and database must have the same dimension (shape[1]), but got '{q}' and "
                             f"'{db}'")
        metric = properties.get("metric")
        metric = metric.value if isinstance(metric, StringAttr) else None
        if metric not in METRICS:
            raise ShapeError(f"metric must be one of {', '.join(METRICS)}, but got {metric!r}")
        n = db.shape[0]
        if metric == "l2":
            if len(operand_types) != 3:
                raise ShapeError("metric \"l2\" needs the half_squared_norms operand")
            norms = operand_types[2]
            if not isinstance(norms, RankedTensorType) or norms.rank != 1 or \
                    norms.element_type is not q.element_type or DYNAMIC not in (norms.shape[0], n) and \
                    norms.shape[0] != n:
                raise ShapeError(f"half_squared_norms must be a 1D tensor of {n} {q.element_type} values, but got "
                                 f"'{norms}'")
        elif len(operand_types) != 2:
            raise ShapeError("metric \"ip\" takes no half_squared_norms operand")
        k, aggregate = _check_common(properties, n)
        if aggregate:
            width = k
        elif n == DYNAMIC:
            raise ShapeError("aggregate_to_topk = false needs a static database size")
        else:
            width = reduction_output_size(n, 2, k, _float_prop(properties, "recall_target"), False,
                                          prop_int(properties, "reduction_input_size_override", -1))[0]
        shape = (q.shape[0], width)
        return [RankedTensorType(shape, q.element_type, None), RankedTensorType(shape, i32, None)]

    @classmethod
    def build(cls, builder: Builder | None, queries: Value, database: Value, half_squared_norms: Value | None,
              k: int, recall_target: float = 0.95, is_max_k: bool = True, reduction_input_size_override: int = -1,
              aggregate_to_topk: bool = True, location: Location | None = None) -> Operation:
        metric = "ip" if half_squared_norms is None else "l2"
        props = _attrs(k, recall_target, is_max_k, reduction_input_size_override, aggregate_to_topk)
        props["metric"] = StringAttr(metric)
        operands = [queries, database] + ([] if half_squared_norms is None else [half_squared_norms])
        return cls.insert(builder, operands, props, location=location)


def approx_top_k(builder: Builder | None, operand: Value, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, is_max_k: bool = True, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> tuple[Value, Value]:
    """Insert `knn.approx_top_k` and return (values, indices)."""
    op = ApproxTopKOp.build(builder, operand, k, reduction_dimension, recall_target, is_max_k,
                            reduction_input_size_override, aggregate_to_topk)
    return op.results[0], op.results[1]


def fused_score_top_k(builder: Builder | None, queries: Value, database: Value, half_squared_norms: Value | None,
                      k: int, recall_target: float = 0.95, is_max_k: bool = True,
                      reduction_input_size_override: int = -1, aggregate_to_topk: bool = True) -> tuple[Value, Value]:
    """Insert `knn.fused_score_top_k` and return (values, indices)."""
    op = FusedScoreTopKOp.build(builder, queries, database, half_squared_norms, k, recall_target, is_max_k,
                                reduction_input_size_override, aggregate_to_topk)
    return op.results[0], op.results[1]


DIALECT = register_dialect(Dialect("knn"))

__all__ = ["METRICS", "ApproxTopKOp", "FusedScoreTopKOp", "approx_top_k", "fused_score_top_k", "num_bins",
           "reduction_output_size"]
