"""Generate tests/corpus/sharded: programs with shardings (Shardy's `sdy` dialect) as JAX lowers
them, in the pretty form `lowered.as_text()` prints (`NNN_name.mlir`) and the generic form of the
same module (`NNN_name.generic.mlir`).

Sources: functions jitted with in/out shardings on 1-D and 2-D meshes of 8 fake CPU devices
(elementwise, matmuls, reductions, reshapes, sharding constraints, uneven sizes, an MLP and its
gradient), `shard_map` with every collective JAX lowers (psum, pmean, pmax, pmin, all_gather,
psum_scatter, ppermute, all_to_all, axis_index) and nested manual axes, plus snippets in the
generic form for sdy syntax JAX does not emit (inline meshes, sub-axes, priorities, open
dimensions, replicated and unreduced axes, device ids, empty manual computations, reshard). Each
text is checked to be a fixed point of jaxlib's parser and printer in both forms. Run from the
repository root::

    .venv/bin/python tests/corpus/generate_sharded.py

`render()` returns the files without writing them (the tests compare it with the folder). It needs
8 CPU devices: set `XLA_FLAGS=--xla_force_host_platform_device_count=8` before jax is imported
(this script does when run as a program).
"""

# ruff: noqa: E501

from __future__ import annotations

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import shutil
from collections.abc import Callable
from functools import partial
from pathlib import Path

import jax
import jax.numpy as jnp
from jax._src.interpreters import mlir as jax_mlir
from jax._src.lib.mlir import ir
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

CORPUS = Path(__file__).resolve().parent
OUT = CORPUS / "sharded"
F32 = jnp.float32


def _mesh(shape: tuple[int, ...], names: tuple[str, ...], order: list[int] | None = None) -> jax.sharding.Mesh:
    devices = jax.devices()[:len(order) if order else int(jnp.prod(jnp.array(shape)))]
    if order:
        devices = [devices[i] for i in order]
    return jax.make_mesh(shape, names, devices=devices, axis_types=(AxisType.Auto,) * len(names))


def _spec(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, F32)


PROGRAMS: dict[str, Callable[[], jax.stages.Lowered]] = {}


def program(fn: Callable[[], jax.stages.Lowered]) -> Callable[[], jax.stages.Lowered]:
    PROGRAMS[fn.__name__] = fn
    return fn


def _jit(f: Callable, mesh: jax.sharding.Mesh, ins: tuple, out: object, *args: jax.ShapeDtypeStruct) -> jax.stages.Lowered:
    shard = partial(NamedSharding, mesh)
    outs = jax.tree.map(shard, out, is_leaf=lambda x: isinstance(x, P))
    return jax.jit(f, in_shardings=tuple(shard(s) for s in ins), out_shardings=outs).lower(*args)


X8 = lambda: _mesh((8,), ("x",))  # noqa: E731
XY = lambda: _mesh((2, 4), ("x", "y"))  # noqa: E731


# jit with in/out shardings ------------------------------------------------------------------

@program
def jit_elementwise_1d():
    return _jit(lambda a, b: jnp.exp(a) + b, X8(), (P("x"), P("x")), P("x"), _spec(16), _spec(16))


@program
def jit_elementwise_2d_mesh():
    return _jit(lambda a: jnp.tanh(a) * 2.0, XY(), (P("x", "y"),), P("x", "y"), _spec(4, 8))


@program
def jit_matmul_rows():
    return _jit(lambda a, b: a @ b, X8(), (P("x", None), P()), P("x", None), _spec(16, 4), _spec(4, 6))


@program
def jit_matmul_contracting():
    return _jit(lambda a, b: a @ b, X8(), (P(None, "x"), P("x", None)), P(), _spec(4, 16), _spec(16, 2))


@program
def jit_matmul_2d_mesh():
    return _jit(lambda a, b: a @ b, XY(), (P("x", None), P(None, "y")), P("x", "y"), _spec(4, 6), _spec(6, 8))


@program
def jit_reduce_sum():
    return _jit(lambda a: jnp.sum(a, axis=0), X8(), (P("x", None),), P(), _spec(16, 3))


@program
def jit_reduce_max_2d_mesh():
    return _jit(lambda a: jnp.max(a, axis=1), XY(), (P("x", "y"),), P("x"), _spec(4, 8))


