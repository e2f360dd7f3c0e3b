"""Sharded programs from JAX (8 fake CPU devices), the oracle of the SPMD partitioner's tests.

Run from the repository root (about 30 s):

    .venv/bin/python tests/transforms/spmd_corpus/generate.py

For each program it writes, into `programs.json`: the generic-form text JAX lowers
(`jit(f, in_shardings=..., out_shardings=...)`), the input shapes and dtypes, the communication
XLA's compiled program moves per device (bytes, counted as `count_hlo_bytes` says), and into
`values.npz` the inputs (seeded) and JAX's outputs. Nothing here depends on loom.
"""

from __future__ import annotations

import json
import os
import pathlib
import re

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

HERE = pathlib.Path(__file__).parent

_BYTES = {"f32": 4, "f64": 8, "s32": 4, "u32": 4, "s64": 8, "pred": 1, "bf16": 2, "f16": 2, "s8": 1, "u8": 1}
_COLLECTIVE = re.compile(r"^\s*(?:ROOT\s+)?%\S+\s*=\s*(.*?)\s(all-reduce|all-gather|reduce-scatter|all-to-all|"
                         r"collective-permute)(?:-start)?\(")


def _shape_bytes(text: str) -> list[int]:
    return [_BYTES[t] * int(np.prod([int(d) for d in dims.split(",") if d] or [1]))
            for t, dims in re.findall(r"([a-z]+[0-9]*)\[([0-9,]*)\]", text)]


def _group_size(line: str, mesh_shape: dict[str, int]) -> int:
    m = re.search(r"replica_groups=\{\{([0-9,]*)\}", line)
    if m:
        return len(m.group(1).split(","))
    m = re.search(r"replica_groups=\[([0-9,]+)\]<=", line)
    if m:
        return int(m.group(1).split(",")[-1])
    m = re.search(r"replica_groups=mesh\[([^\]]*)\][^{]*\{([^}]*)\}", line)  # mesh[...], device_ids=(...) {...}
    if m:
        sizes = dict((k, int(v)) for k, v in re.findall(r"'([^']+)'=(\d+)", m.group(1)))
        return int(np.prod([sizes[n] for n in re.findall(r"'([^']+)'", m.group(2))]))
    if "source_target_pairs" in line:
        return 2
    return int(np.prod(list(mesh_shape.values())))


def count_hlo_bytes(hlo: str, mesh_shape: dict[str, int]) -> float:
    """Bytes one device moves, each collective once, ring costs (n = group size, V = operand
    bytes): all_reduce 2(n-1)/n V, all_gather (n-1)/n result, reduce_scatter (n-1) result,
    all_to_all (n-1)/n V, collective_permute V."""
    total = 0.0
    for line in hlo.splitlines():
        m = _COLLECTIVE.search(line)
        if not m:
            continue
        kind = m.group(2)
        size = sum(_shape_bytes(m.group(1)))
        n = _group_size(line, mesh_shape)
        if kind == "all-reduce" or kind == "all-to-all":
            total += (2 if kind == "all-reduce" else 1) * (n - 1) / n * size
        elif kind == "all-gather":
            total += (n - 1) / n * size
        elif kind == "reduce-scatter":
            total += (n - 1) * size
        else:
            total += size
    return total


def _mlp_loss(x, w1, w2, y):
    h = jax.nn.relu(x @ w1)
    return jnp.mean((h @ w2 - y) ** 2)


def _layer_norm(x, g):
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + 1e-5) * g


def _cross_entropy(logits, labels):
    logz = jax.nn.logsumexp(logits, axis=-1)
    picked = jnp.sum(logits * jax.nn.one_hot(labels, logits.shape[-1]), axis=-1)
    return jnp.mean(logz - picked)


def _while(x):
    return jax.lax.fori_loop(0, 3, lambda i, c: jnp.tanh(c) * 1.5 + i, x)


