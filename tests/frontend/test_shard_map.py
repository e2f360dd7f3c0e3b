"""loom.shard_map and the collectives of loom.lax compute what JAX's do: each case runs in loom
(on one process: the manual computation's body once per device, one thread each) and in JAX on
8 fake CPU devices in a subprocess (support.jax_mesh), and the values agree. Errors name the
argument at fault, as JAX's do."""

from __future__ import annotations

import numpy as np
import pytest
from support.jax_mesh import jax_results, loom_env
from support.jax_parity import check

import loom
from loom import lax
from loom.sharding import Mesh, NamedSharding, P

XY = 'mesh=mesh, in_specs=P("x", "y")'

# name -> (source, argument shapes, the PartitionSpec each argument is placed with in JAX)
VALUE_CASES = {
    "psum": (f'jit(shard_map(lambda a: lax.psum(a, "y"), {XY}, out_specs=P("x")))', [(8, 8)], [("x", "y")]),
    "psum_both_axes": (f'jit(shard_map(lambda a: lax.psum(a, ("y", "x")), {XY}, out_specs=P()))', [(8, 8)],
                       [("x", "y")]),
    "pmax_pmin": (f'jit(shard_map(lambda a: (lax.pmax(a, ("x", "y")), lax.pmin(a, "x")), {XY}, '
                  'out_specs=(P(), P(None, "y"))))', [(8, 8)], [("x", "y")]),
    "pmean": (f'jit(shard_map(lambda a: lax.pmean(a, "x"), {XY}, out_specs=P(None, "y")))', [(8, 8)], [("x", "y")]),
    "all_gather": (f'jit(shard_map(lambda a: (lax.all_gather(a, "x", axis=1, tiled=True), lax.all_gather(a, "y"), '
                   'lax.all_gather(a, ("x", "y"), axis=2)), '
                   f'{XY}, out_specs=(P(None, "y"), P(None, "x"), P("x", None, "y"))))', [(8, 8)], [("x", "y")]),
    "psum_scatter": (f'jit(shard_map(lambda a: (lax.psum_scatter(a, "y", scatter_dimension=0, tiled=True), '
                     'lax.psum_scatter(a[:2], "x", scatter_dimension=0)), '
                     f'{XY}, out_specs=(P(("x", "y")), P("y"))))', [(8, 8)], [("x", "y")]),
    "ppermute": (f'jit(shard_map(lambda a: (lax.ppermute(a, "y", [(0, 1), (1, 2), (2, 3), (3, 0)]), '
                 'lax.ppermute(a, "x", [(0, 1)])), '
                 f'{XY}, out_specs=(P("x", "y"), P("x", "y"))))', [(8, 8)], [("x", "y")]),
    "all_to_all": (f'jit(shard_map(lambda a: (lax.all_to_all(a, "y", 0, 1, tiled=True), '
                   'lax.all_to_all(a[:4], "y", 0, 0), lax.all_to_all(a[:4], "y", 0, 1)), '
                   f'{XY}, out_specs=(P("x", "y"), P("x", "y"), P("x", "y"))))', [(8, 8)], [("x", "y")]),
    "axis_index": ('jit(shard_map(lambda a: (a * lax.axis_index("y"), lax.axis_index(("x", "y")).reshape(1), '
                   f'lax.axis_index("x").reshape(1)), {XY}, out_specs=(P("x", "y"), P(("x", "y")), P("x"))))',
                   [(8, 8)], [("x", "y")]),
    "two_arguments_trees": ('jit(lambda a, b: shard_map(lambda t, v: {"s": lax.psum(t["u"] * v, "y"), "t": v + 1.0}, '
                            'mesh=mesh, in_specs=({"u": P("x", "y")}, P("x", "y")), '
                            'out_specs={"s": P("x"), "t": P("x", "y")})({"u": a}, b))', [(8, 8), (8, 8)], [None, None]),
    "shard_map_inside_a_jit": ('jit(lambda a, b: jnp.tanh(shard_map(lambda u, v: lax.psum(u * v, "x"), mesh=mesh, '
                               'in_specs=(P("x"), P("x")), out_specs=P())(jnp.sin(a), b)) + b[0])', [(4, 8), (4, 8)],
                               [None, None]),
    "sharded_jit": ('jit(lambda a, b: jnp.tanh(a @ b) + a, in_shardings=(S("x", "y"), S("y")), out_shardings=S("x"))',
                    [(8, 8), (8, 8)], [("x", "y"), ("y",)]),
    "sharding_constraint": ('jit(lambda a: lax.with_sharding_constraint(jnp.sin(a), S("x", "y")) * a)', [(4, 8)],
                            [None]),
}


def inputs(name: str, shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    rng = np.random.default_rng(sum(map(ord, name)))
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


@pytest.fixture(scope="module")
def jax_values() -> dict[str, object]:
    cases = {}
    for name, (src, shapes, placements) in VALUE_CASES.items():
        cases[name] = ("value", src, inputs(name, shapes), placements)
    return jax_results(cases)


def _leaves(x: object) -> list:
    return loom.tree_util.tree_leaves(x)


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values_match_jax(name: str, jax_values: dict[str, object]) -> None:
    src, shapes, _ = VALUE_CASES[name]
    got = eval(src, loom_env())(*inputs(name, shapes))
    check(name, _leaves(got), _leaves(jax_values[name]), tol=1e-5)
