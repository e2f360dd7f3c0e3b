"""`loom.jit`: trace a Python function on abstract arrays into a `builtin.module` with
`func.func @main`, run the default pipeline, compile it with the compiled executor, and cache the
executable per pytree structure, shapes, dtypes (and weak types), static argument values and
device.

Placement follows the arguments as in JAX: the function runs on the device its `loom.Array` (or
torch tensor) arguments live on, with the torch backend, and its results stay there; with only
numpy arrays and Python scalars it runs on the host with the numpy backend and returns numpy
arrays. `jit(f, device=...)` pins it to a device ("cpu", "torch:cpu", "cuda", "cuda:1", a
loom.Device or a torch.device).

`donate_argnums` lets the compiled program write results into the donated arguments' buffers
(an elementwise op producing a result of the argument's shape and dtype, once nothing else can
read the argument). Donated `loom.Array`s are deleted by the call (using one afterwards raises);
the contents of a donated numpy array or torch tensor are unspecified after the call.

Calls with positional arrays only (numpy arrays, torch tensors or loom.Arrays of one kind) take a
fast path: the cache is looked up on a tuple of (shape, dtype) pairs, with no pytree work and no
argument conversion.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

import loom.ir as lir
import loom.transforms  # noqa: F401 - registers the passes
from loom.backend.common import ArgumentError
from loom.backend.compiled import CudaGraphExecutable, Executable, InductorExecutable
from loom.frontend.config import config
from loom.frontend.pytree import PyTreeDef, keystr, tree_flatten, tree_flatten_with_path, tree_unflatten
from loom.frontend.tracing import (
    TraceContext,
    Tracer,
    canonical_dtype,
    current_trace,
    ir_element_type,
    lift,
    scalar_dtype,
    tensor_type,
)
from loom.ir.core import Operation
from loom.rewrite import PassManager
from loom.runtime.devices import HOST, Array, ShardedArray, committed_device, get_device
from loom.runtime.devices import devices as devices_list

# The pass pipeline run on every traced function before it is compiled (a module-level constant
# so that other passes, e.g. knn-fusion, can be added to it).
DEFAULT_PIPELINE = "builtin.module(inline,func.func(canonicalize,cse),dce)"


# Passes that only change how a program runs, applied to a copy of the module when it is compiled,
# so `lower().as_text()` and the transformations (grad of a jitted function) see the program as
# traced and optimized, and `compile().as_text()` shows what runs. The differentiation markers
# (ad.stop_gradient, ad.custom_vjp, ad.custom_jvp) become their primal values there: their rules
# served when the program was differentiated, and the executor need not carry their regions.
EXECUTION_PIPELINE = "builtin.module(lower-stop-gradient,func.func(knn-fusion))"


def pass_manager(pipeline: str | None = None) -> Any:
    return PassManager.parse(DEFAULT_PIPELINE if pipeline is None else pipeline)


def host_value(x: Any) -> Any:
    """A device value (loom.Array, torch tensor) as a numpy array; anything else unchanged."""
    if isinstance(x, Array):
        return np.asarray(x)
    if type(x).__name__ == "Tensor" and type(x).__module__.startswith("torch"):
        from loom.backend.torch_kernels import to_numpy  # torch is optional: only for a torch value
        return np.array(to_numpy(x))
    return x


def as_array(x: Any, name: str, abstract: bool = False) -> tuple[np.ndarray, bool]:
    """A leaf as (numpy array, weak): Python scalars take their dtype and weak type from
    `scalar_dtype` (the one place the weak-type rules live). With `abstract`, anything with
    `.shape` and `.dtype` (a `jax.ShapeDtypeStruct`) stands for an array. Device values
    (loom.Arrays, torch tensors) give their host values."""
    # numpy values first: np.float64 is a subclass of float, but numpy scalars are strongly typed.
    if isinstance(x, (np.ndarray, np.generic)):
        arr = np.asarray(x)
        if not arr.dtype.isnative:  # the same values in the machine's byte order
            arr = arr.astype(arr.dtype.newbyteorder("="))
        try:
            ir_element_type(arr.dtype)
        except TypeError:
            raise TypeError(f"argument {name} has dtype {arr.dtype}, which loom does not support") from None
        dtype = canonical_dtype(arr.dtype)  # 64-bit inputs are 32-bit unless enable_x64
        return (arr if dtype == arr.dtype else arr.astype(dtype)), False
    if isinstance(x, (bool, int, float)):
        try:
            dtype, weak = scalar_dtype(x)
            return np.asarray(x, dtype=dtype), weak
        except OverflowError:
            raise OverflowError(f"argument {name}: Python int {x} does not fit the default integer type "
                                "(int32; int64 with x64)") from None
    host = host_value(x)
    if host is not x:
        return as_array(host, name, abstract)
    if abstract and hasattr(x, "shape") and hasattr(x, "dtype"):
        return as_array(np.broadcast_to(np.zeros((), dtype=np.dtype(x.dtype)), tuple(x.shape)), name)
    raise TypeError(f"argument {name} of type {type(x).__name__} is not a valid loom array type (an array or a "
                    "Python scalar); pass it as a static argument (static_argnums / static_argnames) if it is "
                    "not data")


class _Aval:
    """The abstract value of a device leaf: shape and numpy dtype."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype) -> None:
        self.shape = shape
        self.dtype = dtype