def _cond(p, x):
    return jax.lax.cond(p > 0, lambda v: jnp.sin(v), lambda v: v * 2.0, x)


def _shard_map_psum(a):
    mesh = jax.sharding.get_abstract_mesh()
    return jax.shard_map(lambda x: jax.lax.psum(x * 2.0, "y"), mesh=mesh, in_specs=P("x", "y"),
                         out_specs=P("x", None))(a)


def _shard_map_gather_permute(a):
    mesh = jax.sharding.get_abstract_mesh()
    def body(x):
        g = jax.lax.all_gather(x, "x", axis=0, tiled=True)
        return jax.lax.ppermute(g, "y", [(i, (i + 1) % 4) for i in range(4)])
    return jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"), out_specs=P(None, "y"), check_vma=False)(a)


def _attention(x, wq, wk, wv, wo):
    b, t, d = x.shape
    heads = 4
    def split(v):
        return v.reshape(b, t, heads, d // heads)
    q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
    scores = jnp.einsum("bthd,bshd->bhts", q, k) / np.sqrt(d // heads)
    out = jnp.einsum("bhts,bshd->bthd", jax.nn.softmax(scores, axis=-1), v)
    return out.reshape(b, t, d) @ wo


def _conv(x, w):
    return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))


def _max_pool(x):
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")


def _conv_nhwc(x, w):
    return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _pool_same(x):
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")


def _rnn_loss(xs, w):
    def step(h, x):
        h = jnp.tanh(h @ w + x)
        return h, jnp.sum(h, axis=-1)
    h, ys = jax.lax.scan(step, jnp.zeros(xs.shape[1:], xs.dtype), xs)
    return jnp.sum(ys) + jnp.sum(h * h)


def _block_loss(x, g, wq, wk, wv, wo, w1, w2, y):
    h = x + _attention(_layer_norm(x, g), wq, wk, wv, wo)
    h = h + jax.nn.gelu(_layer_norm(h, g) @ w1) @ w2
    return jnp.mean((h - y) ** 2)


def _while_data_dependent(x):
    return jax.lax.while_loop(lambda v: jnp.sum(v * v) > 1.0, lambda v: v * 0.5, x)


def _cond_on_sharded_sum(x):
    return jax.lax.cond(jnp.sum(x) > 0, lambda v: v @ v.T, lambda v: -(v @ v.T), x)


def _sequence_parallel_mlp(x, g, w1, w2):
    h = _layer_norm(x, g)
    h = jax.lax.with_sharding_constraint(h, P("x", None, None))  # gathered along the sequence for the matmuls
    out = jax.nn.relu(h @ w1) @ w2
    return x + jax.lax.with_sharding_constraint(out, P("x", "y", None))  # reduce-scattered back


def _shard_map_partial(a):
    mesh = jax.sharding.get_abstract_mesh()
    def body(v):
        v = jax.lax.with_sharding_constraint(jnp.sin(v), P(None, "y"))  # y is not manual: still a sharding
        return jax.lax.psum(v @ v.T, "x")
    return jax.shard_map(body, mesh=mesh, in_specs=P("x", None), out_specs=P(None, None), axis_names={"x"})(a)


f32 = np.float32
MESH_2D = ((2, 4), ("x", "y"))
MESH_2X2 = ((2, 2), ("x", "y"))
MESH_4 = ((4,), ("d",))
MESH_8 = ((8,), ("d",))

