"""`compile` and `execute`: run a module's function on numpy arrays with either executor."""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from loom.backend.common import ExecutionError, Token, argument_names, check_arguments
from loom.backend.compiled import LIBRARIES, Executable
from loom.backend.compiled.codegen import _fresh_result
from loom.backend.interpreter import Interpreter, functions_of
from loom.backend.kernels import KERNELS, Kernel
from loom.ir.core import Operation, Value

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
        checked = check_arguments(args, self.input_types, self._names, self.entry)
        with np.errstate(all="ignore"):
            out = self.interpreter.call(self.entry, checked)
        values = [o if isinstance(o, (tuple, Token)) else np.array(o) for o in out]
        return values[0] if len(values) == 1 else tuple(values)


def _module(module_or_text: Operation | str) -> Operation:
    if isinstance(module_or_text, str):
        from loom.ir import parse
        return parse(module_or_text, allow_unregistered=True)
    return module_or_text


def compile(module_or_text: Operation | str, entry: str = "main",  # noqa: A001 - loom.compile
            executor: str = "compiled", backend: str = "numpy", device: Any = None,
            partition: bool | None = None) -> Callable[..., Any]:
    """A callable running function `entry` of a module (or its text): it returns one array, or a
    tuple when the function has several results. `executor` is "compiled" (generated Python, its
    source in `.source`; compiled once per module object, entry, backend and device, so after
    transforming a module in place build `loom.backend.Executable(module)` afresh) or
    "interpreter" (the reference interpreter, numpy only).

    A sharded program (a module with an `sdy.mesh` and `sdy.sharding`s, as JAX exports it) is
    partitioned (`loom.sharding.partition`) and runs over the first CPU devices, one thread each
    (LOOM_NUM_CPU_DEVICES of them): the callable takes and returns global arrays. `partition=False`
    runs such a program whole on one device instead (the same values); a program on a mesh of one
    device, or a per-device program (one already partitioned, or one with a mesh but no
    shardings), runs as one program unless `partition=True`.

    `backend` is the array library of the compiled code: "numpy" (numpy arrays in and out) or
    "torch" (torch tensors on `device`, "cpu" by default, e.g. "cuda" or "cuda:1"; numpy inputs
    are moved there; results stay there as tensors)."""
    module = _module(module_or_text)
    mesh = _module_mesh(module) if partition is not False else None
    if partition and mesh is None:
        raise ExecutionError("partition=True: the module declares no mesh (sdy.mesh) to partition over")
    if mesh is not None and (partition or (_devices_of(mesh) > 1 and _is_global_sharded(module, entry))):
        return _sharded(module, mesh, entry, executor, backend)
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


def _module_mesh(module: Operation) -> Any:
    """The `#sdy.mesh` of a module that declares one (a sharded program, as JAX exports it), else
    None; a module with several meshes is refused."""
    meshes = [op for op in module.regions[0].blocks[0].ops if op.name == "sdy.mesh"] \
        if module.regions and module.regions[0].blocks else []
    if len(meshes) > 1:
        names = ", ".join("@" + op.get_attr("sym_name").value for op in meshes)
        raise ExecutionError(f"the module declares {len(meshes)} meshes ({names}); loom.compile runs programs "
                             "over one mesh")
    return meshes[0].get_attr("mesh") if meshes else None


def _devices_of(mesh: Any) -> int:
    return int(np.prod([size for _, size in mesh.axes], dtype=np.int64))


def _is_global_sharded(module: Operation, entry: str) -> bool:
    """Whether `entry` is a global program with shardings to partition: its arguments or results
    carry `sdy.sharding`, or it holds sdy ops, and it is not already a per-device program of
    `loom.sharding.partition` (whose arguments and results carry `loom.global_type`). A program
    with a mesh but neither is a per-device program (a manual computation's body, say)."""
    for op in module.regions[0].blocks[0].ops:
        if op.name == "func.func" and op.get_attr("sym_name").value == entry:
            attrs = [*(op.get_attr("arg_attrs") or ()), *(op.get_attr("res_attrs") or ())]
            if any(d.get_value("loom.global_type") is not None for d in attrs):
                return False
            return any(d.get_value("sdy.sharding") is not None for d in attrs) or \
                any(o.name.startswith("sdy.") for o in op.walk())
    return False


