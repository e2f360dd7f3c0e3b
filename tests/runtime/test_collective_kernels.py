"""The collective kernels on a mesh of threads: hand-written per-device programs (as JAX's
shard_map lowers collectives) run by run_spmd in both executors, against numpy computations of
the StableHLO spec's semantics (process groups, reducers applied in group order)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from support.spmd_programs import (
    CHANNEL,
    binary_reducer,
    groups_attr,
    ids,
    mesh_groups,
    module,
    one_op,
    reducer,
    tensor,
)

from loom.backend.common import ExecutionError
from loom.runtime.communicator import PartitionError
from loom.runtime.local import run_spmd

EXECUTORS = ["compiled", "interpreter"]
MESH = (2, 4)  # partitions 0..7, row major: along "b" [[0..3], [4..7]], along "a" [[0, 4], [1, 5], ...]
N = 8
GROUPINGS = {
    "b": mesh_groups(MESH, [1]),
    "a": mesh_groups(MESH, [0]),
    "ab": mesh_groups(MESH, [0, 1]),
}


def inputs(shape, dtype, seed=0) -> list[np.ndarray]:
    """Per-partition operands: small integers (exact in every reduction order)."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.bool_:
        return [rng.integers(0, 2, shape).astype(bool) for _ in range(N)]
    return [rng.integers(-3, 4, shape).astype(dtype) for _ in range(N)]


def run(text, xs, executor):
    return [outs[0] for outs in run_spmd(text, [[x] for x in xs], executor=executor)]


def group_of(groups, p):
    return next(g for g in groups if p in g)


ELEMENT = {np.float32: "f32", np.int32: "i32", np.bool_: "i1"}
REDUCERS = [  # (region op, numpy ufunc, dtype)
    ("add", np.add, np.float32), ("multiply", np.multiply, np.float32), ("maximum", np.maximum, np.float32),
    ("minimum", np.minimum, np.float32), ("and", np.bitwise_and, np.int32), ("or", np.bitwise_or, np.int32),
    ("xor", np.bitwise_xor, np.int32), ("and", np.logical_and, np.bool_), ("or", np.logical_or, np.bool_),
    ("subtract", np.subtract, np.float32),  # not a known reduction: applied pairwise through the region
]


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("grouping", sorted(GROUPINGS))
@pytest.mark.parametrize("reducer_op,ufunc,dtype", REDUCERS, ids=[f"{r[0]}-{np.dtype(r[2]).name}" for r in REDUCERS])
def test_all_reduce(executor, grouping, reducer_op, ufunc, dtype):
    groups = GROUPINGS[grouping]
    t = tensor((3, 2), ELEMENT[dtype])
    text = one_op(N, "all_reduce", groups_attr(groups), t, t, binary_reducer(reducer_op, ELEMENT[dtype]))
    xs = inputs((3, 2), dtype)
    out = run(text, xs, executor)
    for p in range(N):
        expected = functools.reduce(ufunc, [xs[q] for q in group_of(groups, p)])
        np.testing.assert_array_equal(out[p], expected, err_msg=f"partition {p}")
        assert out[p].dtype == dtype


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("reducer_op,ufunc", [("add", np.add), ("multiply", np.multiply), ("subtract", np.subtract)])
def test_all_reduce_of_scalars(executor, reducer_op, ufunc):
    t = tensor((), "f32")
    groups = GROUPINGS["ab"]
    text = one_op(N, "all_reduce", groups_attr(groups), t, t, binary_reducer(reducer_op, "f32"))
    xs = [np.array(p + 1, np.float32) for p in range(N)]
    out = run(text, xs, executor)
    for p in range(N):
        assert out[p].shape == () and out[p] == functools.reduce(ufunc, xs)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_all_reduce_region_of_several_ops(executor):
    """A reducer that is no single known op (lhs * 2 + rhs): folded in group order."""
    body = ['%two = "stablehlo.constant"() <{value = dense<2.0> : tensor<f32>}> : () -> tensor<f32>',
            '%m = "stablehlo.multiply"(%lhs, %two) : (tensor<f32>, tensor<f32>) -> tensor<f32>',
            '%r = "stablehlo.add"(%m, %rhs) : (tensor<f32>, tensor<f32>) -> tensor<f32>']
    t = tensor((4,), "f32")
    groups = GROUPINGS["b"]
    text = one_op(N, "all_reduce", groups_attr(groups), t, t, reducer(body, "f32"))
    xs = inputs((4,), np.float32)
    out = run(text, xs, executor)
    for p in range(N):
        expected = functools.reduce(lambda a, b: a * 2 + b, [xs[q] for q in group_of(groups, p)])
        np.testing.assert_array_equal(out[p], expected)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_all_reduce_large_operand_sliced(executor):
    """Operands above the sliced-reduction size reduce in two phases; same values."""
    t = tensor((300, 200), "f32")
    groups = GROUPINGS["ab"]
    text = one_op(N, "all_reduce", groups_attr(groups), t, t, binary_reducer("add", "f32"))
    xs = inputs((300, 200), np.float32)
    out = run(text, xs, executor)
    expected = functools.reduce(np.add, xs)
    for p in range(N):
        np.testing.assert_array_equal(out[p], expected)
    assert len({id(o) for o in out}) == N  # each partition its own array


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("form", ["empty-groups", "cross-partition", "cross-replica"])
def test_process_group_modes(executor, form):
    """Empty replica_groups with a channel: all partitions; partition ids without
    use_global_device_ids (cross_partition); no channel_handle: cross_replica, one replica, so each
    partition alone."""
    t = tensor((2,), "f32")
    attrs = {"empty-groups": groups_attr(None, global_ids=False),
             "cross-partition": groups_attr(GROUPINGS["a"], global_ids=False),
             "cross-replica": groups_attr([[0]], channel=False, global_ids=False)}[form]
    text = one_op(N, "all_reduce", attrs, t, t, binary_reducer("add", "f32"))
    xs = inputs((2,), np.float32)
    out = run(text, xs, executor)
    for p in range(N):
        group = {"empty-groups": range(N), "cross-partition": group_of(GROUPINGS["a"], p), "cross-replica": [p]}[form]
        np.testing.assert_array_equal(out[p], sum(xs[q] for q in group))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("grouping", ["a", "b"])
