"""`loom.grad`, `loom.value_and_grad` and `loom.vjp`: reverse-mode differentiation of Python
functions written with `loom.numpy`.

The function is traced into a `func.func` (as `loom.jit` does), transformed by
`loom.transforms.autodiff.vjp_module` into a function computing outputs and cotangents, and
compiled with the compiled executor; the compiled function is cached per input signature. It runs
where its arguments live, as `loom.jit` places work (`ModuleRunner`, shared with jvp, vmap and
linearize): loom.Arrays on a torch device give loom.Arrays there, numpy arrays numpy arrays. Called
while another function is being traced (inside `loom.jit`, or inside another `grad`), the
transformed function's ops are inlined into the enclosing trace instead, so `jit(grad(f))` and
`grad(grad(f))` work. Arguments and results are pytrees. The function may close over traced
values of the enclosing trace (see `TraceContext.capture`): they are passed as extra inputs and
are constants for this gradient, as in JAX; an enclosing grad still differentiates through them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from loom.backend.compiled import Executable
from loom.dialects import stablehlo
from loom.frontend.jit import (
    Jitted,
    abstract_value,
    as_array,
    device_leaf,
    host_value,
    main_function,
    pass_manager,
    placement,
    transform_module,
)
from loom.frontend.pytree import PyTreeDef, tree_flatten, tree_unflatten
from loom.frontend.shard_map import count_invariants_once, current_mesh
from loom.frontend.tracing import Tracer, current_trace, is_floating, lift, np_dtype
from loom.ir.core import Operation
from loom.runtime.devices import Array
from loom.transforms.autodiff import vjp_module


class ModuleRunner:
    """Runs a transformed module's `@main` (a VJP, JVP, batched or linearized function). While
    tracing, its ops are inlined into the enclosing trace (results are tracers). Otherwise it runs
    where its arguments live, as `jit` places work (`jit._placement`): on the device of the
    committed arguments (loom.Arrays, torch tensors) with the torch backend, results staying
    there, else on the host with the numpy backend, results as numpy arrays. One executable per
    device, compiled on first use."""

    def __init__(self, module: Operation) -> None:
        self.module = module
        self.n_results = len(module.regions[0].entry.first_op.properties["function_type"].value.results)
        self._executables: dict[Any, Executable] = {}

    def __call__(self, args: Sequence[Any]) -> list[Any]:
        if current_trace() is not None:
            return inline_module(self.module, args)
        device, leaves, wrap = placement(args)
        exe = self._executables.get(device)
        if exe is None:
            if device.backend == "numpy":
                exe = Executable(self.module, "main")
            else:
                exe = Executable(self.module, "main", backend="torch", device=device.torch_device)
            self._executables[device] = exe
        out = exe(*leaves)
        if self.n_results == 1:
            out = (out,)
        if device.backend == "numpy":
            return [np.asarray(o) for o in out]
        if wrap:
            return [Array(o) for o in out]
        return list(out)


class _Traced:
    """One traced and transformed function for one input signature: the VJP module, its runner,
    and the output structure."""

    def __init__(self, module: Operation, n_args: int, out_tree: PyTreeDef, aux_tree: PyTreeDef | None,
                 n_out: int, out_avals: list[tuple[tuple[int, ...], np.dtype]]) -> None:
        self.module = module
        self.n_args = n_args
        self.out_tree = out_tree
        self.aux_tree = aux_tree
        self.n_out = n_out
        self.out_avals = out_avals
        self.captures: list[Any] = []
        self._runner = ModuleRunner(module)

    def run(self, leaves: Sequence[Any], cotangents: Sequence[Any]) -> list[Any]:
        """Outputs (and aux outputs) followed by the argument cotangents: tracers of the enclosing
        trace while tracing, else arrays where the arguments live (see `ModuleRunner`)."""
        return self._runner([*leaves, *cotangents])


def inline_module(module: Operation, args: Sequence[Any]) -> list[Tracer]:
    """Copy the module's `@main` into the current trace, applied to `args`."""
    trace = current_trace()
    fn = module.regions[0].entry.first_op
    block = fn.regions[0].entry
    builder = trace.emit()
    mapping: dict = {}
    for a, v in zip(block.args, args):
        t = lift(trace, v)
        if t.value.type != a.type:
            t = Tracer(stablehlo.convert(builder, t.value, a.type.element_type), trace)
        mapping[a] = t.value
    results = []
    for op in block.ops:
        if op.name == "func.return":
            results = [mapping.get(v, v) for v in op.operands]
            break
        builder.insert(op.clone(mapping))
    return [Tracer(v, trace) for v in results]


