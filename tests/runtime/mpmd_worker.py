"""What each process of tests/runtime/test_mpmd.py runs: placed programs partitioned by device,
one device per process (the rank), point-to-point transfers; a loop whose second rank stalls (the
parallel-iterations window); and a process that dies in the middle of a partitioned loop. Started
by tests/runtime/distributed_worker.py's launcher, which bounds every wait."""

from __future__ import annotations

import os
import re
import time
from typing import Any

import numpy as np
from distributed_worker import launch as distributed_launch
from mpmd_programs import four_stages, mixed_types, nested, operands, pipeline, pipeline_loss, three_devices


def program(f: Any, *args: Any, parallel_iterations: int = 10) -> Any:
    import loom
    from loom.runtime.mpmd import MPMDProgram
    from loom.transforms.mpmd_partition import partition
    return MPMDProgram(partition(loom.jit(f).lower(*args).module, parallel_iterations=parallel_iterations))


def scenario_programs(rank: int, world: int) -> dict[str, Any]:
    import loom
    x, _ = operands()
    out: dict[str, Any] = {}
    if world == 2:
        for n in (0, 1, 5, 20):  # later runs of the group reuse the tags of the earlier ones' messages
            out[f"pipeline{n}"] = program(pipeline, x, np.int32(n), parallel_iterations=2).run_processes(
                x, np.int32(n), timeout=20)
        out["grad"] = program(loom.grad(pipeline_loss), x, np.int32(4)).run_processes(x, np.int32(4), timeout=20)
    elif world == 3:
        for n in (0, 3):
            out[f"three{n}"] = program(three_devices, x, np.int32(n)).run_processes(x, np.int32(n), timeout=20)
    else:
        for n in (0, 4):
            out[f"four{n}"] = program(four_stages, x, np.int32(n), parallel_iterations=2).run_processes(
                x, np.int32(n), timeout=20)
    return out


def scenario_killed_mid_loop(rank: int, world: int, victim: int = 1, at_send: int = 4) -> dict[str, Any]:
    """Rank `victim` exits abruptly at its `at_send`-th transfer inside the loop; the others report
    how their receive failed."""
    from loom.runtime import mpmd
    if rank == victim:
        sends, send = [0], mpmd.P2PCommunicator.send

        def dying(self: Any, *args: Any) -> None:
            sends[0] += 1
            if sends[0] == at_send:
                os._exit(17)
            send(self, *args)
        mpmd.P2PCommunicator.send = dying  # type: ignore[method-assign]
    x, _ = operands()
    return _failure(lambda: program(three_devices, x, np.int32(50)).run_process(x, np.int32(50), timeout=30))


def _failure(run: Any) -> dict[str, Any]:
    """How `run()` failed: its seconds, the error's message and the partition it blames."""
    start = time.monotonic()
    try:
        run()
    except Exception as e:  # noqa: BLE001 - reported to the test
        return {"seconds": time.monotonic() - start, "message": str(e), "blamed": getattr(e, "partition", None)}
    return {"seconds": time.monotonic() - start, "message": "no error", "blamed": None}


def scenario_window(rank: int, world: int, stall_s: float = 1.5) -> dict[Any, Any]:
    """Rank 1 stalls before its first receive; for parallel_iterations 1, 2 and 4, rank 0 reports when
    (wall clock) it started each iteration of the loop, rank 1 when its stall ended; both report
    their time blocked on the transport (under "waited", by parallel_iterations)."""
    from loom.runtime import mpmd
    x, _ = operands()
    out: dict[Any, Any] = {"waited": {}}
    recv, begin = mpmd.P2PCommunicator.recv, mpmd.P2PCommunicator.begin_iteration
    for parallel in (1, 2, 4):
        prog = program(pipeline, x, np.int32(8), parallel_iterations=parallel)
        out[parallel] = [] if rank == 0 else None

        def stalled(self: Any, *args: Any, parallel: int = parallel) -> Any:
            if out[parallel] is None:
                time.sleep(stall_s)
                out[parallel] = time.time()
            return recv(self, *args)

        def noting(self: Any, *args: Any, parallel: int = parallel) -> None:
            begin(self, *args)
            out[parallel].append(time.time())
        mpmd.P2PCommunicator.recv = stalled if rank == 1 else recv  # type: ignore[method-assign]
        mpmd.P2PCommunicator.begin_iteration = noting if rank == 0 else begin  # type: ignore[method-assign]
        try:
            prog.run_process(x, np.int32(8), timeout=20)
        finally:
            mpmd.P2PCommunicator.recv, mpmd.P2PCommunicator.begin_iteration = recv, begin  # type: ignore[method-assign]
        out["waited"][parallel] = prog.waited_s
    return out