@program
def jit_reshape():
    return _jit(lambda a: a.reshape(8, 4), X8(), (P("x"),), P("x", None), _spec(32))


@program
def jit_transpose():
    return _jit(lambda a: a.T, XY(), (P("x", "y"),), P("y", "x"), _spec(4, 8))


@program
def jit_sharding_constraint():
    mesh = X8()
    f = lambda a: jax.lax.with_sharding_constraint(jnp.sin(a), NamedSharding(mesh, P(None, "x"))) * 2.0  # noqa: E731
    return _jit(f, mesh, (P("x", None),), P("x", None), _spec(8, 8))


@program
def jit_sharding_constraint_unconstrained():
    mesh = XY()
    f = lambda a: jax.lax.with_sharding_constraint(a + 1.0, NamedSharding(mesh, P("x", P.UNCONSTRAINED)))  # noqa: E731
    return _jit(f, mesh, (P(),), P("x", None), _spec(4, 8))


@program
def jit_uneven_sizes():
    # JAX requires even in/out shardings; a constraint may split unevenly (XLA pads).
    mesh = X8()
    f = lambda a, b: jax.lax.with_sharding_constraint(a * b, NamedSharding(mesh, P("x", None))) + 1.0  # noqa: E731
    return jax.jit(f).lower(_spec(7, 5), _spec(7, 5))


@program
def jit_uneven_2d_mesh():
    mesh = XY()
    f = lambda a: jnp.cumsum(jax.lax.with_sharding_constraint(a, NamedSharding(mesh, P("x", "y"))), axis=1)  # noqa: E731
    return jax.jit(f).lower(_spec(3, 10))


@program
def jit_replicated():
    return _jit(lambda a: a - jnp.mean(a), X8(), (P(),), P(), _spec(8))


@program
def jit_two_axes_one_dim():
    return _jit(lambda a: a * a, XY(), (P(("x", "y")),), P(("x", "y")), _spec(16))


@program
def jit_scalar():
    return _jit(lambda a, s: a * s, X8(), (P("x"), P()), P("x"), _spec(8), _spec())


@program
def jit_device_order():
    mesh = _mesh((2, 2), ("x", "y"), order=[3, 1, 2, 0])
    return _jit(lambda a: a + 1.0, mesh, (P("x", "y"),), P("x", "y"), _spec(4, 4))


def _mlp_loss(x, w1, w2):
    h = jax.nn.relu(x @ w1)
    return jnp.mean((h @ w2) ** 2)


_MLP_SHARDINGS = (P("x", None), P(None, "y"), P("y", None))


@program
def jit_mlp_2d_mesh():
    return _jit(lambda x, w1, w2: jax.nn.relu(x @ w1) @ w2, XY(), _MLP_SHARDINGS, P("x", None),
                _spec(8, 16), _spec(16, 32), _spec(32, 4))


@program
def jit_mlp_2d_mesh_grad():
    return _jit(jax.grad(_mlp_loss, argnums=(1, 2)), XY(), _MLP_SHARDINGS, (P(None, "y"), P("y", None)),
                _spec(8, 16), _spec(16, 32), _spec(32, 4))


# shard_map with collectives -----------------------------------------------------------------

def _shard_map(body: Callable, mesh: jax.sharding.Mesh, in_specs: tuple, out_specs: object, *args: jax.ShapeDtypeStruct,
               **kw: object) -> jax.stages.Lowered:
    f = jax.shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs, **kw)
    shard = partial(NamedSharding, mesh)
    return jax.jit(f, in_shardings=tuple(shard(s) for s in in_specs)).lower(*args)


@program
def shard_map_psum():
    return _shard_map(lambda a: jax.lax.psum(a, "x"), X8(), (P("x"),), P(), _spec(16))


@program
def shard_map_pmean():
    return _shard_map(lambda a: jax.lax.pmean(a, "x"), X8(), (P("x", None),), P(None, None), _spec(16, 2))


@program
def shard_map_pmax():
    return _shard_map(lambda a: jax.lax.pmax(a, "y"), XY(), (P("x", "y"),), P("x", None), _spec(4, 8))


@program
def shard_map_pmin():
    return _shard_map(lambda a: jax.lax.pmin(a, ("x", "y")), XY(), (P("x", "y"),), P(), _spec(4, 8))


@program
def shard_map_psum_int():
    return _shard_map(lambda a: jax.lax.psum(a, "x"), X8(), (P("x"),), P(),
                      jax.ShapeDtypeStruct((8,), jnp.int32))


