"""The compiled executor: a function lowered to Python source, one statement per op.

Each op becomes one line calling its kernel directly (`v3 = np_add(v1, v2)`); kernels come from a
per-op table for the array library (`kernels_numpy.KERNELS`), and their static attributes are
hoisted to constants of the generated module, so nothing is looked up or recomputed per call.
`while`, `if` and `case` become Python control flow, inline. Region ops are lowered by rules in
`CODEGEN_RULES`: known reducer bodies (add, mul, max, min, and, or, xor; the argmax/argmin pair)
map to numpy reductions; other elementwise bodies become nested Python functions applied to whole
arrays (a pairwise tree for reductions, an n x n comparison matrix for sorts); anything else runs
through the reference interpreter.

    exe = compile_module(module)          # compiled once per module and entry
    exe(x, y); print(exe.source)
"""

from __future__ import annotations

import itertools
import math
import operator
import sys
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from loom.backend import common
from loom.backend import kernels_numpy as kn
from loom.backend.common import MissingRuleError, check_arguments, dtype_of, shape_of
from loom.backend.custom_calls import custom_call_kernel
from loom.backend.interpreter import INTERPRETER_RULES, RETURN_OPS, Interpreter, functions_of
from loom.backend.kernels_numpy import KERNELS, Kernel
from loom.dialects import chlo, stablehlo
from loom.ir.core import Block, Operation, Region, Value
from loom.ir.types import ComplexType, FloatType, IndexType, IntegerType, RankedTensorType, UnrankedTensorType

EXECUTOR = "compiled executor"

CodegenRule = Callable[["FunctionCodegen", Operation], None]
CODEGEN_RULES: dict[str, CodegenRule] = {}
# Rules for the torch library. A region op with a rule in CODEGEN_RULES only (rules emit numpy
# code) runs on tensors as a numpy island: its operands to numpy, the numpy rule, results back.
TORCH_CODEGEN_RULES: dict[str, CodegenRule] = {}
# Rules that emit only Python control flow and calls, so they serve every array library.
LIBRARY_NEUTRAL_RULES = {"func.call", "stablehlo.while", "stablehlo.if", "stablehlo.case"}
LIBRARIES = ("numpy", "torch")


def codegen_rule(*names: str):
    """Register a code generation rule (numpy code) under one or more op names."""
    def register(fn: CodegenRule) -> CodegenRule:
        for n in names:
            CODEGEN_RULES[n] = fn
        return fn
    return register


def torch_codegen_rule(*names: str):
    """Register a code generation rule emitting torch code under one or more op names."""
    def register(fn: CodegenRule) -> CodegenRule:
        for n in names:
            TORCH_CODEGEN_RULES[n] = fn
        return fn
    return register


def _kt():
    """kernels_torch, imported on first use (importing torch takes a second; numpy users skip it)."""
    from loom.backend import kernels_torch
    return kernels_torch


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
        else:
            hint = getattr(fn, "__name__", "kernel").strip("_").replace("<lambda>", "kernel")
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
        tensor = _kt().to_torch(value, self.device, copy=True)
        name = self.hoist(tensor, self.fresh("c"))
        self._by_id[key] = name  # type: ignore[index]
        self._keep.append(value)
        if isinstance(value, np.ndarray):
            self.constant_notes.append(f"# {name}: {constant_note(value)}")
        return name

    def torch_kernel(self, op: Operation) -> Kernel:
        """The torch kernel of `op` (a numpy kernel run on the tensors' values where torch has none)."""
        return _kt().torch_kernel_for(op, self.kernels, self.device, self.torch_kernels)

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
        if self.mod.library == "torch":
            self.emit_torch_op(op)
        else:
            self.emit_numpy_op(op)
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
                call = _kt().float_rounding(r.type, op.name)
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

    def emit_numpy_op(self, op: Operation) -> None:
        rule = CODEGEN_RULES.get(op.name)
        if rule is not None:
            rule(self, op)
        elif op.name in self.mod.kernels:
            self.kernel(op, self.mod.kernels[op.name](op))
        elif op.name in INTERPRETER_RULES:
            self.interpreted(op)
        else:
            raise MissingRuleError(op.name, EXECUTOR)

    def emit_torch_op(self, op: Operation) -> None:
        rule = TORCH_CODEGEN_RULES.get(op.name)
        if rule is not None:
            rule(self, op)
        elif op.name in LIBRARY_NEUTRAL_RULES:
            CODEGEN_RULES[op.name](self, op)
        elif op.name in CODEGEN_RULES:
            self.numpy_island(op, "no torch code generation rule")
        elif op.name in self.mod.kernels or op.name in (self.mod.torch_kernels or _kt().TORCH_KERNELS):
            self.kernel(op, self.mod.torch_kernel(op))
        elif op.name in INTERPRETER_RULES:
            self.numpy_island(op, "interpreter only")
        else:
            raise MissingRuleError(op.name, EXECUTOR)

    def numpy_island(self, op: Operation, reason: str) -> None:
        """Emit `op` as numpy code inside torch code: its operands and the values its regions
        capture go to numpy, the numpy rule runs, its results come back as tensors. `reason`
        (why torch code cannot run it) goes into the generated code and `numpy_ops`."""
        kt = _kt()
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
        if self.mod.library == "torch" and isinstance(k.fn, _kt().NumpyFallback):
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
        return fn in _kt().OUT_FUNCTIONS

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


# Calls and control flow -------------------------------------------------------------------------

@codegen_rule("func.call")
def _call(gen: FunctionCodegen, op: Operation) -> None:
    name = gen.mod.function_name(op.get_attr("callee").root)
    gen.bind(op, f"{name}({gen.args(op.operands)})", returns_tuple=len(op.results) > 1)


