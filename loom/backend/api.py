"""`compile` and `execute`: run a module's function on numpy arrays with either executor."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from loom.backend.common import ExecutionError, argument_names, check_arguments
from loom.backend.compiled import LIBRARIES, Executable
from loom.backend.interpreter import Interpreter
from loom.ir.core import Operation

EXECUTORS = ("compiled", "interpreter")
BACKENDS = LIBRARIES

# Compiled executables, cached per module object and entry (a module compiles once).
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class Interpreted:
    """A function run by the reference interpreter, with the same calling convention as a
    compiled Executable."""

    def __init__(self, module: Operation, entry: str = "main") -> None:
        self.interpreter = Interpreter(module)
        if entry not in self.interpreter.functions:
            raise ExecutionError(f"no function @{entry} in the module")
        self.entry = entry
        self.func = self.interpreter.functions[entry]
        ftype = self.func.get_attr("function_type").value
        self.input_types = tuple(ftype.inputs)
        self.result_types = tuple(ftype.results)
        self._names = argument_names(self.func)

    def __call__(self, *args: Any) -> Any:
        args = check_arguments(args, self.input_types, self._names, self.entry)
        with np.errstate(all="ignore"):
            out = self.interpreter.call(self.entry, args)
        out = [np.array(o) if not isinstance(o, tuple) else o for o in out]
        return out[0] if len(out) == 1 else tuple(out)


def _module(module_or_text: Operation | str) -> Operation:
    if isinstance(module_or_text, str):
        from loom.ir import parse
        return parse(module_or_text, allow_unregistered=True)
    return module_or_text


def compile(module_or_text: Operation | str, entry: str = "main",  # noqa: A001 - loom.compile
            executor: str = "compiled", backend: str = "numpy", device: Any = None) -> Callable[..., Any]:
    """A callable running function `entry` of a module (or its text): it returns one array, or a
    tuple when the function has several results. `executor` is "compiled" (generated Python, its
    source in `.source`; compiled once per module object, entry, backend and device, so after
    transforming a module in place build `loom.backend.Executable(module)` afresh) or
    "interpreter" (the reference interpreter, numpy only).

    `backend` is the array library of the compiled code: "numpy" (numpy arrays in and out) or
    "torch" (torch tensors on `device`, "cpu" by default, e.g. "cuda" or "cuda:1"; numpy inputs
    are moved there; results stay there as tensors)."""
    module = _module(module_or_text)
    if backend not in LIBRARIES:
        raise ValueError(f"unknown backend {backend!r}; expected one of {', '.join(LIBRARIES)}")
    if executor == "interpreter":
        if backend != "numpy":
            raise ValueError("the interpreter runs on numpy arrays only; use executor='compiled' with backend='torch'")
        return Interpreted(module, entry)
    if executor != "compiled":
        raise ValueError(f"unknown executor {executor!r}; expected one of {', '.join(EXECUTORS)}")
    if device is not None and hasattr(device, "torch_device"):  # a loom Device: it names its backend too
        if device.backend == "torch":
            backend, device = "torch", device.torch_device
        else:
            device = None
    if backend == "numpy" and device is not None and str(device) != "cpu":
        raise ValueError(f"the numpy backend runs on the CPU only, not on device {device!r}; use backend='torch'")
    per_module = _CACHE.get(module)
    if per_module is None:
        per_module = _CACHE[module] = {}
    key = entry if backend == "numpy" else (entry, backend, str(device or "cpu"))
    exe = per_module.get(key)
    if exe is None:
        exe = per_module[key] = Executable(module, entry, backend=backend,
                                           device=device if backend == "torch" else None)
    return exe


def execute(module_or_text: Operation | str, *args: Any, entry: str = "main", executor: str = "compiled",
            backend: str = "numpy", device: Any = None) -> Any:
    """Compile (or reuse) and run function `entry` on `args`."""
    return compile(module_or_text, entry=entry, executor=executor, backend=backend, device=device)(*args)


__all__ = ["BACKENDS", "EXECUTORS", "Interpreted", "compile", "execute"]
