"""The compiled executor's code generation: a function lowered to Python source, one statement per op.

Each op becomes one line calling its kernel directly (`v3 = np_add(v1, v2)`); kernels come from a
per-op table for the array library (`kernels.KERNELS`), and their static attributes are
hoisted to constants of the generated module, so nothing is looked up or recomputed per call.
`while`, `if` and `case` become Python control flow, inline. Region ops are lowered by rules in
`CODEGEN_RULES`, which their op families register (loom.ops.control_flow, reductions, indexing),
one rule per op for both array libraries: known reducer bodies (add, mul, max, min, and, or, xor;
the argmax/argmin pair) map to the library's reductions; other elementwise bodies become nested
Python functions applied to whole arrays (a pairwise tree for reductions, an n x n comparison
matrix for sorts); anything else runs through the reference interpreter (in torch code, the numpy
rule on the tensors' values).

    exe = compile_module(module)          # compiled once per module and entry
    exe(x, y); print(exe.source)
"""

from __future__ import annotations

import importlib
import itertools
import math
import operator
import threading
import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from loom.backend import common
from loom.backend import kernels as kn
from loom.backend.common import MissingRuleError, dtype_of, shape_of
from loom.backend.interpreter import INTERPRETER_RULES, RETURN_OPS, Interpreter, functions_of
from loom.backend.kernels import KERNELS, Kernel
from loom.dialects import chlo, stablehlo
from loom.ir.core import Block, Operation, Region, Value

EXECUTOR = "compiled executor"

CodegenRule = Callable[["FunctionCodegen", Operation], None]
# One rule per op, for every array library: where the libraries differ a rule reads `gen.torch`,
# calls the functions of `gen.runtime(family)` (the family module for numpy, its `_torch` module for
# torch), and hands a form it does not lower to `gen.not_lowered(op, why)`.
CODEGEN_RULES: dict[str, CodegenRule] = {}
LIBRARIES = ("numpy", "torch")


def codegen_rule(*names: str):
    """Register a code generation rule (for both array libraries) under one or more op names."""
    def register(fn: CodegenRule) -> CodegenRule:
        for n in names:
            CODEGEN_RULES[n] = fn
        return fn
    return register


def torch_library():
    """`loom.backend.torch_kernels`, imported on first use (importing torch takes a second; numpy
    users skip it)."""
    from loom.backend import torch_kernels
    return torch_kernels


# Ops whose kernels work unchanged on arrays of any shape when the op itself is on scalars:
# region bodies made only of these can be applied to whole arrays at once. Read from the
# `Elementwise` trait (every op that has it, in every dialect loaded), plus constants and returns.
def _elementwise_ops() -> frozenset[str]:
    return frozenset(name for dialect in (stablehlo.DIALECT, chlo.DIALECT) for name, cls in dialect.ops.items()
                     if cls.definition is not None and stablehlo.Elementwise in cls.definition.trait_set) | {
        "stablehlo.constant", "stablehlo.return"}


ELEMENTWISE = _elementwise_ops()

# Ops whose kernels broadcast their operands as numpy does, so lazy broadcasts may feed them.
BROADCASTING = ELEMENTWISE - {"stablehlo.constant", "stablehlo.return"}
# Region ops lowered inline (their regions are in the same Python scope).
INLINE_REGION_OPS = frozenset({"stablehlo.while", "stablehlo.if", "stablehlo.case"})

# Reducer bodies `return op(a, b)` that numpy reduces natively.
BINARY_UFUNCS = {"stablehlo.add": np.add, "stablehlo.multiply": np.multiply, "stablehlo.maximum": np.maximum,
                 "stablehlo.minimum": np.minimum, "stablehlo.and": np.bitwise_and, "stablehlo.or": np.bitwise_or,
                 "stablehlo.xor": np.bitwise_xor}


# Module-level code generation -------------------------------------------------------------------

_PROGRAM_NUMBERS = itertools.count()