def _sharded(module: Operation, mesh_attr: Any, entry: str, executor: str, backend: str) -> Callable[..., Any]:
    """A sharded program run partitioned (loom.sharding.partition) over the first devices (in mesh
    order, or as the mesh's device_ids say), one thread each: it takes and returns global
    arrays. Cached per module object, entry and executor, like compiled programs."""
    from loom.runtime.devices import devices
    from loom.runtime.local import MeshExecutable
    from loom.sharding import Mesh, partition
    if backend != "numpy":
        raise ValueError("a sharded program runs on the host's CPU devices (backend='numpy'), not on "
                         f"backend={backend!r}")
    if executor not in EXECUTORS:
        raise ValueError(f"unknown executor {executor!r}; expected one of {', '.join(EXECUTORS)}")
    per_module = _CACHE.setdefault(module, {})
    key = ("sharded", entry, executor)
    if key not in per_module:
        names = [name for name, _ in mesh_attr.axes]
        sizes = [size for _, size in mesh_attr.axes]
        available = devices("numpy")
        needed = int(np.prod(sizes, dtype=np.int64))
        if needed > len(available):
            raise ExecutionError(f"the program's mesh {mesh_attr} needs {needed} devices but {len(available)} "
                                 f"{'is' if len(available) == 1 else 'are'} available; set LOOM_NUM_CPU_DEVICES="
                                 f"{needed} (or more) before importing loom")
        order = list(mesh_attr.device_ids) or list(range(needed))
        grid = np.empty(needed, dtype=object)
        grid[:] = [available[i] for i in order]
        per_module[key] = MeshExecutable(partition(module), Mesh(grid.reshape(sizes), names), executor=executor,
                                         entry=entry)
    return per_module[key]


def execute(module_or_text: Operation | str, *args: Any, entry: str = "main", executor: str = "compiled",
            backend: str = "numpy", device: Any = None, partition: bool | None = None) -> Any:
    """Compile (or reuse) and run function `entry` on `args`."""
    return compile(module_or_text, entry=entry, executor=executor, backend=backend, device=device,
                   partition=partition)(*args)


# Per-device programs: collectives that may overwrite their operands ----------------------------

# The collectives whose kernels take `in_place`: the communicator may write the result into an
# operand the program never reads again.
IN_PLACE_COLLECTIVES = ("stablehlo.all_reduce",)
_COLLECTIVES = frozenset({"stablehlo.all_reduce", "stablehlo.all_gather", "stablehlo.reduce_scatter",
                          "stablehlo.all_to_all", "stablehlo.collective_permute", "stablehlo.collective_broadcast",
                          "stablehlo.collective_reduce"})
_NOT_OWNED = object()  # the root of memory the program does not own: a constant, a caller's argument


def dead_operand_collectives(module: Operation, entry: str = "main", donate: Sequence[int] = ()) -> set[Operation]:
    """The collectives (`IN_PLACE_COLLECTIVES`) of `module` whose operands the program owns and
    never reads again, so the communicator may write the result into them: each operand, and every
    value that may share its memory (results of ops that are not known to make new arrays, as
    the compiled code's donation counts them), has no later use in its block, nested regions and
    the return included; no earlier collective or call of the block read it (a peer may still
    read it); its memory was made by an op of that block (a fresh array), or is an entry argument
    in `donate` (given up by the caller). Constants, other arguments and values from enclosing
    blocks (a loop body runs again) are never overwritten."""
    dead: set[Operation] = set()
    funcs = functions_of(module)
    for name, func in funcs.items():
        owned = set(donate) if name == entry else set()
        for op in func.walk():
            for region in op.regions:
                for block in region.blocks:
                    args: dict[Value, frozenset] = {a: frozenset([a] if op is func and i in owned else [_NOT_OWNED])
                                                     for i, a in enumerate(block.args)}
                    dead |= _dead_in_block(block, args)
    return dead