@program
def shard_map_all_gather():
    return _shard_map(lambda a: jax.lax.all_gather(a, "x"), X8(), (P("x"),), P(None, None), _spec(16),
                      check_vma=False)


@program
def shard_map_all_gather_tiled():
    return _shard_map(lambda a: jax.lax.all_gather(a, "y", axis=1, tiled=True), XY(), (P("x", "y"),), P("x", None),
                      _spec(4, 8), check_vma=False)


@program
def shard_map_psum_scatter():
    return _shard_map(lambda a: jax.lax.psum_scatter(a, "x", scatter_dimension=0, tiled=True), X8(),
                      (P(None, None),), P("x", None), _spec(16, 2), check_vma=False)


@program
def shard_map_psum_scatter_untiled():
    return _shard_map(lambda a: jax.lax.psum_scatter(a, "y"), XY(), (P("x", None),), P(("x", "y")), _spec(8, 4),
                      check_vma=False)


@program
def shard_map_ppermute():
    pairs = [(i, (i + 1) % 8) for i in range(8)]
    return _shard_map(lambda a: jax.lax.ppermute(a, "x", pairs), X8(), (P("x"),), P("x"), _spec(16))


@program
def shard_map_ppermute_2d_mesh():
    return _shard_map(lambda a: jax.lax.ppermute(a, "x", [(0, 1), (1, 0)]), XY(), (P("x", "y"),), P("x", "y"),
                      _spec(4, 8))


@program
def shard_map_all_to_all():
    return _shard_map(lambda a: jax.lax.all_to_all(a, "x", 0, 1, tiled=True), X8(), (P("x", None),), P(None, "x"),
                      _spec(64, 8), check_vma=False)


@program
def shard_map_axis_index():
    return _shard_map(lambda a: a + jax.lax.axis_index("y").astype(F32), XY(), (P("x", "y"),), P("x", "y"),
                      _spec(4, 8))


@program
def shard_map_matmul_reduce():
    def body(a, b):
        return jax.lax.psum(a @ b, "y")
    return _shard_map(body, XY(), (P("x", "y"), P("y", None)), P("x", None), _spec(4, 8), _spec(8, 3))


@program
def shard_map_one_manual_axis():
    mesh = XY()
    f = jax.shard_map(lambda a: jax.lax.psum(a, "x") * 2.0, mesh=mesh, in_specs=P("x"), out_specs=P(),
                      axis_names={"x"})
    return jax.jit(f, in_shardings=NamedSharding(mesh, P("x"))).lower(_spec(8, 4))


@program
def shard_map_nested():
    mesh = XY()

    def inner(b):
        return jax.lax.psum(b, "y")

    def outer(a):
        return jax.shard_map(inner, mesh=jax.sharding.get_abstract_mesh(), in_specs=P(None, "y"), out_specs=P(), axis_names={"y"})(a) + 1.0
    f = jax.shard_map(outer, mesh=mesh, in_specs=P("x"), out_specs=P("x"), axis_names={"x"})
    return jax.jit(f, in_shardings=NamedSharding(mesh, P("x", "y"))).lower(_spec(4, 8))


# Snippets: sdy syntax JAX does not emit, in the generic form --------------------------------

