"""Gather and scatter on the torch backend against XLA: every kind of dimension number (offset,
collapsed, batching dims on both sides, several start components, the index vector dim first,
in the middle or implicit), start indices out of bounds (clamped by a gather, skipped by a
scatter), overwrite/add/mul/max/min updates, unsigned, bool and complex operands. Each program is
lowered from jax, run by XLA (jax.jit) and by loom's compiled executor on torch CPU tensors, which
must run it without a numpy island."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")

import jax.extend as jex  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from jaxlib import xla_client  # noqa: E402

import loom.ir  # noqa: E402
from loom.backend.torch_kernels import to_numpy, to_torch  # noqa: E402
from loom.ops import indexing, indexing_torch  # noqa: E402
from loom.runtime.executable import compile as loom_compile  # noqa: E402

GD, SD = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers
rs = np.random.RandomState(3)


def values(shape, dtype) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rs.rand(*shape) > 0.5
    if dt.kind in "iu":
        return rs.randint(0 if dt.kind == "u" else -50, 50, size=shape).astype(dt)
    if dt.kind == "c":
        return (rs.randn(*shape) + 1j * rs.randn(*shape)).astype(dt)
    return rs.randn(*shape).astype(dt)


def run_both(fn, *args) -> None:
    """XLA's results and loom's (torch backend, no numpy island) are equal, element for element."""
    with jax.enable_x64(True):
        jitted = jax.jit(fn)
        text = jitted.lower(*args).compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)
        want = np.asarray(jitted(*args))
    check_text(text, args, want)


def run_text(text: str, *args) -> None:
    """`text` (one function, one result) on XLA and on loom's torch backend: equal results."""
    backend = jex.backend.get_backend("cpu")
    devs = backend.local_devices()[:1]
    exe = backend.compile_and_load(text, executable_devices=xla_client.DeviceList(tuple(devs)),
                                   compile_options=jex.backend.get_compile_options(num_replicas=1, num_partitions=1))
    with jax.enable_x64(True):
        want = np.asarray(exe.execute([jax.device_put(a, devs[0]) for a in args])[0])
    check_text(text, args, want)


def check_text(text: str, args, want: np.ndarray) -> None:
    exe = loom_compile(loom.ir.parse(text), executor="compiled", backend="torch", device=torch.device("cpu"))
    assert "numpy_" not in exe.source and "to_numpy(" not in exe.source, exe.source
    got = to_numpy(exe(*(to_torch(a, torch.device("cpu")) for a in args)))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


# (operand shape, indices, dimension numbers, slice sizes); indices include out-of-bounds starts.
GATHERS = {
    "rows": ((6, 4), np.array([[0], [5], [7], [-2]]),
             GD(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)), (1, 4)),
    "windows_clamped": ((5, 7), np.array([[1, 2], [4, 6], [-1, 3]]),
                        GD(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1)), (2, 3)),
    "two_components_reversed": ((4, 5, 3), np.array([[[2, 1], [0, 9]], [[3, 3], [-5, 0]]]),
                                GD(offset_dims=(2,), collapsed_slice_dims=(0, 2), start_index_map=(2, 0)), (1, 5, 1)),
    "batching": ((3, 7, 2), np.array([[1], [6], [9]]),
                 GD(offset_dims=(1,), collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(0,),
                    start_indices_batching_dims=(0,)), (1, 1, 2)),
    "batching_middle": ((4, 3, 5), rs.randint(-2, 7, size=(2, 3, 1)),
                        GD(offset_dims=(2,), collapsed_slice_dims=(2,), start_index_map=(2,),
                           operand_batching_dims=(1,), start_indices_batching_dims=(1,)), (2, 1, 1)),
    "no_start_components": ((3, 4), np.zeros((5, 0), np.int32),
                            GD(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=()), (2, 3)),
    "offset_dims_first": ((5, 6), np.array([[3], [0], [8]]),
                          GD(offset_dims=(0,), collapsed_slice_dims=(0,), start_index_map=(0,)), (1, 6)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32, np.bool_, np.complex64])
