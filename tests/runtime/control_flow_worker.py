"""What each process of tests/runtime/test_distributed_control_flow.py runs: a sharded jit with a
data-dependent while loop (forward, and its gradient through per-process stacks), partitioned and
run with one partition per process; and a process that dies in the middle of the loop. Started by
`launch`, which bounds every wait as tests/runtime/distributed_worker.py's launcher does."""

from __future__ import annotations

import os
import queue
import time
import traceback
from typing import Any

import numpy as np
from distributed_worker import free_port

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


def _worker(rank: int, world: int, port: int, scenario: str, timeout_s: float, results: Any) -> None:
    import torch

    from loom.runtime.distributed import initialize, shutdown
    torch.set_num_threads(1)
    try:
        initialize(f"127.0.0.1:{port}", world, rank, timeout_s=timeout_s)
        results.put((rank, ("ok", SCENARIOS[scenario](rank, world))))
    except BaseException as e:  # reported to the parent, which asserts on it
        results.put((rank, ("error", type(e).__name__, f"{e}\n{traceback.format_exc()}")))
    try:
        shutdown()
    except Exception:
        pass


def launch(scenario: str, world: int, timeout_s: float = 20.0, deadline_s: float = 90.0,
           expect_exit: frozenset[int] = frozenset()) -> dict[int, tuple]:
    """Run `scenario` on `world` processes; each rank's outcome (ranks in `expect_exit` exit without
    reporting). Fails, never hangs, when a process neither reports nor exits by the deadline."""
    import torch.multiprocessing as mp
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["loom", "torch.distributed", "control_flow_worker"])
    results = ctx.Queue()
    procs = mp.start_processes(_worker, args=(world, free_port(), scenario, timeout_s, results), nprocs=world,
                               join=False, start_method="forkserver").processes
    outcomes: dict[int, tuple] = {}
    end = time.monotonic() + deadline_s
    try:
        while len(outcomes) < world - len(expect_exit) and time.monotonic() < end:
            try:
                rank, outcome = results.get(timeout=max(0.1, min(1.0, end - time.monotonic())))
                outcomes[rank] = outcome
            except queue.Empty:
                if all(not p.is_alive() for p in procs) and results.empty():
                    break
        for p in procs:
            p.join(timeout=max(0.1, end - time.monotonic()))
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join(timeout=5)
    missing = sorted(set(range(world)) - set(outcomes) - expect_exit)
    if missing:
        codes = {i: p.exitcode for i, p in enumerate(procs)}
        raise AssertionError(f"{scenario}: ranks {missing} reported nothing within {deadline_s} s (exit codes {codes})")
    return outcomes