SNIPPETS: dict[str, str] = {
    "snippet_meshes_and_shardings": """
"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2, "y"=2], device_ids=[3, 2, 1, 0]>, sym_name = "mesh"}> : () -> ()
  "sdy.mesh"() <{mesh = #sdy.mesh<["a"=4, "b"=2]>, sym_name = "mesh_ab"}> {tag = 1 : i64} : () -> ()
  "sdy.mesh"() <{mesh = #sdy.mesh<[]>, sym_name = "empty"}> : () -> ()
  "sdy.mesh"() <{mesh = #sdy.mesh<[], device_ids=[0]>, sym_name = "maximal"}> : () -> ()
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh_ab, [{"a":(1)2}, {"b", ?}p0]>}, {}], function_type = (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>, res_attrs = [{sdy.sharding = #sdy.sharding<@mesh_ab, [{"a":(2)2, "a":(1)2}, {}], replicated={"b"}>}], sym_name = "main"}> ({
  ^bb0(%arg0: tensor<8x4xf32>, %arg1: tensor<f32>):
    %0 = "sdy.sharding_constraint"(%arg0) <{sharding = #sdy.sharding<@mesh, [{"x", ?}p1, {?}], replicated={"y"}>}> {tag} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %1 = "sdy.reshard"(%0) <{sharding = #sdy.sharding<mesh<["z"=4]>, [{"z":(1)2}, {}]>}> : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %2 = "sdy.sharding_constraint"(%arg1) <{sharding = #sdy.sharding<@mesh, []>}> : (tensor<f32>) -> tensor<f32>
    %3 = "sdy.sharding_constraint"(%1) <{sharding = #sdy.sharding<@mesh_ab, [{}, {}], unreduced={"a", "b"}>}> : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %4 = "sdy.reshard"(%3) <{sharding = #sdy.sharding<@maximal, []>}> : (tensor<8x4xf32>) -> tensor<8x4xf32>
    "func.return"(%4) : (tensor<8x4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
""",
    "snippet_manual_computations": """
"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2, "y"=2]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<8x4xf32>, tensor<f32>) -> (tensor<8x4xf32>, tensor<f32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<8x4xf32>, %arg1: tensor<f32>):
    "sdy.manual_computation"() <{in_shardings = #sdy.sharding_per_value<[]>, manual_axes = #sdy<manual_axes{}>, out_shardings = #sdy.sharding_per_value<[]>}> ({
      "sdy.return"() : () -> ()
    }) : () -> ()
    %0:2 = "sdy.manual_computation"(%arg0, %arg1) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}, {}]>, <@mesh, []>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, []>]>}> ({
    ^bb0(%a: tensor<4x4xf32>, %b: tensor<f32>):
      "sdy.return"(%a, %b) : (tensor<4x4xf32>, tensor<f32>) -> ()
    }) {tag = "t"} : (tensor<8x4xf32>, tensor<f32>) -> (tensor<8x4xf32>, tensor<f32>)
    %1 = "sdy.manual_computation"(%0#0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>, manual_axes = #sdy<manual_axes{"x", "y"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}> ({
    ^bb0(%a: tensor<4x2xf32>):
      %n = "sdy.sharding_constraint"(%a) <{sharding = #sdy.sharding<@mesh, [{}, {}]>}> : (tensor<4x2xf32>) -> tensor<4x2xf32>
      "sdy.return"(%n) : (tensor<4x2xf32>) -> ()
    }) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    "func.return"(%1, %0#1) : (tensor<8x4xf32>, tensor<f32>) -> ()
  }) : () -> ()
}) : () -> ()
""",
}


def _context() -> ir.Context:
    return jax_mlir.make_ir_context()


def _sources() -> list[tuple[str, str]]:
    """(name, pretty text) per program: JAX's `as_text()`, or jaxlib's print of a snippet."""
    out = [(name, make().as_text()) for name, make in PROGRAMS.items()]
    with _context():
        out.extend((name, ir.Module.parse(text).operation.get_asm()) for name, text in SNIPPETS.items())
    return out


def render() -> dict[str, str]:
    """File name -> text, for every program; raises when a text is not a fixed point of jaxlib's
    parser and printer."""
    if len(jax.devices()) < 8:
        raise RuntimeError("generate_sharded needs 8 CPU devices: set XLA_FLAGS=--xla_force_host_platform_device_count=8 "
                           "before importing jax")
    files: dict[str, str] = {}
    with _context():
        for i, (name, pretty) in enumerate(_sources(), 1):
            # The generic form of the pretty text read back (what the pretty text means: it drops,
            # e.g., empty `arg_attrs` that the lowering's own module holds).
            generic = ir.Module.parse(pretty).operation.get_asm(print_generic_op_form=True)
            for text in (pretty, generic):
                module = ir.Module.parse(text)
                if module.operation.get_asm() != pretty:
                    raise ValueError(f"{name}: does not print back to the pretty form")
                if module.operation.get_asm(print_generic_op_form=True) != generic:
                    raise ValueError(f"{name}: does not print back to the generic form")
            files[f"{i:03d}_{name}.mlir"] = pretty
            files[f"{i:03d}_{name}.generic.mlir"] = generic
    return files


def main() -> None:
    files = render()
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir()
    for name, text in files.items():
        (OUT / name).write_text(text)
    print(f"wrote {len(files)} files to {OUT}")


if __name__ == "__main__":
    main()
