"""loom: a machine-learning compiler stack in Python.

`loom.ir` is the MLIR-style IR (parse, print, verify, build); `loom.rewrite` the pattern rewriter
and pass manager; `loom.compile` / `loom.execute` run a module's function on numpy arrays;
`loom.jit` traces a Python function written with `loom.numpy` into the IR and compiles it.
"""

from __future__ import annotations

from typing import Any

from loom.runtime.executable import compile as _compile
from loom.runtime.executable import execute as _execute

__version__ = "0.1.0"

# The op families fill the rule tables of loom.backend and loom.transforms (kernels, derivatives,
# batching); every `import loom.<anything>` runs this first, so no table is seen unfilled.
import loom.ops  # noqa: E402, F401


def compile(module_or_text: Any, entry: str = "main", executor: str = "compiled", backend: str = "numpy",  # noqa: A001
            device: Any = None, partition: bool | None = None) -> Any:
    """A callable running function `entry` of a module (or its text) on numpy arrays, or on torch
    tensors with `backend="torch"` (`device` e.g. "cuda"); a sharded module (JAX's sdy meshes and
    shardings) runs partitioned over the CPU devices, global arrays in and out. See
    loom.runtime.executable.compile."""
    return _compile(module_or_text, entry=entry, executor=executor, backend=backend, device=device,
                    partition=partition)


def execute(module_or_text: Any, *args: Any, entry: str = "main", executor: str = "compiled", backend: str = "numpy",
            device: Any = None, partition: bool | None = None) -> Any:
    """Compile and run function `entry` on `args`. See loom.runtime.executable.execute."""
    return _execute(module_or_text, *args, entry=entry, executor=executor, backend=backend, device=device,
                    partition=partition)


from loom import (  # noqa: E402  (`loom.lax`, `loom.numpy`, ... after `import loom`)
    host,
    knn,
    lax,
    nn,
    numpy,
    random,
    scipy,  # noqa: E402  (after custom_jvp, which loom.scipy.special uses)
    sharding,
    tree_util,
)
from loom.frontend.checkpoint import checkpoint, checkpoint_policies, remat  # noqa: E402
from loom.frontend.config import config  # noqa: E402
from loom.frontend.custom_derivatives import closure_convert, custom_jvp, custom_vjp  # noqa: E402
from loom.frontend.grad import grad, value_and_grad, vjp  # noqa: E402
from loom.frontend.jacobians import hessian, jacfwd, jacrev  # noqa: E402
from loom.frontend.jit import jit  # noqa: E402
from loom.frontend.jvp import jvp  # noqa: E402
from loom.frontend.linearize import linearize  # noqa: E402
from loom.frontend.placement import placement  # noqa: E402
from loom.frontend.shapes import ShapeDtypeStruct, block_until_ready, device_get, eval_shape  # noqa: E402
from loom.frontend.shard_map import shard_map  # noqa: E402
from loom.frontend.vmap import vmap  # noqa: E402
from loom.lax.control_flow import checkpoint_policy  # noqa: E402

# `loom.devices` is the function, as `jax.devices`; the module is reached with `from loom.runtime.devices import ...`.
from loom.runtime.devices import Array, Device, device_put, devices, from_dlpack  # noqa: E402
from loom.sharding import make_mesh  # noqa: E402

__all__ = ["Array", "Device", "ShapeDtypeStruct", "__version__", "block_until_ready", "checkpoint",
           "checkpoint_policies", "checkpoint_policy", "closure_convert", "compile", "config", "custom_jvp",
           "custom_vjp", "device_get", "device_put", "devices", "eval_shape", "execute", "from_dlpack", "grad",
           "hessian",
           "jacfwd", "jacrev", "host", "jit", "jvp", "knn", "lax", "linearize", "make_mesh", "nn", "numpy",
           "placement", "random",
           "remat", "scipy", "shard_map", "sharding", "tree_util", "value_and_grad", "vjp", "vmap"]