@codegen_rule("stablehlo.while")
def _while(gen: FunctionCodegen, op: Operation) -> None:
    cond, body = op.regions
    loop = gen.new_names(op.results, "w")
    if loop:
        gen.emit(f"{', '.join(loop)} = {gen.args(op.operands)}  # stablehlo.while")
    gen.emit("while True:")
    gen.indent += 1

    def leave(results: list[str]) -> None:
        gen.emit(f"if not {results[0]}:")
        gen.emit("    break")

    def carry(results: list[str]) -> None:
        if loop:
            gen.emit(f"{', '.join(loop)} = {', '.join(results)}")
    gen.block(cond.blocks[0], loop, finish=leave)
    gen.block(body.blocks[0], loop, finish=carry)
    gen.indent -= 1


def _branch(gen: FunctionCodegen, region: Region, outs: list[str]) -> None:
    gen.indent += 1
    start = len(gen.lines)

    def assign(results: list[str]) -> None:
        if outs:
            gen.emit(f"{', '.join(outs)} = {', '.join(results)}")
    gen.block(region.blocks[0], finish=assign)
    if len(gen.lines) == start:
        gen.emit("pass")
    gen.indent -= 1


@codegen_rule("stablehlo.if")
def _if(gen: FunctionCodegen, op: Operation) -> None:
    outs = gen.new_names(op.results)
    gen.emit(f"if {gen.name(op.operands[0])}:  # stablehlo.if")
    _branch(gen, op.regions[0], outs)
    gen.emit("else:")
    _branch(gen, op.regions[1], outs)


@codegen_rule("stablehlo.case")
def _case(gen: FunctionCodegen, op: Operation) -> None:
    outs = gen.new_names(op.results)
    index = gen.mod.fresh("i")
    gen.emit(f"{index} = int({gen.name(op.operands[0])})  # stablehlo.case")
    n = len(op.regions)
    for k, region in enumerate(op.regions):
        if k == n - 1:
            gen.emit("else:" if n > 1 else "if True:")
        else:
            gen.emit(f"{'if' if k == 0 else 'elif'} {index} == {k}:")
        _branch(gen, region, outs)


@codegen_rule("stablehlo.custom_call")
def _custom_call(gen: FunctionCodegen, op: Operation) -> None:
    try:
        k = custom_call_kernel(op, EXECUTOR)
    except MissingRuleError as e:  # raise when run, not when compiled (the call may be unreachable)
        def missing(*args, error=e):
            raise error
        k = Kernel(missing)
    gen.kernel(op, k)


@torch_codegen_rule("stablehlo.custom_call")
def _custom_call_torch(gen: FunctionCodegen, op: Operation) -> None:
    """Custom-call kernels are numpy functions: they run on the tensors' values."""
    try:
        k = _kt().fallback(custom_call_kernel(op, EXECUTOR), gen.mod.device)
    except MissingRuleError as e:
        def missing(*args, error=e):
            raise error
        k = Kernel(missing)
    gen.kernel(op, k)


# Region analysis --------------------------------------------------------------------------------

def _is_elementwise(region: Region) -> bool:
    if len(region.blocks) != 1:
        return False
    for op in region.blocks[0].ops:
        if op.name in ELEMENTWISE:
            continue
        if op.name in ("stablehlo.broadcast_in_dim", "stablehlo.reshape") and \
                op.operands[0].type is op.results[0].type:
            continue
        return False
    return True


def reducer_ufunc(region: Region) -> np.ufunc | None:
    op = stablehlo.single_op_body(region)
    if op is None:
        return None
    return BINARY_UFUNCS.get(op.name)


def _defining(value: Value, name: str) -> Operation | None:
    owner = value.owner_op
    return owner if owner is not None and owner.name == name else None


def _compare(value: Value, direction: str | tuple[str, ...], lhs: Value, rhs: Value) -> bool:
    op = _defining(value, "stablehlo.compare")
    if op is None or common.enum(op.get_attr("comparison_direction")) not in (
            direction if isinstance(direction, tuple) else (direction,)):
        return False
    return op.operands == (lhs, rhs)


def argreduce_direction(op: Operation) -> bool | None:
    """For a two-operand reduce whose body is jax's argmax/argmin reducer (value, index) over
    an iota of the one reduced dimension: True for argmax, False for argmin; else None."""
    if len(op.results) != 2 or len(op.regions[0].blocks) != 1:
        return None
    dims = common.ints(op.get_attr("dimensions"))
    if len(dims) != 1:
        return None
    iota = _defining(op.operands[1], "stablehlo.iota")
    if iota is None or common.integer(iota.get_attr("iota_dimension")) != dims[0]:
        return None
    block = op.regions[0].blocks[0]
    if len(block.args) != 4:
        return None
    va, ia, vb, ib = block.args
    ret = block.terminator
    if ret is None or len(ret.operands) != 2:
        return None
    sel_v = _defining(ret.operands[0], "stablehlo.select")
    sel_i = _defining(ret.operands[1], "stablehlo.select")
    if sel_v is None or sel_i is None or sel_v.operands[1:] != (va, vb) or sel_i.operands[1:] != (ia, ib):
        return None
    pick = sel_v.operands[0]
    direction = None
    for d in ("GT", "LT"):
        if _compare(pick, d, va, vb):
            direction = d
    or_op = _defining(pick, "stablehlo.or")
    if direction is None and or_op is not None:
        for a, b in (or_op.operands, or_op.operands[::-1]):
            for d in ("GT", "LT"):
                if _compare(a, d, va, vb) and _compare(b, "NE", va, va):
                    direction = d
    if direction is None:
        return None
    if direction and dtype_of(va.type).kind in "fVc" and or_op is None:
        return None  # without the NaN term the body does not pick NaN the way np.argmax does
    tie = _defining(sel_i.operands[0], "stablehlo.or")
    if tie is None or pick not in tie.operands:
        return None
    other = tie.operands[1] if tie.operands[0] is pick else tie.operands[0]
    and_op = _defining(other, "stablehlo.and")
    if and_op is None:
        return None
    x, y = and_op.operands
    if not ((_compare(x, "EQ", va, vb) and _compare(y, "LT", ia, ib)) or
            (_compare(y, "EQ", va, vb) and _compare(x, "LT", ia, ib))):
        return None
    return direction == "GT"


# Reductions -------------------------------------------------------------------------------------