class ModuleCodegen:
    """Generates the Python module for the functions reachable from one entry function."""

    def __init__(self, module: Operation, kernels: dict[str, Callable[[Operation], Kernel]] | None = None,
                 library: str = "numpy", device: Any = None,
                 torch_kernels: dict[str, Callable[[Operation], Kernel | None]] | None = None) -> None:
        if library not in LIBRARIES:
            raise ValueError(f"unknown array library {library!r}; expected one of {', '.join(LIBRARIES)}")
        self.module = module
        self.kernels = KERNELS if kernels is None else kernels
        self.library = library            # the library of the code being emitted now (islands switch it)
        self.device = device
        self.torch_kernels = torch_kernels
        self.donate: tuple[int, ...] = ()    # entry parameters whose buffers results may reuse
        self.functions = functions_of(module)
        # the generated code's globals are a module's, under a name of its own, so that tools
        # that import a function's module by name (torch.compile) can register and find it
        self.namespace = types.ModuleType(f"loom_generated_{next(_PROGRAM_NUMBERS)}")
        self.globals: dict[str, Any] = self.namespace.__dict__
        self.globals["np"] = np
        self._by_id: dict[int, str] = {}
        self._keep: list[Any] = []  # hoisted objects stay alive, so their ids stay unique
        self.constant_notes: list[str] = []
        self.function_names: dict[str, str] = {}
        self._pending: list[str] = []
        self.blocks: list[str] = []
        self._counter = 0
        self._interpreter: Interpreter | None = None
        # (op name, why) of every op of torch code that runs on numpy values: islands and
        # numpy kernels run on tensors (each a device -> host -> device round trip on a GPU)
        self.numpy_ops: list[tuple[str, str]] = []

    @property
    def interpreter(self) -> Interpreter:
        if self._interpreter is None:
            self._interpreter = Interpreter(self.module)
        return self._interpreter

    def fresh(self, prefix: str = "v") -> str:
        self._counter += 1
        return f"{prefix}{self._counter}"

    def hoist(self, obj: Any, hint: str) -> str:
        """A module-level name bound to `obj` (the same name for the same object)."""
        name = self._by_id.get(id(obj))
        if name is not None:
            return name
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in hint) or "k"
        if base[0].isdigit():
            base = "_" + base
        name, i = base, 1
        while name in self.globals:
            i += 1
            name = f"{base}_{i}"
        self.globals[name] = obj
        self._by_id[id(obj)] = name
        self._keep.append(obj)
        return name

    def function(self, fn: Callable) -> str:
        if (getattr(fn, "__module__", None) or "").startswith("torch"):
            hint = "torch_" + fn.__name__
        elif isinstance(fn, np.ufunc) or getattr(fn, "__module__", "") in ("numpy", "numpy.fft") or \
                getattr(fn, "__module__", "").startswith("numpy."):
            hint = "np_" + fn.__name__
        elif fn is operator.getitem:
            hint = "getitem"
        else:  # a partial application is named by its function
            hint = getattr(getattr(fn, "func", fn), "__name__", "kernel").strip("_").replace("<lambda>", "kernel")
        return self.hoist(fn, hint)

    def constant(self, value: Any, shown: np.ndarray | None = None) -> str:
        """A compile-time value hoisted into the module's namespace (`shown`: the value its
        comment describes, the full splat when `value` is its one element)."""
        if self.library == "torch":
            return self.torch_constant(value)
        known = self._by_id.get(id(value))
        if known is not None:
            return known
        name = self.hoist(value, self.fresh("c"))
        if isinstance(value, np.ndarray):
            self.constant_notes.append(f"# {name}: {constant_note(value if shown is None else shown)}")
        return name

    def torch_constant(self, value: Any) -> str:
        """A compile-time value as a tensor on the device, hoisted (one tensor per numpy value)."""
        key = ("torch", id(value))
        name = self._by_id.get(key)  # type: ignore[arg-type]
        if name is not None:
            return name
        tensor = torch_library().to_torch(value, self.device, copy=True)
        name = self.hoist(tensor, self.fresh("c"))
        self._by_id[key] = name  # type: ignore[index]
        self._keep.append(value)
        if isinstance(value, np.ndarray):
            self.constant_notes.append(f"# {name}: {constant_note(value)}")
        return name

    def torch_kernel(self, op: Operation) -> Kernel:
        """The torch kernel of `op` (a numpy kernel run on the tensors' values where torch has none)."""
        return torch_library().torch_kernel_for(op, self.kernels, self.device, self.torch_kernels)

    def literal(self, value: Any) -> str:
        """Python source for a static value: a literal where one exists, else a hoisted name."""
        if value is None or isinstance(value, (bool, int, str)):
            return repr(value)
        if isinstance(value, float) and math.isfinite(value):
            return repr(value)
        if isinstance(value, tuple) and all(_is_literal(v) for v in value):
            items = [self.literal(v) for v in value]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if isinstance(value, np.dtype):
            return self.hoist(value, value.name)
        if isinstance(value, np.ufunc):
            return self.function(value)
        return self.hoist(value, self.fresh("s"))

    def function_name(self, symbol: str) -> str:
        """The Python name of function @symbol in the current library (generated once each)."""
        key = symbol if self.library == "numpy" else f"{symbol}@{self.library}"
        name = self.function_names.get(key)
        if name is None:
            if symbol not in self.functions:
                raise common.ExecutionError(f"call to unknown function @{symbol}")
            base = "f_" + symbol if self.library == "numpy" else f"f_{symbol}_{self.library}"
            name = self.function_names[key] = self.hoist_name(base)
            self._pending.append((symbol, self.library, name))
        return name

    def hoist_name(self, base: str) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base)
        name, i = base, 1
        while name in self.globals or name in self.function_names.values():
            i += 1
            name = f"{base}_{i}"
        return name

    def generate(self, entry: str) -> tuple[str, str]:
        entry_name = self.function_name(entry)
        while self._pending:
            symbol, library, name = self._pending.pop(0)
            saved, self.library = self.library, library
            try:
                fn = FunctionCodegen(self, 1)
                if name == entry_name:
                    fn.donate = self.donate
                self.blocks.append(fn.function(self.functions[symbol], name))
            finally:
                self.library = saved
        header = ['"""Generated by loom.backend.compiled from the module\'s functions."""']
        if self.constant_notes:
            header += ["", *self.constant_notes]
        return "\n".join(header) + "\n\n\n" + "\n\n\n".join(self.blocks) + "\n", entry_name