def _argnums(argnums: int | Sequence[int]) -> tuple[int, ...]:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


class _Differentiable:
    """Traces `fun` per input signature and keeps the transformed functions."""

    def __init__(self, fun: Callable[..., Any], has_aux: bool) -> None:
        self.fun = fun
        self.has_aux = has_aux
        self._cache: dict[Hashable, _Traced] = {}

    def prepare(self, args: tuple, kwargs: dict, wrt_argnums: tuple[int, ...]
                ) -> tuple[_Traced, list[Any], list[list[int]]]:
        """(the transformed function, the argument leaves, the leaf indices of each wrt argument)."""
        for i in wrt_argnums:
            if not -len(args) <= i < len(args):
                raise ValueError(f"argnums {i} is out of range for a function called with {len(args)} "
                                 "positional arguments")
        wrt_argnums = tuple(i % len(args) for i in wrt_argnums)
        starts, n = [], 0
        for a in args:
            starts.append(n)
            n += len(tree_flatten(a)[0])
        groups = [list(range(starts[i], starts[i] + len(tree_flatten(args[i])[0]))) for i in wrt_argnums]
        trees: dict[str, Any] = {}

        def flat(*a: Any, **k: Any) -> list[Any]:
            res = self.fun(*a, **k)
            if self.has_aux:
                if not (isinstance(res, (tuple, list)) and len(res) == 2):
                    raise TypeError("a function differentiated with has_aux=True must return a pair (output, aux)")
                out, aux = res
            else:
                out, aux = res, None
            out_leaves, trees["out"] = tree_flatten(out)
            aux_leaves, trees["aux"] = tree_flatten(aux)
            trees["n_out"] = len(out_leaves)
            return [*out_leaves, *aux_leaves]

        jitted = Jitted(flat)
        in_tracing = current_trace() is not None
        if in_tracing:  # tracers of the enclosing trace stand for arrays of their shape and dtype
            key, _, weak = jitted._signature(args, kwargs, abstract=True)
            leaves = [x if isinstance(x, Tracer) else as_array(x, "argument")[0]
                      for x in tree_flatten((list(args), kwargs))[0]]
        else:
            key, leaves, weak = jitted._signature(args, kwargs, keep_device=True)
        key = (key, wrt_argnums)
        traced = self._cache.get(key)
        if traced is None:
            abstract = [np.broadcast_to(np.zeros((), dtype), shape) for shape, dtype in map(abstract_value, leaves)]
            lowered = jitted._lower(key, args, kwargs, abstract, weak)
            fn = main_function(lowered.module)
            ftype = fn.properties["function_type"].value
            n_out = trees["n_out"]
            wrt = [i for g in groups for i in g]
            module = transform_module(lowered.module, lambda m: vjp_module(m, wrt, list(range(n_out))))
            if in_tracing and current_mesh() is not None:  # in a shard_map body: invariant values count once
                count_invariants_once(module, lowered.module, current_trace(), [*leaves, *lowered.captures], n_out,
                                      wrt)
            pass_manager().run(module)
            module.verify()
            out_avals = [(tuple(t.shape), np_dtype(t.element_type)) for t in ftype.results[:n_out]]
            traced = _Traced(module, len(leaves), trees["out"], trees["aux"] if self.has_aux else None,
                             n_out, out_avals)
            # closed-over tracers of enclosing traces: extra trailing inputs, not differentiated
            traced.captures = lowered.captures
            if not in_tracing:
                self._cache[key] = traced
        return traced, [*leaves, *traced.captures], groups


def _check_float_inputs(leaves: Sequence[Any], groups: list[list[int]], name: str) -> None:
    for g in groups:
        for i in g:
            d = abstract_value(leaves[i])[1] if hasattr(leaves[i], "dtype") else np.asarray(leaves[i]).dtype
            if not is_floating(d):
                raise TypeError(f"{name} requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
                                f"np.inexact), but got {d.name}. If you want to use Boolean- or integer-valued "
                                "inputs, use vjp.")