def reduce_tree(body: Callable, xs: Sequence[Any], inits: Sequence[Any], axes: tuple[int, ...]) -> tuple:
    """Reduce with an elementwise body applied to whole halves at once (a pairwise tree)."""
    xs = [np.asarray(x) for x in xs]
    nd = xs[0].ndim
    keep = [d for d in range(nd) if d not in axes]
    out_shape = tuple(xs[0].shape[d] for d in keep)
    xs = [np.transpose(x, keep + list(axes)).reshape(out_shape + (-1,)) for x in xs]
    n = xs[0].shape[-1]
    if n == 0:
        return tuple(np.broadcast_to(i, out_shape).copy() for i in inits)
    while n > 1:
        half = n // 2
        ys = body(*(x[..., :half] for x in xs), *(x[..., half:2 * half] for x in xs))
        ys = [np.broadcast_to(y, out_shape + (half,)) for y in ys]
        if n % 2:
            ys = [np.concatenate([y, x[..., 2 * half:]], axis=-1) for y, x in zip(ys, xs)]
        xs = ys
        n = half + n % 2
    values = [x[..., 0] for x in xs]
    outs = body(*(np.broadcast_to(i, out_shape) for i in inits), *values)
    return tuple(np.array(np.broadcast_to(y, out_shape), dtype=x.dtype) for y, x in zip(outs, values))


def argreduce(values, indices, init_value, init_index, axis, pick_max, body):
    v, i = kn.argreduce(values, indices, init_value, init_index, axis, pick_max)
    out = body(np.broadcast_to(init_value, np.shape(v)), np.broadcast_to(init_index, np.shape(i)), v, i)
    return tuple(np.array(np.broadcast_to(y, np.shape(v))) for y in out)


@codegen_rule("stablehlo.reduce")
def _reduce(gen: FunctionCodegen, op: Operation) -> None:
    n = len(op.results)
    xs, inits = op.operands[:n], op.operands[n:]
    dims = common.ints(op.get_attr("dimensions"))
    region = op.regions[0]
    ufunc = reducer_ufunc(region) if n == 1 else None
    if ufunc is not None:
        init = _constant_value(inits[0])
        if init is not None and dims:  # one call: ufunc.reduce with the init folded in
            dtype = dtype_of(op.results[0].type)
            reduce = gen.mod.hoist(ufunc.reduce, f"np_{ufunc.__name__}_reduce")
            initial = gen.mod.hoist(init, gen.mod.fresh("init"))
            gen.bind(op, f"{reduce}({gen.name(xs[0])}, {gen.mod.literal(dims)}, {gen.mod.literal(dtype)}, "
                         f"initial={initial})")
            return
        gen.bind(op, f"{gen.mod.function(kn.reduce_ufunc)}({gen.name(xs[0])}, {gen.name(inits[0])}, "
                     f"{gen.mod.function(ufunc)}, {gen.mod.literal(dims)})")
        return
    if not _is_elementwise(region):
        gen.interpreted(op)
        return
    pick_max = argreduce_direction(op)
    body = gen.region_function(region, "reducer")
    if pick_max is not None:
        gen.bind(op, f"{gen.mod.function(argreduce)}({gen.args(xs)}, {gen.args(inits)}, {dims[0]}, {pick_max}, "
                     f"{body})", returns_tuple=True)
        return
    gen.bind(op, f"{gen.mod.function(reduce_tree)}({body}, {gen.packed(xs)}, {gen.packed(inits)}, "
                 f"{gen.mod.literal(dims)})", returns_tuple=True)


def _constant_value(value: Value) -> Any:
    """The scalar a `stablehlo.constant` of one element defines, or None."""
    owner = value.owner_op
    if owner is None or owner.name != "stablehlo.constant":
        return None
    array = common.dense_value(owner.get_attr("value"))
    return array.reshape(-1)[0] if array.size == 1 else None


def _window_config(op: Operation, rank: int) -> tuple:
    window = common.ints(op.get_attr("window_dimensions"))
    strides = common.ints(op.get_attr("window_strides"), [1] * rank)
    base_dil = common.ints(op.get_attr("base_dilations"), [1] * rank)
    win_dil = common.ints(op.get_attr("window_dilations"), [1] * rank)
    padding = tuple(common.padding_pairs(op.get_attr("padding"), rank))
    return tuple(window), tuple(strides), tuple(base_dil), tuple(win_dil), padding


def reduce_window_tree(body: Callable, xs: Sequence[Any], inits: Sequence[Any], config: tuple) -> tuple:
    views = [kn.window_view(x, i, *config[:4], config[4]) for x, i in zip(xs, inits)]
    rank = np.ndim(xs[0])
    axes = tuple(range(rank, 2 * rank))
    return reduce_tree(body, views, inits, axes)


@codegen_rule("stablehlo.reduce_window")
def _reduce_window(gen: FunctionCodegen, op: Operation) -> None:
    n = len(op.results)
    xs, inits = op.operands[:n], op.operands[n:]
    config = _window_config(op, len(shape_of(xs[0].type)))
    region = op.regions[0]
    ufunc = reducer_ufunc(region) if n == 1 else None
    if ufunc is not None:
        window, strides, base_dil, win_dil, padding = config
        gen.bind(op, f"{gen.mod.function(kn.reduce_window_ufunc)}({gen.name(xs[0])}, {gen.name(inits[0])}, "
                     f"{gen.mod.function(ufunc)}, {gen.mod.literal(window)}, {gen.mod.literal(strides)}, "
                     f"{gen.mod.literal(base_dil)}, {gen.mod.literal(win_dil)}, {gen.mod.literal(padding)})")
        return
    if not _is_elementwise(region):
        gen.interpreted(op)
        return
    body = gen.region_function(region, "reducer")
    gen.bind(op, f"{gen.mod.function(reduce_window_tree)}({body}, {gen.packed(xs)}, {gen.packed(inits)}, "
                 f"{gen.mod.literal(config)})", returns_tuple=True)


@codegen_rule("stablehlo.map")
def _map(gen: FunctionCodegen, op: Operation) -> None:
    region = op.regions[0]
    if not _is_elementwise(region):
        gen.interpreted(op)
        return
    body = gen.region_function(region, "mapper")
    shape = shape_of(op.results[0].type)
    gen.bind(op, f"{gen.mod.function(apply_map)}({body}, {gen.packed(op.operands)}, {gen.mod.literal(shape)})")