@pytest.mark.parametrize("name", list(GATHERS))
def test_gather_matches_xla(name, dtype):
    shape, idx, dn, sizes = GATHERS[name]
    run_both(lambda x, i: lax.gather(x, i, dn, sizes, mode="clip"), values(shape, dtype), idx.astype(np.int32))


def one_op(op: str, operands: list[tuple[str, str]], result: str, attrs: str, body: str = "") -> str:
    """A module whose main runs one op on its arguments ((name, type) each)."""
    types = ", ".join(t for _, t in operands)
    names = ", ".join(n for n, _ in operands)
    region = (f" ({{\n  ^bb0(%a: {body}, %b: {body}):\n"
              f"    %s = \"stablehlo.add\"(%a, %b) : ({body}, {body}) -> {body}\n"
              f"    \"stablehlo.return\"(%s) : ({body}) -> ()\n  }})") if body else ""
    args = ", ".join(f"{n}: {t}" for n, t in operands)
    return (f'"builtin.module"() ({{\n'
            f'"func.func"() <{{function_type = ({types}) -> {result}, sym_name = "main"}}> ({{\n'
            f'^bb0({args}):\n  %0 = "{op}"({names}) <{{{attrs}}}>{region} : ({types}) -> {result}\n'
            f'  "func.return"(%0) : ({result}) -> ()\n}}) : () -> ()\n}}) : () -> ()\n')


STARTS = np.array([[1, 5, 2], [0, 4, 9]], np.int32)  # index vectors along dim 0: (1, 0), (5, 4), (2, 9)


@pytest.mark.parametrize("ivd, idx, out, offset", [
    (0, STARTS, "3x2", 1),
    (1, STARTS.T[:, :, None], "3x1x2", 2),  # (3, 2, 1): the index vector in the middle
])
def test_gather_index_vector_dim_not_last(ivd, idx, out, offset):
    """jax always puts the index vector last; StableHLO allows any dim."""
    ishape = "x".join(map(str, idx.shape))
    operands = [("%x", "tensor<6x5xf32>"), ("%i", f"tensor<{ishape}xi32>")]
    text = one_op("stablehlo.gather", operands, f"tensor<{out}xf32>",
                  f"dimension_numbers = #stablehlo.gather<offset_dims = [{offset}], collapsed_slice_dims = [0], "
                  f"start_index_map = [0, 1], index_vector_dim = {ivd}>, slice_sizes = array<i64: 1, 2>")
    run_text(text, values((6, 5), np.float32), np.ascontiguousarray(idx))


def test_scatter_index_vector_dim_first():
    idx = np.array([[1, 4, -1, 1], [2, 5, 3, 2]], np.int32)  # starts (1, 2), (4, 5), (-1, 3) skipped, (1, 2)
    text = one_op("stablehlo.scatter", [("%x", "tensor<5x6xf32>"), ("%i", "tensor<2x4xi32>"), ("%u", "tensor<4xf32>")],
                  "tensor<5x6xf32>",
                  "scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [], inserted_window_dims = "
                  "[0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 0>", body="tensor<f32>")
    run_text(text, values((5, 6), np.float32), idx, values((4,), np.float32))


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64, np.uint32])
def test_take_along_axis_matches_xla(index_dtype):
    x = values((5, 9), np.float32)
    idx = rs.randint(0, 9, size=(5, 3)).astype(index_dtype)
    run_both(lambda a, i: jnp.take_along_axis(a, i, axis=1), x, idx)


# (operand shape, indices, updates shape, dimension numbers); out-of-bounds windows are skipped.
SCATTERS = {
    "rows": ((6, 4), np.array([[0], [5], [7], [2], [0]]), (5, 4),
             SD(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))),
    "elements": ((5, 6), np.array([[1, 2], [4, 5], [-1, 3], [1, 2], [4, 6]]), (5,),
                 SD(update_window_dims=(), inserted_window_dims=(0, 1), scatter_dims_to_operand_dims=(0, 1))),
    "windows": ((6, 7), np.array([[1, 2], [4, 5], [3, 0]]), (3, 2, 3),
                SD(update_window_dims=(1, 2), inserted_window_dims=(), scatter_dims_to_operand_dims=(0, 1))),
    "batching": ((3, 7), np.array([[1, 6], [9, 0], [2, 2]])[..., None], (3, 2),
                 SD(update_window_dims=(), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
                    operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))),
}


