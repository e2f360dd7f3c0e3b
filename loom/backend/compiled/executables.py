"""The compiled executor's executables: a module's entry function compiled once (Python source
from `loom.backend.compiled.codegen`) and called on numpy arrays (`Executable`) or torch tensors
(`TorchExecutable`), and the torch ones captured as CUDA graphs or compiled by inductor."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from loom.backend import common
from loom.backend.common import check_arguments, dtype_of, shape_of
from loom.backend.compiled.codegen import LIBRARIES, ModuleCodegen, torch_library
from loom.backend.kernels import Kernel
from loom.ir.core import Operation
from loom.ir.types import ComplexType, FloatType, IndexType, IntegerType, RankedTensorType, UnrankedTensorType


class UnsupportedTypeError(common.ExecutionError):
    """An op whose values have an element type that no array library here can hold (f80, f128,
    tf32, integers wider than 64 bits, complex other than of f32 / f64); names the op and where."""

    def __init__(self, op: Operation, element_type: Any) -> None:
        from loom.ir.attributes import location_line_col
        self.op = op
        self.element_type = element_type
        self.message = (f"has element type '{element_type}', which the compiled executor cannot run (no numpy dtype "
                        "holds it)")
        where = location_line_col(op.location)
        prefix = f"{where[0]}:{where[1]}:{where[2]}" if where else f"loc({op.location})"
        super().__init__(f"{prefix}: error: '{op.name}' op {self.message}")


def _element_types(t: Any) -> Iterator[Any]:
    if isinstance(t, common.TupleType):
        for part in t.types:
            yield from _element_types(part)
    elif isinstance(t, (RankedTensorType, UnrankedTensorType)):
        yield t.element_type
    elif isinstance(t, (IntegerType, IndexType, FloatType, ComplexType)):
        yield t


def check_element_types(functions: dict[str, Operation], entry: str) -> None:
    """Every value of the functions reachable from `entry` has an element type with a numpy dtype,
    or an UnsupportedTypeError names the first op (in program order) that has one without."""
    from loom.ir.attributes import numpy_dtype
    pending, seen = [entry], {entry}
    while pending:
        func = functions.get(pending.pop())
        if func is None:
            continue
        for op in func.walk():
            values = [*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)]
            for t in (v.type for v in values):
                for et in _element_types(t):
                    try:
                        numpy_dtype(et)
                    except ValueError:
                        raise UnsupportedTypeError(op, et) from None
            callee = op.get_attr("callee") if op.name == "func.call" else None
            if callee is not None and callee.root not in seen:
                seen.add(callee.root)
                pending.append(callee.root)


class Executable:
    """A compiled function: call it with numpy arrays; it returns an array, or a tuple of arrays
    when the function has several results. `source` is the generated Python.

    `kernels` is the per-op kernel table of the array library (numpy's by default). With
    `backend="torch"` the code runs on torch tensors on `device` (a `TorchExecutable`). The
    executable reflects the module as it was when compiled: compile again after changing it."""

    def __new__(cls, module: Operation, entry: str = "main", kernels: Any = None, backend: str = "numpy",
                device: Any = None, donate: Sequence[int] = (), **options: Any) -> Executable:
        if backend == "torch" and cls is Executable:
            cls = TorchExecutable
        elif backend not in LIBRARIES:
            raise ValueError(f"unknown backend {backend!r}; expected one of {', '.join(LIBRARIES)}")
        return object.__new__(cls)

    backend = "numpy"

    def __init__(self, module: Operation, entry: str = "main",
                 kernels: dict[str, Callable[[Operation], Kernel]] | None = None, backend: str = "numpy",
                 device: Any = None, donate: Sequence[int] = ()) -> None:
        self._build(ModuleCodegen(module, kernels), entry, donate)
        # arguments of sub-byte types always take the full check (their values' range)
        self._fast = tuple((dtype_of(t), shape_of(t)) if not isinstance(t, common.TupleType) and
                           not common.is_token(t) and common.subbyte_integer(t) is None else (None, None)
                           for t in self.input_types)

    def _build(self, mod: ModuleCodegen, entry: str, donate: Sequence[int] = ()) -> None:
        if entry not in mod.functions:
            raise common.ExecutionError(f"no function @{entry} in the module")
        # Donated parameters: results may be written into their buffers (see donate_into).
        self.donate = mod.donate = tuple(sorted(set(donate)))
        check_element_types(mod.functions, entry)
        self.func = mod.functions[entry]
        self.entry = entry
        self.source, entry_name = mod.generate(entry)
        code = compile(self.source, f"<loom compiled @{entry}>", "exec")
        exec(code, mod.globals)
        self._fn = mod.globals[entry_name]
        self.globals = mod.globals
        self.namespace = mod.namespace
        ftype = self.func.get_attr("function_type").value
        self.input_types = tuple(ftype.inputs)
        self.result_types = tuple(ftype.results)
        self._names = common.argument_names(self.func)
        self._single = len(self.result_types) == 1

    def __call__(self, *args: Any) -> Any:
        fast = self._fast
        if len(args) != len(fast):
            args = check_arguments(args, self.input_types, self._names, self.entry)
        else:
            for a, (d, s) in zip(args, fast):  # a loop, not all(genexpr): this runs on every call
                if type(a) is not np.ndarray or a.dtype != d or a.shape != s:
                    args = check_arguments(args, self.input_types, self._names, self.entry)
                    break
        if _ERRSTATE is None:
            with np.errstate(all="ignore"):
                out = self._fn(*args)
        else:
            token = _ERRSTATE.set(_QUIET)
            try:
                out = self._fn(*args)
            finally:
                _ERRSTATE.reset(token)
        if self.donate:
            args = [a for i, a in enumerate(args) if i not in self.donate]
        if self._single:
            return _own(out, args)
        return tuple(_own(o, args) for o in out)

    def call_unchecked(self, args: Sequence[Any]) -> Any:
        """Run on arguments already known to match the signature exactly (loom.jit's fast path)."""
        token = _ERRSTATE.set(_QUIET) if _ERRSTATE is not None else None
        try:
            out = self._fn(*args)
        finally:
            if token is not None:
                _ERRSTATE.reset(token)
        if self.donate:
            args = [a for i, a in enumerate(args) if i not in self.donate]
        if self._single:
            return _own(out, args)
        return tuple(_own(o, args) for o in out)


class TorchExecutable(Executable):
    """A compiled function over torch tensors on one device: call it with tensors (numpy arrays
    and Python scalars are moved to the device); it returns tensors on the device.

    Ops with a torch kernel run as torch calls; the rest run their numpy kernel on the values
    (`torch_kernels.NumpyFallback`), so every program the numpy backend runs, this one runs.
    `torch_kernels` overrides the torch table (`torch_kernels.TORCH_KERNELS`)."""

    backend = "torch"

    def __init__(self, module: Operation, entry: str = "main",
                 kernels: dict[str, Callable[[Operation], Kernel]] | None = None, backend: str = "torch",
                 device: Any = None, donate: Sequence[int] = (), torch_kernels: dict | None = None) -> None:
        import torch
        kt = torch_library()
        self.device = torch.device("cpu") if device is None else torch.device(device)
        if self.device.type == "cuda" and self.device.index is None:  # tensors report cuda:N, never bare cuda
            self.device = torch.device("cuda", torch.cuda.current_device())
        if self.device.type == "cuda":
            try:  # the fused knn op's Triton kernel registers itself; without triton, the numpy kernel runs
                import loom.backend.triton_knn  # noqa: F401
            except ImportError:
                pass
        mod = ModuleCodegen(module, kernels, "torch", self.device, torch_kernels)
        self._build(mod, entry, donate)
        # (op name, why) of each op that runs on numpy values, in program order
        self.numpy_ops: tuple[tuple[str, str], ...] = tuple(mod.numpy_ops)
        self._fast = tuple((kt.torch_dtype(dtype_of(t)), shape_of(t))
                           if not isinstance(t, common.TupleType) and not common.is_token(t) else (None, None)
                           for t in self.input_types)
        self._tensor = torch.Tensor
        # Module constants returned as results are copied, so callers cannot change them.
        self._constants = frozenset(id(v) for v in self.globals.values() if isinstance(v, torch.Tensor))
        self._numpy_inside = "numpy_" in self.source or "to_numpy(" in self.source or "interpreted_" in self.source

    def convert_arguments(self, args: Sequence[Any]) -> list:
        """Arguments as tensors on the device, checked against the signature; a tensor on
        another device is an error that names both devices."""
        kt = torch_library()
        if len(args) != len(self.input_types):
            check_arguments(args, self.input_types, self._names, self.entry)  # raises the count error
        out = []
        for i, (a, t) in enumerate(zip(args, self.input_types)):
            name = self._names[i]
            who = f"argument {i}" + (f" ('{name}')" if name else "")
            if isinstance(a, self._tensor):
                if a.device != self.device:
                    raise common.ArgumentError(f"@{self.entry}: {who} is on device {a.device}, but the function was "
                                               f"compiled for device {self.device}; move it with "
                                               f"loom.device_put(x, {str(self.device)!r})")
                dtype, shape = self._fast[i]
                if a.dtype != dtype or not common._dims_match(shape, tuple(a.shape)):
                    got = f"{kt.numpy_dtype_of(a.dtype).name if a.dtype in kt.NUMPY_DTYPES else a.dtype}" \
                          f"[{','.join(map(str, a.shape))}]"
                    raise common.ArgumentError(f"@{self.entry}: {who} expected {t}, got torch tensor {got}")
                out.append(a)
                continue
            if common.is_token(t):  # no data: the token itself
                out.append(check_arguments([a], [t], [name], self.entry)[0])
                continue
            if hasattr(a, "__dlpack__") and not isinstance(a, (np.ndarray, np.generic)):
                a = np.asarray(a)  # other array types (jax, loom arrays) through their host values
            out.append(kt.to_torch(check_arguments([a], [t], [name], self.entry)[0], self.device))
        return out

    def device_arguments(self, args: Sequence[Any]) -> Sequence[Any]:
        """`args` as they are when they are tensors of the signature on the device (the fast
        check), else `convert_arguments(args)`."""
        fast, device, tensor = self._fast, self.device, self._tensor
        if len(args) != len(fast) or not all(type(a) is tensor and a.dtype == d and a.shape == s and
                                              a.device == device for a, (d, s) in zip(args, fast)):
            return self.convert_arguments(args)
        return args

    def owned_results(self, out: Any, args: Sequence[Any]) -> Any:
        """The program's results `out` as the caller may keep them (copies of any that share
        memory with a non-donated argument or a constant)."""
        if self.donate:
            args = [a for i, a in enumerate(args) if i not in self.donate]
        if self._single:
            return _own_tensor(out, args, self._constants)
        return tuple(_own_tensor(o, args, self._constants) for o in out)

    def __call__(self, *args: Any) -> Any:
        args = self.device_arguments(args)
        if _ERRSTATE is None:
            with np.errstate(all="ignore"):
                out = self._fn(*args)
        else:
            token = _ERRSTATE.set(_QUIET)
            try:
                out = self._fn(*args)
            finally:
                _ERRSTATE.reset(token)
        return self.owned_results(out, args)

    def call_unchecked(self, args: Sequence[Any]) -> Any:
        """Run on tensors already known to match the signature and device (loom.jit's fast path)."""
        if self._numpy_inside:  # numpy fallbacks run here: silence their floating-point warnings
            token = _ERRSTATE.set(_QUIET) if _ERRSTATE is not None else None
            try:
                out = self._fn(*args)
            finally:
                if token is not None:
                    _ERRSTATE.reset(token)
        else:
            out = self._fn(*args)
        return self.owned_results(out, args)

    @property
    def reads_values_on_host(self) -> bool:
        """Whether the program reads tensor values on the host (control flow on data, dynamic
        slice starts, numpy fallbacks): such programs cannot be captured as CUDA graphs."""
        return any(marker in self.source for marker in _HOST_MARKERS)


# Generated-code markers of host reads: Python control flow on a value, int() of a value, numpy
# fallbacks and islands, the interpreter, and the saved-value stacks (host-side lists a graph
# replay would not push to or pop from).
_HOST_MARKERS = ("while True:", "    if ", " = int(", "to_numpy(", "numpy_", "interpreted_", "dynamic_slice(",
                 "dynamic_update_slice(", "stack_")


class CudaGraphExecutable:
    """A TorchExecutable on a CUDA device captured once as a CUDA graph and replayed: each call
    copies the arguments into the graph's static input buffers, replays the recorded kernels
    (no per-op Python or launch overhead) and returns copies of the static outputs. Programs
    that read values on the host run op by op instead (`captured` is False)."""

    def __init__(self, executable: TorchExecutable) -> None:
        self.executable = executable
        self.device = executable.device
        self.input_types = executable.input_types
        self.result_types = executable.result_types
        self.source = executable.source
        self.captured = False
        self.static = not executable.reads_values_on_host and executable.device.type == "cuda"
        self._graph = None
        self._inputs: list = []
        self._outputs: Any = None

    def __call__(self, *args: Any) -> Any:
        return self.call_unchecked(self.executable.device_arguments(args))

    def call_unchecked(self, args: Sequence[Any]) -> Any:
        if not self.static:
            return self.executable.call_unchecked(args)
        if self._graph is None:
            try:
                self._capture(args)
            except RuntimeError as e:  # an op torch cannot capture: run op by op from now on
                import warnings
                warnings.warn(f"loom: CUDA graph capture failed ({str(e).splitlines()[0]}); running op by op",
                              RuntimeWarning, stacklevel=3)
                self.static = False
                return self.executable.call_unchecked(args)
        for buffer, a in zip(self._inputs, args):
            buffer.copy_(a)
        self._graph.replay()
        out = self._outputs
        if isinstance(out, tuple):
            return tuple(o.clone() for o in out)
        return out.clone()

    def _capture(self, args: Sequence[Any]) -> None:
        import torch
        exe = self.executable
        self._inputs = [a.clone() for a in args]
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):  # warm-up: lazy initialisation and allocator pools off the capture
            for _ in range(2):
                exe._fn(*self._inputs)
        torch.cuda.current_stream(self.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = exe._fn(*self._inputs)
        self._graph, self._outputs, self.captured = graph, out, True


class InductorExecutable:
    """A TorchExecutable whose generated function is compiled by `torch.compile` (TorchInductor):
    chains of elementwise ops and reductions fuse into generated kernels (Triton on CUDA, C++ on
    the CPU) instead of running as one torch call each, as XLA fuses. The generated function is
    plain torch calls, so it is captured whole; programs that read values on the host split into
    several graphs and stay correct. Compiling happens on the first call and takes seconds to
    minutes (the price of fusion). With `cuda_graph` (CUDA only) the fused program is also
    replayed as CUDA graphs (torch.compile's "reduce-overhead" mode); results are then copied out
    of the graph's buffers, as `CudaGraphExecutable` does."""

    def __init__(self, executable: TorchExecutable, cuda_graph: bool = False) -> None:
        import torch
        self.executable = executable
        self.device = executable.device
        self.input_types = executable.input_types
        self.result_types = executable.result_types
        self.source = executable.source
        self.cuda_graph = cuda_graph and executable.device.type == "cuda"
        sys.modules.setdefault(executable.namespace.__name__, executable.namespace)
        self._fn = torch.compile(executable._fn, dynamic=False,
                                 mode="reduce-overhead" if self.cuda_graph else "default")

    def __call__(self, *args: Any) -> Any:
        return self.call_unchecked(self.executable.device_arguments(args))

    def call_unchecked(self, args: Sequence[Any]) -> Any:
        out = self._fn(*args)
        if self.cuda_graph:  # the next replay overwrites the graph's outputs
            return tuple(o.clone() for o in out) if isinstance(out, tuple) else out.clone()
        return self.executable.owned_results(out, args)


def _own_tensor(x: Any, args: Sequence[Any], constants: frozenset) -> Any:
    """A result the caller may keep and modify: a dense tensor sharing memory with no argument
    and no constant of the program."""
    if isinstance(x, tuple):
        return tuple(_own_tensor(v, args, constants) for v in x)
    if type(x) is common.Token:
        return x
    if x._base is not None or not x.is_contiguous() or id(x) in constants or any(x is a for a in args):
        return x.clone(memory_format=_contiguous())
    return x


def _contiguous():
    import torch
    return torch.contiguous_format


# Floating-point warnings are silenced while generated code runs (XLA raises none). numpy keeps
# its error state in a context variable; setting it directly costs a fraction of what entering
# `np.errstate` does (several microseconds). Where numpy's internals differ, np.errstate is used.
try:
    from numpy._core._ufunc_config import _extobj_contextvar as _ERRSTATE
    from numpy._core._ufunc_config import _make_extobj
    _QUIET = _make_extobj(all="ignore")
except (ImportError, AttributeError, TypeError):  # pragma: no cover - other numpy versions
    _ERRSTATE = _QUIET = None


def _own(x: Any, args: Sequence[Any]) -> Any:
    """A result the caller may keep and modify: a fresh, writeable ndarray."""
    if isinstance(x, tuple):
        return tuple(_own(v, args) for v in x)
    if type(x) is common.Token:
        return x
    if type(x) is not np.ndarray or x.base is not None or not x.flags.writeable:
        return np.array(x)
    for a in args:  # a loop, not any(genexpr): this runs for every result of every call
        if x is a:
            return np.array(x)
    return x


def compile_module(module: Operation, entry: str = "main", backend: str = "numpy", device: Any = None) -> Executable:
    return Executable(module, entry, backend=backend, device=device)


__all__ = ["CudaGraphExecutable", "Executable", "InductorExecutable", "TorchExecutable", "UnsupportedTypeError",
           "compile_module"]

