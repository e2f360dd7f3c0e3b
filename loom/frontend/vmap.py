"""`loom.vmap`: vectorizing a Python function written with `loom.numpy` over a batch axis.

`vmap(f, in_axes, out_axes, axis_size)(*args)` traces `f` on one example (each batched argument
leaf without its batch axis, as `loom.jit` traces), transforms the traced `func.func` with
`loom.transforms.batching.vmap_module` into a function over the whole batch, and runs it with the
compiled executor (cached per input signature). Called while another function is being traced,
the batched function's ops are inlined into the enclosing trace instead, so `jit(vmap(f))`,
`vmap(grad(f))` and `grad` of a vmapped function work.

`in_axes` is an int, None, or a tuple with one entry per positional argument, each an int, None
or a pytree prefix of that argument whose leaves are ints or None (as with `jax.vmap`); `out_axes`
likewise is an int, None or a pytree prefix of the output.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from loom.frontend.grad import ModuleRunner
from loom.frontend.jit import Jitted, abstract_value, as_array, device_leaf, pass_manager, transform_module
from loom.frontend.pytree import PyTreeDef, node_children, tree_flatten, tree_unflatten
from loom.frontend.tracing import Tracer, current_trace
from loom.ir.core import Operation
from loom.transforms.batching import vmap_module


class _Abstract:
    """An array of this shape and dtype, for tracing (as `jax.ShapeDtypeStruct`)."""

    def __init__(self, shape: tuple[int, ...], dtype: Any) -> None:
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)


def _n_leaves(tree: Any) -> int:
    return len(tree_flatten(tree)[0])


def _broadcast_prefix(spec: Any, tree: Any, what: str) -> list[Any]:
    """One entry of `spec` (a pytree prefix of `tree` with int / None leaves) per leaf of `tree`."""
    if spec is None or isinstance(spec, int):
        return [spec] * _n_leaves(tree)
    s_node, t_node = node_children(spec), node_children(tree)
    if s_node is None or t_node is None or s_node[0] is not t_node[0] or s_node[1] != t_node[1] \
            or len(s_node[2]) != len(t_node[2]):
        raise ValueError(f"vmap {what} specification must be a tree prefix of the corresponding value, got "
                         f"specification {spec!r} for value tree {tree_flatten(tree)[1]}.")
    out: list[Any] = []
    for s, t in zip(s_node[2], t_node[2]):
        out.extend(_broadcast_prefix(s, t, what))
    return out


def _shape_dtype(x: Any) -> tuple[tuple[int, ...], np.dtype]:
    if isinstance(x, Tracer) or (hasattr(x, "shape") and hasattr(x, "dtype")):
        return abstract_value(x)
    arr = np.asarray(x)
    return arr.shape, arr.dtype


class _Batched:
    """The batched module of one function for one input signature, and its runner."""

    def __init__(self, module: Operation, out_tree: PyTreeDef) -> None:
        self.module = module
        self.out_tree = out_tree
        self.captures: list[Any] = []
        self._runner = ModuleRunner(module)

    def run(self, leaves: list[Any]) -> Any:
        """The outputs: tracers while tracing, else arrays where the arguments live (see
        `ModuleRunner`)."""
        return tree_unflatten(self.out_tree, self._runner(leaves))


def vmap(fun: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0, axis_size: int | None = None) -> Callable:
    """A function mapping `fun` over the axis `in_axes` of its arguments (see the module docstring),
    stacking the outputs along `out_axes`, as `jax.vmap`."""
    if not (in_axes is None or isinstance(in_axes, (int, tuple, list, dict))):
        raise TypeError(f"vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                        f"positional arguments passed to the function, but got {in_axes!r}.")
    cache: dict[Hashable, _Batched] = {}

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError("loom.vmap supports positional arguments only")
        spec = tuple(in_axes) if isinstance(in_axes, list) else in_axes  # as JAX: a list means a tuple
        if isinstance(spec, tuple) and len(spec) != len(args):
            raise ValueError(f"vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                             f"positional arguments passed to the function, but got len(in_axes)={len(spec)}, "
                             f"len(args)={len(args)}")
        axes = _broadcast_prefix(spec, args, "in_axes")
        leaves, tree = tree_flatten(args)
        # the batch size, and one example's abstract leaves
        sizes = set()
        example = []
        dims: list[int | None] = []
        for i, (x, d) in enumerate(zip(leaves, axes)):
            if d is None:
                # a device value stands for its shape and dtype (no host copy just to trace)
                example.append(_Abstract(*abstract_value(x)) if device_leaf(x) is not None else x)
                dims.append(None)
                continue
            shape, dtype = _shape_dtype(x)
            if not -len(shape) <= d < len(shape):
                raise ValueError(f"vmap was requested to map its argument along axis {d}, which implies that its "
                                 f"rank should be at least {max(d + 1, -d)}, but is only {len(shape)} (its shape "
                                 f"is {shape}); leaf {i} of the arguments")
            d %= len(shape)
            sizes.add(shape[d])
            dims.append(d)
            example.append(_Abstract(shape[:d] + shape[d + 1:], dtype))
        if axis_size is not None:
            sizes.add(axis_size)
        if not sizes:
            raise ValueError("vmap must have at least one non-None value in in_axes (or an axis_size)")
        if len(sizes) > 1:
            raise ValueError(f"vmap got inconsistent sizes for the mapped axis: {sorted(sizes)}")
        size = sizes.pop()
        trees: dict[str, Any] = {}

        def flat(*a: Any) -> list[Any]:
            out_leaves, trees["out"] = tree_flatten(fun(*a))
            return out_leaves

        jitted = Jitted(flat)
        ex_args = tree_unflatten(tree, example)
        key, abstract, weak = jitted._signature(ex_args, {}, abstract=True)
        in_tracing = current_trace() is not None
        # device values stay where they live: the batched function runs there (see `ModuleRunner`)
        run_leaves = [x if isinstance(x, Tracer) or device_leaf(x) is not None else as_array(x, "argument")[0]
                      for x in leaves]
        full_key = (key, tuple(dims), size, repr(out_axes))
        batched = None if in_tracing else cache.get(full_key)
        if batched is None:
            lowered = jitted._lower(key, ex_args, {}, abstract, weak)
            out_tree = trees["out"]
            placeholder = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
            out_dims = _broadcast_prefix(out_axes, placeholder, "out_axes")
            # closed-over tracers of enclosing traces are extra trailing inputs, unbatched
            captures = lowered.captures
            module = transform_module(lowered.module,
                                      lambda m: vmap_module(m, [*dims, *[None] * len(captures)], size, out_dims))
            pass_manager().run(module)
            module.verify()
            batched = _Batched(module, out_tree)
            batched.captures = captures
            if not in_tracing:
                cache[full_key] = batched
        return batched.run([*run_leaves, *batched.captures])

    return wrapped


__all__ = ["vmap"]