@pytest.mark.parametrize("mode, dtype", [
    (mode, dtype) for mode in ("set", "add", "mul", "max", "min")
    for dtype in (np.float32, np.int32, np.uint32, np.uint64, np.bool_)
    if not (dtype == np.bool_ and mode in ("add", "mul"))])  # jax has no bool scatter_add/mul
@pytest.mark.parametrize("name", list(SCATTERS))
def test_scatter_matches_xla(name, mode, dtype):
    shape, idx, ushape, dn = SCATTERS[name]
    scatter = {"set": lax.scatter, "add": lax.scatter_add, "mul": lax.scatter_mul, "max": lax.scatter_max,
               "min": lax.scatter_min}[mode]
    dn = SD(update_window_dims=dn.update_window_dims, inserted_window_dims=dn.inserted_window_dims,
            scatter_dims_to_operand_dims=dn.scatter_dims_to_operand_dims,
            operand_batching_dims=dn.operand_batching_dims,
            scatter_indices_batching_dims=dn.scatter_indices_batching_dims)
    x, u = values(shape, dtype), values(ushape, dtype)
    if np.dtype(dtype).kind == "u":  # values with the top bit set: unsigned max/min must not read them as negative
        x[0] |= np.array(1, dtype) << (8 * np.dtype(dtype).itemsize - 1)
    run_both(lambda a, i, v: scatter(a, i, v, dn,
                                     indices_are_sorted=False, unique_indices=False), x, idx.astype(np.int32), u)


# Random dimension numbers: the torch plans against the numpy kernels (themselves checked against
# XLA by the conformance suite), out-of-bounds starts included.

def random_gather(r: np.random.RandomState):
    rank = r.randint(1, 4)
    shape = tuple(int(s) for s in r.randint(1, 5, size=rank))
    dims = list(range(rank))
    batching = [d for d in dims if r.rand() < 0.25]
    free = [d for d in dims if d not in batching]
    start_map = list(r.permutation([d for d in free if r.rand() < 0.6]))
    collapsed = sorted(d for d in free if r.rand() < 0.4 and (d in start_map or r.rand() < 0.3))
    sizes = [1 if d in batching or d in collapsed else int(r.randint(1, shape[d] + 1)) for d in dims]
    extra = [int(s) for s in r.randint(1, 4, size=r.randint(0, 3))]
    batch_sizes = [shape[d] for d in batching] + extra
    order = list(r.permutation(len(batch_sizes)))
    batch_sizes = [batch_sizes[i] for i in order]
    implicit = len(start_map) == 1 and r.rand() < 0.3
    ivd = len(batch_sizes) if implicit else int(r.randint(0, len(batch_sizes) + 1))
    idx_shape = list(batch_sizes)
    if not implicit:
        idx_shape.insert(ivd, len(start_map))
    batch_axes = [a for a in range(len(idx_shape)) if a != ivd]
    start_batching = [batch_axes[order.index(i)] for i in range(len(batching))]
    kept = [d for d in dims if d not in batching and d not in collapsed]
    out_rank = len(batch_sizes) + len(kept)
    offset = sorted(int(v) for v in r.choice(out_rank, size=len(kept), replace=False))
    dn = indexing.GatherDims(None)
    dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map = tuple(offset), tuple(collapsed), tuple(start_map)
    dn.operand_batching_dims, dn.start_indices_batching_dims = tuple(batching), tuple(start_batching)
    dn.index_vector_dim = ivd
    limit = max(shape) + 2
    idx = r.randint(-2, limit, size=idx_shape).astype(np.int32)
    return shape, idx, dn, tuple(sizes)


@pytest.mark.parametrize("seed", range(200))
def test_random_gathers_match_the_numpy_kernel(seed):
    r = np.random.RandomState(seed)
    shape, idx, dn, sizes = random_gather(r)
    x = r.randn(*shape).astype(np.float32)
    want = indexing.gather(x, idx, dn, sizes)
    got = indexing_torch.Gather(shape, idx.shape, dn, sizes)(torch.from_numpy(x), torch.from_numpy(idx))
    assert tuple(got.shape) == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


