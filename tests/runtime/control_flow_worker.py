"""What each process of tests/runtime/test_distributed_control_flow.py runs: a sharded jit with a
data-dependent while loop (forward, and its gradient through per-process stacks), partitioned and
run with one partition per process; and a process that dies in the middle of the loop. Started by
tests/runtime/distributed_worker.py's launcher, which bounds every wait."""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
from distributed_worker import launch as distributed_launch

SHAPE = (4, 8)


def operands() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    return (rng.standard_normal(SHAPE) * 2).astype(np.float32), rng.uniform(0.5, 1.0, SHAPE).astype(np.float32)


def halve_while_norm(x):
    from loom import lax
    from loom import numpy as lnp
    return lax.while_loop(lambda c: lnp.sqrt((c[0] * c[0]).sum()) > 1.0, lambda c: (c[0] * 0.5, c[1] + 1), (x, 0))


def halve_while_element(x):
    """A predicate read from one element: its owner broadcasts it every iteration."""
    from loom import lax
    from loom import numpy as lnp
    return lax.while_loop(lambda c: lnp.abs(c[0][3, 7]) > 0.01, lambda c: (c[0] * 0.5, c[1] + 1), (x, 0))


def shrink_loss(x, w):
    from loom import lax
    from loom import numpy as lnp
    def body(c):
        inner = lax.cond(c[0].sum() > 0, lambda v: lnp.sin(v), lambda v: v * 0.8, c[0])
        return inner * w * 0.9, c[1] + 1
    y, _ = lax.while_loop(lambda c: (lnp.sqrt((c[0] * c[0]).sum()) > 0.5) & (c[1] < 20), body, (x, 0))
    return (y * y).sum()


def mesh_of(world: int) -> Any:
    from loom.sharding import Mesh
    return Mesh(np.arange(world), ("x",)) if world == 2 else Mesh(np.arange(world).reshape(2, 2), ("x", "y"))


def run_sharded(f: Any, world: int, *args: np.ndarray) -> Any:
    """f jitted with every argument split over the mesh, partitioned, run with one partition per
    process on the same global arguments everywhere."""
    import loom
    from loom.runtime.distributed import DistributedExecutable
    from loom.sharding import NamedSharding, P
    from loom.sharding.partitioning import partition
    mesh = mesh_of(world)
    spec = P(*mesh.axis_names)
    jitted = loom.jit(f, in_shardings=tuple(NamedSharding(mesh, spec) for _ in args))
    return DistributedExecutable(partition(jitted.lower(*args).module))(*args)


def scenario_while(rank: int, world: int) -> dict[str, Any]:
    import loom
    x, w = operands()
    y, trips = run_sharded(halve_while_norm, world, x)
    z, element_trips = run_sharded(halve_while_element, world, x)
    gx, gw = run_sharded(loom.grad(shrink_loss, argnums=(0, 1)), world, x, w)
    return {"y": y, "trips": int(np.asarray(trips)), "z": z, "element_trips": int(np.asarray(element_trips)),
            "gx": gx, "gw": gw}


def scenario_killed_mid_loop(rank: int, world: int, victim: int = 1, at_call: int = 3) -> dict[str, Any]:
    """Rank `victim` exits abruptly in its `at_call`-th all_reduce: the loop predicate's reduction of
    iteration `at_call - 1`; the others report how theirs failed."""
    from loom.runtime.distributed import CollectiveError, communicator
    comm = communicator()
    if rank == victim:
        calls, all_reduce = [0], comm.all_reduce
        def dying(*args: Any, **kwargs: Any) -> Any:
            calls[0] += 1
            if calls[0] == at_call:
                os._exit(17)
            return all_reduce(*args, **kwargs)
        comm.all_reduce = dying  # type: ignore[method-assign]
    x = operands()[0] * 100  # many iterations
    start = time.monotonic()
    try:
        run_sharded(halve_while_norm, world, x)
    except CollectiveError as e:
        return {"seconds": time.monotonic() - start, "message": str(e), "missing": e.missing}
    return {"seconds": time.monotonic() - start, "message": "no error", "missing": []}


SCENARIOS = {"while": scenario_while, "killed_mid_loop": scenario_killed_mid_loop}


def launch(scenario: str, world: int, **kwargs: Any) -> dict[int, tuple]:
    """`distributed_worker.launch` of one of this module's SCENARIOS."""
    return distributed_launch(scenario, world, module="control_flow_worker", **kwargs)