# name, function, mesh, [(shape, dtype, spec)], out specs (a tuple when several results)
PROGRAMS = [
    ("elementwise_same", lambda a, b: a * b + 1.0, MESH_2D,
     [((8, 16), f32, P("x", "y")), ((8, 16), f32, P("x", "y"))], P("x", "y")),
    ("elementwise_mixed", lambda a, b: jnp.exp(a) - b, MESH_2D,
     [((8, 16), f32, P("x", None)), ((8, 16), f32, P(None, "y"))], P("x", "y")),
    ("elementwise_move_split", lambda a: jnp.tanh(a), MESH_8,
     [((16, 16), f32, P("d", None))], P(None, "d")),
    ("elementwise_to_replicated", lambda a: a * 2.0, MESH_2D,
     [((8, 16), f32, P("x", "y"))], P()),
    ("matmul_batch", lambda a, b: jnp.einsum("bij,bjk->bik", a, b), MESH_2D,
     [((4, 8, 16), f32, P("x", None, None)), ((4, 16, 8), f32, P("x", None, None))], P("x", None, None)),
    ("matmul_rows", lambda a, b: a @ b, MESH_2D,
     [((16, 32), f32, P("x", None)), ((32, 8), f32, P())], P("x", None)),
    ("matmul_columns", lambda a, b: a @ b, MESH_2D,
     [((16, 32), f32, P()), ((32, 8), f32, P(None, "y"))], P(None, "y")),
    ("matmul_contracting", lambda a, b: a @ b, MESH_2D,
     [((16, 32), f32, P(None, "y")), ((32, 8), f32, P("y", None))], P()),
    ("matmul_reduce_scatter", lambda a, b: a @ b, MESH_8,
     [((16, 32), f32, P(None, "d")), ((32, 8), f32, P("d", None))], P("d", None)),
    ("megatron_mlp", lambda x, w1, w2: jax.nn.relu(x @ w1) @ w2, MESH_2D,
     [((8, 16), f32, P()), ((16, 32), f32, P(None, "y")), ((32, 16), f32, P("y", None))], P()),
    ("reduce_sum_split", lambda a: jnp.sum(a, axis=1), MESH_2D,
     [((8, 16), f32, P("x", "y"))], P("x")),
    ("reduce_max_unsplit", lambda a: jnp.max(a, axis=1), MESH_2D,
     [((8, 16), f32, P("x", None))], P("x")),
    ("reduce_all", lambda a: jnp.sum(a), MESH_2D, [((8, 16), f32, P("x", "y"))], P()),
    ("broadcast_in_dim", lambda a, b: a[:, None] * b, MESH_2D,
     [((8,), f32, P("x")), ((8, 16), f32, P("x", "y"))], P("x", "y")),
    ("transpose", lambda a: a.T + 1.0, MESH_2D, [((8, 16), f32, P("x", "y"))], P("y", "x")),
    ("reshape_merge", lambda a: a.reshape(64) * 2.0, MESH_2D, [((8, 8), f32, P("x", None))], P("x")),
    ("reshape_split", lambda a: a.reshape(8, 8) + 1.0, MESH_2D, [((64,), f32, P("x"))], P("x", None)),
    ("iota", lambda a: a + jnp.arange(16, dtype=f32), MESH_8, [((16,), f32, P("d"))], P("d")),
    ("concatenate", lambda a, b: jnp.concatenate([a, b], axis=0), MESH_2D,
     [((8, 8), f32, P("x", "y")), ((8, 8), f32, P("x", "y"))], P("x", "y")),
    ("slice", lambda a: a[2:6] * 3.0, MESH_2D, [((8, 16), f32, P("x", "y"))], P(None, "y")),
    ("mlp_2d_loss", _mlp_loss, MESH_2D,
     [((8, 16), f32, P("x", None)), ((16, 32), f32, P(None, "y")), ((32, 4), f32, P("y", None)),
      ((8, 4), f32, P("x", None))], P()),
    ("mlp_2d_grad", jax.grad(_mlp_loss, argnums=(1, 2)), MESH_2D,
     [((8, 16), f32, P("x", None)), ((16, 32), f32, P(None, "y")), ((32, 4), f32, P("y", None)),
      ((8, 4), f32, P("x", None))], (P(None, "y"), P("y", None))),
    ("layer_norm", _layer_norm, MESH_2D, [((8, 16), f32, P("x", "y")), ((16,), f32, P("y"))], P("x", "y")),
    ("cross_entropy", _cross_entropy, MESH_2D,
     [((8, 32), f32, P("x", "y")), ((8,), np.int32, P("x"))], P()),
    ("while_loop", _while, MESH_2D, [((8, 16), f32, P("x", "y"))], P("x", "y")),
    ("cond", _cond, MESH_2D, [((), f32, P()), ((8, 16), f32, P("x", "y"))], P("x", "y")),
    ("sort", lambda a: jnp.sort(a, axis=1), MESH_2D, [((8, 16), f32, P("x", "y"))], P("x", "y")),
    ("top_k", lambda a: jax.lax.top_k(a, 3)[0], MESH_2D, [((8, 16), f32, P("x", "y"))], P("x", None)),
    ("cumsum", lambda a: jnp.cumsum(a, axis=1), MESH_2D, [((8, 16), f32, P("x", "y"))], P("x", "y")),
    ("argmax", lambda a: jnp.argmax(a, axis=1), MESH_2D, [((8, 16), f32, P("x", "y"))], P("x")),
    ("gather", lambda t, i: jnp.take(t, i, axis=0), MESH_2D,
     [((16, 8), f32, P(None, "y")), ((4,), np.int32, P())], P(None, "y")),
    ("scatter_add", lambda a, i, u: a.at[i].add(u), MESH_2D,
     [((16, 8), f32, P("x", None)), ((4,), np.int32, P()), ((4, 8), f32, P())], P("x", None)),
    ("attention_heads", _attention, MESH_2D,
     [((4, 8, 16), f32, P("x", None, None)), ((16, 16), f32, P(None, "y")), ((16, 16), f32, P(None, "y")),
      ((16, 16), f32, P(None, "y")), ((16, 16), f32, P("y", None))], P("x", None, None)),
    ("conv_batch", _conv, MESH_2D, [((4, 3, 8, 8), f32, P("x", None, None, None)), ((6, 3, 3, 3), f32, P())],
     P("x", None, None, None)),
    ("conv_features", _conv, MESH_2D, [((2, 8, 6, 6), f32, P(None, "y", None, None)),
                                       ((4, 8, 3, 3), f32, P(None, "y", None, None))], P()),
    ("max_pool", _max_pool, MESH_2D, [((4, 4, 8, 8), f32, P("x", "y", None, None))], P("x", "y", None, None)),
    ("embedding_batch", lambda t, i: jnp.take(t, i, axis=0), MESH_2D,
     [((32, 8), f32, P()), ((8, 4), np.int32, P("x", "y"))], P("x", "y", None)),
    ("embedding_vocab_split", lambda t, i: jnp.take(t, i, axis=0), MESH_2D,
     [((64, 16), f32, P("y", None)), ((8, 4), np.int32, P("x", None))], P("x", None, None)),
    ("embedding_vocab_uneven", lambda t, i: jnp.take(_split(t, P("y", None)), i, axis=0) * 2.0, MESH_2D,
     [((30, 8), f32, P()), ((6,), np.int32, P())], P()),
    ("pad_reverse_select", lambda a: jnp.where(a > 0, jnp.flip(a, 0), jnp.pad(a, ((0, 0), (1, 1)))[:, 1:-1]), MESH_2D,
     [((8, 16), f32, P("x", "y"))], P("x", "y")),
    ("dynamic_slice", lambda a, i: jax.lax.dynamic_slice_in_dim(a, i, 4, axis=0), MESH_2D,
     [((8, 16), f32, P("x", "y")), ((), np.int32, P())], P(None, "y")),
    ("scan_rnn", _rnn_loss, MESH_2D, [((5, 8, 16), f32, P(None, "x", None)), ((16, 16), f32, P())], P()),
    ("scan_rnn_grad", jax.grad(_rnn_loss, argnums=(0, 1)), MESH_2D,
     [((5, 8, 16), f32, P(None, "x", None)), ((16, 16), f32, P())], (P(None, "x", None), P())),
    ("transformer_block_grad", jax.grad(_block_loss, argnums=(1, 2, 3, 4, 5, 6, 7)), MESH_2D,
     [((4, 8, 16), f32, P("x", None, None)), ((16,), f32, P()), ((16, 16), f32, P(None, "y")),
      ((16, 16), f32, P(None, "y")), ((16, 16), f32, P(None, "y")), ((16, 16), f32, P("y", None)),
      ((16, 32), f32, P(None, "y")), ((32, 16), f32, P("y", None)), ((4, 8, 16), f32, P("x", None, None))],
     (P(), P(None, "y"), P(None, "y"), P(None, "y"), P("y", None), P(None, "y"), P("y", None))),
    ("while_data_dependent", _while_data_dependent, MESH_2D, [((8, 16), f32, P("x", "y"))], P("x", "y")),
    ("cond_on_sharded_sum", _cond_on_sharded_sum, MESH_2D, [((8, 16), f32, P("x", "y"))], P("x", None)),
    ("sequence_parallel_mlp", _sequence_parallel_mlp, MESH_2D,
     [((4, 8, 16), f32, P("x", "y", None)), ((16,), f32, P()), ((16, 32), f32, P(None, "y")),
      ((32, 16), f32, P("y", None))], P("x", "y", None)),
    ("shard_map_psum", lambda a: jnp.tanh(_shard_map_psum(a)), MESH_2D, [((8, 16), f32, P("x", "y"))], P("x", None)),
    ("shard_map_gather_permute", _shard_map_gather_permute, MESH_2D, [((8, 16), f32, P("x", "y"))], P(None, "y")),
    ("shard_map_partial", _shard_map_partial, MESH_2D, [((8, 16), f32, P("x", "y"))], P(None, None)),
    # JAX refuses uneven shardings of arguments: these split 10 over 4 inside the program
    ("uneven_elementwise", lambda a: jnp.sin(_split(a, P("d"))) * 2.0, MESH_4, [((10,), f32, P())], P()),
    ("uneven_sum", lambda a: jnp.sum(_split(a, P("d")) ** 2), MESH_4, [((10,), f32, P())], P()),
    ("uneven_max_rows", lambda a: jnp.max(_split(a, P("d", None)), axis=0), MESH_4, [((10, 3), f32, P())], P()),
    # resharding between two splits of one value
    ("reshard_swap_axes", lambda a: a * 2.0, MESH_2X2, [((8, 8), f32, P("x", "y"))], P("y", "x")),
    ("reshard_axis_order", lambda a: a * 2.0, MESH_2X2, [((8, 8), f32, P(("x", "y"), None))], P(("y", "x"), None)),
    ("reshard_other_axis", lambda a: a * 2.0, MESH_2D, [((8, 8), f32, P("x", None))], P("y", None)),
    ("reshard_split_moves", lambda a: a * 2.0, MESH_2D, [((8, 16), f32, P(None, ("x", "y")))], P(("y", "x"), None)),
    ("reshard_split_moves_3d", lambda a: a * 2.0, MESH_2X2, [((4, 8, 8), f32, P("x", "y", None))],
     P(None, "x", "y")),
    ("reshard_gather_and_move", lambda a: a * 2.0, MESH_2D, [((8, 16), f32, P("x", "y"))], P("y", None)),
    ("reshard_1d_moves", lambda a: jnp.sin(a), MESH_4, [((8, 12), f32, P(None, "d"))], P("d", None)),
    # windows along split spatial dimensions: halos from the neighbours
    ("conv_spatial_chain", lambda x, w1, w2: _conv_nhwc(jax.nn.relu(_conv_nhwc(x, w1)), w2), MESH_4,
     [((2, 16, 8, 3), f32, P(None, "d")), ((3, 3, 3, 4), f32, P()), ((3, 3, 4, 4), f32, P())], P(None, "d")),
    ("pool_spatial_chain", lambda x: _pool_same(jnp.sin(_pool_same(x))), MESH_4, [((2, 16, 8, 3), f32, P(None, "d"))],
     P(None, "d")),
    ("conv_spatial_2d", _conv_nhwc, MESH_2X2, [((2, 8, 8, 3), f32, P(None, "x", "y")), ((3, 3, 3, 4), f32, P())],
     P(None, "x", "y")),
    # a split onto part of another axis (a permute, then an all_gather in sub-groups), rotations, and
    # swapped axes of unequal sizes (an all_to_all in sub-groups, then a permute)
    ("reshard_onto_part_of_axis", lambda a: a * 2.0, MESH_2D, [((8, 16), f32, P("y", None))], P("x", None)),
    ("roll", lambda a: jnp.roll(a, 1, axis=0), MESH_4, [((8, 12), f32, P("d", None))], P("d", None)),
    ("roll_back_by_more_than_a_shard", lambda a: jnp.roll(a, -3, axis=0), MESH_4, [((8, 12), f32, P("d", None))],
     P("d", None)),
    ("roll_2d_mesh", lambda a: jnp.roll(a, 3, axis=1), MESH_2D, [((8, 16), f32, P("x", "y"))], P("x", "y")),
    ("reshard_swap_axes_2x4", lambda a: a * 2.0, MESH_2D, [((8, 16), f32, P("x", "y"))], P("y", "x")),
]