def scenario_loop_settings(rank: int, world: int) -> dict[str, Any]:
    """`nested` (a loop with parallel_iterations=4 holding one with parallel_iterations=1 and
    devices=(2, 1)) over three processes, with the program's default bound 1 and 10."""
    x = np.linspace(-1, 1, 8).astype(np.float32)
    return {f"nested{p}": program(nested, x, np.int32(3), parallel_iterations=p).run_processes(x, np.int32(3),
                                                                                              timeout=20)
            for p in (1, 10)}


def scenario_messages(rank: int, world: int) -> dict[str, Any]:
    """`mixed_types` with windows 1 and 2, and how many messages each rank sent in each run of
    `pipeline` (n = 5, windows 1, 2, 4 and 8, a state of 8 floats and of 2048 (large enough for
    receives posted ahead): its second run, the first one having compiled)."""
    from loom.runtime import mpmd
    x, n = operands()
    out: dict[str, Any] = {f"mixed{p}": program(mixed_types, x, n, parallel_iterations=p).run_processes(
        x, n, timeout=20) for p in (1, 2)}
    sent = [0]
    make = mpmd.P2PCommunicator.__init__

    class Counted:
        def __init__(self, group: Any) -> None:
            self.group = group

        def send(self, *args: Any) -> Any:
            sent[0] += 1
            return self.group.send(*args)

        def recv(self, *args: Any) -> Any:
            return self.group.recv(*args)

    def counting(self: Any, *args: Any) -> None:
        make(self, *args)
        self.group = Counted(self.group)
    mpmd.P2PCommunicator.__init__ = counting  # type: ignore[method-assign]
    try:
        for state in (x, np.full(2048, -0.5, np.float32)):
            for p in (1, 2, 4, 8):
                prog = program(pipeline, state, np.int32(5), parallel_iterations=p)
                for _ in range(2):
                    sent[0] = 0
                    out[f"pipeline{p}-{state.size}"] = prog.run_process(state, np.int32(5), timeout=20)
                out[f"sent{p}-{state.size}"] = sent[0]
    finally:
        mpmd.P2PCommunicator.__init__ = make  # type: ignore[method-assign]
    return out


def scenario_undecided(rank: int, world: int) -> dict[str, Any]:
    """`pipeline` partitioned, then edited so that device 1 counts its own iterations and device 0,
    the loop's decider, sends it no predicate (against the mpmd dialect's contract): each rank
    reports how its run failed."""
    import loom
    from loom.runtime.mpmd import MPMDProgram
    from loom.transforms.mpmd_partition import partition
    x, n = operands()
    text = str(partition(loom.jit(pipeline).lower(x, n).module, parallel_iterations=2))
    rides = r"\{mpmd\.rides = 1 : i64\} : tensor<i1>, tensor<i32>"
    edits = [(r"\n *mpmd\.send %\w+ to 1 channel 0 iteration %\w+ " + rides, ""),
             (r"(%\w+) = mpmd\.recv from 0 channel 0 iteration (%\w+) " + rides,
              r"\1 = stablehlo.compare LT, \2, %arg1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>"),
             (r" \{mpmd\.carries = 0 : i64\}", "")]
    for pattern, replacement in edits:
        text, count = re.subn(pattern, replacement, text)
        assert count, (pattern, text)
    return _failure(lambda: MPMDProgram(text).run_process(x, n, timeout=20))


SCENARIOS = {"programs": scenario_programs, "undecided": scenario_undecided,
             "killed_mid_loop": scenario_killed_mid_loop, "window": scenario_window,
             "loop_settings": scenario_loop_settings, "messages": scenario_messages}


def launch(scenario: str, world: int, **kwargs: Any) -> dict[int, tuple]:
    """`distributed_worker.launch` of one of this module's SCENARIOS."""
    return distributed_launch(scenario, world, module="mpmd_worker", **kwargs)