def constant_note(value: np.ndarray) -> str:
    """A constant's comment in the generated source: its type, and its value when it has one
    element or is a splat. (The object itself lives in the module's namespace; formatting every
    element with numpy.array2string was a sixth of a small function's compile time.)"""
    text = f"{value.dtype.name}[{','.join(map(str, value.shape))}]"
    scalar = splat_scalar(value)
    if scalar is None:
        return text
    return f"{text} = {str(scalar.reshape(-1)[0])}" + ("" if value.size == 1 else " (splat)")


def splat_scalar(value: Any) -> np.ndarray | None:
    """The one-element array (same rank and dtype, all dims 1) every element of `value` equals,
    bit for bit (so -0.0 is no splat of 0.0, and a NaN splat is one); None otherwise."""
    if not isinstance(value, np.ndarray) or value.size == 0 or value.dtype.itemsize == 0 or \
            value.dtype.kind not in "biufc":
        return None
    first = value.reshape(-1)[:1]
    if value.size > 1 and not all(s == 0 for s in value.strides):
        bits = np.ascontiguousarray(value).view(np.uint8).reshape(value.size, value.dtype.itemsize)
        if not (bits == bits[:1]).all():
            return None
    return first.reshape((1,) * value.ndim).copy()


def _is_literal(v: Any) -> bool:
    if v is None or isinstance(v, (bool, int, str)):
        return True
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, tuple):
        return all(_is_literal(x) for x in v)
    return False


# Function-level code generation -----------------------------------------------------------------

