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
                   f'{XY}, out_specs=(P(None, "y"), P(None, "x"), P("x", None, "y")), check_vma=False))', [(8, 8)],
                   [("x", "y")]),
    "psum_scatter": (f'jit(shard_map(lambda a: (lax.psum_scatter(a, "y", scatter_dimension=0, tiled=True), '
                     'lax.psum_scatter(a[:2], "x", scatter_dimension=0)), '
                     f'{XY}, out_specs=(P(("x", "y")), P(("x", "y")))))', [(8, 8)], [("x", "y")]),
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
    "closure": ('jit(lambda a, w: shard_map(lambda x: lax.psum(x * w[:2], "y"), mesh=mesh, in_specs=P("x", "y"), '
                'out_specs=P("x"))(a))', [(8, 8), (8,)], [None, None]),
    "grad_closure": ('jit(grad(lambda w, a: jnp.sum(shard_map(lambda x: jnp.sin(x * w[:2]), mesh=mesh, '
                     'in_specs=P("x", "y"), out_specs=P("x", "y"))(a) ** 2)))', [(8,), (8, 8)], [None, None]),
    "grad_sharding_constraint": ('jit(grad(lambda a: jnp.sum(lax.with_sharding_constraint(jnp.sin(a), S("x", "y")) '
                                 '* a)))', [(4, 8)], [None]),
    "vmap_sharding_constraint": ('jit(vmap(lambda a: lax.with_sharding_constraint(jnp.sin(a), S("x", "y")) * a, '
                                 'in_axes=1))', [(4, 3, 8)], [None]),
    "sharded_jit": ('jit(lambda a, b: jnp.tanh(a @ b) + a, in_shardings=(S("x", "y"), S("y")), out_shardings=S("x"))',
                    [(8, 8), (8, 8)], [("x", "y"), ("y",)]),
    "sharding_constraint": ('jit(lambda a: lax.with_sharding_constraint(jnp.sin(a), S("x", "y")) * a)', [(4, 8)],
                            [None]),
}

# Derivatives and batching of shard_map'ed functions: grad, jvp and vmap in loom and in JAX.
SM = 'shard_map({body}, mesh=mesh, in_specs={ins}, out_specs={outs}, check_vma={vma})'


def sm(body: str, ins: str = 'P("x", "y")', outs: str = 'P("x", "y")', vma: bool = True) -> str:
    return SM.format(body=body, ins=ins, outs=outs, vma=vma)


def loss_grad(shard_mapped: str) -> str:
    return f"jit(grad(lambda a: jnp.sum(jnp.sin({shard_mapped}(a)) ** 2)))"


BODIES = {  # name -> (body, out_specs, check_vma)
    "psum": ('lambda a: lax.psum(a * a, "y")', 'P("x")', True),
    "psum_both": ('lambda a: lax.psum(jnp.cos(a), ("x", "y"))', "P()", True),
    "pmean": ('lambda a: lax.pmean(a * a, "x")', 'P(None, "y")', True),
    "all_gather_tiled": ('lambda a: lax.all_gather(a * a, "y", axis=1, tiled=True)', 'P("x")', False),
    "all_gather": ('lambda a: lax.all_gather(jnp.sin(a), "x", axis=0)', 'P(None, None, "y")', False),
    "psum_scatter": ('lambda a: lax.psum_scatter(a * a, "y", scatter_dimension=0, tiled=True)', 'P(("x", "y"))', True),
    "ppermute": ('lambda a: lax.ppermute(a * a, "y", [(0, 1), (1, 2), (2, 3)])', 'P("x", "y")', True),
    "all_to_all": ('lambda a: lax.all_to_all(a * a, "y", 0, 1, tiled=True)', 'P("x", "y")', True),
    "axis_index": ('lambda a: a * a * lax.axis_index("y").astype(a.dtype)', 'P("x", "y")', True),
}
for _name, (_body, _outs, _vma) in BODIES.items():
    VALUE_CASES[f"grad_{_name}"] = (loss_grad(sm(_body, outs=_outs, vma=_vma)), [(8, 8)], [("x", "y")])
    VALUE_CASES[f"jvp_{_name}"] = (f"jit(lambda a, t: jvp({sm(_body, outs=_outs, vma=_vma)}, (a,), (t,)))",
                                   [(8, 8), (8, 8)], [("x", "y"), ("x", "y")])
    VALUE_CASES[f"vmap_{_name}"] = (f"jit(vmap({sm(_body, outs=_outs, vma=_vma)}))", [(3, 8, 8)], [None])