def apply_map(body: Callable, xs: Sequence[Any], shape: tuple[int, ...]) -> np.ndarray:
    return np.array(np.broadcast_to(body(*xs)[0], shape))


# Sort -------------------------------------------------------------------------------------------

def _depends_only_on(value: Value, arg: Value, block: Block) -> list[Operation] | None:
    """The ops (in block order) computing `value` from `arg` and constants alone, or None."""
    ops: dict[Operation, None] = {}
    stack = [value]
    while stack:
        v = stack.pop()
        if v is arg:
            continue
        owner = v.owner_op
        if owner is None or owner.parent is not block:
            return None
        if owner not in ops:
            ops[owner] = None
            stack.extend(owner.operands)
    return sorted(ops, key=lambda o: list(block.ops).index(o))


def _same_computation(a: Value, b: Value, arg_a: Value, arg_b: Value) -> bool:
    if a is arg_a:
        return b is arg_b
    oa, ob = a.owner_op, b.owner_op
    if oa is None or ob is None or oa.name != ob.name or len(oa.operands) != len(ob.operands):
        return False
    if {k: str(v) for k, v in oa.properties.items()} != {k: str(v) for k, v in ob.properties.items()}:
        return False
    if oa.name != "stablehlo.constant" and a.type is not b.type:
        return False
    return all(_same_computation(x, y, arg_a, arg_b) for x, y in zip(oa.operands, ob.operands))


class SortKey(NamedTuple):
    """One key of a lexicographic sort comparator."""
    operand: int               # the operand pair (block arguments 2k, 2k + 1) it is computed from
    ops: list[Operation]       # the comparator's ops computing it from argument 2k
    value: Value               # the key of argument 2k
    descending: bool
    total: bool                # floats ordered by TOTALORDER (else by `<`, NaN last as torch sorts)
    nan_last: bool             # `<` with NaNs sorted last and equal (loom's float comparator)
    compare: Operation         # the strict comparison


def lexicographic_keys(op: Operation) -> list[SortKey] | None:
    """The keys of a sort comparator that compares lexicographically, the first key deciding
    unless its two sides are equal, then the next: `k0 < k0'` or `or(k0 < k0', and(eq0, rest))`
    (either operand order), each key an elementwise function of one operand, `<` a LT or GT
    compare (jax's form) or `lt or (rhs is NaN and lhs is not)` (loom's form), `eq` its EQ
    compare over the same values or `not(or(less, greater))` with the same key. None for other
    comparators."""
    block = op.regions[0].blocks[0]
    ret = block.terminator
    if ret is None or len(ret.operands) != 1 or len(block.args) != 2 * len(op.operands):
        return None
    return _lexicographic(ret.operands[0], block)


def _lexicographic(value: Value, block: Block) -> list[SortKey] | None:
    single = _strict_key(value, block)
    if single is not None:
        return [single]
    either = _defining(value, "stablehlo.or")
    if either is None:
        return None
    for first, second in (either.operands, either.operands[::-1]):
        key = _strict_key(first, block)
        both = _defining(second, "stablehlo.and")
        if key is None or both is None:
            continue
        for equal, rest in (both.operands, both.operands[::-1]):
            if _is_key_equality(equal, key, first, block):
                tail = _lexicographic(rest, block)
                if tail is not None:
                    return [key, *tail]
    return None