class FunctionCodegen:
    """Emits the body of one function (and of the regions nested in it) as Python lines.

    Python names are reused once every value bound to them is dead (last use within the
    defining block; uses inside nested regions count at the op that holds them), so
    intermediate arrays are freed as in hand-written numpy code and its allocator reuses them."""

    def __init__(self, mod: ModuleCodegen, indent: int) -> None:
        self.mod = mod
        self.indent = indent
        self.lines: list[str] = []
        self.names: dict[Value, str] = {}
        self.pool: list[str] = []          # dead names of the current Python scope
        self.refs: dict[str, int] = {}     # live values per reusable name
        self.lazy: dict[Value, tuple[int, ...]] = {}  # broadcasts left to numpy: their runtime shapes
        self.donate: tuple[int, ...] = ()  # donated parameters (entry function only)
        self._donated: dict[Value, str] = {}
        self._entry_ops: list[Operation] = []

    # The array library ---------------------------------------------------------------------
    @property
    def torch(self) -> bool:
        """Whether the code being emitted is torch code (else numpy code)."""
        return self.mod.library == "torch"

    def runtime(self, family: str) -> types.ModuleType:
        """The module whose functions the generated code of op family `family` (a loom.ops module
        name) calls: the family itself for numpy code, its `<family>_torch` module for torch code."""
        return importlib.import_module(family + "_torch" if self.torch else family)

    def not_lowered(self, op: Operation, reason: str) -> None:
        """Emit `op`, in a form its rule does not lower to the library's calls, by the reference
        interpreter (numpy code) or as a numpy island (torch code: the numpy rule on its values)."""
        if self.torch:
            self.numpy_island(op, reason)
        else:
            self.interpreted(op)

    # Lines and names -----------------------------------------------------------------------
    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def name(self, value: Value) -> str:
        try:
            return self.names[value]
        except KeyError:
            raise common.ExecutionError(f"value {value!r} used before it is defined") from None

    def new_names(self, values: Sequence[Value], prefix: str = "v") -> list[str]:
        """Names for op results (reused from dead ones), or fresh parameter names (prefix
        `a`/`b`: parameters are never reused, the caller holds their arrays anyway)."""
        names = []
        for v in values:
            if prefix in ("a", "b"):
                n = self.mod.fresh(prefix)
            else:
                n = self.pool.pop() if self.pool else self.mod.fresh(prefix)
                self.refs[n] = self.refs.get(n, 0) + 1
            self.names[v] = n
            names.append(n)
        return names

    def alias(self, value: Value, name: str) -> None:
        self.names[value] = name
        if name in self.refs:
            self.refs[name] += 1

    def kill(self, value: Value) -> None:
        name = self.names.get(value)
        if name in self.refs:
            self.refs[name] -= 1
            if self.refs[name] == 0:
                del self.refs[name]
                self.pool.append(name)

    def bind(self, op: Operation, expr: str, returns_tuple: bool = False) -> None:
        """`results = expr`, with a comment naming the op."""
        n = len(op.results)
        comment = f"  # {op.name}"
        if n == 0:
            self.emit(expr + comment)
            return
        names = self.new_names(op.results)
        if n == 1 and not returns_tuple:
            self.emit(f"{names[0]} = {expr}{comment}")
        else:
            self.emit(f"{', '.join(names)}{',' if n == 1 else ''} = {expr}{comment}")

    def args(self, values: Sequence[Value]) -> str:
        return ", ".join(self.name(v) for v in values)

    def packed(self, values: Sequence[Value]) -> str:
        names = [self.name(v) for v in values]
        return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"

    # Functions, blocks, regions -----------------------------------------------------------------
    def function(self, func: Operation, py_name: str) -> str:
        block = func.regions[0].blocks[0]
        params = self.new_names(block.args, "a")
        if self.donate:
            self._donated = {block.args[i]: params[i] for i in self.donate if i < len(block.args)}
            self._entry_ops = list(block.ops)
        self.lines.append(f"def {py_name}({', '.join(params)}):")
        self.block(block, finish=lambda results: self.emit(f"return {_tuple_text(results, single=True)}"))
        return "\n".join(self.lines)

    def block(self, block: Block, arg_names: Sequence[str] | None = None,
              finish: Callable[[list[str]], None] | None = None) -> list[str]:
        """Emit the ops of `block` (arguments already bound, or bound to `arg_names`), then
        `finish(names of the returned values)`; the block's values die after that."""
        if arg_names is not None:
            for a, n in zip(block.args, arg_names):
                self.alias(a, n)
        ops = list(block.ops)
        last_use: dict[Value, int] = {}
        for k, op in enumerate(ops):
            for nested in op.walk():
                for v in nested.operands:
                    last_use[v] = k
        dying: dict[int, list[Value]] = {}
        for v in block.args:
            dying.setdefault(last_use.get(v, -1), []).append(v)
        for k, op in enumerate(ops):
            for r in op.results:
                dying.setdefault(last_use.get(r, k), []).append(r)
        for v in dying.pop(-1, ()):
            self.kill(v)
        results: list[str] = []
        for k, op in enumerate(ops):
            if op.name in RETURN_OPS:
                results = [self.materialize(v) if v in self.lazy else self.name(v) for v in op.operands]
                if finish is not None:
                    finish(results)
                finish = None
            else:
                self.op(op)
            for v in dying.pop(k, ()):
                self.kill(v)
        if finish is not None:
            finish(results)
        return results

    def op(self, op: Operation) -> None:
        """Emit one op. Broadcasts stay lazy where every consumer broadcasts by itself (numpy's
        elementwise functions do): a lazy value holds fewer or size-1 dims, and is expanded
        (`np.broadcast_to`, a view) only for an op that needs its full shape."""
        if op.name == "stablehlo.broadcast_in_dim" and self.lazy_broadcast(op):
            return
        lazy = [v for v in op.operands if v in self.lazy]
        if op.regions and op.name not in INLINE_REGION_OPS:
            lazy += [v for v in free_values(op) if v in self.lazy]
        if lazy and op.name not in BROADCASTING:
            saved = {v: self.names[v] for v in lazy}
            for v in saved:
                self.names[v] = self.materialize(v)
            try:
                self.emit_op(op)
            finally:
                self.names.update(saved)
            return
        self.emit_op(op)
        if lazy:
            shape = np.broadcast_shapes(*(self.lazy.get(v, shape_of(v.type)) for v in op.operands))
            for r in op.results:
                if tuple(shape) != shape_of(r.type):
                    self.lazy[r] = tuple(shape)

    def emit_op(self, op: Operation) -> None:
        rule = CODEGEN_RULES.get(op.name)
        if rule is not None:
            rule(self, op)
        elif op.name in self.mod.kernels or \
                (self.torch and op.name in (self.mod.torch_kernels or torch_library().TORCH_KERNELS)):
            self.kernel(op, self.mod.torch_kernel(op) if self.torch else self.mod.kernels[op.name](op))
        elif op.name in INTERPRETER_RULES:
            self.not_lowered(op, "interpreter only")
        else:
            raise MissingRuleError(op.name, EXECUTOR)
        self.narrow_results(op)

    def narrow_results(self, op: Operation) -> None:
        """Results of element types held in a wider array type (i4 in int8; in torch, float8 in
        float32) brought back to their own width after the op, as their arithmetic demands. An
        alias of an operand of the same element type holds such values already; other aliases
        (a convert from i8 that is the identity on the storage) and module constants are wrapped
        into a name of their own."""
        operands = {self.names.get(v): v.type for v in op.operands}
        for r in op.results:
            call = common.integer_wrap(r.type)
            if call is None and self.mod.library == "torch":
                call = torch_library().float_rounding(r.type, op.name)
            name = self.names.get(r)
            if call is None or name is None:
                continue
            if name in operands and getattr(operands[name], "element_type", None) == r.type.element_type:
                continue
            target = name
            if name in operands or name in self.mod.globals:
                target = self.names[r] = self.mod.fresh("t")
            fn, static = call
            self.emit(f"{target} = {self.mod.function(fn)}({name}, {', '.join(map(self.mod.literal, static))})")

    def numpy_island(self, op: Operation, reason: str) -> None:
        """Emit `op` as numpy code inside torch code: its operands and the values its regions
        capture go to numpy, the numpy rule runs, its results come back as tensors. `reason`
        (why torch code cannot run it) goes into the generated code and `numpy_ops`."""
        kt = torch_library()
        self.mod.numpy_ops.append((op.name, reason))
        self.emit(f"# {op.name} on numpy values: {reason}")
        to_numpy = self.mod.function(kt.to_numpy)
        to_torch = self.mod.hoist(kt.to_torch, "to_torch")
        device = self.mod.literal(self.mod.device) if self.mod.device is not None else "None"
        saved: dict[Value, str] = {}
        for v in (*op.operands, *free_values(op)):
            if v in saved:
                continue
            saved[v] = self.names[v]
            converted = self.mod.fresh("n")
            self.emit(f"{converted} = {to_numpy}({self.names[v]})")
            self.names[v] = converted
        self.mod.library = "numpy"
        try:
            self.emit_op(op)
        finally:
            self.mod.library = "torch"
            self.names.update(saved)
        for r in op.results:
            name = self.names[r]
            if name in self.mod.globals:  # a module constant: give the tensor a local name
                fresh = self.mod.fresh("t")
                self.emit(f"{fresh} = {to_torch}({name}, {device}, True)")
                self.names[r] = fresh
            else:
                self.emit(f"{name} = {to_torch}({name}, {device}, True)")

    def lazy_broadcast(self, op: Operation) -> bool:
        """A broadcast_in_dim as a reshape at most (or nothing), its result marked lazy."""
        x, result = op.operands[0], op.results[0]
        dims = common.ints(op.get_attr("broadcast_dimensions"))
        out = shape_of(result.type)
        in_shape = shape_of(x.type)
        if list(dims) != sorted(dims) or x in self.lazy or any(d < 0 for d in out + in_shape):
            return False
        expanded = [1] * len(out)
        for d, n in zip(dims, in_shape):
            expanded[d] = n
        expanded = tuple(expanded)
        lead = len(out) - len(in_shape)
        if expanded[lead:] == in_shape and all(e == 1 for e in expanded[:lead]) and \
                (in_shape == out or expanded != out):
            self.alias(result, self.name(x))  # numpy aligns trailing dims: nothing to do
            if in_shape != out:
                self.lazy[result] = in_shape
            return True
        self.bind(op, f"{self.mod.function(kn.reshape)}({self.name(x)}, {self.mod.literal(expanded)})")
        if expanded != out:
            self.lazy[result] = expanded
        return True

    def materialize(self, value: Value) -> str:
        name = self.mod.fresh("t")
        if self.mod.library == "torch":
            self.emit(f"{name} = {self.names[value]}.expand({self.mod.literal(shape_of(value.type))})")
            return name
        self.emit(f"{name} = {self.mod.function(np.broadcast_to)}({self.names[value]}, "
                  f"{self.mod.literal(shape_of(value.type))})")
        return name

    def nested_scope(self):
        """A new Python scope (a nested def): its own pool of reusable names."""
        gen = self

        class Scope:
            def __enter__(self):
                self.saved = gen.pool
                gen.pool = []
                gen.indent += 1

            def __exit__(self, *exc):
                gen.pool = self.saved
                gen.indent -= 1
        return Scope()

    def kernel(self, op: Operation, k: Kernel) -> None:
        if k.fn is None:  # known at compile time: the results are module constants
            values = k.value if len(op.results) != 1 else (k.value,)
            for r, v in zip(op.results, values):
                scalar = splat_scalar(v) if isinstance(v, np.ndarray) and v.size > 1 and \
                    shape_of(r.type) == v.shape else None
                if scalar is not None:
                    # a splat as one element, broadcast lazily: `x * 0.2` reads no [64, 64] array
                    # of 0.2 (the autodiff and SGD update make such constants), and is expanded
                    # (a view) only for an op that needs the full shape
                    self.names[r] = self.mod.constant(scalar, shown=v)
                    self.lazy[r] = scalar.shape
                else:
                    self.names[r] = self.mod.constant(v)
            return
        if k.fn is kn.identity and len(op.results) == 1 and len(op.operands) == 1:  # no statement at all
            self.alias(op.results[0], self.name(op.operands[0]))
            return
        if k.fn in (kn.identity, kn.values_tuple) and len(k.template) == len(op.results) and \
                all(type(t) is kn._Marker and t.kind == "operand" for t in k.template):  # results = some operands
            for r, t in zip(op.results, k.template):
                self.alias(r, self.name(op.operands[t.index]))
            return
        if self.mod.library == "torch" and isinstance(k.fn, torch_library().NumpyFallback):
            self.mod.numpy_ops.append((op.name, "no torch kernel for this form or element type"))
        if self._donated and k.template == (kn.ALL,) and self.donate_into(op, k):
            return
        parts = []
        for t in k.template:
            if type(t) is kn._Marker:
                if t.kind == "all":
                    parts.extend(self.name(v) for v in op.operands)
                elif t.kind == "packed":
                    parts.append(self.packed(op.operands))
                elif t.kind == "operand":
                    parts.append(self.name(op.operands[t.index]))
                else:
                    parts.extend(self.name(v) for v in op.operands[t.index:])
            else:
                parts.append(self.mod.literal(t))
        self.bind(op, f"{self.mod.function(k.fn)}({', '.join(parts)})", returns_tuple=len(op.results) > 1)

    def donate_into(self, op: Operation, k: Kernel) -> bool:
        """Emit `op` writing its result into a donated parameter's buffer (`out=`), if the op is
        elementwise, its result is returned and has the parameter's type, and nothing can read the
        parameter's memory afterwards (no later use of it or of any view of it)."""
        if len(op.results) != 1 or op.name not in ELEMENTWISE or not self._writes_out(k.fn):
            return False
        ops = self._entry_ops
        if op.parent is not (ops[0].parent if ops else None):
            return False
        result = op.results[0]
        ret = ops[-1]
        if ret.name not in RETURN_OPS or result not in ret.operands or result in self.lazy:
            return False
        for param, pname in list(self._donated.items()):
            if param.type != result.type or param in self.lazy or not self._overwritable(param, op):
                continue
            del self._donated[param]
            names = self.new_names(op.results)
            args = ", ".join(self.name(v) for v in op.operands)
            self.emit(f"{names[0]} = {self.mod.function(k.fn)}({args}, out={pname})  # {op.name} (donated buffer)")
            return True
        return False

    def _writes_out(self, fn: Callable) -> bool:
        if self.mod.library == "numpy":
            return isinstance(fn, np.ufunc) and fn.nout == 1
        return fn in torch_library().OUT_FUNCTIONS

    def _overwritable(self, param: Value, at: Operation) -> bool:
        """No op after `at` reads `param` or a value that may share its memory (results of ops
        other than fresh-result ones, transitively), and `at` reads no such value but `param`."""
        ops = self._entry_ops
        shared = {param}
        index = ops.index(at)
        for j, o in enumerate(ops):
            used = [v for nested in o.walk() for v in nested.operands]
            if j == index:
                if any(v in shared and v is not param for v in used):
                    return False
                continue
            if any(v in shared for v in used):
                if j > index:
                    return False
                if any(n.name == "stack.push" for n in o.walk()):
                    # the value (or a loop carry it started) may be saved on a stack and popped
                    # after `at`: stacks hold references, so the buffer must stay as it is
                    return False
                if not _fresh_result(o):
                    shared.update(o.results)
        return True

    def region_function(self, region: Region, hint: str = "body") -> str:
        """Emit `def name(args): ...; return (results,)` for a region, inline (a closure over the
        values around it); return its name."""
        name = self.mod.fresh(hint)
        block = region.blocks[0]
        header = len(self.lines)
        with self.nested_scope():
            params = self.new_names(block.args, "b")
            self.block(block, finish=lambda results: self.emit(f"return {_tuple_text(results)}"))
        self.lines.insert(header, "    " * self.indent + f"def {name}({', '.join(params)}):")
        return name

    def interpreted(self, op: Operation) -> None:
        """Run `op` through the reference interpreter (values it captures are passed along)."""
        free = free_values(op)
        runner = self.mod.hoist(InterpretedOp(self.mod.interpreter, op, free), self.mod.fresh("interpreted_"
                                + op.name.split(".")[-1] + "_"))
        self.bind(op, f"{runner}({self.packed(op.operands)}, {self.packed(free)})", returns_tuple=True)