def random_scatter(r: np.random.RandomState):
    """A gather's dimension numbers read as a scatter's (the same correspondence StableHLO has)."""
    shape, idx, g, sizes = random_gather(r)
    dn = indexing.ScatterDims(None)
    dn.update_window_dims, dn.inserted_window_dims = g.offset_dims, g.collapsed_slice_dims
    dn.scatter_dims_to_operand_dims, dn.index_vector_dim = g.start_index_map, g.index_vector_dim
    dn.input_batching_dims, dn.scatter_indices_batching_dims = g.operand_batching_dims, g.start_indices_batching_dims
    kept = [d for d in range(len(shape)) if d not in g.collapsed_slice_dims and d not in g.operand_batching_dims]
    batch = [n for a, n in enumerate(idx.shape) if a != g.index_vector_dim] if g.index_vector_dim < idx.ndim \
        else list(idx.shape)
    rank = len(batch) + len(kept)
    window = iter(sizes[d] for d in kept)
    scatter_sizes = iter(batch)
    updates_shape = tuple(next(window) if a in g.offset_dims else next(scatter_sizes) for a in range(rank))
    return shape, idx, dn, updates_shape


@pytest.mark.parametrize("kind, ufunc", [("add", np.add), ("max", np.maximum), ("min", np.minimum),
                                         ("mul", np.multiply)])
@pytest.mark.parametrize("seed", range(60))
def test_random_scatters_match_the_numpy_kernel(seed, kind, ufunc):
    r = np.random.RandomState(1000 + seed)
    shape, idx, dn, ushape = random_scatter(r)
    x = r.randint(-5, 6, size=shape).astype(np.int32)
    u = r.randint(-5, 6, size=ushape).astype(np.int32)
    want = indexing.scatter_ufunc(x, idx, u, dn, ufunc)
    got = indexing_torch.Scatter(shape, idx.shape, ushape, dn, kind)(torch.from_numpy(x), torch.from_numpy(idx),
                                                         torch.from_numpy(u))
    np.testing.assert_array_equal(got.numpy(), want)


def _ints(v) -> str:
    return "[" + ", ".join(str(int(i)) for i in v) + "]"


def _tensor(shape, et: str) -> str:
    return "tensor<" + "".join(f"{n}x" for n in shape) + et + ">"


@pytest.mark.parametrize("seed", range(40))
def test_random_gathers_and_scatters_match_xla(seed):
    """The generator's dimension numbers are valid StableHLO: XLA runs them, loom's torch backend
    gives XLA's results (the numpy comparisons above then cover more cases cheaply)."""
    r = np.random.RandomState(seed)
    shape, idx, g, sizes = random_gather(r)
    out_shape = indexing.gather(np.zeros(shape, np.float32), idx, g, sizes).shape
    attrs = (f"dimension_numbers = #stablehlo.gather<offset_dims = {_ints(g.offset_dims)}, collapsed_slice_dims = "
             f"{_ints(g.collapsed_slice_dims)}, operand_batching_dims = {_ints(g.operand_batching_dims)}, "
             f"start_indices_batching_dims = {_ints(g.start_indices_batching_dims)}, start_index_map = "
             f"{_ints(g.start_index_map)}, index_vector_dim = {g.index_vector_dim}>, "
             f"slice_sizes = array<i64: {', '.join(map(str, sizes))}>")
    text = one_op("stablehlo.gather", [("%x", _tensor(shape, "f32")), ("%i", _tensor(idx.shape, "i32"))],
                  _tensor(out_shape, "f32"), attrs.replace("array<i64: >", "array<i64>"))
    run_text(text, r.randn(*shape).astype(np.float32), idx)

    r = np.random.RandomState(1000 + seed)
    shape, idx, s, ushape = random_scatter(r)
    attrs = (f"scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = {_ints(s.update_window_dims)}, "
             f"inserted_window_dims = {_ints(s.inserted_window_dims)}, input_batching_dims = "
             f"{_ints(s.input_batching_dims)}, scatter_indices_batching_dims = "
             f"{_ints(s.scatter_indices_batching_dims)}, "
             f"scatter_dims_to_operand_dims = {_ints(s.scatter_dims_to_operand_dims)}, "
             f"index_vector_dim = {s.index_vector_dim}>")
    operands = [("%x", _tensor(shape, "f32")), ("%i", _tensor(idx.shape, "i32")), ("%u", _tensor(ushape, "f32"))]
    text = one_op("stablehlo.scatter", operands, _tensor(shape, "f32"), attrs, body="tensor<f32>")
    run_text(text, r.randn(*shape).astype(np.float32), idx, r.randint(-4, 5, size=ushape).astype(np.float32))


