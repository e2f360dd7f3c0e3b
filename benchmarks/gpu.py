"""Whole programs on a GPU: loom's compiled executor over torch tensors vs PyTorch eager vs jax.jit.

    python benchmarks/gpu.py            # on a CUDA machine: batch 8, sequence 512, width 1024, bf16
    python benchmarks/gpu.py --small    # tiny sizes (runs anywhere; on the CPU without a GPU)

Two programs, each written once in JAX and exported as StableHLO (the module loom runs and the
one XLA compiles are the same program), and written by hand in PyTorch:

(a) a transformer block forward + backward: pre-LayerNorm, 16-head causal self-attention, an MLP
    of width 4x with tanh-GELU, residuals; the loss is sum(block(x) * dy); gradients for x and
    every parameter. bf16 activations and parameters (f32 on the CPU with --small).
(b) an MLP training step: 784-2048-2048-10 (relu, log-softmax cross-entropy), batch 512, f32:
    loss, gradients and the SGD update of every parameter.

Contenders, round-robin after warm-up: loom (torch backend, on JAX's module after loom's default
pipeline: inline, canonicalize, cse, dce; `--raw` runs it as exported), loom with the program captured as a
CUDA graph (CUDA only), loom's front end (the same Python source traced by `loom.jit` with
`loom.numpy` in place of `jax.numpy`, on torch tensors), loom's program fused by torch.compile
(TorchInductor; `loom.jit(..., fuse=True)`), with and without CUDA graphs, PyTorch eager
(autograd), jax.jit (on jax's default device, printed). The run writes
benchmarks/results/gpu-DATE.json with every round's time and the device (`loom bench report`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import traceback
from collections.abc import Callable

import numpy as np
from bench_common import Record, cpu_name, fmt, load_average  # noqa: E402

RECORD = Record("gpu", {})


def machine(torch, jax, device) -> str:
    cpu = cpu_name()
    gpu = torch.cuda.get_device_name(device) if device.type == "cuda" else "no GPU"
    load = load_average()
    return (f"{cpu}, {os.cpu_count()} cores, load {load:.1f}; {gpu}; torch {torch.__version__}, "
            f"jax {jax.__version__} on {jax.devices()[0].platform}")


def race(case: str, contenders: dict[str, Callable[[], object]], repeat: int, sync: Callable[[], None]) -> dict:
    """{name: (median, min) seconds per call}, contenders run round-robin after two warm-up calls;
    every round's time goes to RECORD under `case`, with each loom row's ratio to jax.jit."""
    for fn in contenders.values():
        fn()
        fn()
    sync()
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, fn in contenders.items():
            sync()
            t = time.perf_counter()
            fn()
            sync()
            times[name].append(time.perf_counter() - t)
    RECORD.add_all(case, times)
    for name in times:
        if name.startswith("loom") and "jax.jit" in times:
            RECORD.ratio(case, name, "jax.jit")
    return {name: (statistics.median(ts), min(ts)) for name, ts in times.items()}


def report(title: str, times: dict) -> None:
    print(title)
    base = times["pytorch eager"][0]
    for name, (med, mn) in times.items():
        print(f"  {name:26s} {fmt(med):>10s} (min {fmt(mn)})   x{med / base:.2f} of PyTorch eager")
    if "jax.jit" in times:
        print("  vs jax.jit: " + ", ".join(f"{n} {times[n][0] / times['jax.jit'][0]:.2f}x" for n in times
                                           if n.startswith("loom")))


# (a) Transformer block ------------------------------------------------------------------------------

def transformer_jax(jnp, jax, heads: int):
    def layer_norm(x, g, b):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) * jax.lax.rsqrt(var + 1e-5) * g + b

    def block(params, x):
        g1, b1, wqkv, wo, g2, b2, w1, w2 = params
        bsz, seq, width = x.shape
        h = layer_norm(x, g1, b1)
        q, k, v = jnp.split(h @ wqkv, 3, axis=-1)
        split = lambda t: t.reshape(bsz, seq, heads, width // heads).transpose(0, 2, 1, 3)  # noqa: E731
        q, k, v = split(q), split(k), split(v)
        s = (q @ k.transpose(0, 1, 3, 2)).astype(jnp.float32) / np.sqrt(width // heads)
        mask = jnp.tril(jnp.ones((seq, seq), bool))
        p = jax.nn.softmax(jnp.where(mask, s, -1e9), axis=-1).astype(x.dtype)
        a = (p @ v).transpose(0, 2, 1, 3).reshape(bsz, seq, width)
        x = x + a @ wo
        h = layer_norm(x, g2, b2)
        return x + jax.nn.gelu(h @ w1, approximate=True) @ w2

    def loss(params, x, dy):
        return (block(params, x).astype(jnp.float32) * dy.astype(jnp.float32)).sum()

    value_and_grad = jax.value_and_grad(loss, argnums=(0, 1))

    def step(*flat):  # eight parameters, x, dy
        return value_and_grad(list(flat[:8]), flat[8], flat[9])

    return step


def transformer_torch(torch, heads: int):
    F = torch.nn.functional

    def layer_norm(x, g, b):
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        return (x - mu) * torch.rsqrt(var + 1e-5) * g + b

    def block(params, x):
        g1, b1, wqkv, wo, g2, b2, w1, w2 = params
        bsz, seq, width = x.shape
        h = layer_norm(x, g1, b1)
        q, k, v = (h @ wqkv).chunk(3, dim=-1)
        split = lambda t: t.reshape(bsz, seq, heads, width // heads).transpose(1, 2)  # noqa: E731
        q, k, v = split(q), split(k), split(v)
        s = (q @ k.transpose(-1, -2)).float() / np.sqrt(width // heads)
        mask = torch.tril(torch.ones(seq, seq, dtype=torch.bool, device=x.device))
        p = torch.softmax(torch.where(mask, s, -1e9), dim=-1).to(x.dtype)
        a = (p @ v).transpose(1, 2).reshape(bsz, seq, width)
        x = x + a @ wo
        h = layer_norm(x, g2, b2)
        return x + F.gelu(h @ w1, approximate="tanh") @ w2

    def step(*flat):  # eight parameters, x, dy
        params, x, dy = flat[:8], flat[8], flat[9]
        params = [p.detach().requires_grad_() for p in params]
        x = x.detach().requires_grad_()
        loss = (block(params, x).float() * dy.float()).sum()
        grads = torch.autograd.grad(loss, [*params, x])
        return loss, grads

    return step


def transformer_inputs(batch: int, seq: int, width: int, dtype) -> list[np.ndarray]:
    rs = np.random.RandomState(0)
    f = lambda *s, scale=1.0: (rs.randn(*s) * scale).astype(np.float32)  # noqa: E731
    params = [np.ones(width, np.float32), np.zeros(width, np.float32), f(width, 3 * width, scale=width ** -0.5),
              f(width, width, scale=width ** -0.5), np.ones(width, np.float32), np.zeros(width, np.float32),
              f(width, 4 * width, scale=width ** -0.5), f(4 * width, width, scale=(4 * width) ** -0.5)]
    return [p.astype(dtype) for p in params] + [f(batch, seq, width).astype(dtype), f(batch, seq, width).astype(dtype)]


# (b) MLP training step ---------------------------------------------------------------------------

def mlp_jax(jnp, jax):
    def loss(params, x, labels):
        h = x
        for w, b in params[:-1]:
            h = jax.nn.relu(h @ w + b)
        w, b = params[-1]
        logp = jax.nn.log_softmax(h @ w + b)
        return -jnp.take_along_axis(logp, labels[:, None], axis=1).mean()

    def step(w1, b1, w2, b2, w3, b3, x, labels):
        params = [(w1, b1), (w2, b2), (w3, b3)]
        value, grads = jax.value_and_grad(loss)(params, x, labels)
        new = [p - 0.01 * g for pair, gpair in zip(params, grads) for p, g in zip(pair, gpair)]
        return (value, *new)

    return step


def mlp_torch(torch):
    F = torch.nn.functional

    def step(w1, b1, w2, b2, w3, b3, x, labels):
        params = [p.detach().requires_grad_() for p in (w1, b1, w2, b2, w3, b3)]
        h = x
        for w, b in zip(params[0:4:2], params[1:4:2]):
            h = F.relu(h @ w + b)
        loss = F.cross_entropy(h @ params[4] + params[5], labels.long())
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            return (loss, *[p - 0.01 * g for p, g in zip(params, grads)])

    return step


def mlp_inputs(batch: int, sizes: list[int]) -> list[np.ndarray]:
    rs = np.random.RandomState(1)
    out = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        out += [(rs.randn(a, b) * a ** -0.5).astype(np.float32), np.zeros(b, np.float32)]
    return out + [rs.randn(batch, sizes[0]).astype(np.float32), rs.randint(0, sizes[-1], batch).astype(np.int32)]


# Running ---------------------------------------------------------------------------------------

def largest_relative_difference(got: list, want: list) -> float:
    """max |got - want| / (1 + max |want|) over corresponding results (torch tensors or arrays)."""
    from loom.backend.torch_kernels import to_numpy
    worst = 0.0
    for g, w in zip(got, want):
        g64, w64 = to_numpy(g).astype(np.float64), np.asarray(w).astype(np.float64)
        worst = max(worst, float(np.max(np.abs(g64 - w64))) / (1 + float(np.max(np.abs(w64)))))
    return worst


def loom_front_end():
    """loom's modules under the names the JAX programs above use (jnp, jax): the same source,
    traced by loom's front end instead of exported from JAX."""
    import types

    import loom
    import loom.numpy as lnp
    return lnp, types.SimpleNamespace(lax=loom.lax, nn=loom.nn, value_and_grad=loom.value_and_grad)