_FRESH = (ELEMENTWISE - {"stablehlo.real", "stablehlo.imag", "stablehlo.convert", "stablehlo.constant",
                          "stablehlo.return", "chlo.conj", "stablehlo.reduce_precision"}) | {
    "stablehlo.dot_general", "stablehlo.convolution"}


def _fresh_result(op: Operation) -> bool:
    """Whether `op`'s results are always new arrays (never views of, or its, operands)."""
    if op.regions:
        return False
    if op.name == "stablehlo.convert":
        return dtype_of(op.operands[0].type) != dtype_of(op.results[0].type)
    return op.name in _FRESH


def _tuple_text(names: Sequence[str], single: bool = False) -> str:
    if single and len(names) == 1:
        return names[0]
    return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"


def free_values(op: Operation) -> list[Value]:
    """Values used inside `op`'s regions but defined outside `op`."""
    seen: dict[Value, None] = {}
    for nested in op.walk():
        if nested is op:
            continue
        for v in nested.operands:
            owner = v.owner_op if v.owner_op is not None else v.parent_block.parent_op
            if owner is not None and not op.is_ancestor(owner) and v not in seen:
                seen[v] = None
            elif owner is None and v not in seen:
                seen[v] = None
    return list(seen)


class InterpretedOp:
    """One op run by the reference interpreter from compiled code."""

    def __init__(self, interpreter: Interpreter, op: Operation, free: list[Value]) -> None:
        self.interpreter = interpreter
        self.op = op
        self.free = free
        self.rule = INTERPRETER_RULES[op.name]
        self._per_thread = threading.local()  # an interpreter per thread: it keeps its environment on itself

    def __call__(self, args: tuple, free_values: tuple) -> tuple:
        interp = getattr(self._per_thread, "interpreter", None)
        if interp is None:
            interp = self._per_thread.interpreter = Interpreter(self.interpreter.module)
        saved = interp.env
        interp.env = dict(zip(self.free, free_values))
        try:
            return tuple(self.rule(interp, self.op, list(args)))
        finally:
            interp.env = saved