def _split_grads(traced: _Traced, results: list[Any], groups: list[list[int]], args: tuple,
                 argnums: tuple[int, ...]) -> list[Any]:
    grads = results[len(results) - sum(len(g) for g in groups):]
    out, k = [], 0
    for i, g in zip(argnums, groups):
        _, tree = tree_flatten(args[i])
        out.append(tree_unflatten(tree, grads[k:k + len(g)]))
        k += len(g)
    return out


def value_and_grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable:
    """A function returning `(fun(*args), gradient)` (`((value, aux), gradient)` with `has_aux`):
    the gradient of the scalar output w.r.t. argument `argnums` (a tuple of gradients when
    `argnums` is a sequence), each with the pytree structure of its argument."""
    nums = _argnums(argnums)
    diff = _Differentiable(fun, has_aux)

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        traced, leaves, groups = diff.prepare(args, kwargs, nums)
        _check_float_inputs(leaves, groups, "grad")
        if traced.n_out != 1 or traced.out_avals[0][0] != ():
            shapes = [s for s, _ in traced.out_avals]
            shape = shapes[0] if len(shapes) == 1 else shapes
            raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: {shape}.")
        dtype = traced.out_avals[0][1]
        if not is_floating(dtype):
            raise TypeError(f"grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
                            f"but got {dtype.name}")
        results = traced.run(leaves, [np.ones((), dtype)])
        value = results[0]
        n_aux = len(results) - traced.n_out - sum(len(g) for g in groups)
        grads = _split_grads(traced, results, groups, args, tuple(i % len(args) for i in nums))
        grad_out = grads[0] if isinstance(argnums, int) else tuple(grads)
        if has_aux:
            aux = tree_unflatten(traced.aux_tree, results[1:1 + n_aux])
            return (value, aux), grad_out
        return value, grad_out

    return wrapped


def grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable:
    """A function returning the gradient of `fun`'s scalar output w.r.t. argument `argnums` (a
    tuple of gradients when `argnums` is a sequence); `(gradient, aux)` with `has_aux`."""
    vg = value_and_grad(fun, argnums, has_aux)

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        (value, g) = vg(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    return wrapped


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple:
    """`(fun(*primals), vjp_fn)` (and `aux` with `has_aux`): `vjp_fn(cotangent)` takes a
    cotangent with the structure of the output and returns a tuple of cotangents, one per primal.
    Integer and boolean primals get zero cotangents."""
    diff = _Differentiable(fun, has_aux)
    nums = tuple(range(len(primals)))
    traced, leaves, groups = diff.prepare(primals, {}, nums)
    zeros = [np.zeros(s, d) for s, d in traced.out_avals]
    results = traced.run(leaves, zeros)
    n_grads = sum(len(g) for g in groups)
    n_aux = len(results) - traced.n_out - n_grads
    out = tree_unflatten(traced.out_tree, results[:traced.n_out])

    def vjp_fn(cotangent: Any) -> tuple:
        ct_leaves, ct_tree = tree_flatten(cotangent)
        if ct_tree != traced.out_tree:
            raise TypeError(f"the cotangent has structure {ct_tree}, but the output has structure {traced.out_tree}")
        cts = []
        for c, (shape, dtype) in zip(ct_leaves, traced.out_avals):
            if isinstance(c, Tracer):
                cts.append(c)
                continue
            if device_leaf(c) is not None and abstract_value(c) == (shape, dtype):
                cts.append(c)  # stays on its device
                continue
            c = np.asarray(host_value(c), dtype=dtype)
            if c.shape != shape:
                raise ValueError(f"a cotangent of shape {c.shape} was given for an output of shape {shape}")
            cts.append(c)
        res = traced.run(leaves, cts)
        return tuple(_split_grads(traced, res, groups, primals, nums))

    if has_aux:
        aux = tree_unflatten(traced.aux_tree, results[traced.n_out:traced.n_out + n_aux])
        return out, vjp_fn, aux
    return out, vjp_fn


__all__ = ["grad", "value_and_grad", "vjp"]
