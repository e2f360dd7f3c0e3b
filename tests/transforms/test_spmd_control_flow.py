"""while / cond / switch / fori_loop / scan on sharded operands, in sharded jits over a 1-D and a 2-D
mesh: the partitioned program gives the unsharded jit's values, every device takes the same branch
and the same trip count because a predicate computed from sharded data is reduced across the mesh
(one scalar all_reduce per iteration, nothing gathered), and reverse mode through a data-dependent
while loop keeps each device's own stacks of local shards. Oracles: the unsharded jit, float64
finite differences."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from spmd_run import collective_bytes

import loom
import loom.numpy as lnp
from loom import lax
from loom.dialects.stack import StackType, is_offloaded
from loom.ir.core import Operation
from loom.ir.types import RankedTensorType
from loom.sharding import Mesh, NamedSharding, P
from loom.tree_util import tree_leaves

MESHES = {"1d": Mesh(np.arange(4), ("x",)), "2d": Mesh(np.arange(8).reshape(2, 4), ("x", "y"))}
SPLIT = {"1d": P("x"), "2d": P("x", "y")}  # splits both dimensions of an 8x8 array on the 2-D mesh
COLLECTIVES = ("stablehlo.all_reduce", "stablehlo.all_gather", "stablehlo.reduce_scatter",
               "stablehlo.all_to_all", "stablehlo.collective_permute", "stablehlo.collective_broadcast")


def run_both(f: Callable[..., Any], args: Sequence[np.ndarray], mesh: str,
             specs: Sequence[Any] | None = None) -> tuple[Any, Any, Operation]:
    """f's values from the sharded jit (every argument split as `specs`, SPLIT by default) and the
    unsharded jit, and the partitioned program that ran."""
    m = MESHES[mesh]
    shardings = tuple(NamedSharding(m, s if s is not None else SPLIT[mesh])
                      for s in (specs if specs is not None else [None] * len(args)))
    sharded = loom.jit(f, in_shardings=shardings)
    got = sharded(*args)
    want = loom.jit(f)(*args)
    return got, want, sharded.lower(*args).compile().executable.module


def assert_close(got: Any, want: Any, rtol: float = 2e-5, atol: float = 2e-5) -> None:
    g, w = tree_leaves(got), tree_leaves(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def collectives_in(region_owner: Operation, region: int) -> list[Operation]:
    return [nested for block in region_owner.regions[region].blocks for op in block.ops
            for nested in op.walk() if nested.name in COLLECTIVES]


def whiles(module: Operation) -> list[Operation]:
    return [op for op in module.walk() if op.name == "stablehlo.while"]


def is_scalar_all_reduce(op: Operation) -> bool:
    t = op.results[0].type
    return op.name == "stablehlo.all_reduce" and isinstance(t, RankedTensorType) and t.shape == ()


LOCAL = {"1d": (2, 8), "2d": (4, 2)}  # the shard of an 8x8 array split as SPLIT


def data(seed: int = 0, shape: tuple[int, ...] = (8, 8), dtype: Any = np.float32) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def skewed() -> np.ndarray:
    """An 8x8 array whose global sum is negative while the shard holding [0, 0] sums positive:
    a predicate decided per shard would take the other branch there."""
    x = np.full((8, 8), -1.0, np.float32)
    x[0, 0] = 40.0
    return x


# --- forward: same branch, same trip count, one scalar all_reduce per iteration -------------

def halve_while_norm(x):
    def cond(c):
        return lnp.sqrt((c[0] * c[0]).sum()) > 1.0
    return lax.while_loop(cond, lambda c: (c[0] * 0.5, c[1] + 1), (x, 0))


@pytest.mark.parametrize("mesh", sorted(MESHES))
def test_while_on_a_norm_reduces_a_scalar_per_iteration(mesh: str) -> None:
    x = data() * 10
    got, want, module = run_both(halve_while_norm, [x], mesh)
    assert_close(got, want)
    assert int(np.asarray(got[1])) == int(want[1]) > 3
    (loop,) = whiles(module)
    cond_collectives = collectives_in(loop, 0)
    assert len(cond_collectives) == 1 and is_scalar_all_reduce(cond_collectives[0])
    assert collectives_in(loop, 1) == []
    n = len(MESHES[mesh].device_list)
    assert collective_bytes(module) == 2 * (n - 1) / n * 4  # one f32 all_reduce in the whole program
    # the carry stays split: the loop runs on local shards
    assert tuple(loop.operands[0].type.shape) == LOCAL[mesh]


@pytest.mark.parametrize("reduce", ["all", "any"])
@pytest.mark.parametrize("mesh", sorted(MESHES))
def test_while_on_a_boolean_reduction_reduces_one_bit_per_iteration(mesh: str, reduce: str) -> None:
    def f(x):
        test = getattr(lnp, reduce)
        return lax.while_loop(lambda c: test(lnp.abs(c[0]) > 0.05), lambda c: (c[0] * 0.5, c[1] + 1), (x, 0))
    got, want, module = run_both(f, [data(1) * 3], mesh)
    assert_close(got, want)
    (loop,) = whiles(module)
    (decision,) = collectives_in(loop, 0)
    assert is_scalar_all_reduce(decision) and str(decision.results[0].type) == "tensor<i1>"
    assert [op for op in module.walk() if op.name in COLLECTIVES] == [decision]
    assert collective_bytes(module) == 2 * (len(MESHES[mesh].device_list) - 1) / len(MESHES[mesh].device_list)


@pytest.mark.parametrize("mesh", sorted(MESHES))
def test_a_predicate_read_from_one_shard_is_broadcast_from_its_owner(mesh: str) -> None:
    """`while |x[5, 7]| > tol`: the device holding x[5, 7] sends that element to the others, one
    collective_broadcast of one element per iteration; a slice within one shard likewise."""
    def element(x):
        return lax.while_loop(lambda c: lnp.abs(c[0][5, 7]) > 0.01, lambda c: (c[0] * 0.5, c[1] + 1), (x, 0))
    def segment(x):  # rows 4..5 and columns 6..7: one shard of either mesh
        return lax.while_loop(lambda c: (c[0][4:6, 6:8] ** 2).sum() > 0.01, lambda c: (c[0] * 0.5, c[1] + 1), (x, 0))
    x = data(1) * 3
    for f, cut in ((element, (1, 1)), (segment, (2, 2))):
        got, want, module = run_both(f, [x], mesh)
        assert_close(got, want)
        assert int(np.asarray(got[1])) == int(want[1]) > 2
        (loop,) = whiles(module)
        (sent,) = collectives_in(loop, 0)
        assert sent.name == "stablehlo.collective_broadcast" and tuple(sent.results[0].type.shape) == cut
        assert [op for op in module.walk() if op.name in COLLECTIVES] == [sent]
        assert collective_bytes(module) == 4 * np.prod(cut)
        # every group starts with the device holding the cut (partition p is device p, row-major)
        owner = {"1d": 2, "2d": 1 * 4 + 3}[mesh]  # rows 4..5: piece 2 of 4 / 1 of 2; columns 6..7: piece 3 of 4
        (group,) = sent.properties["replica_groups"].to_numpy().tolist()
        assert group[0] == owner and sorted(group) == list(range(len(MESHES[mesh].device_list)))


@pytest.mark.parametrize("mesh", sorted(MESHES))
def test_a_slice_across_shards_is_gathered_and_right(mesh: str) -> None:
    def f(x):
        return lax.while_loop(lambda c: lnp.abs(c[3:5, 1]).sum() > 0.01, lambda c: c * 0.5, x)
    got, want, module = run_both(f, [data(1) * 3], mesh)
    assert_close(got, want)
    assert not any(op.name == "stablehlo.collective_broadcast" for op in module.walk())


@pytest.mark.parametrize("mesh", sorted(MESHES))
def test_branches_and_bodies_that_move_the_split_are_resharded_to_the_carry(mesh: str) -> None:
    transposed = lambda x: lax.cond(x.sum() > 0, lambda a: a, lambda a: a.T * 2.0, x)  # noqa: E731
    spun = lambda x: lax.fori_loop(0, 3, lambda i, a: a.T * 0.5 + i, x)  # noqa: E731
    stepped = lambda x, w: lax.while_loop(lambda c: (c * c).sum() > 1.0, lambda c: lnp.tanh(c @ w), x)  # noqa: E731
    for f, args in ((transposed, [skewed()]), (spun, [data(1)]), (stepped, [data(1) * 3, data(2) * 0.2])):
        got, want, _ = run_both(f, args, mesh)
        assert_close(got, want)


@pytest.mark.parametrize("mesh", sorted(MESHES))
def test_cond_on_a_global_sum_takes_one_branch_everywhere(mesh: str) -> None:
    def f(x):
        return lax.cond(x.sum() > 0, lambda a: a * 2.0 + 1.0, lambda a: -a, x)
    got, want, module = run_both(f, [skewed()], mesh)
    assert_close(got, want)
    np.testing.assert_allclose(np.asarray(got), -skewed())  # the false branch, on every shard
    (branch,) = [op for op in module.walk() if op.name == "stablehlo.if"]
    assert all(collectives_in(branch, r) == [] for r in range(2))
    assert all(is_scalar_all_reduce(op) for op in module.walk() if op.name in COLLECTIVES)


@pytest.mark.parametrize("mesh", sorted(MESHES))
def test_switch_index_from_sharded_data(mesh: str) -> None:
    def f(x):
        index = (x.sum() > 0).astype(np.int32) + (x.max() > 10).astype(np.int32)
        return lax.switch(index, [lambda a: a + 1.0, lambda a: a * 3.0, lambda a: lnp.sin(a)], x)
    for x, branch in ((-np.abs(data()), 0), (skewed(), 1), (skewed() + 2.0, 2)):
        got, want, module = run_both(f, [x], mesh)
        assert_close(got, want)
        np.testing.assert_allclose(np.asarray(got), [x + 1.0, x * 3.0, np.sin(x)][branch], rtol=1e-6)
    (case,) = [op for op in module.walk() if op.name == "stablehlo.case"]
    assert all(collectives_in(case, r) == [] for r in range(3))
    assert all(is_scalar_all_reduce(op) for op in module.walk() if op.name in COLLECTIVES)


@pytest.mark.parametrize("mesh", sorted(MESHES))
def test_fori_loop_with_a_global_sum_in_its_body(mesh: str) -> None:
    def f(x):
        return lax.fori_loop(0, 5, lambda i, a: lnp.tanh(a) + 0.01 * a.sum() * i, x)
    got, want, module = run_both(f, [data(1)], mesh)
    assert_close(got, want)
    (loop,) = whiles(module)
    assert collectives_in(loop, 0) == []  # the trip count is a replicated counter
    body = collectives_in(loop, 1)
    assert len(body) == 1 and is_scalar_all_reduce(body[0])


@pytest.mark.parametrize("mesh", sorted(MESHES))
def test_scan_over_rows_of_column_split_data(mesh: str) -> None:
    def f(c0, xs):
        return lax.scan(lambda c, row: (c * 0.9 + row, (c * row).sum()), c0, xs)
    axes = "x" if mesh == "1d" else ("x", "y")
    c0, xs = data(2, (8,)), data(3, (6, 8))
    got, want, module = run_both(f, [c0, xs], mesh, [P(axes), P(None, axes)])
    assert_close(got, want)
    (loop,) = whiles(module)
    body = collectives_in(loop, 1)
    assert len(body) == 1 and is_scalar_all_reduce(body[0])  # the per-row sum; rows never gathered


@pytest.mark.parametrize("mesh", sorted(MESHES))
def test_scan_over_a_split_scan_axis_gives_the_unsharded_values(mesh: str) -> None:
    def f(c0, xs):
        return lax.scan(lambda c, row: (lnp.sin(c) + row, c.sum()), c0, xs)
    got, want, _ = run_both(f, [data(2, (8,)), data(3, (8, 8))], mesh, [P(), None])
    assert_close(got, want)


# --- reverse mode through a data-dependent while loop ---------------------------------------

def shrink_loss(x, w, policy="save_all"):
    def cond(c):
        return (lnp.sqrt((c[0] * c[0]).sum()) > 0.5) & (c[1] < 20)
    def body(c):
        return lnp.sin(c[0]) * w * 0.9, c[1] + 1
    y, _ = lax.while_loop(cond, body, (x, 0), policy=policy)
    return (y * y).sum()


def finite_differences(f: Callable[..., Any], args: Sequence[np.ndarray], argnum: int, eps: float = 1e-6
                       ) -> np.ndarray:
    args = [np.asarray(a, np.float64) for a in args]
    grad = np.zeros_like(args[argnum])
    for i in np.ndindex(grad.shape):
        plus, minus = [a.copy() for a in args], [a.copy() for a in args]
        plus[argnum][i] += eps
        minus[argnum][i] -= eps
        grad[i] = (float(f(*plus)) - float(f(*minus))) / (2 * eps)
    return grad


def stack_ops(module: Operation) -> list[Operation]:
    return [op for op in module.walk() if op.name.startswith("stack.")]


def assert_local_stacks(module: Operation, local_shape: tuple[int, ...]) -> None:
    """Every stack holds local shards: its pushes push, and its pops give, local tensors, and no
    value pushed is gathered first."""
    pushes = [op for op in stack_ops(module) if op.name == "stack.push"]
    assert pushes
    for op in stack_ops(module):
        if op.name == "stack.push" and isinstance(op.operands[1].type, RankedTensorType):
            assert tuple(op.operands[1].type.shape) in (local_shape, ()), op
            owner = op.operands[1].owner_op
            assert getattr(owner, "name", None) != "stablehlo.all_gather", op
        if op.name == "stack.pop" and isinstance(op.results[0].type, RankedTensorType):
            assert tuple(op.results[0].type.shape) in (local_shape, ()), op
        for v in (*op.operands, *op.results):  # stacks of stacks (nested loops) hold local shards too
            t = v.type
            while isinstance(t, StackType):
                t = t.element_type
            assert tuple(t.shape) in (local_shape, ()), op
    assert not any(op.name == "stablehlo.all_gather" for op in module.walk())


@pytest.mark.parametrize("policy", ["save_all", "checkpoint", "offload"])
@pytest.mark.parametrize("mesh", sorted(MESHES))
def test_grad_through_a_data_dependent_while_keeps_local_stacks(mesh: str, policy: str) -> None:
    x, w = data(4) * 2, np.random.default_rng(5).uniform(0.5, 1.0, (8, 8)).astype(np.float32)
    g = loom.grad(lambda x, w: shrink_loss(x, w, policy), argnums=(0, 1))
    got, want, module = run_both(g, [x, w], mesh)
    assert_close(got, want, rtol=1e-5, atol=1e-6)
    assert_local_stacks(module, LOCAL[mesh])
    news = [op for op in stack_ops(module) if op.name == "stack.new"]
    assert news and all(is_offloaded(op) == (policy == "offload") for op in news)


@pytest.mark.usefixtures("loom_x64")
@pytest.mark.parametrize("mesh", sorted(MESHES))
def test_grad_matches_float64_finite_differences(mesh: str) -> None:
    x = data(6, (8, 8), np.float64)
    w = np.random.default_rng(7).uniform(0.5, 1.0, (8, 8))
    got, _, _ = run_both(loom.grad(shrink_loss, argnums=(0, 1)), [x, w], mesh)
    plain = loom.jit(shrink_loss)
    for k in range(2):
        np.testing.assert_allclose(np.asarray(got[k]), finite_differences(plain, [x, w], k), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mesh", sorted(MESHES))
def test_grad_of_a_loop_that_runs_zero_times(mesh: str) -> None:
    x, w = data(8) * 1e-3, np.ones((8, 8), np.float32)  # norm below the tolerance: no iteration
    got, want, module = run_both(loom.grad(shrink_loss, argnums=(0, 1)), [x, w], mesh)
    assert_close(got, want)
    assert_local_stacks(module, LOCAL[mesh])
    np.testing.assert_allclose(np.asarray(got[0]), 2 * x, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got[1]), 0.0)


def cond_in_loop_loss(x):
    def body(c):
        a, i = c
        a = lax.cond(a.sum() > 0, lambda v: lnp.sin(v) * 0.8, lambda v: v * v * 0.5 - 0.1, a)
        return a, i + 1
    y, _ = lax.while_loop(lambda c: (lnp.abs(c[0]).max() > 0.2) & (c[1] < 12), body, (x, 0))
    return (y * lnp.cos(y)).sum()


def loop_in_loop_loss(x):
    def outer(c):
        a, i = c
        inner = lax.while_loop(lambda d: (d * d).sum() > 4.0, lambda d: d * 0.7, a * 1.5)
        return lnp.sin(inner) + 0.1 * a, i + 1
    y, _ = lax.while_loop(lambda c: (c[0].sum() > -3.0) & (c[1] < 4), outer, (x, 0))
    return (y * y).sum()


@pytest.mark.usefixtures("loom_x64")
@pytest.mark.parametrize("loss", [cond_in_loop_loss, loop_in_loop_loss])
@pytest.mark.parametrize("mesh", sorted(MESHES))
def test_grad_through_nested_control_flow(mesh: str, loss: Callable[..., Any]) -> None:
    x = data(9, (8, 8), np.float64)
    got, want, module = run_both(loom.grad(loss), [x], mesh)
    assert_close(got, want, rtol=1e-10, atol=1e-12)
    assert_local_stacks(module, LOCAL[mesh])
    np.testing.assert_allclose(np.asarray(got), finite_differences(loom.jit(loss), [x], 0), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mesh", sorted(MESHES))
def test_jvp_of_a_data_dependent_while(mesh: str) -> None:
    w = np.random.default_rng(5).uniform(0.5, 1.0, (8, 8)).astype(np.float32)
    def f(x, t):
        return loom.jvp(lambda a: shrink_loss(a, w), (x,), (t,))
    got, want, _ = run_both(f, [data(4) * 2, data(10)], mesh)
    assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mesh", sorted(MESHES))
def test_vmap_of_a_data_dependent_while_over_a_split_batch(mesh: str) -> None:
    # each row its own trip count: the batched loop runs until every row is done (any over the mesh)
    got, want, module = run_both(loom.vmap(halve_while_norm), [data(11) * np.arange(1, 9)[:, None]], mesh)
    assert_close(got, want)
    assert len(set(np.asarray(got[1]).tolist())) > 1
    # the per-row norms are all_reduced over the axis splitting the rows' elements; whether any
    # row goes on is one scalar all_reduce (an `or`) over the mesh; nothing is gathered
    (loop,) = whiles(module)
    in_cond = collectives_in(loop, 0)
    assert all(op.name == "stablehlo.all_reduce" for op in in_cond + collectives_in(loop, 1))
    decisions = [op for op in in_cond if is_scalar_all_reduce(op)]
    assert len(decisions) == 1 and str(decisions[0].results[0].type) == "tensor<i1>"


@pytest.mark.parametrize("mesh", sorted(MESHES))
def test_transformations_of_a_sharded_jit(mesh: str) -> None:
    """grad and vmap applied to a jit that carries in_shardings: the jit of its grad runs
    partitioned (local stacks, sharded results); all give the unsharded values."""
    split = NamedSharding(MESHES[mesh], SPLIT[mesh])
    sharded = loom.jit(shrink_loss, in_shardings=(split, split))
    x, w = data(4) * 2, np.random.default_rng(5).uniform(0.5, 1.0, (8, 8)).astype(np.float32)
    want = loom.grad(shrink_loss, argnums=(0, 1))(x, w)
    outer = loom.jit(loom.grad(sharded, argnums=(0, 1)))
    got = outer(x, w)
    assert all(isinstance(g, loom.Array) and g.sharding == split for g in got)
    assert_close(got, want)
    assert_local_stacks(outer.lower(x, w).compile().executable.module, LOCAL[mesh])
    assert_close(loom.grad(sharded, argnums=(0, 1))(x, w), want)
    xs, ws = np.stack([x, x * 0.3]), np.stack([w, w[::-1]])
    assert_close(loom.vmap(sharded)(xs, ws), loom.vmap(shrink_loss)(xs, ws))


@pytest.mark.parametrize("mesh", sorted(MESHES))
def test_grad_of_a_shard_map_loop_with_a_psum_predicate(mesh: str) -> None:
    """The per-device form of the same loop (shard_map, the predicate a psum): its gradient keeps
    local stacks and equals the unsharded loop's."""
    m, spec = MESHES[mesh], SPLIT[mesh]
    def norm_loop(a, total):
        def cond(c):
            return (total((c[0] * c[0]).sum()) > 0.5) & (c[1] < 20)
        return lax.while_loop(cond, lambda c: (lnp.sin(c[0]) * 0.9, c[1] + 1), (a, 0))[0]
    def per_device(x):
        y = loom.shard_map(lambda a: norm_loop(a, lambda s: lax.psum(s, m.axis_names)), mesh=m, in_specs=spec,
                           out_specs=spec)(x)
        return (y * y).sum()
    x = data(4) * 2
    got, _, module = run_both(loom.grad(per_device), [x], mesh)
    want = loom.grad(lambda x: (norm_loop(x, lambda s: s) ** 2).sum())(x)
    assert_close(got, want)
    assert_local_stacks(module, LOCAL[mesh])


def test_uneven_shards_pad_the_loop_and_its_stacks() -> None:
    """6 x 7 split 4 x 2 ways by a sharding constraint: the loop runs on padded 2 x 4 shards, its
    predicate's reduction masks the padding, and the stacks hold the padded shards."""
    m = MESHES["2d"]
    def loss(x, w):
        return shrink_loss(lax.with_sharding_constraint(x, NamedSharding(m, P("y", "x"))), w)
    x, w = data(4, (6, 7)) * 2, np.random.default_rng(5).uniform(0.5, 1.0, (6, 7)).astype(np.float32)
    g = loom.jit(loom.grad(loss, argnums=(0, 1)))
    assert_close(g(x, w), loom.grad(shrink_loss, argnums=(0, 1))(x, w))
    module = g.lower(x, w).compile().executable.module
    assert_local_stacks(module, (2, 4))
    assert [str(op.results[0].type) for op in module.walk() if op.name in COLLECTIVES] == ["tensor<f32>"]
