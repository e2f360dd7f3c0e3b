"""The pod-scale setting of Wang et al. (ASPLOS'23): GPT-style models of 10B to 1T parameters on
TPU v4 slices of 64 to 1024 chips (3-D torus), simulated one transformer layer (forward and
backward) at a time.

How the per-device program is made: an analytic per-layer program, written here as the MLIR text
of the per-device program an SPMD partitioner emits for the sharding below (loom.jit and the
sharding front end sit above loom.sim, and writing it out keeps every collective where the
paper's scheme puts it). It is then given to loom's own passes, `decompose-collective-matmul`
(mode=auto: XLA's 256 MiB gate, then XLA's inequality in closed form and simulated on the loop
the pass writes, loom.sim.cost.collective_matmul_decision, on this machine) and
`schedule-latency-hiding`, and both programs, before and after, are simulated by loom.sim.simulate
through the same cost functions.

The sharding (2-D, model x data, on a mesh of dx x dy chips; chip id = x * dy + y, so a model
group is dy consecutive chips along the torus's last axes):
- activations: batch over the data axis X, sequence over the model axis Y (Megatron's sequence
  parallelism); attention heads and the FFN's hidden dimension over Y;
- weights: over both axes, the Y-sharded block of each weight split again over X (2-D weight
  sharding: every chip holds 1/(dx·dy) of every weight);
- per linear layer, forward: all_gather over Y of the activation (sequence) -> dot (column
  parallel) or dot -> reduce_scatter over Y (row parallel), each weight all-gathered over X just
  before its dot; backward: the transposed pattern for the input gradient (reduce_scatter <->
  all_gather over Y) and the weight gradient's dot -> reduce_scatter over X.

Assumptions that drive differences from the paper's figures (its per-model configurations were
not available, only its abstract: 1.14-1.38x, 72% of peak for 500B on 1024 chips):
- the model shapes (layers, width, heads), sequence 2048, the global batch (2 sequences per chip)
  and the model-axis sizes tried are this module's choices; memory capacity is not checked (the
  small model axes would not hold their activations without rematerialisation);
- a roofline: every dot at peak FLOP/s, every other op at HBM bandwidth, unfused (softmax and
  GELU touch memory separately), no launch overheads; ICI links at 4.5e10 B/s per direction,
  shared only by the transfers of one chip's link direction and by one permute's pairs whose
  routes cross (loom.sim.simulate's doc); so utilisations come out above what hardware reaches;
- the loops go one way around the ring by default, both ways with `bidirectional`;
- weight all-gathers over X are synchronous (XLA would prefetch them asynchronously); the weight
  gradient's reduce-scatter is decomposed when the cost model chooses it, else synchronous;
- activations saved for the backward pass are kept (no rematerialisation), and the weight
  gradients read the gathered activations and output gradients the forward and input-gradient
  loops gathered (program arguments, no extra communication);
- one layer stands for all: embeddings, the loss and the optimizer update are not simulated.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import loom.ir
from loom.ir.core import Operation
from loom.rewrite.pass_manager import PassManager
from loom.sim.machine import Machine
from loom.sim.simulate import Prediction, simulate

DTYPE, DTYPE_BYTES = "bf16", 2


@dataclass(frozen=True)
class GPT:
    """A decoder-only transformer: `layers` blocks of attention (`heads` heads) and a 4x FFN."""

    name: str
    layers: int
    d_model: int
    heads: int
    seq_len: int = 2048

    @property
    def parameters(self) -> float:
        return 12.0 * self.layers * self.d_model ** 2


# Shapes chosen to give the named sizes with 12·L·M² parameters (embeddings not counted).
MODELS = (GPT("10B", 50, 4096, 32), GPT("50B", 62, 8192, 64), GPT("100B", 80, 10240, 80),
          GPT("200B", 110, 12288, 96), GPT("500B", 100, 20480, 128), GPT("1T", 128, 25600, 160))
# TPU v4 slice shapes (chips: x, y, z), each axis a multiple of 4: wraparound on every axis
SLICES = {64: (4, 4, 4), 128: (4, 4, 8), 256: (4, 8, 8), 512: (8, 8, 8), 1024: (8, 8, 16)}
# the slice each model runs on in the table
CHIPS = {"10B": 64, "50B": 128, "100B": 256, "200B": 512, "500B": 1024, "1T": 1024}


def pod_machine(chips: int) -> Machine:
    """The tpu-v4 preset shaped as the slice of `chips` chips."""
    return Machine.preset("tpu-v4").with_(name=f"tpu-v4-{chips}", topology_shape=SLICES[chips])


class _Writer:
    """Writes a per-device program as MLIR text: each value is (name, shape)."""

    def __init__(self) -> None:
        self.args: list[tuple[str, tuple[int, ...]]] = []
        self.lines: list[str] = []
        self.count = self.channel = 0

    @staticmethod
    def ty(shape: Sequence[int]) -> str:
        return f"tensor<{'x'.join(map(str, shape))}x{DTYPE}>" if shape else f"tensor<{DTYPE}>"

    def arg(self, *shape: int) -> tuple[str, tuple[int, ...]]:
        value = (f"%arg{len(self.args)}", tuple(shape))
        self.args.append(value)
        return value

    def emit(self, text: str, shape: Sequence[int]) -> tuple[str, tuple[int, ...]]:
        self.count += 1
        name = f"%v{self.count}"
        self.lines.append(f"  {name} = {text}")
        return name, tuple(shape)

    def unary(self, op: str, a: tuple) -> tuple:
        return self.emit(f"stablehlo.{op} {a[0]} : {self.ty(a[1])}", a[1])

    def binary(self, op: str, a: tuple, b: tuple) -> tuple:
        return self.emit(f"stablehlo.{op} {a[0]}, {b[0]} : {self.ty(a[1])}", a[1])

    def dot(self, a: tuple, b: tuple, contract: tuple[int, int], batch: Sequence[tuple[int, int]] = ()) -> tuple:
        lb, rb = [p[0] for p in batch], [p[1] for p in batch]
        shape = ([a[1][d] for d in lb] + [s for d, s in enumerate(a[1]) if d not in lb and d != contract[0]]
                 + [s for d, s in enumerate(b[1]) if d not in rb and d != contract[1]])
        dims = f"batching_dims = {lb} x {rb}, " if batch else ""
        return self.emit(f"stablehlo.dot_general {a[0]}, {b[0]}, {dims}contracting_dims = [{contract[0]}] x "
                         f"[{contract[1]}] : ({self.ty(a[1])}, {self.ty(b[1])}) -> {self.ty(shape)}", shape)

    def _collective(self, name: str, a: tuple, props: str, shape: Sequence[int], groups: list[list[int]],
                    body: str = "") -> tuple:
        self.channel += 1
        table = ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups)
        return self.emit(f'"stablehlo.{name}"({a[0]}) <{{{props}, channel_handle = #stablehlo.channel_handle<'
                         f'handle = {self.channel}, type = 1>, replica_groups = dense<[{table}]> : '
                         f'tensor<{len(groups)}x{len(groups[0])}xi64>, use_global_device_ids}}>{body} : '
                         f'({self.ty(a[1])}) -> {self.ty(shape)}', shape)

    def all_gather(self, a: tuple, dim: int, groups: list[list[int]]) -> tuple:
        shape = list(a[1])
        shape[dim] *= len(groups[0])
        return self._collective("all_gather", a, f"all_gather_dim = {dim} : i64", shape, groups)

    def reduce_scatter(self, a: tuple, dim: int, groups: list[list[int]]) -> tuple:
        shape = list(a[1])
        shape[dim] //= len(groups[0])
        scalar = self.ty(())
        body = (f" ({{\n  ^bb0(%lhs: {scalar}, %rhs: {scalar}):\n    %sum = stablehlo.add %lhs, %rhs : {scalar}\n"
                f"    stablehlo.return %sum : {scalar}\n  }})")
        return self._collective("reduce_scatter", a, f"scatter_dimension = {dim} : i64", shape, groups, body)

    def reshape(self, a: tuple, *shape: int) -> tuple:
        return self.emit(f"stablehlo.reshape {a[0]} : ({self.ty(a[1])}) -> {self.ty(shape)}", shape)

    def transpose(self, a: tuple, perm: Sequence[int]) -> tuple:
        shape = [a[1][p] for p in perm]
        return self.emit(f"stablehlo.transpose {a[0]}, dims = {list(perm)} : ({self.ty(a[1])}) -> {self.ty(shape)}",
                         shape)

    def columns(self, a: tuple, start: int, stop: int) -> tuple:
        shape = (a[1][0], stop - start)
        return self.emit(f"stablehlo.slice {a[0]} [0:{a[1][0]}, {start}:{stop}] : ({self.ty(a[1])}) -> "
                         f"{self.ty(shape)}", shape)

    def concatenate(self, parts: Sequence[tuple], dim: int) -> tuple:
        shape = list(parts[0][1])
        shape[dim] = sum(p[1][dim] for p in parts)
        return self.emit(f"stablehlo.concatenate {', '.join(p[0] for p in parts)}, dim = {dim} : "
                         f"({', '.join(self.ty(p[1]) for p in parts)}) -> {self.ty(shape)}", shape)

    def softmax(self, s: tuple) -> tuple:
        """exp, a sum over the last dimension, broadcast back and divide (unfused)."""
        e = self.unary("exponential", s)
        zero = self.emit(f"stablehlo.constant dense<0.000000e+00> : {self.ty(())}", ())
        total = self.emit(f"stablehlo.reduce({e[0]} init: {zero[0]}) applies stablehlo.add across dimensions = "
                          f"[{len(s[1]) - 1}] : ({self.ty(s[1])}, {self.ty(())}) -> {self.ty(s[1][:-1])}", s[1][:-1])
        wide = self.emit(f"stablehlo.broadcast_in_dim {total[0]}, dims = {list(range(len(s[1]) - 1))} : "
                         f"({self.ty(total[1])}) -> {self.ty(s[1])}", s[1])
        return self.binary("divide", e, wide)

    def text(self, num_partitions: int, results: Sequence[tuple]) -> str:
        args = ", ".join(f"{n}: {self.ty(s)}" for n, s in self.args)
        types = ", ".join(self.ty(r[1]) for r in results)
        return (f"module attributes {{mhlo.num_partitions = {num_partitions} : i32}} {{\n"
                f"func.func @main({args}) -> ({types}) {{\n" + "\n".join(self.lines)
                + f"\n  return {', '.join(r[0] for r in results)} : {types}\n}}\n}}\n")


def layer_program(model: GPT, batch: int, dx: int, dy: int) -> Operation:
    """One layer's forward and backward pass on one chip of a dx x dy mesh (module doc)."""
    m, s, f = model.d_model, model.seq_len, 4 * model.d_model
    heads, head_dim = model.heads // dy, model.d_model // model.heads
    b = batch // dx
    ty, tl = b * s, b * s // dy  # rows gathered over Y / held locally
    if batch % dx or model.heads % dy or (3 * m // dy) % dx or m % (dx * dy) or f % (dx * dy) or s % dy:
        raise ValueError(f"{model.name}: batch {batch}, {model.heads} heads and width {m} do not split over a "
                         f"{dx} x {dy} mesh")
    model_groups = [[x * dy + y for y in range(dy)] for x in range(dx)]
    data_groups = [[x * dy + y for x in range(dx)] for y in range(dy)]
    w = _Writer()
    x = w.arg(tl, m)
    w_qkv, w_o, w_1, w_2 = w.arg(m, 3 * m // dy // dx), w.arg(m // dy, m // dx), w.arg(m, f // dy // dx), \
        w.arg(f // dy, m // dx)
    saved_xg, saved_xg2, saved_h, saved_ctx = w.arg(ty, m), w.arg(ty, m), w.arg(ty, f // dy), w.arg(ty, m // dy)
    saved_p, saved_dyg, saved_dag = w.arg(b, heads, s, s), w.arg(ty, m), w.arg(ty, m)
    dout = w.arg(tl, m)

    def layer_norm(v: tuple) -> tuple:
        return w.binary("add", w.binary("multiply", v, v), v)

    def heads_of(v: tuple) -> tuple:  # [ty, m/dy] -> [b, s, heads, head_dim]
        return w.reshape(v, b, s, heads, head_dim)

    def rows_of(v: tuple) -> tuple:  # [b, heads, s, head_dim] -> [ty, m/dy]
        return w.reshape(w.transpose(v, (0, 2, 1, 3)), ty, m // dy)

    # forward: attention
    xg = w.all_gather(layer_norm(x), 0, model_groups)
    qkv = w.dot(xg, w.all_gather(w_qkv, 1, data_groups), (1, 0))
    q, k, v = (heads_of(w.columns(qkv, i * m // dy, (i + 1) * m // dy)) for i in range(3))
    p = w.softmax(w.dot(q, k, (3, 3), [(0, 0), (2, 2)]))
    ctx = rows_of(w.dot(p, v, (3, 1), [(0, 0), (1, 2)]))
    attn = w.reduce_scatter(w.dot(ctx, w.all_gather(w_o, 1, data_groups), (1, 0)), 0, model_groups)
    x2 = w.binary("add", x, attn)
    # forward: FFN
    xg2 = w.all_gather(layer_norm(x2), 0, model_groups)
    h = w.dot(xg2, w.all_gather(w_1, 1, data_groups), (1, 0))
    h = w.binary("multiply", h, w.unary("tanh", h))  # GELU's tanh form, shortened
    ffn = w.reduce_scatter(w.dot(h, w.all_gather(w_2, 1, data_groups), (1, 0)), 0, model_groups)
    out = w.binary("add", x2, ffn)
    # backward: FFN
    d_h = w.dot(w.all_gather(dout, 0, model_groups), w.all_gather(w_2, 1, data_groups), (1, 1))
    d_w2 = w.reduce_scatter(w.dot(saved_h, saved_dyg, (0, 0)), 1, data_groups)
    d_h = w.binary("multiply", d_h, saved_h)
    dx3 = w.reduce_scatter(w.dot(d_h, w.all_gather(w_1, 1, data_groups), (1, 1)), 0, model_groups)
    d_w1 = w.reduce_scatter(w.dot(saved_xg2, d_h, (0, 0)), 1, data_groups)
    dx2 = w.binary("add", dout, w.binary("multiply", dx3, x))
    # backward: attention
    d_ctx = w.dot(w.all_gather(dx2, 0, model_groups), w.all_gather(w_o, 1, data_groups), (1, 1))
    d_wo = w.reduce_scatter(w.dot(saved_ctx, saved_dag, (0, 0)), 1, data_groups)
    d_ctx = heads_of(d_ctx)
    d_p = w.dot(d_ctx, v, (3, 3), [(0, 0), (2, 2)])
    d_v = w.dot(saved_p, d_ctx, (2, 1), [(0, 0), (1, 2)])
    d_s = w.binary("multiply", w.binary("subtract", d_p, saved_p), saved_p)
    d_q = w.dot(d_s, k, (3, 1), [(0, 0), (1, 2)])
    d_k = w.dot(d_s, q, (2, 1), [(0, 0), (1, 2)])
    d_qkv = w.concatenate([rows_of(d_q), rows_of(d_k), rows_of(d_v)], 1)
    dx1 = w.reduce_scatter(w.dot(d_qkv, w.all_gather(w_qkv, 1, data_groups), (1, 1)), 0, model_groups)
    d_wqkv = w.reduce_scatter(w.dot(saved_xg, d_qkv, (0, 0)), 1, data_groups)
    d_x = w.binary("add", dx2, dx1)
    return loom.ir.parse(w.text(dx * dy, [out, d_x, d_wqkv, d_wo, d_w1, d_w2]))


def decompose(module: Operation, machine: Machine, bidirectional: bool = False,
              concatenate: bool = False) -> Operation:
    """`module` after decompose-collective-matmul (mode=auto, priced on `machine`) and
    schedule-latency-hiding."""
    out = loom.ir.parse(str(module))
    with tempfile.TemporaryDirectory() as tmp:
        path = machine.save(Path(tmp) / "machine.json")
        PassManager.parse(f"builtin.module(decompose-collective-matmul{{mode=auto machine={path} "
                          f"bidirectional={str(bidirectional).lower()} concatenate={str(concatenate).lower()}}}, "
                          "schedule-latency-hiding)").run(out)
    return out


@dataclass(frozen=True)
class PodRun:
    """One model on one slice with one model-axis size, one program variant."""

    model: str
    chips: int
    dx: int
    dy: int
    decomposed: bool
    layer: Prediction  # one layer's forward and backward, on the slowest simulated chip
    step_time: float  # seconds: layers x the layer's time
    utilisation: float  # the program's FLOPs over the layer's time at peak FLOP/s
    transfers: int  # comm.collective_permute_start ops in the layer program (0: nothing decomposed)


def run(model: GPT, chips: int, dy: int, decomposed: bool, batch: int | None = None,
        bidirectional: bool = False, concatenate: bool = False) -> PodRun:
    """Simulate one layer of `model` on `chips` chips, a (chips / dy) x dy mesh, `batch` sequences
    (2 per chip by default), before or after the passes."""
    machine = pod_machine(chips)
    dx = chips // dy
    module = layer_program(model, batch or 2 * chips, dx, dy)
    if decomposed:
        module = decompose(module, machine, bidirectional, concatenate)
    # every chip runs the same program; chips differ only in where their rings' hops go
    layer = simulate(module, machine, devices=sorted({0, chips // 2 + dy // 2, chips - 1}), trace_devices=1)
    transfers = sum(op.name == "comm.collective_permute_start" for op in module.walk())
    return PodRun(model.name, chips, dx, dy, decomposed, layer, layer.step_time * model.layers,
                  layer.flops / (layer.step_time * machine.peak_flops), transfers)


def model_axis_sizes(model: GPT, chips: int) -> list[int]:
    """Model-axis sizes (4 to 64) over which the layout splits `model` evenly on `chips` chips."""
    sizes = []
    for dy in (4, 8, 16, 32, 64):
        dx, m = chips // dy, model.d_model
        if dx >= 1 and model.heads % dy == 0 and m % chips == 0 and (3 * m // dy) % dx == 0:
            sizes.append(dy)
    return sizes


def compare(model: GPT, chips: int, sizes: Sequence[int] | None = None,
            bidirectional: bool = False, concatenate: bool = False) -> list[tuple[PodRun, PodRun]]:
    """(undecomposed, decomposed) for each model-axis size."""
    return [(run(model, chips, dy, False),
             run(model, chips, dy, True, bidirectional=bidirectional, concatenate=concatenate))
            for dy in (sizes or model_axis_sizes(model, chips))]


__all__ = ["CHIPS", "GPT", "MODELS", "SLICES", "PodRun", "compare", "decompose", "layer_program",
           "model_axis_sizes", "pod_machine", "run"]