def device_leaf(x: Any) -> tuple[Any, Any] | None:
    """(runtime tensor, abstract value) for a loom.Array or torch tensor; None otherwise (a
    sharded array holds numpy shards: it is a host value)."""
    if isinstance(x, ShardedArray):
        return None
    if isinstance(x, Array):
        x = x.torch()
    elif not (type(x).__name__ == "Tensor" and type(x).__module__.startswith("torch")):
        return None
    from loom.backend.torch_kernels import NUMPY_DTYPES  # torch is optional: only for a torch value
    try:
        dtype = NUMPY_DTYPES[x.dtype]
    except KeyError:
        raise TypeError(f"torch dtype {x.dtype} is not supported by loom") from None
    return x, _Aval(tuple(x.shape), dtype)


def abstract_value(x: Any) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, numpy dtype) of an array leaf: a numpy array, a tracer, a loom.Array or a torch
    tensor (whose torch dtype numpy cannot read)."""
    placed = device_leaf(x)
    if placed is not None:
        return placed[1].shape, placed[1].dtype
    return tuple(x.shape), np.dtype(x.dtype)


def placement(leaves: Sequence[Any]) -> tuple[Any, list[Any], bool]:
    """Where a computation on `leaves` runs when it is not jitted (grad, vjp, jvp, vmap and
    linearize called directly), by jit's rule: (the device the committed leaves live on, else
    the host; the leaves as that device's executable takes them, loom.Arrays as their tensors;
    whether results become loom.Arrays: on a torch device unless the committed leaves are all
    raw torch tensors, which get raw tensors back, as `jit` does)."""
    device = committed_device(leaves) or HOST
    if device.backend != "torch":
        return device, list(leaves), False
    wrap = any(isinstance(x, Array) for x in leaves)
    return device, [x.torch() if isinstance(x, Array) else x for x in leaves], wrap


class Lowered:
    """A traced and optimized function: `module` (the IR), `as_text()` and `compile()`."""

    def __init__(self, module: Operation, out_tree: PyTreeDef, jitted: Jitted, key: Hashable,
                 device: Any = None, donate: tuple[int, ...] = ()) -> None:
        self.module = module
        self.donate = donate
        self.out_tree = out_tree
        self._jitted = jitted
        self._key = key
        self.device = device
        # tracers of enclosing traces the function closed over: its extra trailing inputs
        self.captures: list[Any] = []
        self.mesh: Any = None  # the mesh of a sharded program

    def as_text(self, generic: bool = False, debuginfo: bool = False) -> str:
        """The module as MLIR text (custom forms unless `generic`, locations with `debuginfo`)."""
        return lir.print(self.module, generic=generic, debuginfo=debuginfo)

    def compile(self) -> Compiled:
        """The compiled executable (cached with the jitted function)."""
        compiled = self._jitted._cache.get(self._key)
        if compiled is None:
            jitted = self._jitted
            device = self.device if self.device is not None else (jitted.device or HOST)
            donate = self.donate
            module = self.module.clone()
            pass_manager(EXECUTION_PIPELINE).run(module)
            if self.mesh is not None:  # a sharded program: partitioned, one partition per device of its mesh
                from loom.runtime.local import MeshExecutable
                from loom.sharding.partitioning import partition
                partitioned = partition(module)
                if jitted.overlap != "off":
                    from loom.transforms.collective_matmul import DecomposeCollectiveMatmulPass
                    overlap = PassManager()
                    overlap.add(DecomposeCollectiveMatmulPass(mode=jitted.overlap, machine=jitted.machine, fuse=True))
                    overlap.run(partitioned)
                compiled = self._jitted._cache[self._key] = Compiled(MeshExecutable(partitioned, self.mesh),
                                                                    self, device, module)
                return compiled
            if device.backend == "numpy":
                exe = Executable(module, "main", donate=donate)
            else:
                exe = Executable(module, "main", backend="torch", device=device.torch_device, donate=donate)
                if jitted.fuse:
                    exe = InductorExecutable(exe, cuda_graph=jitted.cuda_graph)
                elif jitted.cuda_graph:
                    exe = CudaGraphExecutable(exe)
            compiled = self._jitted._cache[self._key] = Compiled(exe, self, device, module)
        return compiled


class Compiled:
    """A compiled function for one input signature: call it with arrays of that signature."""

    def __init__(self, executable: Executable, lowered: Lowered, device: Any = None,
                 module: Operation | None = None) -> None:
        self.executable = executable
        self.lowered = lowered
        self.module = lowered.module if module is None else module
        self.out_tree = lowered.out_tree
        self.device = device
        self._n_out = lowered.out_tree.num_leaves
        n = self._n_out
        # How results become the output pytree: one leaf, a flat tuple, or a general tree.
        if n == 1 and tree_flatten(0)[1] == self.out_tree:
            self._shape = "leaf"
        elif tree_flatten(tuple(range(n)))[1] == self.out_tree and n > 1:
            self._shape = "tuple"
        else:
            self._shape = "tree"

    def as_text(self, generic: bool = False, debuginfo: bool = False) -> str:
        """The module that runs (after the execution passes, e.g. knn-fusion), as MLIR text."""
        return lir.print(self.module, generic=generic, debuginfo=debuginfo)

    def run(self, leaves: Sequence[Any], wrap: bool = False) -> Any:
        """Results as the output pytree; on a torch device, as loom.Arrays when `wrap`."""
        out = self.executable(*leaves)
        return self.finish(out, wrap)

    def finish(self, out: Any, wrap: bool) -> Any:
        if self._n_out == 1:
            out = (out,)
        if wrap:
            out = [Array(o) for o in out]
        if self._shape == "leaf":
            return out[0]
        if self._shape == "tuple":
            return tuple(out)
        return tree_unflatten(self.out_tree, list(out))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        jitted = self.lowered._jitted
        key, leaves, wrap = jitted._placed_signature(args, kwargs)
        if key[:3] != self.lowered._key[:3]:
            raise TypeError("the arguments do not match the signature this function was compiled for")
        return self.run(leaves, wrap)


class Jitted:
    """A function compiled on first call per input signature (see `jit`)."""

    def __init__(self, fun: Callable[..., Any], static_argnums: int | Sequence[int] = (),
                 static_argnames: str | Sequence[str] = (), donate_argnums: int | Sequence[int] = (),
                 device: Any = None, cuda_graph: bool = False, pipeline: str | None = None,
                 fuse: bool = False, in_shardings: Any = None, out_shardings: Any = None,
                 overlap: str = "off", machine: Any = "h200") -> None:
        if overlap not in ("auto", "on", "off"):
            raise ValueError(f"jit: overlap must be 'auto', 'on' or 'off', got {overlap!r}")
        from loom.sim.machine import Machine
        try:
            self.machine = Machine.named(machine)
        except (OSError, ValueError, TypeError) as err:
            raise ValueError(f"jit: machine={machine!r}: {err}") from None
        self.overlap = overlap
        functools.update_wrapper(self, fun)  # first: it copies fun's __dict__, which may hold a `fun` too
        self.fun = fun
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
        donate = {donate_argnums} if isinstance(donate_argnums, int) else set(donate_argnums)
        if donate & self.static_argnums:
            raise ValueError(f"static arguments cannot be donated: {sorted(donate & self.static_argnums)}")
        self.donate_argnums = frozenset(donate)
        self.device = get_device(device) if device is not None else None
        if self.device is not None and self.device.platform == "cuda":
            import torch  # optional: only for a CUDA device
            if not torch.cuda.is_available() or self.device.id >= torch.cuda.device_count():
                raise ValueError(f"device {self.device} is not available; loom.devices() lists "
                                 f"{', '.join(map(str, devices_list()))}")
        self.cuda_graph = cuda_graph
        if cuda_graph and (self.device is None or self.device.platform != "cuda"):
            raise ValueError("cuda_graph=True needs device='cuda' (or 'cuda:N')")
        self.fuse = fuse
        if fuse and (self.device is None or self.device.backend != "torch"):
            raise ValueError("fuse=True compiles the program with torch.compile: it needs a torch device "
                             "(device='cuda', 'cuda:N' or 'torch:cpu')")
        self.pipeline = pipeline or DEFAULT_PIPELINE
        # NamedShardings (or pytree prefixes of the positional arguments / the output of them;
        # None: unconstrained), as jax.jit's
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        if in_shardings is not None or out_shardings is not None:
            self._flat_ok = False  # sharded calls take the general path (the mesh runtime)
        self._cache: dict[Hashable, Compiled] = {}
        # Fast paths: flat positional arrays of one kind -> a runner, keyed by (shape, dtype) pairs.
        self._fast_numpy: dict[Hashable, Callable[[tuple], Any]] = {}
        self._generation = config.generation
        self._fast_device: dict[Hashable, Callable[[tuple], Any]] = {}
        # ... and trees of numpy arrays (a dict of parameters, a batch) run on the host, keyed by
        # their structure, shapes and dtypes (see `_flatten_arrays`)
        self._fast_tree: dict[Hashable, Callable[[tuple, list], Any]] = {}
        self._flat_ok = not self.static_argnums

    def _name(self, i: int) -> str:
        return self._params[i] if i < len(self._params) else f"args[{i}]"

    def _split(self, args: tuple, kwargs: dict) -> tuple[list, dict, list, list[tuple[str, Any]]]:
        static = []
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
        return dyn_args, dyn_kwargs, static, named

    def _signature(self, args: tuple, kwargs: dict, abstract: bool = False, keep_device: bool = False
                   ) -> tuple[Hashable, list[Any], list[bool]]:
        """(cache key, dynamic leaves as numpy arrays, their weak flags): the host view of the
        arguments, used by the transformations (grad, vmap, jvp). With `keep_device`, device
        leaves (loom.Arrays, torch tensors) stay as they are, not copied to the host, so the
        transformed function can run where they live; the key is the same either way."""
        leaves: list[Any] = []
        weak: list[bool] = []
        avals = []
        dyn_args, dyn_kwargs, static, named = self._split(args, kwargs)
        for name, a in named:
            pairs, _ = tree_flatten_with_path(a)
            for path, leaf in pairs:
                placed = device_leaf(leaf) if keep_device else None
                if placed is not None:
                    leaves.append(leaf)
                    weak.append(False)
                    avals.append((placed[1].shape, placed[1].dtype.str, False))
                    continue
                arr, w = as_array(leaf, name + keystr(path), abstract)
                leaves.append(arr)
                weak.append(w)
                avals.append((arr.shape, arr.dtype.str, w))
        _, treedef = tree_flatten((dyn_args, dyn_kwargs))
        try:
            key = (treedef, tuple(avals), tuple(static), config.enable_x64)
            hash(key)
        except TypeError:
            raise TypeError("static arguments must be hashable") from None
        return key, leaves, weak

    def _placed_signature(self, args: tuple, kwargs: dict) -> tuple[Hashable, list[Any], bool]:
        """(cache key with the device, runtime leaves, whether results become loom.Arrays).

        The arguments are flattened once; the leaves' names (`params['w0']`) are only built to
        word an error (building them on every call was a quarter of a small training step)."""
        dyn_args, dyn_kwargs, static, named = self._split(args, kwargs)
        flat, treedef = tree_flatten((dyn_args, dyn_kwargs))
        leaves: list[Any] = []
        avals = []
        any_array = False
        for i, leaf in enumerate(flat):
            if isinstance(leaf, ShardedArray):  # run on its mesh: its sharding is part of the signature
                leaves.append(leaf)
                avals.append((leaf.shape, leaf.dtype.str, False, leaf.sharding))
                continue
            placed = device_leaf(leaf)
            if placed is not None:
                any_array |= isinstance(leaf, Array)
                leaves.append(leaf)
                avals.append((placed[1].shape, placed[1].dtype.str, False))
                continue
            try:
                arr, w = as_array(leaf, "")
            except (TypeError, OverflowError):
                as_array(leaf, _leaf_names(named)[i])  # raises, naming the argument
                raise
            leaves.append(arr)
            avals.append((arr.shape, arr.dtype.str, w))
        try:
            committed = committed_device(leaves)
        except ValueError:
            committed_device(leaves, _leaf_names(named))  # raises, naming the arguments
            raise
        device = self.device
        if device is None:
            device = committed or HOST
        elif committed is not None and committed != device:
            where = next(n for leaf, n in zip(leaves, _leaf_names(named)) if device_leaf(leaf) is not None)
            raise ArgumentError(f"{self.__name__}: argument {where} is on device {committed}, but the function is "
                                f"jitted for device {device}; move it with loom.device_put(x, {str(device)!r})")
        if device.backend == "torch":
            leaves = [leaf.torch() if isinstance(leaf, Array) else leaf for leaf in leaves]
        wrap = device.backend == "torch" and (any_array or committed is None)
        try:
            key = (treedef, tuple(avals), tuple(static), device, config.enable_x64)
            hash(key)
        except TypeError:
            raise TypeError("static arguments must be hashable") from None
        return key, leaves, wrap

    def _rebuild(self, args: tuple, kwargs: dict, tracers: list[Tracer]) -> tuple[list, dict]:
        dyn_args = [a for i, a in enumerate(args) if i not in self.static_argnums]
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        _, treedef = tree_flatten((dyn_args, dyn_kwargs))
        new_args, new_kwargs = tree_unflatten(treedef, tracers)
        it = iter(new_args)
        full_args = [a if i in self.static_argnums else next(it) for i, a in enumerate(args)]
        full_kwargs = {k: (v if k in self.static_argnames else new_kwargs[k]) for k, v in kwargs.items()}
        return full_args, full_kwargs

    def _donated_leaves(self, args: tuple) -> tuple[int, ...]:
        """Leaf indices (among the dynamic leaves) of the donated positional arguments."""
        if not self.donate_argnums:
            return ()
        out, start = [], 0
        for i, a in enumerate(args):
            if i in self.static_argnums:
                continue
            count = len(tree_flatten(a)[0])
            if i in self.donate_argnums:
                out.extend(range(start, start + count))
            start += count
        return tuple(out)

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        """Trace and optimize for these arguments (arrays or anything with .shape and .dtype)."""
        key, leaves, weak = self._signature(args, kwargs, abstract=True)
        return self._lower(key, args, kwargs, leaves, weak, donate=self._donated_leaves(args))

    def _lower(self, key: Hashable, args: tuple, kwargs: dict, leaves: Sequence[Any],
               weak: list[bool], device: Any = None, donate: tuple[int, ...] = ()) -> Lowered:
        trace = TraceContext([tensor_type(a.shape, a.dtype) for a in leaves])
        with trace:
            tracers = trace.arguments(weak)
            in_shardings = self._flat_in_shardings(args, kwargs, tracers)
            full_args, full_kwargs = self._rebuild(args, kwargs, tracers)
            out = self.fun(*full_args, **full_kwargs)
            out_leaves, out_tree = tree_flatten(out)
            outs = []
            for path_leaf in out_leaves:
                if isinstance(path_leaf, Tracer) and path_leaf.trace is not trace:
                    raise TypeError("a traced value escaped from another trace")
                outs.append(lift(trace, path_leaf))
            out_shardings = self._flat_out_shardings(out, outs)
            trace.finish(outs)
        module = trace.module
        if trace.mesh is not None:  # before the passes: the sdy ops' verifiers look the mesh up
            annotate_sharded(module, trace.mesh, self.__name__, in_shardings, out_shardings,
                             ["result" + keystr(p) for p, _ in tree_flatten_with_path(out)[0]])
        pass_manager(self.pipeline).run(module)
        module.verify()
        lowered = Lowered(module, out_tree, self, key, device, donate)
        lowered.captures = list(trace.captures)
        lowered.mesh = trace.mesh
        return lowered

    def _inline_sharded(self, args: tuple, kwargs: dict) -> Any:
        """A sharded jit called while tracing: inlined, its arguments and results constrained to
        their shardings (`sdy.sharding_constraint`), so the enclosing program keeps them."""
        from loom.frontend.shard_map import with_sharding_constraint
        dyn = [i for i in range(len(args)) if i not in self.static_argnums]
        spec = self.in_shardings
        if spec is not None and not isinstance(spec, (tuple, list)):
            spec = (spec,) * len(dyn)
        args = list(args)
        for i, s in zip(dyn, spec or ()):
            if s is not None:
                args[i] = with_sharding_constraint(args[i], s)
        out = self.fun(*args, **kwargs)
        return out if self.out_shardings is None else with_sharding_constraint(out, self.out_shardings)

    def _flat_in_shardings(self, args: tuple, kwargs: dict, tracers: list[Tracer]) -> list[Any]:
        """One sharding (or None) per dynamic leaf, checked against its shape; the mesh recorded.
        An argument without one (in_shardings None) that is a sharded array takes its sharding."""
        from loom.frontend.shard_map import broadcast_prefix, is_spec_leaf, named_sharding, use_mesh
        dyn_args, dyn_kwargs, _, named = self._split(args, kwargs)
        committed = [x.sharding if isinstance(x, ShardedArray) else None
                     for x in tree_flatten((dyn_args, dyn_kwargs))[0]]
        if self.in_shardings is None and not any(committed):
            return [None] * len(tracers)
        spec = self.in_shardings
        if is_spec_leaf(spec):
            spec = (spec,) * len(dyn_args)
        elif isinstance(spec, list):
            spec = tuple(spec)
        if isinstance(spec, tuple) and len(spec) != len(dyn_args):
            raise ValueError(f"{self.__name__}: in_shardings has {len(spec)} entries, but the function is called "
                             f"with {len(dyn_args)} positional arguments")
        flat = broadcast_prefix(spec, tuple(dyn_args), "in_shardings")
        flat += [None] * (len(tracers) - len(flat))  # keyword arguments: unconstrained
        out = []
        for t, s, c, where in zip(tracers, flat, committed, _leaf_names(named)):
            what = "in_shardings for" if s is not None else "the sharded array passed as"
            s = s if s is not None else c
            if s is not None:
                s = named_sharding(s.mesh, s, t.shape, f"{self.__name__}: {what} argument {where}", divisible=True)
                use_mesh(s.mesh, f"{self.__name__}: {what} argument {where}")
            out.append(s)
        return out

    def _flat_out_shardings(self, out: Any, outs: list[Tracer]) -> list[Any]:
        if self.out_shardings is None:
            return [None] * len(outs)
        from loom.frontend.shard_map import broadcast_prefix, named_sharding, use_mesh
        spec = tuple(self.out_shardings) if isinstance(self.out_shardings, list) else self.out_shardings
        flat = broadcast_prefix(spec, out, "out_shardings")
        result = []
        for t, s, p in zip(outs, flat, tree_flatten_with_path(out)[0]):
            if s is not None:
                where = "result" + keystr(p[0])
                s = named_sharding(s.mesh, s, t.shape, f"{self.__name__}: out_shardings for {where}")
                use_mesh(s.mesh, f"{self.__name__}: out_shardings for {where}")
            result.append(s)
        return result

    def _compile_for(self, args: tuple, kwargs: dict) -> tuple[Compiled, list[Any], bool, Hashable]:
        key, leaves, wrap = self._placed_signature(args, kwargs)
        compiled = self._cache.get(key)
        if compiled is None:
            avals = [x if isinstance(x, ShardedArray) else device_leaf(x)[1] if device_leaf(x) is not None else x
                     for x in leaves]
            weak = [k[2] for k in key[1]]
            compiled = self._lower(key, args, kwargs, avals, weak, key[3], self._donated_leaves(args)).compile()
        return compiled, leaves, wrap, key

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if current_trace() is not None:  # nested jit: inline into the enclosing trace
            if self.in_shardings is None and self.out_shardings is None:
                return self.fun(*args, **kwargs)
            return self._inline_sharded(args, kwargs)
        if self._generation != config.generation:  # a flag changed: the fast paths' programs are stale
            self._fast_numpy.clear()
            self._fast_device.clear()
            self._fast_tree.clear()
            self._generation = config.generation
        if not kwargs and self._flat_ok and args:
            first = type(args[0])
            if first is np.ndarray:
                try:
                    run = self._fast_numpy[tuple([(a.shape, a.dtype) for a in args if type(a) is np.ndarray])]
                except (KeyError, TypeError):
                    pass
                else:
                    if len(args) == run.arity:
                        return run(args)
            elif first.__name__ in ("Tensor", "Array"):
                run = self._fast_device.get(_device_key(args))
                if run is not None:
                    return run(args)
            if self._fast_tree:
                leaves: list[Any] = []
                key: list[Any] = []
                try:
                    ok = _flatten_arrays(args, leaves, key)
                except TypeError:  # unorderable dict keys: the general path words the error
                    ok = False
                if ok:
                    run = self._fast_tree.get(tuple(key))
                    if run is not None:
                        return run(args, leaves)
        return self._call(args, kwargs)

    def _call(self, args: tuple, kwargs: dict) -> Any:
        compiled, leaves, wrap, key = self._compile_for(args, kwargs)
        self._check_donation(args, leaves)
        out = compiled.run(leaves, wrap)
        self._delete_donated(args)
        if not kwargs and self._flat_ok and args:
            self._register_fast(args, compiled, wrap)
        return out

    def _check_donation(self, args: tuple, leaves: list[Any]) -> None:
        for i in self.donate_argnums:
            if i < len(args) and any(args[i] is a for j, a in enumerate(args) if j != i):
                raise ValueError(f"{self.__name__}: argument {self._name(i)} is donated (donate_argnums) and also "
                                 "passed as another argument; pass a copy")

    def _delete_donated(self, args: tuple) -> None:
        if self.donate_argnums:
            for i in self.donate_argnums:
                if i < len(args) and isinstance(args[i], Array):
                    args[i].delete()

    def _register_fast(self, args: tuple, compiled: Compiled, wrap: bool) -> None:
        """Remember a runner for calls of this flat signature (positional arrays of one kind), or
        of this tree signature (tuples, lists and dicts of numpy arrays run on the host)."""
        first = type(args[0])
        if not config.enable_x64 and _has_64_bit(args):
            return  # the general path canonicalizes the arguments to 32 bits
        if compiled.device.backend == "numpy" and not all(type(a) is np.ndarray for a in args):
            leaves: list[Any] = []
            key: list[Any] = []
            try:
                ok = _flatten_arrays(args, leaves, key)
            except TypeError:
                ok = False
            if ok:
                self._fast_tree[tuple(key)] = _tree_runner(self, compiled)
                return
        if first is np.ndarray and all(type(a) is np.ndarray for a in args):
            # numpy arrays run on the host, or are moved to the device the function is pinned to
            to_device = compiled.device.torch_device if compiled.device.backend == "torch" else None
            self._fast_numpy[tuple((a.shape, a.dtype) for a in args)] = _runner(self, compiled, False, wrap,
                                                                                to_device)
        elif first.__name__ in ("Tensor", "Array") and all(type(a) is first for a in args):
            key = _device_key(args)
            if key is not None:
                self._fast_device[key] = _runner(self, compiled, first.__name__ == "Array", wrap)


def _has_64_bit(x: Any) -> bool:
    """Whether a tree of arguments holds a numpy value of a 64-bit dtype."""
    if isinstance(x, (tuple, list)):
        return any(_has_64_bit(v) for v in x)
    if isinstance(x, dict):
        return any(_has_64_bit(v) for v in x.values())
    return isinstance(x, (np.ndarray, np.generic)) and canonical_dtype(x.dtype) != x.dtype


def _leaf_names(named: list[tuple[str, Any]]) -> list[str]:
    """The dynamic leaves' names for error messages (`params['w0']`), in flattening order."""
    return [name + keystr(path) for name, a in named for path, _ in tree_flatten_with_path(a)[0]]