@pytest.mark.parametrize("dim", [0, 1])
def test_all_gather(executor, grouping, dim):
    groups = GROUPINGS[grouping]
    n = len(groups[0])
    out_shape = (2 * n, 3) if dim == 0 else (2, 3 * n)
    text = one_op(N, "all_gather", f"all_gather_dim = {dim} : i64, " + groups_attr(groups),
                  tensor((2, 3), "f32"), tensor(out_shape, "f32"))
    xs = inputs((2, 3), np.float32)
    out = run(text, xs, executor)
    for p in range(N):
        np.testing.assert_array_equal(out[p], np.concatenate([xs[q] for q in group_of(groups, p)], axis=dim))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("grouping", ["a", "b"])
@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("reducer_op,ufunc", [("add", np.add), ("maximum", np.maximum), ("subtract", np.subtract)])
def test_reduce_scatter(executor, grouping, dim, reducer_op, ufunc):
    groups = GROUPINGS[grouping]
    n = len(groups[0])
    in_shape = (4, 8)
    out_shape = (4 // n, 8) if dim == 0 else (4, 8 // n)
    text = one_op(N, "reduce_scatter", f"scatter_dimension = {dim} : i64, " + groups_attr(groups),
                  tensor(in_shape, "f32"), tensor(out_shape, "f32"), binary_reducer(reducer_op, "f32"))
    xs = inputs(in_shape, np.float32)
    out = run(text, xs, executor)
    for p in range(N):
        g = group_of(groups, p)
        total = functools.reduce(ufunc, [xs[q] for q in g])
        np.testing.assert_array_equal(out[p], np.split(total, n, axis=dim)[g.index(p)])


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("grouping", ["a", "b"])
@pytest.mark.parametrize("split_dim,concat_dim", [(1, 0), (0, 1), (0, 0)])
def test_all_to_all(executor, grouping, split_dim, concat_dim):
    groups = GROUPINGS[grouping]
    n = len(groups[0])
    in_shape = [4, 8]
    out_shape = list(in_shape)
    out_shape[split_dim] //= n
    out_shape[concat_dim] *= n
    attrs = (f"{groups_attr(groups, global_ids=False)}, concat_dimension = {concat_dim} : i64, "
             f"split_count = {n} : i64, split_dimension = {split_dim} : i64")
    text = one_op(N, "all_to_all", attrs, tensor(in_shape, "f32"), tensor(out_shape, "f32"))
    xs = inputs(in_shape, np.float32)
    out = run(text, xs, executor)
    for p in range(N):
        g = group_of(groups, p)
        pieces = [np.split(xs[q], n, axis=split_dim)[g.index(p)] for q in g]
        np.testing.assert_array_equal(out[p], np.concatenate(pieces, axis=concat_dim))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("pairs", [
    [[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]],   # a ring along "b"
    [[0, 4], [4, 0], [2, 6]],                                           # along "a"; some receive nothing
])
def test_collective_permute(executor, pairs):
    t = tensor((3,), "i32")
    text = one_op(N, "collective_permute", f"{CHANNEL}, "
                  f"source_target_pairs = {ids(pairs)}", t, t)
    xs = inputs((3,), np.int32)
    out = run(text, xs, executor)
    sources = {t: s for s, t in pairs}
    for p in range(N):
        expected = xs[sources[p]] if p in sources else np.zeros(3, np.int32)
        np.testing.assert_array_equal(out[p], expected)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("groups", [GROUPINGS["a"], [[5, 1, 2], [3, 7]]])
def test_collective_broadcast(executor, groups):
    """The first member's operand on every member; partitions in no group get zeros."""
    t = tensor((2, 2), "f32")
    width = max(len(g) for g in groups)
    padded = [list(g) + [-1] * (width - len(g)) for g in groups]  # ragged groups padded with -1
    text = one_op(N, "collective_broadcast", f"{CHANNEL}, "
                  f"replica_groups = {ids(padded)}", t, t)
    xs = inputs((2, 2), np.float32)
    out = run(text, xs, executor)
    for p in range(N):
        g = next((g for g in groups if p in g), None)
        np.testing.assert_array_equal(out[p], xs[g[0]] if g else np.zeros((2, 2), np.float32))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_partition_and_replica_id(executor):
    u = "tensor<ui32>"
    text = module(N, [], [u, u], ['%0 = "stablehlo.partition_id"() : () -> tensor<ui32>',
                                  '%1 = "stablehlo.replica_id"() : () -> tensor<ui32>',
                                  f'"func.return"(%0, %1) : ({u}, {u}) -> ()'])
    outs = run_spmd(text, [[] for _ in range(N)], executor=executor)
    assert [int(o[0]) for o in outs] == list(range(N))
    assert [int(o[1]) for o in outs] == [0] * N
    assert outs[3][0].dtype == np.uint32


@pytest.mark.parametrize("executor", EXECUTORS)
def test_variadic_all_gather(executor):
    """all_gather of two operands at once (a variadic op): each gathered on its own."""
    ta, tb = tensor((2,), "f32"), tensor((1, 2), "i32")
    ra, rb = tensor((4,), "f32"), tensor((2, 2), "i32")
    groups = [[0, 1], [2, 3]]
    text = module(4, [ta, tb], [ra, rb], [
        f'%0:2 = "stablehlo.all_gather"(%arg0, %arg1) <{{all_gather_dim = 0 : i64, {groups_attr(groups)}}}> : '
        f"({ta}, {tb}) -> ({ra}, {rb})",
        f'"func.return"(%0#0, %0#1) : ({ra}, {rb}) -> ()'])
    xs = [np.full(2, p, np.float32) for p in range(4)]
    ys = [np.full((1, 2), 10 * p, np.int32) for p in range(4)]
    outs = run_spmd(text, [[x, y] for x, y in zip(xs, ys)], executor=executor)
    np.testing.assert_array_equal(outs[3][0], [2, 2, 3, 3])
    np.testing.assert_array_equal(outs[0][1], [[0, 0], [10, 10]])


def test_a_partition_in_no_group_is_an_error():
    t = tensor((2,), "f32")
    text = one_op(4, "all_reduce", groups_attr([[0, 1], [2, -1]]), t, t, binary_reducer("add", "f32"))
    with pytest.raises(PartitionError, match=r"partition 3 .*none of the replica_groups") as info:
        run_spmd(text, [[np.ones(2, np.float32)] for _ in range(4)])
    assert info.value.partition == 3
    assert isinstance(info.value.__cause__, ExecutionError)


def test_group_naming_a_missing_partition_is_an_error():
    t = tensor((2,), "f32")
    text = one_op(2, "all_gather", "all_gather_dim = 0 : i64, " + groups_attr([[0, 5]]), t, tensor((4,), "f32"))
    with pytest.raises(PartitionError, match=r"partition id 5 in replica_groups, but there are 2 partitions"):
        run_spmd(text, [[np.ones(2, np.float32)] for _ in range(2)])


# XLA as the oracle: the same computations through jax's shard_map on 8 fake devices -------------

XLA_CASES = {  # name: (the lax call on the local block x, the op, its attributes, local result shape, reducer)
    "psum_b": ("jax.lax.psum(x, 'b')", "all_reduce", groups_attr(GROUPINGS["b"]), (4, 8), "add"),
    "psum_a": ("jax.lax.psum(x, 'a')", "all_reduce", groups_attr(GROUPINGS["a"]), (4, 8), "add"),
    "pmax_ab": ("jax.lax.pmax(x, ('a', 'b'))", "all_reduce", groups_attr(GROUPINGS["ab"]), (4, 8), "maximum"),
    "pmin_b": ("jax.lax.pmin(x, 'b')", "all_reduce", groups_attr(GROUPINGS["b"]), (4, 8), "minimum"),
    "all_gather_a": ("jax.lax.all_gather(x, 'a', axis=0, tiled=True)", "all_gather",
                     "all_gather_dim = 0 : i64, " + groups_attr(GROUPINGS["a"]), (8, 8), None),
    "all_gather_b": ("jax.lax.all_gather(x, 'b', axis=1, tiled=True)", "all_gather",
                     "all_gather_dim = 1 : i64, " + groups_attr(GROUPINGS["b"]), (4, 32), None),
    "psum_scatter_b": ("jax.lax.psum_scatter(x, 'b', scatter_dimension=1, tiled=True)", "reduce_scatter",
                       "scatter_dimension = 1 : i64, " + groups_attr(GROUPINGS["b"]), (4, 2), "add"),
    "psum_scatter_a": ("jax.lax.psum_scatter(x, 'a', scatter_dimension=0, tiled=True)", "reduce_scatter",
                       "scatter_dimension = 0 : i64, " + groups_attr(GROUPINGS["a"]), (2, 8), "add"),
    "all_to_all_b": ("jax.lax.all_to_all(x, 'b', 1, 0, tiled=True)", "all_to_all",
                     f"{groups_attr(GROUPINGS['b'], global_ids=False)}, concat_dimension = 0 : i64, "
                     "split_count = 4 : i64, split_dimension = 1 : i64", (16, 2), None),
    "all_to_all_a": ("jax.lax.all_to_all(x, 'a', 0, 1, tiled=True)", "all_to_all",
                     f"{groups_attr(GROUPINGS['a'], global_ids=False)}, concat_dimension = 1 : i64, "
                     "split_count = 2 : i64, split_dimension = 0 : i64", (2, 16), None),
    "ppermute_ring_b": ("jax.lax.ppermute(x, 'b', [(0, 1), (1, 2), (2, 3), (3, 0)])", "collective_permute",
                        f"{CHANNEL}, source_target_pairs = "
                        + ids([[r * 4 + s, r * 4 + (s + 1) % 4] for r in range(2) for s in range(4)]), (4, 8), None),
    "ppermute_partial_b": ("jax.lax.ppermute(x, 'b', [(0, 2)])", "collective_permute",
                           f"{CHANNEL}, source_target_pairs = {ids([[0, 2], [4, 6]])}", (4, 8), None),
}

XLA_SCRIPT = """
import json, numpy as np, jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("a", "b"))
rng = np.random.default_rng(0)
xs = [rng.integers(-3, 4, (4, 8)).astype(np.float32) for _ in range(8)]
glob = jax.device_put(np.stack(xs).reshape(2, 4, 4, 8), NamedSharding(mesh, P("a", "b")))
calls = json.loads(%r)
bodies = [eval("lambda x: " + call) for call in calls.values()] + [
    lambda x: (jax.lax.axis_index("a") * 4 + jax.lax.axis_index("b")).reshape(())]
f = jax.jit(jax.shard_map(lambda g: tuple(body(g[0, 0])[None, None] for body in bodies), mesh=mesh,
                          in_specs=P("a", "b"), out_specs=P("a", "b")))  # one program: one compilation
results = [np.asarray(r) for r in f(glob)]
out = {name: [r[p // 4, p %% 4].tolist() for p in range(8)] for name, r in zip(list(calls) + ["partition_id"], results)}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def xla_results():
    import json

    from support.spmd_programs import run_with_devices
    return run_with_devices(XLA_SCRIPT % json.dumps({k: v[0] for k, v in XLA_CASES.items()}))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("name", sorted(XLA_CASES))
def test_collectives_match_xla(xla_results, executor, name):
    _, op, attrs, out_shape, reducer_op = XLA_CASES[name]
    region = binary_reducer(reducer_op, "f32") if reducer_op else ""
    text = one_op(N, op, attrs, tensor((4, 8), "f32"), tensor(out_shape, "f32"), region)
    rng = np.random.default_rng(0)  # the subprocess's inputs
    xs = [rng.integers(-3, 4, (4, 8)).astype(np.float32) for _ in range(N)]
    out = run(text, xs, executor)
    for p in range(N):
        np.testing.assert_array_equal(out[p], np.array(xla_results[name][p], np.float32), err_msg=f"partition {p}")


def test_partition_id_matches_xla_device_order(xla_results):
    u = "tensor<ui32>"
    text = module(N, [], [u], [f'%0 = "stablehlo.partition_id"() : () -> {u}', f'"func.return"(%0) : ({u}) -> ()'])
    assert [int(o[0]) for o in run_spmd(text, [[] for _ in range(N)])] == xla_results["partition_id"]
