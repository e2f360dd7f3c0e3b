"""`loom.jit`: trace a Python function on abstract arrays into a `builtin.module` with
`func.func @main`, run the default pipeline, compile it with the compiled executor, and cache the
executable per pytree structure, shapes, dtypes (and weak types) and static argument values.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

import loom.ir as lir
from loom.backend.compiled import Executable
from loom.frontend.pytree import PyTreeDef, keystr, tree_flatten, tree_flatten_with_path, tree_unflatten
from loom.frontend.tracing import TraceContext, Tracer, current_trace, ir_element_type, tensor_type
from loom.ir.core import Operation

DEFAULT_PIPELINE = "builtin.module(func.func(canonicalize,cse))"


def _pass_manager() -> Any:
    import loom.transforms  # noqa: F401 - registers the passes
    from loom.rewrite import PassManager
    return PassManager.parse(DEFAULT_PIPELINE)


def _as_array(x: Any, name: str, abstract: bool = False) -> tuple[np.ndarray, bool]:
    """A leaf as (numpy array, weak): Python ints and floats are weakly typed int32 / float32. With
    `abstract`, anything with `.shape` and `.dtype` (a `jax.ShapeDtypeStruct`) stands for an array."""
    if isinstance(x, bool):
        return np.asarray(x, dtype=np.bool_), False
    if isinstance(x, int):
        return np.asarray(x, dtype=np.int32), True
    if isinstance(x, float):
        return np.asarray(x, dtype=np.float32), True
    if isinstance(x, (np.ndarray, np.generic)):
        arr = np.asarray(x)
        try:
            ir_element_type(arr.dtype)
        except TypeError:
            raise TypeError(f"argument {name} has dtype {arr.dtype}, which loom does not support") from None
        return arr, False
    if abstract and hasattr(x, "shape") and hasattr(x, "dtype"):
        return _as_array(np.broadcast_to(np.zeros((), dtype=np.dtype(x.dtype)), tuple(x.shape)), name)
    raise TypeError(f"argument {name} of type {type(x).__name__} is not a valid loom array type (an array or a "
                    "Python scalar); pass it as a static argument (static_argnums / static_argnames) if it is "
                    "not data")


class Lowered:
    """A traced and optimized function: `module` (the IR), `as_text()` and `compile()`."""

    def __init__(self, module: Operation, out_tree: PyTreeDef, jitted: Jitted, key: Hashable) -> None:
        self.module = module
        self.out_tree = out_tree
        self._jitted = jitted
        self._key = key

    def as_text(self, generic: bool = False, debuginfo: bool = False) -> str:
        """The module as MLIR text (custom forms unless `generic`, locations with `debuginfo`)."""
        return lir.print(self.module, generic=generic, debuginfo=debuginfo)

    def compile(self) -> Compiled:
        """The compiled executable (cached with the jitted function)."""
        compiled = self._jitted._cache.get(self._key)
        if compiled is None:
            compiled = self._jitted._cache[self._key] = Compiled(Executable(self.module, "main"), self)
        return compiled


class Compiled:
    """A compiled function for one input signature: call it with arrays of that signature."""

    def __init__(self, executable: Executable, lowered: Lowered) -> None:
        self.executable = executable
        self.lowered = lowered
        self.out_tree = lowered.out_tree
        self._n_out = lowered.out_tree.num_leaves

    def run(self, leaves: Sequence[np.ndarray]) -> Any:
        out = self.executable(*leaves)
        if self._n_out == 1:
            out = (out,)
        return tree_unflatten(self.out_tree, [np.asarray(o) for o in out])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key, leaves, _ = self.lowered._jitted._signature(args, kwargs)
        if key != self.lowered._key:
            raise TypeError("the arguments do not match the signature this function was compiled for")
        return self.run(leaves)


class Jitted:
    """A function compiled on first call per input signature (see `jit`)."""

    def __init__(self, fun: Callable[..., Any], static_argnums: int | Sequence[int] = (),
                 static_argnames: str | Sequence[str] = ()) -> None:
        self.fun = fun
        functools.update_wrapper(self, fun)
        try:
            self._params = list(inspect.signature(fun).parameters)
        except (TypeError, ValueError):
            self._params = []
        nums = {static_argnums} if isinstance(static_argnums, int) else set(static_argnums)
        names = {static_argnames} if isinstance(static_argnames, str) else set(static_argnames)
        for n in list(nums):
            if n < len(self._params):
                names.add(self._params[n])
        for name in list(names):
            if name in self._params:
                nums.add(self._params.index(name))
        self.static_argnums = frozenset(nums)
        self.static_argnames = frozenset(names)
        self._cache: dict[Hashable, Compiled] = {}

    def _name(self, i: int) -> str:
        return self._params[i] if i < len(self._params) else f"args[{i}]"

    def _signature(self, args: tuple, kwargs: dict, abstract: bool = False
                   ) -> tuple[Hashable, list[np.ndarray], list[bool]]:
        """(cache key, dynamic leaves as arrays, their weak flags)."""
        static = []
        leaves: list[np.ndarray] = []
        weak: list[bool] = []
        avals = []
        dyn_args, dyn_kwargs = [], {}
        for i, a in enumerate(args):
            if i in self.static_argnums:
                static.append((i, a))
            else:
                dyn_args.append(a)
        for k in sorted(kwargs):
            if k in self.static_argnames:
                static.append((k, kwargs[k]))
            else:
                dyn_kwargs[k] = kwargs[k]
        named = [(self._name(i), a) for i, a in enumerate(args) if i not in self.static_argnums]
        named += list(dyn_kwargs.items())
        for name, a in named:
            pairs, _ = tree_flatten_with_path(a)
            for path, leaf in pairs:
                arr, w = _as_array(leaf, name + keystr(path), abstract)
                leaves.append(arr)
                weak.append(w)
                avals.append((arr.shape, arr.dtype.str, w))
        _, treedef = tree_flatten((dyn_args, dyn_kwargs))
        try:
            key = (treedef, tuple(avals), tuple(static))
            hash(key)
        except TypeError:
            raise TypeError("static arguments must be hashable") from None
        return key, leaves, weak

    def _rebuild(self, args: tuple, kwargs: dict, tracers: list[Tracer]) -> tuple[list, dict]:
        dyn_args = [a for i, a in enumerate(args) if i not in self.static_argnums]
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        _, treedef = tree_flatten((dyn_args, dyn_kwargs))
        new_args, new_kwargs = tree_unflatten(treedef, tracers)
        it = iter(new_args)
        full_args = [a if i in self.static_argnums else next(it) for i, a in enumerate(args)]
        full_kwargs = {k: (v if k in self.static_argnames else new_kwargs[k]) for k, v in kwargs.items()}
        return full_args, full_kwargs

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        """Trace and optimize for these arguments (arrays or anything with .shape and .dtype)."""
        key, leaves, weak = self._signature(args, kwargs, abstract=True)
        return self._lower(key, args, kwargs, leaves, weak)

    def _lower(self, key: Hashable, args: tuple, kwargs: dict, leaves: list[np.ndarray],
               weak: list[bool]) -> Lowered:
        from loom.numpy import _lift
        trace = TraceContext([tensor_type(a.shape, a.dtype) for a in leaves])
        with trace:
            tracers = trace.arguments(weak)
            full_args, full_kwargs = self._rebuild(args, kwargs, tracers)
            out = self.fun(*full_args, **full_kwargs)
            out_leaves, out_tree = tree_flatten(out)
            outs = []
            for path_leaf in out_leaves:
                if isinstance(path_leaf, Tracer) and path_leaf.trace is not trace:
                    raise TypeError("a traced value escaped from another trace")
                outs.append(_lift(trace, path_leaf))
            trace.finish(outs)
        module = trace.module
        _pass_manager().run(module)
        module.verify()
        return Lowered(module, out_tree, self, key)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if current_trace() is not None:
            return self.fun(*args, **kwargs)  # nested jit: inline into the enclosing trace
        key, leaves, weak = self._signature(args, kwargs)
        compiled = self._cache.get(key)
        if compiled is None:
            compiled = self._lower(key, args, kwargs, leaves, weak).compile()
        return compiled.run(leaves)


def jit(fun: Callable[..., Any] | None = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = ()) -> Any:
    """Compile `fun` with loom: usable as `jit(f, ...)` or as a decorator `@jit` / `@jit(...)`."""
    if fun is None:
        return lambda f: Jitted(f, static_argnums, static_argnames)
    return Jitted(fun, static_argnums, static_argnames)


__all__ = ["DEFAULT_PIPELINE", "Compiled", "Jitted", "Lowered", "jit"]
