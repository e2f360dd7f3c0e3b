"""shard_map's check_vma (on by default, as in JAX): loom types every value of a body by the mesh
axes it varies over and accepts a body exactly when JAX (8 fake CPU devices, in a subprocess)
does, with the same values; rejections are the same kind of error, naming the output and axis."""

from __future__ import annotations

import numpy as np
import pytest
from support.jax_mesh import jax_results, loom_env
from support.jax_parity import check

import loom

IN = '(P("x", "y"), P())'
# name -> (body over the local block `a` of a (8, 8) array split over ("x", "y") and `v`, a
# replicated (8,) array; `w` is the same (8,) array closed over), out_specs
CASES = {
    "psum": ('lambda a, v: lax.psum(a, "y")', 'P("x")'),
    "psum_both_axes": ('lambda a, v: lax.psum(a, ("x", "y"))', "P()"),
    "pmax_pmin": ('lambda a, v: (lax.pmax(a, ("x", "y")), lax.pmin(a, "x"))', '(P(), P(None, "y"))'),
    "pmean": ('lambda a, v: lax.pmean(a, "x")', 'P(None, "y")'),
    "all_gather_keeps_varying": ('lambda a, v: lax.all_gather(a, "y", axis=1, tiled=True)', 'P("x", "y")'),
    "psum_scatter": ('lambda a, v: lax.psum_scatter(a, "y", scatter_dimension=0, tiled=True)', 'P(("x", "y"))'),
    "ppermute": ('lambda a, v: lax.ppermute(a, "y", [(0, 1), (1, 2), (2, 3), (3, 0)])', 'P("x", "y")'),
    "all_to_all": ('lambda a, v: lax.all_to_all(a, "y", 0, 1, tiled=True)', 'P("x", "y")'),
    "axis_index": ('lambda a, v: a * lax.axis_index("y")', 'P("x", "y")'),
    "constant_in_body": ("lambda a, v: jnp.ones((2, 2))", "P()"),
    "scalar_psum": ('lambda a, v: lax.psum(jnp.sum(a), ("x", "y"))', "P()"),
    "replicated_operand": ("lambda a, v: v * 2", "P()"),
    "closure_replicated": ("lambda a, v: w * 3", "P()"),
    "psum_of_invariant": ('lambda a, v: lax.psum(v, "x")', "P()"),
    "mix_psum_axis_index": ('lambda a, v: lax.psum(a, "y") * lax.axis_index("x")', 'P("x")'),
    "pcast_output": ('lambda a, v: lax.pcast(v, "x", to="varying")', 'P("x")'),
    "invariant_output_any_spec": ('lambda a, v: v + 1', 'P("y")'),
    "where_of_invariant": ('lambda a, v: jnp.where(lax.psum(a, ("x", "y")) > 0, 1.0, 2.0)', "P()"),
    "all_gather_of_invariant": ('lambda a, v: lax.all_gather(lax.psum(a, ("x", "y")), "y")', 'P(None, "y")'),
    "local_reduction": ('lambda a, v: jnp.sum(lax.psum(a, "x"), axis=0)', 'P("y")'),
    "cond_same_axes": ('lambda a, v: lax.cond(lax.psum(jnp.sum(a), ("x", "y")) > 0, lambda: lax.psum(a, "y"), '
                       'lambda: lax.psum(2 * a, "y"))', 'P("x")'),
    "cond_varying_predicate": ('lambda a, v: lax.cond(jnp.sum(a) > 0, lambda: lax.psum(a, "y"), '
                               'lambda: lax.psum(2 * a, "y"))', 'P("x")'),
    "cond_constants": ("lambda a, v: lax.cond(jnp.sum(a) > 0, lambda: jnp.ones(2), lambda: jnp.zeros(2))", "P()"),
    "fori_zeros_like_init": ("lambda a, v: lax.fori_loop(0, 3, lambda i, c: c + a, jnp.zeros_like(a))",
                             'P("x", "y")'),
    "fori_pcast_init": ('lambda a, v: lax.fori_loop(0, 3, lambda i, c: c + a, '
                        'lax.pcast(jnp.zeros(a.shape), ("x", "y"), to="varying"))', 'P("x", "y")'),
    "while_invariant_carry": ('lambda a, v: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), '
                              '(0, lax.psum(a, "y")))[1]', 'P("x")'),
    "cond_in_loop": ('lambda a, v: lax.fori_loop(0, 2, lambda i, c: lax.cond(i > 0, lambda: c + 1, lambda: c), '
                     'lax.psum(a, "y"))', 'P("x")'),
    "scan_outputs_vary": ("lambda a, v: lax.scan(lambda c, r: (c, r * 2), 0.0, a)[1]", 'P("x", "y")'),
    "scan_carry_and_outputs": ("lambda a, v: lax.scan(lambda c, r: (c + r, r * c), jnp.zeros_like(a[0]), a)",
                               '(P(("x", "y")), P("x", "y"))'),
    "map": ("lambda a, v: lax.map(lambda r: jnp.sin(r), a)", 'P("x", "y")'),
    # rejected by JAX
    "scan_carry_grows": ("lambda a, v: lax.scan(lambda c, r: (c + r, r), jnp.zeros(a.shape[1:]), a)[0]", 'P("y")'),
    "scan_outputs_vary_not_named": ("lambda a, v: lax.scan(lambda c, r: (c, r * 2), 0.0, a)[1]", 'P("x")'),
    "psum_not_enough": ('lambda a, v: lax.psum(a, "y")', "P()"),
    "all_gather_varies": ('lambda a, v: lax.all_gather(a, "y", axis=1, tiled=True)', 'P("x")'),
    "psum_scatter_varies": ('lambda a, v: lax.psum_scatter(a, "y", scatter_dimension=0, tiled=True)', 'P("x")'),
    "ppermute_varies": ('lambda a, v: lax.ppermute(a, "y", [(0, 1), (1, 0)])', 'P("x")'),
    "all_to_all_varies": ('lambda a, v: lax.all_to_all(a, "y", 0, 1, tiled=True)', 'P("x")'),
    "axis_index_varies": ('lambda a, v: lax.axis_index("x")', "P()"),
    "pmean_not_enough": ('lambda a, v: lax.pmean(a, "x")', "P()"),
    "closure_times_block": ("lambda a, v: w[:2] * a", 'P("x")'),
    "ones_like_varies": ("lambda a, v: jnp.ones_like(a)", "P()"),
    "local_sum_varies": ("lambda a, v: jnp.sum(a)", "P()"),
    "pcast_varies": ('lambda a, v: lax.pcast(jnp.ones(2), "x", to="varying")', "P()"),
    "mix_varies": ('lambda a, v: lax.psum(a, "y") * lax.axis_index("y")', 'P("x")'),
    "all_gather_of_invariant_varies": ('lambda a, v: lax.all_gather(lax.psum(a, ("x", "y")), "y")', "P()"),
    "second_output_varies": ('lambda a, v: (lax.psum(a, ("x", "y")), lax.psum(a, "x"))', "(P(), P())"),
    "cond_branches_differ": ('lambda a, v: lax.cond(lax.psum(jnp.sum(a), ("x", "y")) > 0, '
                             'lambda: lax.psum(a, "y"), lambda: a)', 'P("x", "y")'),
    "fori_carry_shrinks": ('lambda a, v: lax.fori_loop(0, 3, lambda i, c: lax.psum(c, "y"), a)', 'P("x")'),
    "fori_carry_grows": ('lambda a, v: lax.fori_loop(0, 3, lambda i, c: c + a, lax.psum(a, "y"))', 'P("x", "y")'),
    "fori_invariant_init": ("lambda a, v: lax.fori_loop(0, 3, lambda i, c: c + a, jnp.zeros(a.shape))",
                            'P("x", "y")'),
    "cond_in_loop_varies": ('lambda a, v: lax.fori_loop(0, 2, lambda i, c: lax.cond(i > 0, lambda: c + a, '
                            'lambda: c), lax.psum(a, "y"))', 'P("x")'),
}


