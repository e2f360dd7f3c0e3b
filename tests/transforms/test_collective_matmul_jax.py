"""decompose-collective-matmul on programs JAX writes: shard_maps of an all_gather (or a
psum_scatter) next to a dot_general, lowered by JAX on 8 fake CPU devices (a 2 x 4 mesh, in a
subprocess: support.jax_mesh), parsed and partitioned by loom, decomposed, and run on a mesh of
threads; the oracle is JAX's own run of the same function on the same mesh."""

from __future__ import annotations

import numpy as np
import pytest
from spmd_run import run_global
from support.jax_mesh import jax_results

import loom
from loom.rewrite.pass_manager import PassManager
from loom.sharding.partitioning import partition

# name -> (source over jax_mesh's names, argument shapes, placements, bit for bit against
# the undecomposed program)
CASES = {
    "gather_non_contracting": ('jit(shard_map(lambda a, w: lax.all_gather(a, "y", axis=0, tiled=True) @ w, mesh=mesh, '
                               'in_specs=(P("y", None), P(None, "x")), out_specs=P(None, "x")))',
                               [(8, 6), (6, 4)], [("y", None), (None, "x")], True),
    "gather_contracting": ('jit(shard_map(lambda a, w: lax.all_gather(a, "y", axis=1, tiled=True) @ w, mesh=mesh, '
                           'in_specs=(P(None, "y"), P(None, "x")), out_specs=P(None, "x")))',
                           [(6, 8), (8, 4)], [(None, "y"), (None, "x")], False),
    "gather_batch": ('jit(shard_map(lambda a, w: jnp.einsum("bmk,bkn->bmn", '
                     'lax.all_gather(a, "y", axis=0, tiled=True), w), mesh=mesh, in_specs=(P("y"), P()), '
                     'out_specs=P()))',
                     [(8, 3, 5), (8, 5, 2)], [("y",), ()], True),
    "gather_over_x_rhs": ('jit(shard_map(lambda a, w: a @ lax.all_gather(w, "x", axis=1, tiled=True), mesh=mesh, '
                          'in_specs=(P("y", None), P(None, "x")), out_specs=P("y", None)))',
                          [(8, 6), (6, 4)], [("y", None), (None, "x")], True),
    "psum_scatter": ('jit(shard_map(lambda a, w: lax.psum_scatter(a @ w, "y", scatter_dimension=0, tiled=True), '
                     'mesh=mesh, in_specs=(P(None, "y"), P("y", None)), out_specs=P("y")))',
                     [(8, 8), (8, 4)], [(None, "y"), ("y", None)], False),
}
OPTIONS = ["mode=on", "mode=on bidirectional=true", "mode=on unroll=true", "mode=on bidirectional=true unroll=true"]


def _args(name: str) -> list[np.ndarray]:
    rng = np.random.default_rng(len(name))
    return [rng.standard_normal(s).astype(np.float32) for s in CASES[name][1]]


@pytest.fixture(scope="module")
def jax_side() -> dict:
    """JAX's lowered text and its values, per case, from one subprocess."""
    cases = {}
    for name, (src, shapes, placements, _) in CASES.items():
        cases[f"{name}/text"] = ("text", src, [np.zeros(s, np.float32) for s in shapes], [None] * len(shapes))
        cases[f"{name}/value"] = ("value", src, _args(name), placements)
    return jax_results(cases)


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_jax_shard_map_programs(name: str, options: str, jax_side: dict) -> None:
    generic, _ = jax_side[f"{name}/text"]
    module = partition(loom.ir.parse(generic))
    names = [op.name for op in module.walk()]
    collective = "stablehlo.reduce_scatter" if name == "psum_scatter" else "stablehlo.all_gather"
    assert collective in names
    out = loom.ir.parse(str(module))
    PassManager.parse(f"builtin.module(decompose-collective-matmul{{{options}}})").run(out)
    out.verify()
    out_names = [op.name for op in out.walk()]
    assert collective not in out_names and "stablehlo.collective_permute" in out_names
    args = _args(name)
    got, undecomposed = run_global(out, *args)[0], run_global(module, *args)[0]
    want = np.asarray(jax_side[f"{name}/value"])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    if CASES[name][3]:
        np.testing.assert_array_equal(got, undecomposed)
    else:
        np.testing.assert_allclose(got, undecomposed, rtol=1e-5, atol=1e-5)