def _split(x, spec):
    return jax.lax.with_sharding_constraint(x, spec)


# integer inputs are drawn from [0, 4) but for these programs (out-of-range ids included)
INTEGER_RANGES = {"embedding_vocab_split": (-3, 70), "embedding_vocab_uneven": (0, 30)}


def _inputs(rng: np.random.Generator, args: list, name: str = "") -> list[np.ndarray]:
    out = []
    for shape, dtype, _ in args:
        if np.dtype(dtype).kind == "i":
            out.append(rng.integers(*INTEGER_RANGES.get(name, (0, 4)), size=shape).astype(dtype))
        else:
            out.append(rng.standard_normal(shape).astype(dtype))
    return out


def main() -> None:
    if jax.__version__ != "0.10.2":
        print(f"warning: jax {jax.__version__}, the corpus was made with 0.10.2")
    rng = np.random.default_rng(0)
    records, values = [], {}
    for name, fn, (mesh_shape, axis_names), args, out_specs in PROGRAMS:
        n = int(np.prod(mesh_shape))
        mesh = jax.make_mesh(mesh_shape, axis_names, devices=jax.devices()[:n],
                             axis_types=(jax.sharding.AxisType.Auto,) * len(mesh_shape))
        shardings = tuple(NamedSharding(mesh, spec) for _, _, spec in args)
        outs = jax.tree.map(lambda s, m=mesh: NamedSharding(m, s), out_specs, is_leaf=lambda s: isinstance(s, P))
        jf = jax.jit(fn, in_shardings=shardings, out_shardings=outs)
        xs = _inputs(rng, args, name)
        with jax.set_mesh(mesh):
            lowered = jf.lower(*xs)
            text = lowered.compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)
            hlo = lowered.compile().as_text()
            results = jf(*[jax.device_put(x, s) for x, s in zip(xs, shardings)])
        results = results if isinstance(results, (tuple, list)) else (results,)
        records.append({"name": name, "mesh": dict(zip(axis_names, mesh_shape)), "text": text,
                        "xla_bytes": count_hlo_bytes(hlo, dict(zip(axis_names, mesh_shape))),
                        "num_inputs": len(xs), "num_outputs": len(results)})
        for i, x in enumerate(xs):
            values[f"{name}/in{i}"] = x
        for i, r in enumerate(results):
            values[f"{name}/out{i}"] = np.asarray(r)
    (HERE / "programs.json").write_text(json.dumps(records, indent=1) + "\n")
    np.savez_compressed(HERE / "values.npz", **values)
    print(f"wrote {len(records)} programs")


if __name__ == "__main__":
    main()