# Scatters with any elementwise update computation: applied in rounds on torch, one update after
# the other per target in update order, as XLA applies them.

def test_scatter_apply_with_duplicates_matches_xla():
    x = values((6,), np.float32)
    run_both(lambda a, i: a.at[i].apply(lambda v: v * 2.0 + 1.0), x, np.array([1, 4, 1, 1, 9, -1], np.int32))


def _custom_scatter(body: str, n: int) -> str:
    """Scatter of `n` float32[6] operands by int32[5,1] indices and `n` float32[5] updates, rows
    of elements (window-less), with the update computation `body` over %o0.., %u0.. (scalars)."""
    t, s = "tensor<6xf32>", "tensor<f32>"
    ins = ", ".join(f"%x{k}" for k in range(n))
    ups = ", ".join(f"%v{k}" for k in range(n))
    args = ", ".join([f"%x{k}: {t}" for k in range(n)] + ["%i: tensor<5x1xi32>"] + [f"%v{k}: tensor<5xf32>"
                                                                                     for k in range(n)])
    types = ", ".join([t] * n + ["tensor<5x1xi32>"] + ["tensor<5xf32>"] * n)
    results = ", ".join([t] * n)
    block_args = ", ".join([f"%o{k}: {s}" for k in range(n)] + [f"%u{k}: {s}" for k in range(n)])
    rets = ", ".join(f"%r{k}" for k in range(n))
    return (f'"builtin.module"() ({{\n"func.func"() <{{function_type = ({types}) -> {t}, sym_name = "main"}}> '
            f'({{\n^bb0({args}):\n  %out:{n} = "stablehlo.scatter"({ins}, %i, {ups}) <{{scatter_dimension_numbers = '
            f'#stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = '
            f'1>}}> ({{\n  ^bb0({block_args}):\n{body}    "stablehlo.return"({rets}) : ({", ".join([s] * n)}) -> ()\n'
            f'  }}) : ({types}) -> ({results})\n  "func.return"(%out#0) : ({t}) -> ()\n}}) : () -> ()\n'
            f'}}) : () -> ()\n')


def test_scatter_with_an_order_dependent_body_matches_xla():
    body = ('    %two = "stablehlo.constant"() <{value = dense<2.0> : tensor<f32>}> : () -> tensor<f32>\n'
            '    %m = "stablehlo.multiply"(%o0, %two) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n'
            '    %r0 = "stablehlo.subtract"(%m, %u0) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n')
    idx = np.array([[2], [5], [2], [7], [2]], np.int32)  # three updates of element 2, one out of bounds
    run_text(_custom_scatter(body, 1), values((6,), np.float32), idx, values((5,), np.float32))


def test_scatter_of_two_operands_with_a_custom_body_matches_xla():
    """An argmax-style scatter: keep the larger value and the index that came with it."""
    body = ('    %gt = "stablehlo.compare"(%u0, %o0) <{comparison_direction = #stablehlo<comparison_direction GT>}> : '
            '(tensor<f32>, tensor<f32>) -> tensor<i1>\n'
            '    %r0 = "stablehlo.select"(%gt, %u0, %o0) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>\n'
            '    %r1 = "stablehlo.select"(%gt, %u1, %o1) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>\n')
    idx = np.array([[3], [0], [3], [3], [6]], np.int32)
    x = values((6,), np.float32)
    for second in (False, True):
        text = _custom_scatter(body, 2)
        if second:  # return the second result instead of the first
            text = text.replace('"func.return"(%out#0) : (tensor<6xf32>)', '"func.return"(%out#1) : (tensor<6xf32>)')
        run_text(text, x, np.arange(6, dtype=np.float32), idx, values((5,), np.float32),
                 np.arange(10, 15, dtype=np.float32))