def _flatten_arrays(x: Any, leaves: list[Any], key: list[Any]) -> bool:
    """Flatten a tree of tuples, lists and dicts (keys sorted, as `tree_flatten` orders them)
    whose leaves are all numpy arrays into `leaves`, its structure, shapes and dtypes into `key`;
    False for anything else (the caller takes the general path)."""
    t = type(x)
    if t is np.ndarray:
        leaves.append(x)
        key.append((x.shape, x.dtype))
        return True
    if t is dict:
        keys = sorted(x)
        key.append((dict, tuple(keys)))
        children = [x[k] for k in keys]
    elif t is tuple or t is list:
        key.append((t, len(x)))
        children = x
    else:
        return False
    # plain loops: arrays inline, no generator per node (this runs on every call)
    for c in children:
        if type(c) is np.ndarray:
            leaves.append(c)
            key.append((c.shape, c.dtype))
        elif not _flatten_arrays(c, leaves, key):
            return False
    return True


def _device_key(args: tuple) -> Hashable | None:
    first = type(args[0])
    if first.__name__ == "Array":
        try:
            tensors = [a._tensor for a in args if type(a) is first]
            return ("array", *[(t.shape, t.dtype, t.device) for t in tensors])
        except AttributeError:  # a deleted (donated) array: the slow path raises the clear error
            return None
    if first.__module__.startswith("torch"):
        return ("tensor", *[(a.shape, a.dtype, a.device) for a in args if type(a) is first])
    return None


