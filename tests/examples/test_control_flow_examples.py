"""examples/pipeline_rnn.py (an LSTM whose layers are placed on devices, trained through its
partitioned loop) and examples/distributed_cg.py (conjugate gradient on a sharded matrix,
differentiated with respect to b), at tiny sizes: in process (threads) and over gloo processes
(torchrun, bounded by timeouts). Each example checks itself against its single-device run (and
the CG example against A^-1 c and float64 finite differences) and exits 1 when a check fails;
these tests run them and read their verdicts, and check the partitioned programs' structure."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest
from support.paths import EXAMPLES, ROOT

import loom

RNN_SIZES = ["--inputs", "4", "--hidden", "8", "--outputs", "2", "--batch", "4", "--max-len", "6", "--steps", "2"]
CG_SIZES = ["--size", "16", "--condition", "20", "--directions", "2"]


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_main(module, argv: list[str], monkeypatch, capsys) -> str:
    monkeypatch.setattr(sys, "argv", [f"{module.__name__}.py", *argv])
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    with pytest.raises(SystemExit) as done:
        module.main()
    out = capsys.readouterr().out
    assert done.value.code == 0, out
    return out


@pytest.mark.parametrize("devices, layers", [(2, 2), (4, 5)])
def test_pipeline_rnn_in_process_trains_as_one_device(devices: int, layers: int, monkeypatch, capsys) -> None:
    out = run_main(load("pipeline_rnn"), [*RNN_SIZES, "--devices", str(devices), "--layers", str(layers)],
                   monkeypatch, capsys)
    assert f"{layers} LSTM layers on {devices} threads" in out and "steps/s" in out and "tokens/s" in out
    assert "equals the single-device run" in out and out.count("iterations  loss") == 2


def test_pipeline_rnn_trip_count_comes_from_the_data() -> None:
    """The loop runs max(lengths) steps: what lies past every sequence's end (NaN here) is never
    read, and the count of iterations differs from batch to batch."""
    rnn = load("pipeline_rnn")
    params = rnn.init(2, 4, 8, 2, 0)
    xs, ys, lengths = rnn.batch(0, 4, 8, 4, 2, 0)
    loss = loom.jit(lambda p, x, y, n: rnn.sequence_loss(p, x, y, n, 2))
    short = np.minimum(lengths, 3).astype(np.int32)
    padded_xs, padded_ys = xs.copy(), ys.copy()
    padded_xs[3:], padded_ys[3:] = np.nan, np.nan  # read, they would make the loss NaN
    np.testing.assert_allclose(float(loss(params, padded_xs, padded_ys, short)), float(loss(params, xs, ys, short)),
                               rtol=1e-6)
    assert len({int(rnn.batch(i, 4, 16, 4, 2, 0)[2].max()) for i in range(6)}) > 1


def _loop_transfers(program) -> dict[tuple[int, int], list[str]]:
    """The types sent by each device in each top-level loop of its program, by (device, loop)."""
    out: dict[tuple[int, int], list[str]] = {}
    for fn in program.module.regions[0].entry.ops:
        device = int(fn.get_attr("mpmd.device").value)
        loops = [op for op in fn.regions[0].entry.ops if op.name == "stablehlo.while"]
        for k, loop in enumerate(loops):
            out[(device, k)] = sorted(str(op.operands[0].type) for op in loop.walk() if op.name == "mpmd.send")
    return out


def test_pipeline_rnn_each_layer_runs_forward_and_backward_on_its_device() -> None:
    """In the forward loop only the predicate and layer 0's hidden state cross (device 0 to 1); in
    the backward loop only the predicate and the cotangent of that hidden state (1 to 0), so each
    device may run ahead of the next one in both: each layer's derivative runs where the layer ran,
    with the saved values of its stacks, the backward loop's control runs where the backward pass
    starts, and the weights' gradients stay with their weights for the update. Outside the loops
    only the forward trip count crosses (0 to 1), once."""
    from loom.frontend.placement import mpmd_program
    rnn = load("pipeline_rnn")
    params, data = rnn.init(2, 4, 8, 2, 0), rnn.batch(0, 4, 6, 4, 2, 0)
    program = mpmd_program(rnn.make_step(0.1, 2), params, *data, num_devices=2)
    h = "tensor<4x8xf32>"
    assert _loop_transfers(program) == {(0, 0): [h, "tensor<i1>"], (1, 0): [],
                                        (0, 1): [], (1, 1): [h, "tensor<i1>"]}
    sends_outside_loops = [(int(op.parent_op.get_attr("mpmd.device").value), str(op.operands[0].type))
                           for op in program.module.walk() if op.name == "mpmd.send"
                           and not any(p.name == "stablehlo.while" for p in _ancestors(op))]
    assert sends_outside_loops == [(0, "tensor<i32>")]


def _ancestors(op):
    parent = op.parent_op
    while parent is not None:
        yield parent
        parent = parent.parent_op


def test_distributed_cg_in_process_matches_one_device_and_the_analytic_gradient(monkeypatch, capsys) -> None:
    from loom.runtime.devices import Device
    monkeypatch.setattr(sys.modules["loom.runtime.devices"], "CPU_DEVICES",
                        tuple(Device("cpu", i, "numpy") for i in range(4)))
    with loom.config.override(enable_x64=loom.config.enable_x64):  # the example turns float64 on
        out = run_main(load("distributed_cg"), CG_SIZES, monkeypatch, capsys)
    assert "rows over 4 threads" in out and "FAIL" not in out and out.count("ok  ") == 5


def test_distributed_cg_reduces_the_residual_across_the_mesh_every_iteration(monkeypatch) -> None:
    """Each iteration of the partitioned solver moves the search direction (gathered for the
    rows' matmul) and two scalars reduced over the mesh, p.Ap and the squared residual norm, which
    the loop's condition reads: never the residual itself."""
    from loom.runtime.devices import Device
    from loom.sharding import NamedSharding, P
    from loom.sharding.partitioning import partition
    monkeypatch.setattr(sys.modules["loom.runtime.devices"], "CPU_DEVICES",
                        tuple(Device("cpu", i, "numpy") for i in range(4)))
    cg = load("distributed_cg")
    with loom.config.override(enable_x64=True):
        a, b, c = cg.problem(16, 20.0, 0)
        mesh = loom.make_mesh((4,), ("rows",))
        matrix, vector = cg.shardings(mesh)
        solve_and_grad, _ = cg.make_functions(1e-10, 100)
        jitted = loom.jit(solve_and_grad, in_shardings=(matrix, vector, vector),
                          out_shardings=(vector, NamedSharding(mesh, P()), vector))
        local = partition(jitted.lower(a, b, c).module)
    collectives = ("stablehlo.all_reduce", "stablehlo.all_gather", "stablehlo.reduce_scatter",
                   "stablehlo.collective_permute", "stablehlo.all_to_all")
    loops = [op for op in local.walk() if op.name == "stablehlo.while"]
    assert len(loops) == 3  # the solve, the gradient's forward loop (with stacks), its backward loop
    for loop in loops[:2]:  # per iteration: p gathered for the rows' matmul, two scalar reductions
        moved = sorted((op.name, str(op.results[0].type)) for op in loop.walk() if op.name in collectives)
        assert moved == [("stablehlo.all_gather", "tensor<16xf64>"), ("stablehlo.all_reduce", "tensor<f64>"),
                         ("stablehlo.all_reduce", "tensor<f64>")], moved
        cond = loop.regions[0].entry
        assert not [op for op in cond.ops if op.name in collectives]  # the predicate reads the reduced scalar


def _torchrun(example: str, processes: int, argv: list[str]) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    env.pop("LOOM_NUM_CPU_DEVICES", None)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(processes),
           str(EXAMPLES / f"{example}.py"), *argv, "--timeout", "60"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow  # two processes under torchrun: 30-45 s on a loaded 2-core machine
def test_pipeline_rnn_on_two_gloo_processes_trains_as_one_device() -> None:
    pytest.importorskip("torch")
    out = _torchrun("pipeline_rnn", 2, [*RNN_SIZES, "--layers", "3"])
    assert "3 LSTM layers on 2 processes (gloo)" in out and "equals the single-device run" in out


@pytest.mark.slow  # two processes under torchrun: 30-45 s on a loaded 2-core machine
def test_distributed_cg_on_two_gloo_processes_matches_one_device() -> None:
    pytest.importorskip("torch")
    out = _torchrun("distributed_cg", 2, CG_SIZES)
    assert "rows over 2 processes (gloo)" in out and "FAIL" not in out and out.count("ok  ") == 5
