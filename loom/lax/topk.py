"""`loom.lax.top_k`, `approx_max_k` and `approx_min_k`, with the signatures and semantics of
`jax.lax`'s.

The approximate versions are TPU-KNN's partial reduction: the reduction dimension is split into
`L` strided bins (element j goes to bin j mod L, `L` is XLA's `ApproxTopKReductionOutputSize`,
see `loom.dialects.knn.reduction_output_size`), each bin keeps its best element, and the `k` best
of those are returned sorted (or all `L`, unsorted, without `aggregate_to_topk`). The expected
recall is at least `recall_target`; `k == 1`, `recall_target == 1` and `L >= N` are exact.

On numpy arrays they run the numpy kernels at once; on traced values (inside `loom.jit`, `grad`,
`vmap`) they insert `chlo.top_k` / `knn.approx_top_k`. Gradients flow to the selected positions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.backend import knn_kernels
from loom.dialects import chlo, knn
from loom.frontend.tracing import Tracer, user_line
from loom.ops.reductions import top_k as _top_k_kernel

__all__ = ["approx_max_k", "approx_min_k", "top_k"]


def _check(operand: Any, k: int, what: str, need_float: bool) -> None:
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        raise TypeError(f"{what}: k must be a Python int, but got {type(k).__name__} (at {user_line()})")
    if k <= 0:
        raise ValueError(f"{what}: k must be positive, but got k={k} (at {user_line()})")
    shape = operand.shape
    if len(shape) == 0:
        raise TypeError(f"{what}: operand must have rank >= 1, but got a scalar (at {user_line()})")
    if need_float and np.dtype(operand.dtype).kind != "f" and np.dtype(operand.dtype).name != "bfloat16":
        raise ValueError(f"{what}: operand must be a floating-point array, but got dtype {operand.dtype} "
                         f"(at {user_line()})")


def _as_array(x: Any) -> Any:
    return x if isinstance(x, Tracer) else np.asarray(x)


def top_k(operand: Any, k: int) -> tuple[Any, Any]:
    """The `k` largest entries of the last axis, sorted descending, and their int32 indices (ties:
    the smaller index first)."""
    operand = _as_array(operand)
    _check(operand, k, "top_k", need_float=False)
    if k > operand.shape[-1]:
        raise ValueError(f"top_k: k={k} is larger than the last dimension of operand {operand.shape} "
                         f"(at {user_line()})")
    if isinstance(operand, Tracer):
        values, indices = chlo.top_k(operand.trace.emit(), operand.value, int(k))
        return Tracer(values, operand.trace, operand.weak), Tracer(indices, operand.trace)
    return _top_k_kernel(operand, int(k), np.int32)


def _approx(operand: Any, k: int, reduction_dimension: int, recall_target: float, is_max_k: bool,
            reduction_input_size_override: int, aggregate_to_topk: bool, what: str) -> tuple[Any, Any]:
    operand = _as_array(operand)
    _check(operand, k, what, need_float=True)
    rank = len(operand.shape)
    if not -rank <= reduction_dimension < rank:
        raise ValueError(f"{what}: reduction_dimension={reduction_dimension} is out of range for an operand of rank "
                         f"{rank} (at {user_line()})")
    dim = reduction_dimension % rank
    n = operand.shape[dim]
    if k > n:
        raise ValueError(f"{what}: k={k} is larger than dimension {dim} of operand {tuple(operand.shape)} "
                         f"(at {user_line()})")
    if not 0.0 < float(recall_target) <= 1.0:
        raise ValueError(f"{what}: recall_target must be in (0, 1], but got {recall_target} (at {user_line()})")
    if reduction_input_size_override >= 0 and reduction_input_size_override < n:
        raise ValueError(f"{what}: reduction_input_size_override={reduction_input_size_override} must be at least "
                         f"the size of the reduction dimension ({n}) (at {user_line()})")
    if isinstance(operand, Tracer):
        values, indices = knn.approx_top_k(operand.trace.emit(), operand.value, int(k), dim, float(recall_target),
                                           is_max_k, int(reduction_input_size_override), bool(aggregate_to_topk))
        return Tracer(values, operand.trace, operand.weak), Tracer(indices, operand.trace)
    return knn_kernels.approx_top_k(operand, int(k), dim, float(recall_target), is_max_k,
                                    int(reduction_input_size_override), bool(aggregate_to_topk))


def approx_max_k(operand: Any, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True) -> tuple[Any, Any]:
    """Approximately the `k` largest entries along `reduction_dimension` and their int32 indices,
    with expected recall at least `recall_target` (see the module docstring). As
    `jax.lax.approx_max_k`. For maximum inner product search: `approx_max_k(q @ db.T, k)`."""
    return _approx(operand, k, reduction_dimension, recall_target, True, reduction_input_size_override,
                   aggregate_to_topk, "approx_max_k")


def approx_min_k(operand: Any, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True) -> tuple[Any, Any]:
    """Approximately the `k` smallest entries along `reduction_dimension` and their int32 indices.
    As `jax.lax.approx_min_k`. For Euclidean search: `approx_min_k(half_db_norms - q @ db.T, k)`
    with `half_db_norms = (db * db).sum(1) / 2`."""
    return _approx(operand, k, reduction_dimension, recall_target, False, reduction_input_size_override,
                   aggregate_to_topk, "approx_min_k")
