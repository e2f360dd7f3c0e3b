"""A multi-layer LSTM pipelined over 2 or 4 devices, trained through its partitioned loop:

    python examples/pipeline_rnn.py --devices 2                   # in one process: one thread per device
    torchrun --nproc-per-node 2 examples/pipeline_rnn.py          # one process per device (gloo); or 4
    python examples/pipeline_rnn.py --devices 4 --layers 8 --hidden 128 --batch 32 --max-len 64 --steps 20

The model reads a batch of sequences of different lengths (padded to `--max-len`) and predicts a
target at every valid position. Its layers are split over the devices in order (layer l on device
l * devices // layers, `with loom.placement(...)`), and its time loop is a `lax.while_loop` that
stops at the batch's longest sequence: a trip count computed from the data, different from batch
to batch. Each iteration, device 0 reads the inputs and decides whether to go on (it sends the
predicate to the others), every device runs its layers on the hidden state its predecessor sent,
and the last device accumulates the loss. One training step is `loom.value_and_grad` of that loss
followed by SGD, traced once and cut into one program per device
(`loom.frontend.placement.mpmd_program`): the gradient's loop runs backward on the same devices,
each layer's derivative next to its saved values, the last device deciding and sending the
cotangent of its input back. With `--parallel-iterations` above 1, a device runs ahead into later
iterations while the next one down the pipeline (up it, backward) is on earlier ones.

The same steps run whole on one device too (`loom.jit`); the example prints the loss curve, the
steps/s and tokens/s of the partitioned run, and whether its losses and trained weights equal the
single-device run's within float32 tolerance (exit status 1 when they do not).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import numpy as np

import loom
import loom.distributed
import loom.numpy as lnp
from loom import lax
from loom.frontend.placement import mpmd_program

Layer = tuple[Any, Any]  # w: (inputs + hidden, 4 * hidden), b: (4 * hidden,)
Params = tuple[tuple[Layer, ...], Any]  # the layers, the readout (hidden, outputs)


def device_of_layer(layer: int, layers: int, devices: int) -> int:
    return layer * devices // layers


def lstm_cell(layer: Layer, x: Any, h: Any, c: Any) -> tuple[Any, Any]:
    w, b = layer
    gates = lnp.concatenate([x, h], axis=-1) @ w + b
    i, f, g, o = lnp.split(gates, 4, axis=-1)
    c = lax.logistic(f) * c + lax.logistic(i) * lnp.tanh(g)
    return lax.logistic(o) * lnp.tanh(c), c


def sequence_loss(params: Params, xs: Any, ys: Any, lengths: Any, devices: int) -> Any:
    """The mean squared error of the readout over the valid positions: xs (max_len, batch,
    inputs), ys (max_len, batch, outputs), lengths (batch,). The loop runs max(lengths) steps; a
    sequence that ended keeps its state (masked)."""
    layers, readout = params
    batch, hidden = xs.shape[1], layers[0][1].shape[0] // 4
    place = [device_of_layer(k, len(layers), devices) for k in range(len(layers))]
    last = devices - 1
    with loom.placement(0):
        steps = lnp.max(lengths)

    def cond(carry):
        with loom.placement(0):
            return carry[0][0] < steps

    def body(carry):
        counters, states, total = carry
        live, next_counters = [], []
        for d, t in enumerate(counters):  # every device counts the steps itself: only h crosses
            with loom.placement(d):
                live.append((t < lengths)[:, None])
                next_counters.append(t + 1)
        with loom.placement(0):
            inputs = xs[counters[0]]
        new_states = []
        for k, (layer, (h, c)) in enumerate(zip(layers, states)):
            with loom.placement(place[k]):
                h_new, c_new = lstm_cell(layer, inputs, h, c)
                h, c = lnp.where(live[place[k]], h_new, h), lnp.where(live[place[k]], c_new, c)
            new_states.append((h, c))
            inputs = h
        with loom.placement(last):
            err = (inputs @ readout - ys[counters[last]]) * live[last]
            total = total + (err * err).sum()
        return tuple(next_counters), tuple(new_states), total

    counters, states = [], []
    for d in range(devices):
        with loom.placement(d):
            counters.append(lnp.int32(0))
    for k in range(len(layers)):
        with loom.placement(place[k]):
            states.append((lnp.zeros((batch, hidden), xs.dtype), lnp.zeros((batch, hidden), xs.dtype)))
    with loom.placement(last):
        total0 = lnp.zeros((), xs.dtype)
    _, _, total = lax.while_loop(cond, body, (tuple(counters), tuple(states), total0))
    with loom.placement(last):
        return total / (lengths.sum() * ys.shape[-1]).astype(xs.dtype)


def make_step(lr: float, devices: int):
    """One SGD step: (params, batch) -> (params, loss); each layer's update on its own device."""
    def step(params: Params, xs: Any, ys: Any, lengths: Any) -> tuple[Params, Any]:
        loss, (g_layers, g_readout) = loom.value_and_grad(
            lambda p: sequence_loss(p, xs, ys, lengths, devices))(params)
        layers, readout = params
        new_layers = []
        for k, ((w, b), (gw, gb)) in enumerate(zip(layers, g_layers)):
            with loom.placement(device_of_layer(k, len(layers), devices)):
                new_layers.append((w - lr * gw, b - lr * gb))
        with loom.placement(devices - 1):
            return (tuple(new_layers), readout - lr * g_readout), loss
    return step


