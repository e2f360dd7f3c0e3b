"""loom.jit with in_shardings / out_shardings, lax.with_sharding_constraint and shard_map lower to
the global annotated program JAX writes: the same text, byte for byte, in both the generic and
the custom form as jaxlib prints them (JAX on 8 fake CPU devices in a subprocess is the oracle,
support.jax_mesh)."""

from __future__ import annotations

import numpy as np
import pytest
from support.jax_mesh import jax_results, loom_env

F32 = np.float32


def ones(*shape: int) -> np.ndarray:
    return np.ones(shape, F32)


# name -> (source, argument shapes): functions whose every op loom and jaxlib print alike
TEXT_CASES = {
    "in_and_out_shardings": ('jit(lambda a, b: jnp.exp(a) * b, in_shardings=(S(None, "y"), S("y", None)), '
                             'out_shardings=S())', [(8, 8), (8, 8)]),
    "one_sharding_for_every_argument": ('jit(lambda a, b: a + b, in_shardings=S(("x", "y")))', [(8, 4), (8, 4)]),
    "unconstrained_argument": ('jit(lambda a, b: jnp.sin(a) - b, in_shardings=(S("x"), None))', [(4, 4), (4, 4)]),
    "out_shardings_tree": ('jit(lambda a: (a + a, {"k": a * a, "j": jnp.cos(a)}), '
                           'out_shardings=(S("x"), {"k": S(None, "y"), "j": None}))', [(4, 8)]),
    "sharding_constraint": ('jit(lambda a: lax.with_sharding_constraint(jnp.sin(a), S("x", "y")) * a)', [(4, 8)]),
    "shard_map_psum": ('jit(shard_map(lambda a: lax.psum(a, "y"), mesh=mesh, in_specs=P("x", "y"), '
                       'out_specs=P("x")))', [(8, 8)]),
    "shard_map_reductions": ('jit(shard_map(lambda a: (lax.pmax(a, ("x", "y")), lax.pmin(a, "x"), '
                             'lax.psum(a, ("y", "x"))), mesh=mesh, in_specs=P("x", "y"), '
                             'out_specs=(P(), P(None, "y"), P())))', [(8, 8)]),
    "shard_map_gathers": ('jit(shard_map(lambda a: (lax.all_gather(a, "x", axis=1, tiled=True), '
                          'lax.all_gather(a, "y"), lax.psum_scatter(a, "y", scatter_dimension=0, tiled=True)), '
                          'mesh=mesh, in_specs=P("x", "y"), out_specs=(P(), P(), P("y"))))', [(8, 8)]),
    "shard_map_permute_all_to_all": ('jit(shard_map(lambda a: (lax.ppermute(a, "y", [(0, 1), (1, 2), (2, 3), (3, 0)]), '
                                     'lax.all_to_all(a, "y", 0, 1, tiled=True)), mesh=mesh, in_specs=P("x", "y"), '
                                     'out_specs=(P("x", "y"), P("x", "y"))))', [(8, 8)]),
    "shard_map_in_sharded_jit": ('jit(lambda a, b: shard_map(lambda u, v: lax.psum(u * v, "x"), mesh=mesh, '
                                 'in_specs=(P("x"), P("x")), out_specs=P())(jnp.sin(a), b), '
                                 'in_shardings=(S("x"), S("x", "y")), out_shardings=S(None, "y"))', [(4, 8), (4, 8)]),
    "shard_map_two_args_tree_out": ('jit(shard_map(lambda a, b: {"s": a + b, "t": lax.psum(b, "y")}, mesh=mesh, '
                                    'in_specs=(P("x"), P("x")), out_specs={"s": P("x"), "t": P("x")}))',
                                    [(4, 8), (4, 8)]),
}


@pytest.fixture(scope="module")
def jax_texts() -> dict[str, tuple[str, str]]:
    cases = {name: ("text", src, [ones(*s) for s in shapes], [None] * len(shapes))
             for name, (src, shapes) in TEXT_CASES.items()}
    return jax_results(cases)


@pytest.mark.parametrize("name", sorted(TEXT_CASES))
def test_lowering_matches_jax_byte_for_byte(name: str, jax_texts: dict[str, tuple[str, str]]) -> None:
    src, shapes = TEXT_CASES[name]
    lowered = eval(src, loom_env()).lower(*[ones(*s) for s in shapes])
    generic, pretty = jax_texts[name]
    assert lowered.as_text(generic=True) == generic
    assert lowered.as_text() == pretty