VALUE_CASES.update({
    # gradients taken inside a body: invariant values (psum / pmean results, replicated operands) count once
    "grad_in_body_psum": ("jit(" + sm('lambda a: grad(lambda b: jnp.sum(lax.psum(jnp.sin(b) * b, "y")))(a)') + ")",
                          [(8, 8)], [("x", "y")]),
    "grad_in_body_pmean_replicated_operand": (
        "jit(" + sm('lambda w, a: grad(lambda v: lax.pmean(jnp.sum(jnp.sin(a * v)), "x"))(w)',
                    ins='(P(), P("x"))', outs="P()") + ")", [(8,), (8, 8)], [(), ("x",)]),
    "grad_in_body_all_gather": ("jit(" + sm('lambda a: grad(lambda b: jnp.sum(lax.all_gather(b, "y", axis=1, '
                                            'tiled=True) ** 2))(a)') + ")", [(8, 8)], [("x", "y")]),
    "grad_in_body_axis_index": ("jit(" + sm('lambda a: grad(lambda b: jnp.sum(lax.psum(b * lax.axis_index("y"), '
                                            '"x") ** 2))(a)') + ")", [(8, 8)], [("x", "y")]),
    "grad_of_grad": ("jit(grad(lambda a: jnp.sum(grad(lambda b: jnp.sum("
                     + sm('lambda x: lax.psum(jnp.sin(x) * x, "y")', outs='P("x")') + "(b) ** 3))(a) ** 2)))",
                     [(8, 8)], [("x", "y")]),
    "grad_replicated_operand": ("jit(grad(lambda w, a: jnp.sum("
                                + sm('lambda w, a: jnp.sin(a * w)', ins='(P(), P("x"))', outs='P("x")')
                                + "(w, a) ** 2)))", [(8,), (8, 8)], [(), ("x",)]),
    "grad_sharded_jit": ('jit(grad(jit(lambda a, b: jnp.sum(jnp.tanh(a @ b) ** 2), '
                         'in_shardings=(S("x", "y"), S("y")))))', [(8, 8), (8, 8)], [("x", "y"), ("y",)]),
    "vmap_two_operands_one_batched": ("jit(vmap(" + sm('lambda w, a: lax.psum(a * w, "x")', ins='(P(), P("x"))',
                                                       outs='P()') + ", in_axes=(None, 0)))",
                                      [(8,), (3, 8, 8)], [None, None]),
})


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


# --- errors name the argument at fault -------------------------------------------------------

MESH = Mesh(np.arange(8).reshape(2, 4), ("x", "y"))
X = np.ones((6, 8), np.float32)


def identity(a):
    return a


@pytest.mark.parametrize("spec, message", [
    (P("x", None, None), r"in_specs for args\[0\] \(bound to parameter 'a'\).*has length 3.*rank 2"),
    (P("z"), r"in_specs for args\[0\] \(bound to parameter 'a'\).*names axis 'z', which is not an axis of the mesh"),
    (P("x", "x"), r"in_specs for args\[0\] \(bound to parameter 'a'\).*mesh axis 'x' is used twice"),
    (P("y"), r"in_specs for args\[0\] \(bound to parameter 'a'\).*array axis 0 \(of size 6\).*'y' \(of size 4\), "
             r"but 4 does not evenly divide 6"),
])
def test_shard_map_errors_name_the_argument(spec, message) -> None:
    f = loom.jit(loom.shard_map(identity, mesh=MESH, in_specs=spec, out_specs=P()))
    with pytest.raises(ValueError, match=message):
        f.lower(X)


def test_shard_map_error_names_a_leaf_of_a_tree_argument() -> None:
    f = loom.shard_map(lambda t: t["w"], mesh=MESH, in_specs=({"w": P("y")},), out_specs=P())
    with pytest.raises(ValueError, match=r"args\[0\]\['w'\] \(bound to parameter 't'\).*does not evenly divide 6"):
        loom.jit(lambda x: f({"w": x})).lower(X)


def test_out_specs_longer_than_the_output_is_an_error() -> None:
    f = loom.jit(loom.shard_map(lambda a: a.sum(), mesh=MESH, in_specs=P("x"), out_specs=P("x")))
    with pytest.raises(ValueError, match=r"out_specs for .*has length 1, but the value has shape \(\), which has rank"):
        f.lower(np.ones((8, 8), np.float32))


