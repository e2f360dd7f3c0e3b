"""A pipelined 8-layer LSTM over 8 GPUs, predicted by loom.sim (not measured): the paper's
pipelining experiment (Yu et al., EuroSys'18) on loom's MPMD path.

    python benchmarks/pipeline_sim.py              # H100 preset, sequence 128
    python benchmarks/pipeline_sim.py --quick      # sequence 16, a smaller width
    python benchmarks/pipeline_sim.py --machine h200 --trace lstm.json

The model: `--layers` LSTM layers (one per GPU, placed with `loom.placement(k)`), width `--width`,
batch `--batch`, bf16, run over a sequence of `--steps` time steps by one `lax.while_loop` whose
predicate (the step count, data in general) lives on GPU 0; layer k at step t needs layer k - 1
at step t and itself at step t - 1, so with iterations in flight GPU k works on step t while GPU
k + 1 works on step t - 1. Traced by loom.jit, differentiated by loom.grad (the training step:
the loss's gradient with respect to every layer's weights: the forward loop, then the backward
loop, partitioned the same way), cut by mpmd-partition with `parallel_iterations` = 1 and the
`--parallel` values, and predicted by loom.sim.mpmd.simulate_mpmd on the machine preset (roofline
op times, NVLink through a switch: 2 us latency, 450 GB/s per direction). The peer is the same
program on one GPU (every layer on device 0). The paper's figure is quoted from the project's
reference notes, where it is marked unverified (see benchmarks/NOTES.md).
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from bench_common import Record, fmt  # noqa: E402

import loom  # noqa: E402
import loom.numpy as lnp  # noqa: E402
from loom import lax  # noqa: E402
from loom.sim.machine import Machine  # noqa: E402
from loom.sim.mpmd import simulate_mpmd  # noqa: E402
from loom.transforms.mpmd_partition import partition  # noqa: E402

PAPER_SPEEDUP = 5.5  # "about 5.5x", control_flow.md 1.8, marked unverified there


def lstm(layers: int, devices: int):
    """The loss of a `layers`-deep LSTM over `n` steps of `xs`, layer k on device k % devices."""
    def loss(ws, xs, n):
        batch, width = xs.shape[1], xs.shape[2]

        def cond(c):
            with loom.placement(0):
                return c[0] < n

        def body(c):
            t, hs, cs, acc = c
            with loom.placement(0):
                x = lax.dynamic_index_in_dim(xs, t, keepdims=False)
                t = t + 1
            new_h, new_c = [], []
            for k in range(layers):
                with loom.placement(k % devices):
                    z = lnp.concatenate([x, hs[k]], axis=1) @ ws[k]
                    i, f, g, o = (z[:, j * width:(j + 1) * width] for j in range(4))
                    cell = lax.logistic(f) * cs[k] + lax.logistic(i) * lnp.tanh(g)
                    x = lax.logistic(o) * lnp.tanh(cell)
                new_h.append(x)
                new_c.append(cell)
            with loom.placement((layers - 1) % devices):
                acc = acc + x
            return t, tuple(new_h), tuple(new_c), acc

        zeros = []
        for k in range(layers + 1):
            with loom.placement(min(k, layers - 1) % devices):
                zeros.append(lnp.zeros((batch, width), xs.dtype))
        init = (lnp.int32(0), tuple(zeros[:layers]), tuple(zeros[:layers]), zeros[layers])
        out = lax.while_loop(cond, body, init)[3]
        with loom.placement((layers - 1) % devices):
            return (out.astype(np.float32) ** 2).sum()
    return loss


def programs(layers: int, devices: int, width: int, batch: int, steps: int, train: bool):
    """The traced program (the training step's gradient, or the forward loss) and its inputs."""
    dtype = ml_dtypes.bfloat16
    ws = [np.zeros((2 * width, 4 * width), dtype) for _ in range(layers)]
    xs = np.zeros((steps, batch, width), dtype)
    f = lstm(layers, devices)
    fn = loom.grad(f) if train else f
    return lambda: loom.jit(fn).lower(ws, xs, np.int32(steps)).module


def predict(make, parallel: int, machine: Machine, steps: int, num_devices: int | None = None):
    return simulate_mpmd(partition(make(), parallel_iterations=parallel, num_devices=num_devices), machine,
                         trips=steps)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--machine", default="h100", help="a loom.sim machine preset (h100, h200) or a saved Machine")
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=128, help="time steps of the sequence (loop iterations)")
    ap.add_argument("--parallel", type=int, nargs="+", default=[8, 32])
    ap.add_argument("--quick", action="store_true", help="16 steps, width 256")
    ap.add_argument("--trace", help="write the pipelined training step's timeline as a Chrome trace")
    opts = ap.parse_args()
    if opts.quick:
        opts.steps, opts.width = 16, 256
    machine = Machine.named(opts.machine)
    record = Record("pipeline_sim", {"machine": machine.to_json(), "layers": opts.layers, "width": opts.width,
                                     "batch": opts.batch, "steps": opts.steps, "dtype": "bf16",
                                     "parallel": opts.parallel, "quick": opts.quick,
                                     "paper_speedup": PAPER_SPEEDUP})
    print(f"{opts.layers}-layer LSTM, width {opts.width}, batch {opts.batch}, {opts.steps} steps, bf16, "
          f"predicted on {machine.name} (roofline; not measured)")
    summary = {}
    for train in (False, True):
        case = "training step (forward + backward)" if train else "forward"
        on_gpus = programs(opts.layers, opts.layers, opts.width, opts.batch, opts.steps, train)
        one_gpu = programs(opts.layers, 1, opts.width, opts.batch, opts.steps, train)
        single = predict(one_gpu, 1, machine, opts.steps)
        record.add(case, "1 GPU", [single.step_time])
        print(f"{case}:\n  {'1 GPU':<40} {fmt(single.step_time):>10}")
        last = None
        for parallel in (1, *opts.parallel):
            got = predict(on_gpus, parallel, machine, opts.steps)
            name = f"{opts.layers} GPUs, parallel_iterations={parallel}"
            record.add(case, name, [got.step_time], compute_time=got.compute_time,
                       communication_time=got.communication_time)
            print(f"  {name:<40} {fmt(got.step_time):>10}  (busiest GPU computes {fmt(got.compute_time)})")
            last = (name, got)
        assert last is not None
        first = f"{opts.layers} GPUs, parallel_iterations=1"
        vs_one = record.ratio(case, last[0], first)
        vs_single = record.ratio(case, last[0], "1 GPU")
        summary[case] = {"pipelining_speedup_vs_parallel_iterations_1": vs_one, "speedup_vs_1_gpu": vs_single}
        print(f"  {last[0]} vs parallel_iterations=1: {vs_one:.2f}x; vs 1 GPU: {vs_single:.2f}x "
              f"(the paper, unverified: about {PAPER_SPEEDUP}x)")
        if train and opts.trace:
            print(f"  timeline: {last[1].timeline.write_chrome(opts.trace)}")
    record.write(summary=summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