def _runner(jitted: Jitted, compiled: Compiled, unwrap: bool, wrap: bool,
            to_device: Any = None) -> Callable[[tuple], Any]:
    """A runner for one flat signature: the executable called without argument checks (numpy
    arguments moved to `to_device` first when the function runs on a torch device)."""
    exe = compiled.executable
    call = exe.call_unchecked if hasattr(exe, "call_unchecked") else (lambda a: exe(*a))
    finish = compiled.finish
    donating = bool(jitted.donate_argnums)
    n = len(compiled.lowered._key[1])

    if to_device is not None:
        from loom.backend.torch_kernels import to_torch  # torch is optional: only for a torch device

        def run(args: tuple) -> Any:
            if donating:
                jitted._check_donation(args, list(args))
            return finish(call(tuple(to_torch(a, to_device) for a in args)), wrap)
    elif not unwrap and not wrap and not donating and compiled._shape in ("leaf", "tuple"):
        def run(args: tuple) -> Any:
            return call(args)
    else:
        def run(args: tuple) -> Any:
            if donating:
                jitted._check_donation(args, list(args))
            leaves = tuple(a.torch() for a in args) if unwrap else args
            out = finish(call(leaves), wrap)
            if donating:
                jitted._delete_donated(args)
            return out
    run.arity = n  # type: ignore[attr-defined]
    return run