def init(layers: int, inputs: int, hidden: int, outputs: int, seed: int) -> Params:
    rng = np.random.default_rng(seed)
    def layer(fan_in: int) -> Layer:
        w = rng.standard_normal((fan_in + hidden, 4 * hidden)) / np.sqrt(fan_in + hidden)
        b = np.zeros(4 * hidden)
        b[hidden:2 * hidden] = 1.0  # forget gates start open
        return w.astype(np.float32), b.astype(np.float32)
    readout = (rng.standard_normal((hidden, outputs)) / np.sqrt(hidden)).astype(np.float32)
    return tuple(layer(inputs if k == 0 else hidden) for k in range(layers)), readout


def batch(step: int, size: int, max_len: int, inputs: int, outputs: int, seed: int
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A batch of sequences padded to max_len (the same in every process): inputs, targets (a
    running mean of the inputs' first features: the model has to remember), and the lengths. The
    longest, the loop's trip count, is drawn per batch between max_len / 2 and max_len."""
    rng = np.random.default_rng((seed, step))
    longest = rng.integers(max(1, max_len // 2), max_len + 1)
    lengths = rng.integers(1, longest + 1, size).astype(np.int32)
    lengths[rng.integers(size)] = longest
    xs = rng.standard_normal((max_len, size, inputs)).astype(np.float32)
    ys = np.cumsum(xs[:, :, :outputs], axis=0) / np.arange(1, max_len + 1)[:, None, None]
    return xs, ys.astype(np.float32), lengths


def flat(params: Params) -> list[np.ndarray]:
    layers, readout = params
    return [np.asarray(a) for layer in layers for a in layer] + [np.asarray(readout)]


def unflat(values: list[Any], layers: int) -> Params:
    return tuple((values[2 * k], values[2 * k + 1]) for k in range(layers)), values[2 * layers]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", type=int, default=2, help="devices in one process (under torchrun: the processes)")
    ap.add_argument("--layers", type=int, default=0, help="LSTM layers (default: one per device)")
    ap.add_argument("--inputs", type=int, default=8)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--outputs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--max-len", type=int, default=16, help="sequences have max_len / 4 .. max_len steps")
    ap.add_argument("--steps", type=int, default=5, help="training steps")
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--parallel-iterations", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds any receive may wait")
    args = ap.parse_args()
    distributed = "WORLD_SIZE" in os.environ  # started by torchrun
    if distributed:
        loom.distributed.initialize(timeout_s=args.timeout)
        args.devices = loom.distributed.process_count()
    layers = args.layers or args.devices
    if layers < args.devices:
        raise SystemExit(f"{layers} layers cannot fill {args.devices} devices (--layers at least --devices)")
    params = init(layers, args.inputs, args.hidden, args.outputs, args.seed)
    batches = [batch(i, args.batch, args.max_len, args.inputs, args.outputs, args.seed) for i in range(args.steps)]
    step = make_step(args.lr, args.devices)
    program = mpmd_program(step, params, *batches[0], parallel_iterations=args.parallel_iterations,
                           num_devices=args.devices)

    def placed_step(p: Params, *data: np.ndarray) -> tuple[Params, Any]:
        run = program.run_processes if distributed else program
        *values, loss = run(*flat(p), *data, timeout=args.timeout)
        return unflat(values, layers), loss

    def train(step_fn: Any) -> tuple[list[float], Params, float]:
        p, losses = params, []
        step_fn(p, *batches[0])  # warm-up: compiles, and is left out of the time
        start = time.perf_counter()
        for data in batches:
            p, loss = step_fn(p, *data)
            losses.append(float(np.asarray(loss)))
        return losses, p, time.perf_counter() - start

    losses, trained, seconds = train(placed_step)
    single_losses, single_trained, single_seconds = train(loom.jit(step))
    rank = loom.distributed.process_index() if distributed else 0
    if distributed:
        loom.distributed.shutdown()
    loss_gap = float(np.max(np.abs(np.subtract(losses, single_losses))))
    weight_gap = max(float(np.max(np.abs(a - b))) for a, b in zip(flat(trained), flat(single_trained)))
    same = np.allclose(losses, single_losses, rtol=1e-4, atol=1e-6) and all(
        np.allclose(a, b, rtol=1e-4, atol=1e-5) for a, b in zip(flat(trained), flat(single_trained)))
    if rank == 0 or not same:
        tokens = sum(int(b[2].sum()) for b in batches)
        trips = [int(b[2].max()) for b in batches]
        where = f"{args.devices} processes (gloo)" if distributed else f"{args.devices} threads"
        for i, (loss, single) in enumerate(zip(losses, single_losses)):
            print(f"step {i:3d}  {trips[i]:4d} iterations  loss {loss:.6f}  (one device {single:.6f})")
        print(f"{layers} LSTM layers on {where}, parallel_iterations={args.parallel_iterations}: "
              f"{args.steps / seconds:.2f} steps/s, {tokens / seconds:.0f} tokens/s "
              f"(one device: {args.steps / single_seconds:.2f} steps/s, {tokens / single_seconds:.0f} tokens/s)")
        print(f"{'equals' if same else 'DIFFERS FROM'} the single-device run: largest difference "
              f"{loss_gap:.2e} in the losses, {weight_gap:.2e} in the weights")
    raise SystemExit(0 if same else 1)


if __name__ == "__main__":
    main()
