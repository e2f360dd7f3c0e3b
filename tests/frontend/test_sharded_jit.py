"""loom.jit with in_shardings / out_shardings, lax.with_sharding_constraint and shard_map lower to
the global annotated program JAX writes: the same text, byte for byte, in both the generic and
the custom form as jaxlib prints them (JAX on 8 fake CPU devices in a subprocess is the oracle,
support.jax_mesh)."""

from __future__ import annotations

import numpy as np
import pytest
from support.jax_mesh import jax_results, loom_env

import loom

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
                          'mesh=mesh, in_specs=P("x", "y"), out_specs=(P(), P(), P("y")), check_vma=False))', [(8, 8)]),
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


# --- calling a sharded jit: partitioned, run on a mesh of threads ---------------------------

def test_sharded_jit_gives_the_unsharded_values_as_sharded_arrays() -> None:
    env = loom_env()
    S = env["S"]
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 8, 8)).astype(F32)

    def f(a, b):
        return loom.numpy.tanh(a @ b) * a, {"s": (a * b).sum(0)}
    sharded = loom.jit(f, in_shardings=(S("x", "y"), S("y")), out_shardings=(S("x"), {"s": S("y")}))
    got, want = sharded(a, b), loom.jit(f)(a, b)
    assert isinstance(got[0], loom.Array) and got[0].sharding == S("x") and got[1]["s"].sharding == S("y")
    np.testing.assert_allclose(np.asarray(got[0]), want[0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(got[1]["s"]), want[1]["s"], rtol=1e-6, atol=1e-6)
    grads = loom.grad(lambda a, b: loom.numpy.sum(sharded(a, b)[0] ** 2), argnums=(0, 1))(a, b)
    want_grads = loom.grad(lambda a, b: loom.numpy.sum(f(a, b)[0] ** 2), argnums=(0, 1))(a, b)
    for g, w in zip(grads, want_grads):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-5)


def test_sharded_arrays_carry_their_sharding_into_jit() -> None:
    env = loom_env()
    S = env["S"]
    x = loom.device_put(np.arange(64, dtype=F32).reshape(8, 8), S("x", "y"))
    lowered = loom.jit(lambda a: a * a).lower(x)
    assert 'sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>' in lowered.as_text()
    np.testing.assert_array_equal(np.asarray(loom.jit(lambda a: a * a)(x)), np.asarray(x) ** 2)


def test_arrays_on_two_meshes_are_an_error_naming_both() -> None:
    from loom.sharding import Mesh, NamedSharding, P
    env = loom_env()
    other = Mesh(np.asarray(env["mesh"].device_list).reshape(4, 2), ("x", "y"))
    a = loom.device_put(np.ones((8, 8), F32), env["S"]("x"))
    b = loom.device_put(np.ones((8, 8), F32), NamedSharding(other, P("x")))

    def add(u, v):
        return u + v
    with pytest.raises(ValueError, match=r"argument v uses the mesh .*'x': 4.*argument u.*'x': 2"):
        loom.jit(add)(a, b)


def test_a_sharded_jit_inside_a_trace_keeps_its_shardings_as_constraints() -> None:
    env = loom_env()
    S = env["S"]

    def f(a, b):
        return loom.numpy.sum(loom.numpy.tanh(a @ b))
    inner = loom.jit(f, in_shardings=(S("x", "y"), None), out_shardings=S())
    x = np.random.default_rng(2).standard_normal((8, 8)).astype(F32)
    lowered = loom.jit(loom.grad(inner)).lower(x, x)
    assert lowered.as_text().count("sdy.sharding_constraint") >= 2
    np.testing.assert_allclose(np.asarray(loom.jit(loom.grad(inner))(x, x)), loom.grad(f)(x, x), rtol=1e-5, atol=1e-6)
