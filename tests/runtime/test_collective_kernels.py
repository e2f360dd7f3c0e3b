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
from loom.runtime.local import SLICED_REDUCE_MIN, run_spmd

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
@pytest.mark.parametrize("shape", [(300, 200), (SLICED_REDUCE_MIN // 512 + 1, 512)], ids=["one-reducer", "sliced"])
def test_all_reduce_large_operand(executor, shape):
    """Large operands, reduced once by one member or, from the sliced-reduction size up, a slice
    by each member; same values."""
    t = tensor(shape, "f32")
    groups = GROUPINGS["ab"]
    text = one_op(N, "all_reduce", groups_attr(groups), t, t, binary_reducer("add", "f32"))
    xs = inputs(shape, np.float32)
    out = run(text, xs, executor)
    expected = functools.reduce(np.add, xs)
    for p in range(N):
        np.testing.assert_array_equal(out[p], expected)
    assert len({id(o) for o in out}) == N  # each partition its own array


MODES = {  # all_reduce's attributes -> its groups (by the spec's process-group modes, one replica)
    "flattened-ids": (groups_attr([[0, 1], [2, 3], [4, 5], [6, 7]]), [[0, 1], [2, 3], [4, 5], [6, 7]]),
    "cross-replica-and-partition": (groups_attr([[0]], global_ids=False), [list(range(N))]),
    "cross-replica-and-partition-empty": (groups_attr(None, global_ids=False), [list(range(N))]),
    "cross-replica": (groups_attr([[0]], channel=False, global_ids=False), [[p] for p in range(N)]),
    "cross-replica-empty": (groups_attr(None, channel=False, global_ids=False), [[p] for p in range(N)]),
}


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("mode", sorted(MODES))
def test_process_group_modes(executor, mode):
    """Global device ids: partition ids; a channel without them: replica
    ids, each replica with all its partitions (one replica: every partition); no channel: replica
    ids alone (one replica: each partition by itself)."""
    attrs, groups = MODES[mode]
    t = tensor((2,), "f32")
    text = one_op(N, "all_reduce", attrs, t, t, binary_reducer("add", "f32"))
    xs = inputs((2,), np.float32)
    out = run(text, xs, executor)
    for p in range(N):
        np.testing.assert_array_equal(out[p], sum(xs[q] for q in group_of(groups, p)))


def test_global_device_ids_need_groups():
    """As StableHLO's verifier says: flattened ids cannot be empty groups."""
    t = tensor((2,), "f32")
    from loom.ir import parse
    text = one_op(N, "all_reduce", groups_attr(None), t, t, binary_reducer("add", "f32"))
    unverified = parse(text, verify=False)  # the kernel's own check, whatever the verifier says
    with pytest.raises(ExecutionError, match="use_global_device_ids needs replica_groups"):
        run_spmd(unverified, [[x] for x in inputs((2,), np.float32)])


@pytest.mark.parametrize("channel", [True, False])
def test_replica_ids_beyond_the_one_replica_are_an_error(channel):
    """Without global device ids the groups of all_reduce name replicas, and there is one."""
    t = tensor((2,), "f32")
    text = one_op(N, "all_reduce", groups_attr(GROUPINGS["a"], channel=channel, global_ids=False), t, t,
                  binary_reducer("add", "f32"))
    mode = "cross_replica_and_partition" if channel else "cross_replica"
    with pytest.raises(PartitionError, match=rf"replica id 4 in replica_groups, but there is one replica \({mode}"):
        run_spmd(text, [[x] for x in inputs((2,), np.float32)])


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
@pytest.mark.parametrize("groups", [GROUPINGS["a"], [[2, 1, 0], [3, 5, 4]]])  # 6, 7 in no group
def test_collective_broadcast(executor, groups):
    """The first member's operand on every member; partitions in no group get zeros."""
    t = tensor((2, 2), "f32")
    text = one_op(N, "collective_broadcast", f"{CHANNEL}, replica_groups = {ids(groups)}", t, t)
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


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("reducer_op,ufunc", [("add", np.add), ("subtract", np.subtract)])
def test_variadic_all_reduce_reduces_each_operand(executor, reducer_op, ufunc):
    """A variadic all_reduce applies its one binary reducer to each operand on its own."""
    ta, tb = tensor((2,), "f32"), tensor((3,), "f32")
    groups = GROUPINGS["b"]
    text = module(N, [ta, tb], [ta, tb], [
        f'%0:2 = "stablehlo.all_reduce"(%arg0, %arg1) <{{{groups_attr(groups)}}}> {binary_reducer(reducer_op, "f32")} '
        f": ({ta}, {tb}) -> ({ta}, {tb})",
        f'"func.return"(%0#0, %0#1) : ({ta}, {tb}) -> ()'])
    xs, ys = inputs((2,), np.float32, seed=1), inputs((3,), np.float32, seed=2)
    outs = run_spmd(text, [[x, y] for x, y in zip(xs, ys)], executor=executor)
    for p in range(N):
        g = group_of(groups, p)
        np.testing.assert_array_equal(outs[p][0], functools.reduce(ufunc, [xs[q] for q in g]))
        np.testing.assert_array_equal(outs[p][1], functools.reduce(ufunc, [ys[q] for q in g]))


def test_a_partition_in_no_group_is_an_error():
    t = tensor((2,), "f32")
    text = one_op(4, "all_reduce", groups_attr([[0, 1], [2, -1]]), t, t, binary_reducer("add", "f32"))
    with pytest.raises(PartitionError, match=r"partition 3 .*none of the replica_groups") as info:
        run_spmd(text, [[np.ones(2, np.float32)] for _ in range(4)])
    assert info.value.partition == 3
    assert isinstance(info.value.__cause__, ExecutionError)


def test_group_naming_a_missing_partition_is_an_error():
    t = tensor((2,), "f32")
    text = one_op(2, "all_gather", "all_gather_dim = 0 : i64, " + groups_attr([[0, 1], [2, 3]]), t,
                  tensor((4,), "f32"))
    with pytest.raises(PartitionError, match=r"partition id 2 in replica_groups, but there are 2 partitions"):
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
out["lowered"] = f.lower(glob).compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)
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


def test_hand_written_collectives_are_as_jax_lowers_them(xla_results):
    """The per-device ops above carry the attributes JAX's shard_map lowering writes for the same
    lax calls (in the same order in its one program)."""
    from loom.ir import parse
    collectives = {"stablehlo." + v[1] for v in XLA_CASES.values()}
    lowered = [op for op in parse(xla_results["lowered"]).walk() if op.name in collectives]
    assert len(lowered) == len(XLA_CASES)
    for (name, (_, op_name, attrs, out_shape, reducer_op)), theirs in zip(XLA_CASES.items(), lowered):
        text = one_op(N, op_name, attrs, tensor((4, 8), "f32"), tensor(out_shape, "f32"),
                      binary_reducer(reducer_op, "f32") if reducer_op else "")
        ours = next(op for op in parse(text).walk() if op.name == theirs.name)
        assert sorted(ours.properties) == sorted(theirs.properties), name
        for key in ours.properties:
            if key != "channel_handle":  # JAX numbers its channels
                assert str(ours.get_attr(key)) == str(theirs.get_attr(key)), f"{name}: {key}"
        assert str(ours.results[0].type) == str(theirs.results[0].type), name


# XLA running the very per-device texts (every value manual), one partition per fake device ------
# (XLA's CPU all-reduce takes add, multiply, min, max, and and or of booleans, and XLA:CPU has no
# collective_broadcast: the other reducers and collective_broadcast are checked against numpy above)

def _per_device_cases() -> dict[str, tuple[str, list[list[np.ndarray]]]]:
    f32, i32, i1 = tensor((4, 8), "f32"), tensor((4, 8), "i32"), tensor((4, 8), "i1")
    xf, xi, xb = inputs((4, 8), np.float32, 3), inputs((4, 8), np.int32, 4), inputs((4, 8), np.bool_, 5)
    one = [[x] for x in xf]

    def reduce(groups, reducer_op, t, xs, element="f32"):
        return one_op(N, "all_reduce", groups, t, t, binary_reducer(reducer_op, element)), [[x] for x in xs]

    return {
        "all_reduce add b": reduce(groups_attr(GROUPINGS["b"]), "add", f32, xf),
        "all_reduce multiply a": reduce(groups_attr(GROUPINGS["a"]), "multiply", f32, xf),
        "all_reduce minimum ab": reduce(groups_attr(GROUPINGS["ab"]), "minimum", f32, xf),
        "all_reduce maximum i32 ab": reduce(groups_attr(GROUPINGS["ab"]), "maximum", i32, xi, "i32"),
        "all_reduce and i1 b": reduce(groups_attr(GROUPINGS["b"]), "and", i1, xb, "i1"),
        "all_reduce or i1 a": reduce(groups_attr(GROUPINGS["a"]), "or", i1, xb, "i1"),
        **{f"all_reduce mode {m}": reduce(MODES[m][0], "add", f32, xf) for m in sorted(MODES)},
        "all_gather dim 1 a": (one_op(N, "all_gather", "all_gather_dim = 1 : i64, " + groups_attr(GROUPINGS["a"]),
                                      f32, tensor((4, 16), "f32")), one),
        "reduce_scatter maximum dim 0 b": (one_op(N, "reduce_scatter", "scatter_dimension = 0 : i64, "
                                                  + groups_attr(GROUPINGS["b"]), f32, tensor((1, 8), "f32"),
                                                  binary_reducer("maximum", "f32")), one),
        "all_to_all split 0 concat 1 b": (one_op(N, "all_to_all", f"{groups_attr(GROUPINGS['b'], global_ids=False)}, "
                                                 "concat_dimension = 1 : i64, split_count = 4 : i64, "
                                                 "split_dimension = 0 : i64", f32, tensor((1, 32), "f32")), one),
        "collective_permute partial": (one_op(N, "collective_permute", f"{CHANNEL}, source_target_pairs = "
                                              f"{ids([[0, 4], [4, 0], [2, 6]])}", f32, f32), one),
        "partition and replica ids": (module(N, [f32], ["tensor<ui32>", "tensor<ui32>"], [
            '%0 = "stablehlo.partition_id"() : () -> tensor<ui32>',
            '%1 = "stablehlo.replica_id"() : () -> tensor<ui32>',
            '"func.return"(%0, %1) : (tensor<ui32>, tensor<ui32>) -> ()']), one),
    }


PER_DEVICE = _per_device_cases()


@pytest.fixture(scope="module")
def xla_per_device():
    from support.spmd_programs import run_xla_per_device
    return dict(zip(PER_DEVICE, run_xla_per_device(list(PER_DEVICE.values()))))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("name", sorted(PER_DEVICE))
def test_per_device_text_matches_xla(xla_per_device, executor, name):
    text, args = PER_DEVICE[name]
    ours = run_spmd(text, args, executor=executor)
    for p, (mine, theirs) in enumerate(zip(ours, xla_per_device[name], strict=True)):
        for a, b in zip(mine, theirs, strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape, (name, p)
            np.testing.assert_array_equal(a, b, err_msg=f"{name}: partition {p}")
