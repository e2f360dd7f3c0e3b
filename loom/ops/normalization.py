"""Batch normalization: `stablehlo.batch_norm_training`, `batch_norm_inference` and
`batch_norm_grad`, with the spec's decompositions (XLA's batchnorm expander): statistics over every
dimension but `feature_index`, the mean a sum divided by the count, the (biased) variance the mean
of the squared centered operand, `epsilon` (an f32 constant) in the operand's element type.

One implementation serves both array libraries (numpy arrays, torch tensors: only operations the
two spell alike); float16 and bfloat16 are computed in float32 and rounded, as XLA does on CPU.
JAX lowers its batch normalization to elementwise ops and reductions, so these ops have no
derivative or batching rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from loom.backend import kernels as kn
from loom.backend.common import TORCH_KERNELS, floating, integer
from loom.backend.kernels import KERNELS, Kernel
from loom.ir.core import Operation
from loom.ops.registry import declare, register, unsupported

_NAMES = ("stablehlo.batch_norm_training", "stablehlo.batch_norm_inference", "stablehlo.batch_norm_grad")


class _Norm:
    """The statistics helpers over one array library: `cast(x, dtype)` converts."""

    def __init__(self, x: Any, feature_index: int, cast: Callable[[Any, Any], Any], work: Any) -> None:
        self.feature_index = feature_index
        self.axes = tuple(d for d in range(x.ndim) if d != feature_index)
        self.shape = [1] * x.ndim
        self.shape[feature_index] = x.shape[feature_index]
        self.cast = cast
        self.work = work
        count = 1
        for d in self.axes:
            count *= x.shape[d]
        self.count = count

    def sum(self, x: Any) -> Any:
        # torch reads an empty tuple of dims as "all of them": no axes to reduce is no reduction
        return x.sum(self.axes) if self.axes else x

    def mean(self, x: Any) -> Any:
        return self.sum(x) / self.count

    def bcast(self, v: Any) -> Any:
        """A per-feature vector laid along the feature dimension."""
        return v.reshape(self.shape)

    def inference(self, x, scale, offset, mean, variance, epsilon: float) -> Any:
        stddev = (self.bcast(variance) + epsilon) ** 0.5
        return self.bcast(scale) * ((x - self.bcast(mean)) / stddev) + self.bcast(offset)


def _with_work(fn: Callable) -> Callable:
    """`fn` on its array operands in the work dtype, its results back in the operand dtype."""
    def run(cast, work, out, *args):
        xs = [cast(a, work) for a in args[:-2]]
        results = fn(cast, work, *xs, *args[-2:])
        return tuple(cast(r, out) for r in results) if isinstance(results, tuple) else cast(results, out)
    run.__name__ = fn.__name__
    return run


@_with_work
def batch_norm_inference(cast, work, x, scale, offset, mean, variance, epsilon, feature_index):
    return _Norm(x, feature_index, cast, work).inference(x, scale, offset, mean, variance, epsilon)


@_with_work
def batch_norm_training(cast, work, x, scale, offset, epsilon, feature_index):
    n = _Norm(x, feature_index, cast, work)
    mean = n.mean(x)
    centered = x - n.bcast(mean)
    variance = n.mean(centered * centered)
    return n.inference(x, scale, offset, mean, variance, epsilon), mean, variance


@_with_work
def batch_norm_grad(cast, work, x, scale, mean, variance, grad_output, epsilon, feature_index):
    n = _Norm(x, feature_index, cast, work)
    centered = x - n.bcast(mean)
    variance_eps = n.bcast(variance) + epsilon
    stddev = variance_eps ** 0.5
    count = n.count
    i1 = grad_output * count
    i2 = n.bcast(n.sum(grad_output))
    i5 = n.bcast(n.sum(grad_output * centered)) * centered / variance_eps
    grad_operand = n.bcast(scale) / stddev / count * (i1 - i2 - i5)
    grad_scale = n.sum(grad_output * (centered / stddev))
    return grad_operand, grad_scale, n.sum(grad_output)


_FUNCTIONS = {"stablehlo.batch_norm_training": batch_norm_training,
              "stablehlo.batch_norm_inference": batch_norm_inference,
              "stablehlo.batch_norm_grad": batch_norm_grad}


def _numpy_cast(x, dtype):
    return np.asarray(x).astype(dtype, copy=False)


def _torch_cast(x, dtype):
    return x.to(dtype)


def _attributes(op: Operation) -> tuple[float, int]:
    """epsilon (an f32, rounded there as the spec's constant) and feature_index."""
    return float(np.float32(floating(op.get_attr("epsilon")))), integer(op.get_attr("feature_index"))


def _numpy_kernel(op: Operation) -> Kernel:
    out = kn.operand_dtype(op)
    return Kernel(_FUNCTIONS[op.name], _numpy_cast, kn._compute_dtype(out), out, kn.ALL,
                  *_attributes(op))


def _torch_kernel(op: Operation) -> Kernel:
    import torch  # optional: imported when a torch program is compiled

    from loom.backend.torch_kernels import torch_dtype
    out = torch_dtype(kn.operand_dtype(op))
    work = torch.float32 if out in (torch.float16, torch.bfloat16) else out
    return Kernel(_FUNCTIONS[op.name], _torch_cast, work, out, kn.ALL, *_attributes(op))


for _name in _NAMES:
    register(KERNELS, _name, _numpy_kernel)
    register(TORCH_KERNELS, _name, _torch_kernel)
declare(_NAMES, unsupported("JAX and loom's front end lower batch normalization to elementwise ops and reductions; "
                            "the ops are run, not differentiated or batched"), tables=("jvp", "vjp", "batching"))
declare(_NAMES, unsupported("not partitioned: run replicated"), tables=("sharding",))
