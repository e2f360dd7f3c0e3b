"""JAX on 8 fake CPU devices, in a subprocess (XLA_FLAGS must be set before jax is imported, and
the test process's jax keeps one device), as the oracle of loom's sharded front end.

A case is the source of an expression written against names both sides define:

    jnp, lax, jit, shard_map, P, S (S(*spec) = NamedSharding(mesh, P(*spec))), mesh (2 x 4, "x", "y"),
    grad, jvp, vmap

`jax_results(cases)` evaluates each case in JAX and returns, per case, what it asks for: "text"
(the lowered module as jaxlib prints it: generic form, custom form) or "value" (the function called on the
arguments, each first placed with `jax.device_put` on the sharding its case names, as jax 0.10's
shard_map wants), as numpy arrays. `loom_env()` gives the same names over loom.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from typing import Any

import numpy as np

MESH_SHAPE = (2, 4)
MESH_AXES = ("x", "y")

_SCRIPT = r"""
import os, pickle, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import numpy as np
import jax, jax.numpy as jnp
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

request = pickle.load(sys.stdin.buffer)
mesh = Mesh(np.array(jax.devices()[:8]).reshape(request["shape"]), request["axes"])
env = dict(jnp=jnp, lax=lax, jit=jax.jit, P=P, S=lambda *spec: NamedSharding(mesh, P(*spec)), mesh=mesh,
           grad=jax.grad, jvp=jax.jvp, vmap=jax.vmap, np=np,
           shard_map=lambda f, **kw: jax.shard_map(f, **{"check_vma": False, **kw}))
out = {}
for name, (kind, source, args, placements) in request["cases"].items():
    fn = eval(source, env)
    if kind == "text":
        lowered = fn.lower(*args)
        out[name] = (lowered.compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True),
                     lowered.as_text())
    else:
        placed = [a if p is None else jax.device_put(a, NamedSharding(mesh, P(*p))) for a, p in zip(args, placements)]
        res = fn(*placed)
        out[name] = jax.tree_util.tree_map(lambda r: np.asarray(r), res)
pickle.dump(out, sys.stdout.buffer)
"""


def jax_results(cases: dict[str, tuple[str, str, list[np.ndarray], list[Any]]], script: str = _SCRIPT
                ) -> dict[str, Any]:
    """Per case name, JAX's result for `(kind, source, args, placements)` (see the module docstring;
    a placement is a PartitionSpec's entries as a tuple, or None for an unplaced argument), from
    `script` (another one reads the same request)."""
    request = {"shape": MESH_SHAPE, "axes": MESH_AXES, "cases": cases}
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    proc = subprocess.run([sys.executable, "-c", script], input=pickle.dumps(request), capture_output=True,
                          timeout=300, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"the JAX oracle failed:\n{proc.stderr.decode()[-4000:]}")
    return pickle.loads(proc.stdout)


def loom_env() -> dict[str, Any]:
    """The names the cases use, over loom."""
    import loom
    import loom.numpy as lnp
    from loom import lax
    from loom.sharding import Mesh, NamedSharding, P
    mesh = Mesh(np.arange(int(np.prod(MESH_SHAPE))).reshape(MESH_SHAPE), MESH_AXES)
    return dict(jnp=lnp, lax=lax, jit=loom.jit, P=P, S=lambda *spec: NamedSharding(mesh, P(*spec)), mesh=mesh,
                grad=loom.grad, jvp=loom.jvp, vmap=loom.vmap, np=np, shard_map=loom.shard_map)