@pytest.mark.parametrize("spec, message", [
    (P("x", "y", None), r"in_shardings for argument a: .*has length 3.*rank 2"),
    (P("y"), r"in_shardings for argument a: .*array axis 0 \(of size 6\).*but 4 does not evenly divide 6"),
])
def test_jit_in_shardings_errors_name_the_argument(spec, message) -> None:
    def f(a, b):
        return a + b
    jitted = loom.jit(f, in_shardings=(NamedSharding(MESH, P()), NamedSharding(MESH, spec)))
    with pytest.raises(ValueError, match=message.replace("argument a", "argument b")):
        jitted.lower(X, X)


def test_two_meshes_in_one_program_are_an_error() -> None:
    other = Mesh(np.arange(8).reshape(4, 2), ("x", "y"))
    f = loom.jit(lambda a, b: loom.shard_map(identity, mesh=other, in_specs=P("x"), out_specs=P("x"))(a) + b,
                 in_shardings=(NamedSharding(MESH, P("x")), None))
    with pytest.raises(ValueError, match=r"shard_map identity uses the mesh .*'x': 4.*but <lambda>: in_shardings for "
                                         r"argument a uses the mesh .*'x': 2"):
        f.lower(np.ones((8, 8), np.float32), np.ones((8, 8), np.float32))


def test_collective_outside_shard_map_is_an_error() -> None:
    with pytest.raises(NameError, match=r"psum: unbound axis name 'x'"):
        loom.jit(lambda a: lax.psum(a, "x")).lower(X)
    with pytest.raises(NameError, match=r"unbound axis name 'q'.*the mesh has axes \('x', 'y'\)"):
        loom.jit(loom.shard_map(lambda a: lax.psum(a, "q"), mesh=MESH, in_specs=P(), out_specs=P())).lower(X)


# --- pmax / pmin: JAX has no derivative for them; the oracle is the selected positions ------

@pytest.mark.parametrize("reduce, pick", [(lax.pmax, np.argmax), (lax.pmin, np.argmin)])
def test_pmax_pmin_derivatives_follow_the_selected_positions(reduce, pick) -> None:
    rng = np.random.default_rng(3)
    a, t = rng.standard_normal((2, 8, 8)).astype(np.float32)
    w = rng.standard_normal((8, 2)).astype(np.float32)
    f = loom.shard_map(lambda x: reduce(x, "y"), mesh=MESH, in_specs=P("x", "y"), out_specs=P("x"))
    blocks = a.reshape(8, 4, 2)  # [row, device along y, column within the block]
    chosen = pick(blocks, axis=1)  # (8, 2)
    onehot = np.zeros_like(blocks)
    np.put_along_axis(onehot, chosen[:, None, :], 1.0, axis=1)
    got = loom.jit(loom.grad(lambda x: loom.numpy.sum(f(x) * w)))(a)
    np.testing.assert_allclose(got, (onehot * w[:, None, :]).reshape(8, 8), rtol=1e-6)
    _, tangent = loom.jit(lambda x, u: loom.jvp(f, (x,), (u,)))(a, t)
    np.testing.assert_allclose(tangent, np.take_along_axis(t.reshape(8, 4, 2), chosen[:, None, :], 1)[:, 0], rtol=1e-6)


def test_pmax_ties_share_the_derivative() -> None:
    a = np.tile(np.arange(2, dtype=np.float32), (8, 4))  # every device along y holds the same block
    f = loom.shard_map(lambda x: lax.pmax(x, "y"), mesh=MESH, in_specs=P("x", "y"), out_specs=P("x"))
    got = loom.jit(loom.grad(lambda x: loom.numpy.sum(f(x))))(a)
    np.testing.assert_allclose(got, np.full((8, 8), 0.25, np.float32))


def test_shard_map_called_eagerly_runs_jitted_on_sharded_arrays() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8, 8)).astype(np.float32)
    f = loom.shard_map(lambda a: lax.psum(a, "y"), mesh=MESH, in_specs=P("x", "y"), out_specs=P("x"))
    placed = loom.device_put(x, NamedSharding(MESH, P("x", "y")))
    for arg in (x, placed):
        got = f(arg)
        assert got.sharding == NamedSharding(MESH, P("x"))
        np.testing.assert_allclose(np.asarray(got), x.reshape(8, 4, 2).sum(1), rtol=1e-6)


def test_with_sharding_constraint_outside_tracing_places_the_value() -> None:
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    got = lax.with_sharding_constraint({"w": x}, NamedSharding(MESH, P("x")))
    assert got["w"].sharding == NamedSharding(MESH, P("x"))
    np.testing.assert_array_equal(np.asarray(got["w"]), x)