def source(body: str, outs: str) -> str:
    return f"jit(lambda a, w: shard_map({body}, mesh=mesh, in_specs={IN}, out_specs={outs}, check_vma=True)(a, w))"


# JAX's outcome per case (support.jax_mesh's request; check_vma as each case says): its values, or
# the kind of error it raised and the message
_SCRIPT = r"""
import os, pickle, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import numpy as np
import jax, jax.numpy as jnp
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
request = pickle.load(sys.stdin.buffer)
mesh = Mesh(np.array(jax.devices()[:8]).reshape(request["shape"]), request["axes"])
env = dict(jnp=jnp, lax=lax, jit=jax.jit, P=P, mesh=mesh, shard_map=jax.shard_map)
out = {}
for name, (kind, source, args, placements) in request["cases"].items():
    placed = [jax.device_put(a, NamedSharding(mesh, P(*p))) for a, p in zip(args, placements)]
    try:
        out[name] = ("value", [np.asarray(r) for r in jax.tree_util.tree_leaves(eval(source, env)(*placed))])
    except (ValueError, TypeError) as e:
        out[name] = ("error", type(e).__name__, str(e))
pickle.dump(out, sys.stdout.buffer)
"""

A = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)
W = np.random.default_rng(1).standard_normal(8).astype(np.float32)


@pytest.fixture(scope="module")
def jax_outcomes() -> dict[str, tuple]:
    return jax_results({name: ("value", source(*case), [A, W], [("x", "y"), ()]) for name, case in CASES.items()},
                       script=_SCRIPT)


@pytest.mark.parametrize("name", sorted(CASES))
def test_accepts_exactly_what_jax_accepts(name: str, jax_outcomes: dict[str, tuple]) -> None:
    expected = jax_outcomes[name]
    fn = eval(source(*CASES[name]), loom_env())
    if expected[0] == "value":
        check(name, loom.tree_util.tree_leaves(fn(A, W)), expected[1], tol=1e-5)
    else:
        kind = {"ValueError": ValueError, "TypeError": TypeError}[expected[1]]
        with pytest.raises(kind):
            fn(A, W)


def test_error_names_the_output_and_the_axis() -> None:
    fn = eval(source(*CASES["second_output_varies"]), loom_env())
    with pytest.raises(ValueError, match=r"<lambda>\(\*args\)\[1\].*replicated over mesh axes \{'y'\}, but it "
                                         r"varies over \{'y'\}") as info:
        fn(A, W)
    assert "[0]" not in str(info.value).split("mesh")[-1]  # only the output at fault


def test_loop_error_names_the_carry_and_the_axes() -> None:
    fn = eval(source(*CASES["fori_carry_shrinks"]), loom_env())
    with pytest.raises(TypeError, match=r"carry \d+ varies over \{'x', 'y'\} on entry but over \{'x'\} after the body"):
        fn(A, W)


def test_check_vma_false_takes_the_first_device_along_unnamed_axes() -> None:
    mesh = loom_env()["mesh"]
    fn = loom.jit(loom.shard_map(lambda a: loom.lax.psum(a, "y"), mesh=mesh, in_specs=loom.sharding.P("x", "y"),
                                 out_specs=loom.sharding.P(), check_vma=False))
    np.testing.assert_allclose(np.asarray(fn(A)), A[:4].reshape(4, 4, 2).sum(1), rtol=1e-5)