def compare(name: str, jax_fn, torch_fn, args: list[np.ndarray], device, repeat: int, torch, jax, tol: float,
            front_end_fn=None, fuse: bool = True, optimize: bool = True) -> None:
    import loom
    import loom.ir
    from loom.backend.compiled import CudaGraphExecutable, Executable, InductorExecutable
    from loom.backend.torch_kernels import to_numpy, to_torch
    from loom.frontend.jit import DEFAULT_PIPELINE
    from loom.rewrite.pass_manager import PassManager

    text = jax.jit(jax_fn).lower(*args).compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)
    t0 = time.perf_counter()
    module = loom.ir.parse(text)
    ops_before = sum(1 for _ in module.walk())
    if optimize:  # loom's default pipeline (what `loom-opt` and loom.jit run): inline, canonicalize, cse, dce
        PassManager.parse(DEFAULT_PIPELINE).run(module)
    exe = Executable(module, backend="torch", device=device)
    compile_time = time.perf_counter() - t0
    fallbacks = sorted({line.split("# ")[-1] for line in exe.source.splitlines()
                        if "numpy_" in line or "to_numpy(" in line})
    after = "loom's default pipeline" if optimize else "parsing"
    print(f"  loom: {len(text.splitlines())} lines of StableHLO ({ops_before} ops, {sum(1 for _ in module.walk())} "
          f"after {after}), compiled in "
          f"{compile_time:.2f} s; ops on numpy fallbacks: {fallbacks or 'none'}")

    targs = [to_torch(a, device) for a in args]
    jargs = [jax.device_put(a) for a in args]
    jitted = jax.jit(jax_fn)
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)

    # Same results first: loom vs XLA (and PyTorch eager for the loss).
    got = exe(*targs)
    want = jax.tree_util.tree_leaves(jitted(*jargs))
    got_leaves = list(got) if isinstance(got, tuple) else [got]
    worst = largest_relative_difference(got_leaves, want)
    print(f"  loom vs jax: largest relative difference {worst:.2e} over {len(want)} results "
          f"({'ok' if worst < tol else 'MISMATCH'})")
    eager_loss = float(torch_fn(*targs)[0].detach())
    print(f"  loss: loom {float(to_numpy(got_leaves[0])):.6g}, jax {float(np.asarray(want[0])):.6g}, "
          f"pytorch {eager_loss:.6g}")

    contenders = {"loom (torch)": lambda: exe.call_unchecked(targs)}
    if front_end_fn is not None:
        try:
            traced = loom.jit(front_end_fn)
            mine = jax.tree_util.tree_leaves(traced(*targs))
            worst = largest_relative_difference(mine, want)
            print(f"  loom front end (the same Python traced by loom.jit) vs jax: largest relative difference "
                  f"{worst:.2e} ({'ok' if worst < tol else 'MISMATCH'})")
            contenders["loom front end (jit, torch)"] = lambda: traced(*targs)
        except Exception as e:  # report it and time the others
            traceback.print_exc()
            print(f"  loom front end failed: {type(e).__name__}: {e}")
    graphed = None
    if device.type == "cuda":
        try:
            graphed = CudaGraphExecutable(exe)
            graph_out = graphed(*targs)
            graph_out = list(graph_out) if isinstance(graph_out, tuple) else [graph_out]
            worst = largest_relative_difference(graph_out, want)
            print(f"  loom + CUDA graph vs jax: largest relative difference {worst:.2e} "
                  f"({'ok' if worst < tol else 'MISMATCH'}); captured: {graphed.captured}")
            contenders["loom (torch) + CUDA graph"] = lambda: graphed.call_unchecked(targs)
        except Exception as e:
            traceback.print_exc()
            print(f"  loom + CUDA graph failed: {type(e).__name__}: {e}")
    for label, cuda_graph in (("loom + inductor", False), ("loom + inductor + graphs", True)):
        if not fuse or (cuda_graph and device.type != "cuda"):
            continue
        try:  # the generated program fused by torch.compile (TorchInductor)
            fused = InductorExecutable(exe, cuda_graph=cuda_graph)
            t0 = time.perf_counter()
            fused_out = fused(*targs)
            sync()
            seconds = time.perf_counter() - t0
            fused_out = list(fused_out) if isinstance(fused_out, tuple) else [fused_out]
            worst = largest_relative_difference(fused_out, want)
            print(f"  {label}: compiled in {seconds:.1f} s; vs jax: largest relative difference {worst:.2e} "
                  f"({'ok' if worst < tol else 'MISMATCH'})", flush=True)
            contenders[label] = lambda fused=fused: fused.call_unchecked(targs)
        except Exception as e:
            traceback.print_exc()
            print(f"  {label} failed: {type(e).__name__}: {e}")
    contenders["pytorch eager"] = lambda: torch_fn(*targs)
    contenders["jax.jit"] = lambda: jax.block_until_ready(jitted(*jargs))
    times = race(name.strip(), contenders, repeat, sync)
    if graphed is not None:
        print(f"  CUDA graph captured: {graphed.captured}")
    report(name, times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="tiny sizes (for a CPU check)")
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--bf16", action="store_true", help="with --small: the transformer in bf16, as on the GPU")
    parser.add_argument("--device", default=None, help="torch device (default: cuda if available, else cpu)")
    parser.add_argument("--no-fuse", action="store_true", help="without the torch.compile (Inductor) contenders")
    parser.add_argument("--raw", action="store_true",
                        help="run JAX's module as exported, without loom's default pipeline first")
    parser.add_argument("--torch-threads", type=int, default=None,
                        help="torch intra-op threads (on a loaded CPU, 1 avoids threads spinning against each other)")
    args = parser.parse_args()

    import jax
    import jax.numpy as jnp
    import ml_dtypes
    import torch

    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    print(machine(torch, jax, device) + f", torch threads {torch.get_num_threads()}")
    if args.small:
        batch, seq, width, heads = 2, 16, 64, 4
        dtype = ml_dtypes.bfloat16 if args.bf16 else np.float32
        mlp_batch, sizes = 16, [64, 128, 128, 10]
        repeat = args.repeat or 5
    else:
        batch, seq, width, heads, dtype = 8, 512, 1024, 16, ml_dtypes.bfloat16
        mlp_batch, sizes = 512, [784, 2048, 2048, 10]
        repeat = args.repeat or 20
    tol = 5e-2 if dtype != np.float32 else 1e-3
    RECORD.settings = {"device": torch.cuda.get_device_name(device) if device.type == "cuda" else str(device),
                       "transformer": {"batch": batch, "seq": seq, "width": width, "heads": heads,
                                       "dtype": np.dtype(dtype).name},
                       "mlp": {"batch": mlp_batch, "sizes": sizes}, "repeat": repeat, "fuse": not args.no_fuse,
                       "pipeline": not args.raw, "jax_platform": jax.devices()[0].platform}

    print(f"\n(a) transformer block forward+backward: batch {batch}, sequence {seq}, width {width}, {heads} heads, "
          f"{np.dtype(dtype).name}")
    try:
        compare("(a) transformer block forward+backward, time per step", transformer_jax(jnp, jax, heads),
                transformer_torch(torch, heads),
                transformer_inputs(batch, seq, width, dtype), device, repeat, torch, jax, tol,
                transformer_jax(*loom_front_end(), heads), not args.no_fuse, not args.raw)
    except Exception as e:  # report it and go on to the MLP
        traceback.print_exc()
        print(f"  transformer block failed: {type(e).__name__}: {e}", flush=True)
    print(f"\n(b) MLP training step {'-'.join(map(str, sizes))}, batch {mlp_batch}, float32")
    compare("(b) MLP training step, time per step", mlp_jax(jnp, jax), mlp_torch(torch), mlp_inputs(mlp_batch, sizes),
            device, repeat, torch, jax, 1e-3, mlp_jax(*loom_front_end()), not args.no_fuse, not args.raw)
    RECORD.write()


if __name__ == "__main__":
    main()