def _tree_runner(jitted: Jitted, compiled: Compiled) -> Callable[[tuple, list], Any]:
    """A runner for one tree signature on the host: the executable called on the flattened
    numpy leaves without argument checks, its results rebuilt as the output pytree."""
    exe = compiled.executable
    call = exe.call_unchecked if hasattr(exe, "call_unchecked") else (lambda a: exe(*a))
    finish = compiled.finish
    donating = bool(jitted.donate_argnums)

    def run(args: tuple, leaves: list) -> Any:
        if donating:
            jitted._check_donation(args, leaves)
        return finish(call(leaves), False)
    return run


def annotate_sharded(module: Operation, mesh: Any, name: str, in_shardings: Sequence[Any],
                     out_shardings: Sequence[Any], result_names: Sequence[str]) -> None:
    """Give a traced module the annotations of JAX's sharded lowering: its name `jit_<name>`,
    `mhlo.num_partitions` / `mhlo.num_replicas`, an `sdy.mesh @mesh`, a public `@main` whose
    arguments and results carry their `sdy.sharding` (where given) and `jax.result_info`."""
    from loom.dialects.sdy import MeshOp  # noqa: F401 - registers the sdy ops
    from loom.ir.attributes import ArrayAttr, DictionaryAttr, IntegerAttr, StringAttr
    from loom.ir.types import IntegerType
    i32, i64 = IntegerType(32), IntegerType(64)
    module.properties["sym_name"] = StringAttr("jit_" + _symbol_name(name))
    module.attributes["mhlo.num_partitions"] = IntegerAttr(i32, mesh.size)
    module.attributes["mhlo.num_replicas"] = IntegerAttr(i32, 1)
    axes = ArrayAttr(tuple(DictionaryAttr((("name", StringAttr(a)), ("size", IntegerAttr(i64, n))))
                           for a, n in mesh.shape.items()))
    mesh_op = Operation.create("sdy.mesh", properties={"mesh": mesh.to_sdy(), "sym_name": StringAttr("mesh")},
                               attributes={"stablehlo.mesh": DictionaryAttr((("axes", axes),))})
    body = module.regions[0].entry
    body.insert_before(mesh_op, body.first_op)
    fn = next(op for op in body.ops if op.name == "func.func")
    fn.properties["sym_visibility"] = StringAttr("public")
    ftype = fn.properties["function_type"].value

    def entry(sharding: Any, ndim: int, extra: tuple = ()) -> DictionaryAttr:
        items = extra if sharding is None else (*extra, ("sdy.sharding", sharding.to_sdy(ndim)))
        return DictionaryAttr(tuple(items))
    fn.properties["arg_attrs"] = ArrayAttr(tuple(entry(s, len(t.shape)) for s, t in
                                                 zip([*in_shardings, *[None] * len(ftype.inputs)], ftype.inputs)))
    fn.properties["res_attrs"] = ArrayAttr(tuple(entry(s, len(t.shape), (("jax.result_info", StringAttr(r)),))
                                                 for s, r, t in zip(out_shardings, result_names, ftype.results)))