def _strict_key(value: Value, block: Block) -> SortKey | None:
    """The key a strict comparison `value` orders by, or None."""
    cmp = _defining(value, "stablehlo.compare")
    nan_last = False
    if cmp is None:  # lt or (rhs NaN and not lhs NaN)
        either = _defining(value, "stablehlo.or")
        if either is None:
            return None
        for lt, nan_test in (either.operands, either.operands[::-1]):
            cmp = _defining(lt, "stablehlo.compare")
            if cmp is not None and common.enum(cmp.get_attr("comparison_direction")) == "LT" and \
                    common.enum(cmp.get_attr("compare_type"), "") != "TOTALORDER" and \
                    _nan_last_test(nan_test, *cmp.operands):
                nan_last = True
                break
        else:
            return None
    direction = common.enum(cmp.get_attr("comparison_direction"))
    if direction not in ("LT", "GT"):
        return None
    lhs, rhs = cmp.operands
    for k in range(len(block.args) // 2):
        la, ra = block.args[2 * k], block.args[2 * k + 1]
        for value_a, value_b, swapped in ((lhs, rhs, False), (rhs, lhs, True)):
            ops = _depends_only_on(value_a, la, block)
            if ops is None or _depends_only_on(value_b, ra, block) is None or \
                    not _same_computation(value_a, value_b, la, ra):
                continue
            if any(o.name not in ELEMENTWISE for o in ops):
                return None
            total = common.enum(cmp.get_attr("compare_type"), "") == "TOTALORDER" and \
                dtype_of(value_a.type).kind in "fV"
            return SortKey(k, ops, value_a, (direction == "GT") != swapped, total, nan_last, cmp)
    return None


def _nan_last_test(value: Value, lhs: Value, rhs: Value) -> bool:
    """Whether `value` is `and(rhs != rhs, not(lhs != lhs))` (either operand order)."""
    both = _defining(value, "stablehlo.and")
    if both is None:
        return False
    for rhs_nan, not_lhs_nan in (both.operands, both.operands[::-1]):
        negation = _defining(not_lhs_nan, "stablehlo.not")
        if _compare(rhs_nan, "NE", rhs, rhs) and negation is not None and \
                _compare(negation.operands[0], "NE", lhs, lhs):
            return True
    return False


def _is_key_equality(value: Value, key: SortKey, less: Value, block: Block) -> bool:
    """Whether `value` is true exactly when the two sides of `key` are equal under its order:
    an EQ compare of the strict compare's values (of the same compare type), or
    `not(or(less, greater))` with `greater` the same key's comparison the other way."""
    cmp = _defining(value, "stablehlo.compare")
    if cmp is not None:
        # NaN != NaN, though NaNs are equal under the NaN-last order: only `not(or(...))` fits it
        if key.nan_last or common.enum(cmp.get_attr("comparison_direction")) != "EQ" or \
                set(cmp.operands) != set(key.compare.operands):
            return False
        return key.total == (common.enum(cmp.get_attr("compare_type"), "") == "TOTALORDER")
    negation = _defining(value, "stablehlo.not")
    either = _defining(negation.operands[0], "stablehlo.or") if negation is not None else None
    if either is None:
        return False
    arg = block.args[2 * key.operand]
    for one, other in (either.operands, either.operands[::-1]):
        if one is not less:
            continue
        mirror = _strict_key(other, block)
        if mirror is not None and mirror.operand == key.operand and mirror.descending != key.descending and \
                (mirror.total, mirror.nan_last) == (key.total, key.nan_last) and \
                _same_computation(mirror.value, key.value, arg, arg):
            return True
    return False


def sort_pairwise(comparator: Callable, xs: Sequence[Any], dim: int) -> tuple:
    """Stable sort by any elementwise comparator: rank = #less + #equivalent-and-earlier, from
    the n x n matrix of comparator results."""
    xs = [np.moveaxis(np.asarray(x), dim, -1) for x in xs]
    n = xs[0].shape[-1]
    if n <= 1:
        return tuple(np.moveaxis(x, -1, dim).copy() for x in xs)
    args = []
    for x in xs:
        args += [x[..., :, None], x[..., None, :]]
    less = np.broadcast_to(comparator(*args)[0], xs[0].shape + (n,))
    greater = np.swapaxes(less, -1, -2)
    earlier = np.tri(n, n, -1, dtype=bool)
    rank = greater.sum(axis=-1) + (~less & ~greater & earlier).sum(axis=-1)
    order = np.argsort(rank, axis=-1, kind="stable")
    return tuple(np.moveaxis(np.take_along_axis(x, order, -1), -1, dim) for x in xs)


PAIRWISE_SORT_LIMIT = 2048


@codegen_rule("stablehlo.sort")
def _sort(gen: FunctionCodegen, op: Operation) -> None:
    shape = shape_of(op.operands[0].type)
    dim = common.integer(op.get_attr("dimension"), -1)
    if dim < 0:
        dim += len(shape)
    keys = lexicographic_keys(op)
    if keys is not None and len(keys) == 1 and not keys[0].nan_last:
        k, ops, value, descending, total = keys[0][:5]
        block = op.regions[0].blocks[0]
        name = gen.mod.fresh("key")
        param = gen.mod.fresh("b")
        gen.emit(f"def {name}({param}):")
        with gen.nested_scope():
            gen.names[block.args[2 * k]] = param
            for o in ops:
                gen.op(o)
            gen.emit(f"return {gen.name(value)}")
        key_expr = f"{name}({gen.name(op.operands[k])})"
        if total:
            key_expr = f"{gen.mod.function(kn.total_order_key)}({key_expr})"
        key_expr = f"{gen.mod.function(np.broadcast_to)}({key_expr}, {gen.mod.literal(shape)})"
        gen.bind(op, f"{gen.mod.function(kn.sort_by_key)}({gen.packed(op.operands)}, {key_expr}, {dim}, "
                     f"{descending})", returns_tuple=True)
        return
    if _is_elementwise(op.regions[0]) and (shape[dim] if shape else 1) <= PAIRWISE_SORT_LIMIT:
        body = gen.region_function(op.regions[0], "comparator")
        gen.bind(op, f"{gen.mod.function(sort_pairwise)}({body}, {gen.packed(op.operands)}, {dim})",
                 returns_tuple=True)
        return
    gen.interpreted(op)


# Scatter and select_and_scatter -----------------------------------------------------------------

def scatter_update_ufunc(region: Region) -> tuple[bool, np.ufunc | None]:
    """(recognised, ufunc): `return update` is (True, None); `return op(old, update)` is
    (True, op's ufunc)."""
    block = region.blocks[0]
    if len(block.args) != 2:
        return False, None
    ops = list(block.ops)
    if len(ops) == 1 and ops[0].operands == (block.args[1],):
        return True, None
    ufunc = reducer_ufunc(region)
    return (ufunc is not None), ufunc


def scatter_sequential(body: Callable, inputs: Sequence[Any], indices, updates: Sequence[Any],
                       dims: kn.ScatterDims) -> tuple:
    """Scatter with any update computation: one update at a time, in order."""
    outs = [np.array(x) for x in inputs]
    updates = [np.asarray(u) for u in updates]
    index, valid = kn.scatter_index(outs[0].shape, indices, updates[0].shape, dims)
    for position in zip(*(i[valid] for i in index), *(u[valid] for u in updates)):
        target = position[:outs[0].ndim]
        values = position[outs[0].ndim:]
        new = body(*(o[target] for o in outs), *values)
        for o, v in zip(outs, new):
            o[target] = v
    return tuple(outs)


@codegen_rule("stablehlo.scatter")
def _scatter(gen: FunctionCodegen, op: Operation) -> None:
    n = len(op.results)
    inputs, indices, updates = op.operands[:n], op.operands[n], op.operands[n + 1:]
    dims = kn.ScatterDims(op.get_attr("scatter_dimension_numbers"))
    dims_name = gen.mod.hoist(dims, gen.mod.fresh("scatter_dims"))
    if n == 1:
        known, ufunc = scatter_update_ufunc(op.regions[0])
        if known:
            gen.bind(op, f"{gen.mod.function(kn.scatter_ufunc)}({gen.name(inputs[0])}, {gen.name(indices)}, "
                         f"{gen.name(updates[0])}, {dims_name}, {gen.mod.literal(ufunc)})")
            return
    body = gen.region_function(op.regions[0], "update")
    gen.bind(op, f"{gen.mod.function(scatter_sequential)}({body}, {gen.packed(inputs)}, {gen.name(indices)}, "
                 f"{gen.packed(updates)}, {dims_name})", returns_tuple=True)


def select_and_scatter_max(operand, source, init, window, strides, padding, pick_max: bool, first: bool):
    """select_and_scatter whose select is `a >= b` (first max), `a > b` (last max) or the min
    forms, and whose scatter adds: vectorised over windows; padding is never selected."""
    operand = np.asarray(operand)
    if operand.dtype.kind in "fVc" and np.isnan(operand).any():
        return None
    rank = operand.ndim
    valid = kn.window_view(np.ones(operand.shape, bool), False, window, strides, (1,) * rank, (1,) * rank,
                           padding)
    values = kn.window_view(operand, np.zeros((), operand.dtype), window, strides, (1,) * rank, (1,) * rank,
                            padding)
    out_shape = values.shape[:rank]
    flat_valid = valid.reshape(out_shape + (-1,))
    flat = values.reshape(out_shape + (-1,))
    extreme = np.where(flat_valid, flat, flat.max() if not pick_max else flat.min())
    best = extreme.max(axis=-1, keepdims=True) if pick_max else extreme.min(axis=-1, keepdims=True)
    hit = flat_valid & (flat == best)
    k = flat.shape[-1]
    pos = np.argmax(hit, axis=-1) if first else k - 1 - np.argmax(hit[..., ::-1], axis=-1)
    any_valid = flat_valid.any(axis=-1)
    w_index = np.unravel_index(pos, window)
    result = np.full(operand.shape, init, operand.dtype)
    out_index = np.indices(out_shape)
    coords = tuple(out_index[d] * strides[d] + w_index[d] - padding[d][0] for d in range(rank))
    sel = tuple(c[any_valid] for c in coords)
    np.add.at(result, sel, np.asarray(source)[any_valid])
    return result


@codegen_rule("stablehlo.select_and_scatter")
def _select_and_scatter(gen: FunctionCodegen, op: Operation) -> None:
    select, scatter = op.regions
    sel_block = select.blocks[0]
    rank = len(shape_of(op.operands[0].type))
    form = None
    ops = list(sel_block.ops)
    if len(ops) == 2 and ops[0].name == "stablehlo.compare" and ops[0].operands == tuple(sel_block.args) and \
            scatter_update_ufunc(scatter) == (True, np.add):
        form = {"GE": (True, True), "GT": (True, False), "LE": (False, True), "LT": (False, False)}.get(
            common.enum(ops[0].get_attr("comparison_direction")))
    if form is None:
        gen.interpreted(op)
        return
    window = common.ints(op.get_attr("window_dimensions"), [1] * rank)
    strides = common.ints(op.get_attr("window_strides"), [1] * rank)
    padding = tuple(common.padding_pairs(op.get_attr("padding"), rank))
    fast = gen.mod.hoist(SelectAndScatter(InterpretedOp(gen.mod.interpreter, op, free_values(op)), window, strides,
                                          padding, form), gen.mod.fresh("select_and_scatter"))
    gen.bind(op, f"{fast}({gen.args(op.operands)})")


class SelectAndScatter:
    """The vectorised select_and_scatter, with the interpreter for data it cannot handle (NaN)."""

    def __init__(self, fallback: InterpretedOp, window, strides, padding, form) -> None:
        self.fallback = fallback
        self.window, self.strides, self.padding, self.form = tuple(window), tuple(strides), padding, form

    def __call__(self, operand, source, init):
        out = select_and_scatter_max(operand, source, init, self.window, self.strides, self.padding, *self.form)
        if out is None:
            return self.fallback((operand, source, init), ())[0]
        return out


# Region ops on torch tensors --------------------------------------------------------------------

_TORCH_REDUCE_KINDS = {np.add: "add", np.multiply: "mul", np.maximum: "max", np.minimum: "min",
                       np.bitwise_and: "all", np.bitwise_or: "any"}
_BOOL_REDUCE_KINDS = {"add": "any", "mul": "all", "max": "any", "min": "all", "all": "all", "any": "any"}
_IDENTITY = {"add": 0, "mul": 1, "any": False, "all": True}


def _has_shell_dtypes(values: Sequence[Value]) -> bool:
    shell = _kt().SHELL_DTYPES
    for v in values:
        try:
            if dtype_of(v.type) in shell:
                return True
        except Exception:  # tuples, tokens
            return True
    return False


def _torch_reduce_kind(ufunc: np.ufunc, dtype: np.dtype, init_value: Value) -> tuple[str | None, bool]:
    """The torch reduction (`sum`, `max`, ...) a reducer ufunc maps to over `dtype` (None: none
    does), and whether the init value must be combined in (it is not the reduction's identity)."""
    kind = _TORCH_REDUCE_KINDS.get(ufunc)
    if dtype == np.bool_ and kind is not None:
        kind = _BOOL_REDUCE_KINDS[kind]
    elif kind in ("all", "any") or (dtype.kind == "c" and kind in ("max", "min")):
        kind = None
    if kind is None:
        return None, False
    init = _constant_value(init_value)
    identity = _IDENTITY.get(kind)
    if kind == "max" and dtype.kind in "fV":
        identity = -np.inf
    elif kind == "min" and dtype.kind in "fV":
        identity = np.inf
    return kind, init is None or identity is None or bool(init != identity)


@torch_codegen_rule("stablehlo.reduce")
def _reduce_torch(gen: FunctionCodegen, op: Operation) -> None:
    kt = _kt()
    n = len(op.results)
    xs, inits = op.operands[:n], op.operands[n:]
    dims = common.ints(op.get_attr("dimensions"))
    region = op.regions[0]
    shape = shape_of(xs[0].type)
    shapes = tuple(shape_of(r.type) for r in op.results)
    if any(shape[d] < 0 for d in dims) or \
            (any(shape[d] == 0 for d in dims) and any(d < 0 for s in shapes for d in s)):
        gen.numpy_island(op, "dynamic dimensions")
        return
    if any(shape[d] == 0 for d in dims):  # nothing to reduce: the init values
        gen.bind(op, f"{gen.mod.function(kt.reduce_empty)}({gen.packed(inits)}, {gen.mod.literal(shapes)})",
                 returns_tuple=True)
        return
    unsigned = _has_shell_dtypes(op.operands)
    dtype = dtype_of(op.results[0].type)
    ufunc = reducer_ufunc(region) if n == 1 else None
    if ufunc is not None:
        kind, combine = _torch_reduce_kind(ufunc, dtype, inits[0])
        if kind is None:
            gen.numpy_island(op, "no torch reduction for this reducer and element type")
            return
        if unsigned:
            gen.bind(op, f"{gen.mod.function(kt.reduce_unsigned)}({gen.name(xs[0])}, {gen.mod.literal(dims)}, "
                         f"{gen.name(inits[0])}, {kind!r}, {combine})")
            return
        if dims and not combine and kind in ("add", "max", "min"):  # the common forms: one torch call
            import torch
            fn = {"add": torch.sum, "max": torch.amax, "min": torch.amin}[kind]
            tdt = kt.torch_dtype(dtype)
            extra = f", dtype={gen.mod.hoist(tdt, str(tdt).replace('.', '_'))}" if kind == "add" else ""
            gen.bind(op, f"{gen.mod.function(fn)}({gen.name(xs[0])}, {gen.mod.literal(dims)}{extra})")
            return
        gen.bind(op, f"{gen.mod.function(kt.reduce)}({gen.name(xs[0])}, {gen.mod.literal(dims)}, "
                     f"{gen.name(inits[0])}, {kind!r}, {gen.mod.literal(kt.torch_dtype(dtype))}, {combine})")
        return
    if not _is_elementwise(region):
        gen.numpy_island(op, "the reducer is not elementwise")
        return
    pick_max = argreduce_direction(op)
    if pick_max is not None and not unsigned and dtype_of(xs[0].type).kind in "fViu" and len(dims) == 1:
        body = gen.region_function(region, "reducer")
        gen.bind(op, f"{gen.mod.function(kt.argreduce)}({gen.args(xs)}, {gen.args(inits)}, {dims[0]}, "
                     f"{pick_max}, {body})", returns_tuple=True)
        return
    body = gen.region_function(region, "reducer")
    gen.bind(op, f"{gen.mod.function(kt.reduce_tree)}({body}, {gen.packed(xs)}, {gen.packed(inits)}, "
                 f"{gen.mod.literal(dims)})", returns_tuple=True)


@torch_codegen_rule("stablehlo.map")
def _map_torch(gen: FunctionCodegen, op: Operation) -> None:
    region = op.regions[0]
    if not _is_elementwise(region):
        gen.numpy_island(op, "the mapper is not elementwise")
        return
    body = gen.region_function(region, "mapper")
    shape = shape_of(op.results[0].type)
    gen.bind(op, f"{gen.mod.function(_kt().apply_map)}({body}, {gen.packed(op.operands)}, "
                 f"{gen.mod.literal(shape)})")


@torch_codegen_rule("stablehlo.sort")
def _sort_torch(gen: FunctionCodegen, op: Operation) -> None:
    """A comparator ordering by keys (lexicographically by several) sorts by stable torch sorts,
    the last key first; another elementwise one ranks all pairs (`sort_pairwise`, as the numpy
    rule does) up to PAIRWISE_SORT_LIMIT elements; the rest runs on numpy."""
    kt = _kt()
    shape = shape_of(op.operands[0].type)
    dim = common.integer(op.get_attr("dimension"), -1)
    if dim < 0:
        dim += len(shape)
    keys = lexicographic_keys(op)
    if keys is not None and all(dtype_of(key.value.type).kind != "c" for key in keys):
        exprs = [_torch_sort_key(gen, op, key, shape) for key in keys]
        descending = tuple(key.descending for key in keys)
        gen.bind(op, f"{gen.mod.function(kt.sort_lexicographic)}({gen.packed(op.operands)}, ({', '.join(exprs)},), "
                     f"{gen.mod.literal(descending)}, {dim})", returns_tuple=True)
        return
    region = op.regions[0]
    length = shape[dim] if shape else 1
    if not _is_elementwise(region):
        gen.numpy_island(op, "the comparator is neither a compare of keys nor elementwise")
        return
    if length > PAIRWISE_SORT_LIMIT:
        gen.numpy_island(op, f"the comparator is not a compare of keys, and {length} elements are more than the "
                             f"pairwise sort takes ({PAIRWISE_SORT_LIMIT})")
        return
    body = gen.region_function(region, "comparator")
    gen.bind(op, f"{gen.mod.function(kt.sort_pairwise)}({body}, {gen.packed(op.operands)}, {dim})",
             returns_tuple=True)


def _torch_sort_key(gen: FunctionCodegen, op: Operation, key: SortKey, shape: tuple[int, ...]) -> str:
    """Emit the function computing one sort key from its operand; return the expression of the
    key as a tensor torch.sort orders as the comparator does."""
    block = op.regions[0].blocks[0]
    name = gen.mod.fresh("key")
    param = gen.mod.fresh("b")
    gen.emit(f"def {name}({param}):")
    with gen.nested_scope():
        gen.names[block.args[2 * key.operand]] = param
        for o in key.ops:
            gen.op(o)
        gen.emit(f"return {gen.name(key.value)}")
    return f"{gen.mod.function(_kt().sortable)}({name}({gen.name(op.operands[key.operand])}).expand(" \
           f"{gen.mod.literal(shape)}), {key.total})"


@torch_codegen_rule("stablehlo.reduce_window")
def _reduce_window_torch(gen: FunctionCodegen, op: Operation) -> None:
    kt = _kt()
    n = len(op.results)
    xs, inits = op.operands[:n], op.operands[n:]
    shape = shape_of(xs[0].type)
    config = _window_config(op, len(shape))
    window, strides, base_dil, win_dil, padding = config
    padded = [(d - 1) * b + 1 + lo + hi if d else lo + hi for d, b, (lo, hi) in zip(shape, base_dil, padding)]
    spans = [(w - 1) * d + 1 for w, d in zip(window, win_dil)]
    out_size = math.prod(shape_of(op.results[0].type))
    if out_size == 0 or any(s > p for s, p in zip(spans, padded)) or any(d < 0 for d in shape):
        gen.numpy_island(op, "an empty result, a window larger than the input or dynamic dimensions")
        return
    region = op.regions[0]
    dtype = dtype_of(op.results[0].type)
    ufunc = reducer_ufunc(region) if n == 1 else None
    if ufunc is not None:
        kind, combine = _torch_reduce_kind(ufunc, dtype, inits[0])
        if kind is None:
            gen.numpy_island(op, "no torch reduction for this reducer and element type")
            return
        if _has_shell_dtypes(op.operands):
            gen.bind(op, f"{gen.mod.function(kt.reduce_window_unsigned)}({gen.name(xs[0])}, {gen.name(inits[0])}, "
                         f"{kind!r}, {gen.mod.literal(config)}, {combine})")
            return
        gen.bind(op, f"{gen.mod.function(kt.reduce_window)}({gen.name(xs[0])}, {gen.name(inits[0])}, {kind!r}, "
                     f"{gen.mod.literal(config)}, {gen.mod.literal(kt.torch_dtype(dtype))}, {combine})")
        return
    if not _is_elementwise(region):
        gen.numpy_island(op, "the reducer is not elementwise")
        return
    body = gen.region_function(region, "reducer")
    gen.bind(op, f"{gen.mod.function(kt.reduce_window_tree)}({body}, {gen.packed(xs)}, {gen.packed(inits)}, "
                 f"{gen.mod.literal(config)})", returns_tuple=True)


_KEEP = {"GE": "ge", "GT": "gt", "LE": "le", "LT": "lt"}


@torch_codegen_rule("stablehlo.select_and_scatter")
def _select_and_scatter_torch(gen: FunctionCodegen, op: Operation) -> None:
    import torch
    select, scatter = op.regions
    ops = list(select.blocks[0].ops)
    keep = None
    if len(ops) == 2 and ops[0].name == "stablehlo.compare" and ops[0].operands == tuple(select.blocks[0].args) \
            and scatter_update_ufunc(scatter) == (True, np.add) and not _has_shell_dtypes(op.operands) and \
            dtype_of(op.operands[0].type).kind != "c":
        keep = _KEEP.get(common.enum(ops[0].get_attr("comparison_direction")))
    if keep is None:
        gen.numpy_island(op, "select is not one comparison of its arguments, or scatter does not add")
        return
    rank = len(shape_of(op.operands[0].type))
    window = common.ints(op.get_attr("window_dimensions"), [1] * rank)
    strides = common.ints(op.get_attr("window_strides"), [1] * rank)
    padding = tuple(tuple(p) for p in common.padding_pairs(op.get_attr("padding"), rank))
    gen.bind(op, f"{gen.mod.function(_kt().select_and_scatter)}({gen.args(op.operands)}, "
                 f"{gen.mod.literal(tuple(window))}, {gen.mod.literal(tuple(strides))}, {gen.mod.literal(padding)}, "
                 f"{gen.mod.function(getattr(torch, keep))})")


_SCATTER_KINDS = {None: None, np.add: "add", np.multiply: "mul", np.maximum: "max", np.minimum: "min"}


@torch_codegen_rule("stablehlo.scatter")
def _scatter_torch(gen: FunctionCodegen, op: Operation) -> None:
    n = len(op.results)
    static = common.static_operands(op)
    if n == 1:
        inputs, indices, updates = op.operands[:n], op.operands[n], op.operands[n + 1:]
        known, ufunc = scatter_update_ufunc(op.regions[0])
        complex_ok = dtype_of(inputs[0].type).kind != "c" or ufunc in (None, np.add)
        if known and ufunc in _SCATTER_KINDS and complex_ok and static:
            dims = kn.ScatterDims(op.get_attr("scatter_dimension_numbers"))
            plan = _kt().Scatter(shape_of(inputs[0].type), shape_of(indices.type), shape_of(updates[0].type), dims,
                                 _SCATTER_KINDS[ufunc], unsigned=_has_shell_dtypes(op.operands))
            gen.bind(op, f"{gen.mod.hoist(plan, gen.mod.fresh(plan.__name__))}({gen.name(inputs[0])}, "
                         f"{gen.name(indices)}, {gen.name(updates[0])})")
            return
    if static and not _has_shell_dtypes(op.operands) and _is_elementwise(op.regions[0]):
        plan = _kt().ScatterRounds(shape_of(op.operands[0].type), shape_of(op.operands[n].type),
                                   shape_of(op.operands[n + 1].type),
                                   kn.ScatterDims(op.get_attr("scatter_dimension_numbers")))
        body = gen.region_function(op.regions[0], "update")
        gen.bind(op, f"{gen.mod.hoist(plan, gen.mod.fresh(plan.__name__))}({body}, "
                     f"{gen.packed(op.operands[:n])}, {gen.name(op.operands[n])}, "
                     f"{gen.packed(op.operands[n + 1:])})", returns_tuple=True)
        return
    gen.numpy_island(op, "dynamic shapes, unsigned operands or an update computation that is not elementwise")


# Executables ------------------------------------------------------------------------------------

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
        if len(args) != len(fast) or not all(type(a) is np.ndarray and a.dtype == d and a.shape == s
                                              for a, (d, s) in zip(args, fast)):
            args = check_arguments(args, self.input_types, self._names, self.entry)
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
    (`kernels_torch.NumpyFallback`), so every program the numpy backend runs, this one runs.
    `torch_kernels` overrides the torch table (`kernels_torch.TORCH_KERNELS`)."""

    backend = "torch"

    def __init__(self, module: Operation, entry: str = "main",
                 kernels: dict[str, Callable[[Operation], Kernel]] | None = None, backend: str = "torch",
                 device: Any = None, donate: Sequence[int] = (), torch_kernels: dict | None = None) -> None:
        import torch
        kt = _kt()
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
        kt = _kt()
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


__all__ = ["CODEGEN_RULES", "ELEMENTWISE", "LIBRARIES", "TORCH_CODEGEN_RULES", "Executable", "TorchExecutable",
           "codegen_rule", "compile_module", "torch_codegen_rule"]