def _dead_in_block(block: Any, roots: dict[Value, frozenset]) -> set[Operation]:
    ops = list(block.ops)
    used = [[v for nested in o.walk() for v in nested.operands] for o in ops]
    made_at = {r: k for k, o in enumerate(ops) for r in o.results}
    for o, vs in zip(ops, used):
        if _fresh_result(o):
            roots.update((r, frozenset([r])) for r in o.results)
        else:  # may be a view of (or be) what it reads; an op of no operands: a constant
            reach = frozenset().union(*(roots.get(v, {_NOT_OWNED}) for v in vs)) if vs else frozenset()
            if o.regions or not vs:
                reach |= {_NOT_OWNED}
            roots.update((r, reach) for r in o.results)
    dead = set()
    for k, o in enumerate(ops):
        if o.name not in IN_PLACE_COLLECTIVES or not o.operands:
            continue
        mine = [roots.get(v, frozenset([_NOT_OWNED])) for v in o.operands]
        every = frozenset().union(*mine)
        if _NOT_OWNED in every or sum(map(len, mine)) != len(every):  # foreign, or two operands share memory
            continue
        # later reads of values made before the collective (values made after it from its results
        # are the result's own, in place or not)
        later = [v for vs in used[k + 1:] for v in vs if made_at.get(v, -1) < k]
        # values handed earlier to a collective or a call (a peer, or a transfer in flight, may
        # still read them) or pushed on a stack (popped later)
        read_before = [v for j, o2 in enumerate(ops[:k]) if any(_lends(n) for n in o2.walk()) for v in used[j]]
        if not any(roots.get(v, frozenset()) & every for v in later + read_before):
            dead.add(o)
    return dead


def _lends(op: Operation) -> bool:
    """Whether `op` may leave its operands to be read after it returns: a collective (on the
    in-process mesh a peer may read an operand after the caller has left; an asynchronous one
    reads it until its done), a call (of a function that may be one), a stack push."""
    return op.name in _COLLECTIVES or op.name.startswith("comm.") or op.name in ("func.call", "stack.push")


def compile_partition(module: Operation, entry: str = "main", executor: str = "compiled",
                      donate: Sequence[int] = (), device: Any = None) -> Callable[..., Any]:
    """A per-device program ready to run as one partition: compiled, its collectives whose
    operands are dead (`dead_operand_collectives`) writing their results into them, and the entry
    arguments in `donate` given up by the caller (results may reuse their memory); or run by the
    interpreter (which copies). `device`: a torch device to compile for (a TorchExecutable on its
    tensors; loom.runtime.device_mesh), None for the host's numpy arrays."""
    if executor == "interpreter":
        if device is not None:
            raise ValueError("the interpreter runs on numpy arrays; a partition on a torch device is compiled")
        return Interpreted(module, entry)
    if executor != "compiled":
        raise ValueError(f"unknown executor {executor!r}; expected one of {', '.join(EXECUTORS)}")
    donate = tuple(sorted(set(donate)))
    per_module = _CACHE.setdefault(module, {})
    key = ("partition", entry, donate, str(device))
    if key in per_module:
        return per_module[key]
    dead = dead_operand_collectives(module, entry, donate)

    def in_place(table: dict) -> dict:
        """`table` with the dead-operand collectives' kernels told they may write into their operand."""
        out = dict(table)
        for name in IN_PLACE_COLLECTIVES:
            def make(op: Operation, make_default: Callable[[Operation], Any] = table[name]) -> Any:
                k = make_default(op)
                return Kernel(functools.partial(k.fn, in_place=True), *k.template) \
                    if op in dead and k is not None and k.fn is not None else k
            out[name] = make
        return out

    if device is None:
        exe = Executable(module, entry, kernels=in_place(KERNELS), donate=donate)
    else:
        from loom.backend.compiled import TorchExecutable
        from loom.backend.torch_kernels import TORCH_KERNELS
        exe = TorchExecutable(module, entry, kernels=in_place(KERNELS), device=device, donate=donate,
                              torch_kernels=in_place(TORCH_KERNELS))
    per_module[key] = exe
    return exe


__all__ = ["BACKENDS", "EXECUTORS", "Interpreted", "compile", "compile_partition", "dead_operand_collectives",
           "execute"]