def main_function(module: Operation) -> Operation:
    """The traced function of a module (after the `sdy.mesh` of a sharded program)."""
    return next(op for op in module.regions[0].entry.ops if op.name == "func.func")


def transform_module(module: Operation, transform: Callable[[Operation], Operation]) -> Operation:
    """`transform(module)` (a VJP, JVP or batching of the traced function), for a sharded module
    too: the rules of its manual computations see its mesh, and the new module gets the mesh
    (after its function) and the partition count."""
    from loom.ops.collectives import mesh_scope
    with mesh_scope(module):
        out = transform(module)
    mesh_op = next((op for op in module.regions[0].entry.ops if op.name == "sdy.mesh"), None)
    if mesh_op is not None:
        out.regions[0].entry.append(mesh_op.clone())
        for name in ("mhlo.num_partitions", "mhlo.num_replicas"):
            out.attributes[name] = module.attributes[name]
    return out


def _symbol_name(name: str) -> str:
    """A function's name as JAX writes it in a module name (`<lambda>` is `_lambda`)."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name.replace(">", ""))


def jit(fun: Callable[..., Any] | None = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), donate_argnums: int | Sequence[int] = (),
        device: Any = None, cuda_graph: bool = False, fuse: bool = False, in_shardings: Any = None,
        out_shardings: Any = None, overlap: str = "off", machine: Any = "h200") -> Any:
    """Compile `fun` with loom: usable as `jit(f, ...)` or as a decorator `@jit` / `@jit(...)`.

    `device` pins the function to a device ("cpu", "torch:cpu", "cuda", "cuda:N"; by default it
    runs where its arguments live). `donate_argnums` lets results reuse the donated arguments'
    buffers. `cuda_graph=True` (with a CUDA device) captures the program once per signature as a
    CUDA graph and replays it (programs that read values on the host, such as data-dependent
    while loops, run op by op instead). `fuse=True` (with a torch device) compiles the program
    with torch.compile (TorchInductor), fusing elementwise chains into generated kernels; the first
    call per signature compiles (seconds to minutes); with `cuda_graph=True` too, the fused program
    is replayed as CUDA graphs.

    `in_shardings` / `out_shardings` (NamedShardings, or pytree prefixes of the positional
    arguments / of the output of them; None: unconstrained) annotate the program with its
    shardings as `jax.jit`'s do: `lower(...).as_text()` prints the global program with its
    `sdy.mesh` and `sdy.sharding` attributes, and the call runs it on the mesh. `overlap` ("on",
    "auto" or "off") runs the partitioned program through decompose-collective-matmul in that mode
    (with `fuse`: a gather loop and the scatter loop its matmul feeds become one loop);
    `machine` (a loom.sim Machine, a preset name such as "h100", or a saved Machine's JSON path)
    is the one auto mode's cost model prices."""
    def make(f: Callable[..., Any]) -> Jitted:
        return Jitted(f, static_argnums, static_argnames, donate_argnums, device, cuda_graph, fuse=fuse,
                      in_shardings=in_shardings, out_shardings=out_shardings, overlap=overlap, machine=machine)
    if fun is None:
        return make
    return make(fun)


__all__ = ["DEFAULT_PIPELINE", "Compiled", "Jitted", "Lowered", "jit", "main_function", "transform_module"]
