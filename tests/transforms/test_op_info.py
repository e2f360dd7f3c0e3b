"""Value, gradient and batching tests of every op in tests/support/op_info.py's table, on one-op programs:

- values: the compiled executor (numpy and torch backends) and the interpreter against the op's
  JAX oracle, on random samples of every listed dtype and on the fixed edge cases;
- gradients: the VJP and JVP loom derives from the op's one derivative, against jax.vjp / jax.jvp
  of the oracle in float64 (or central differences, for ops JAX does not differentiate);
- batching: vmap of the op (every operand batched, at axis 0 or 1, or one left unbatched) against
  a loop over the batch.
"""

from __future__ import annotations

import numpy as np
import pytest

import loom
from loom.dialects import builtin
from loom.ops import elementwise
from loom.transforms.autodiff import vjp_module
from loom.transforms.batching import vmap_module
from loom.transforms.forward_ad import jvp_function

jax = pytest.importorskip("jax")
from support.op_info import MLIR_TYPES, OP_INFO, OpInfo  # noqa: E402
from support.oracles import assert_matches  # noqa: E402

CPU = jax.devices("cpu")[0]


def _tensor(shape: tuple, dtype: np.dtype) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{MLIR_TYPES[np.dtype(dtype)]}>"


def program(info: OpInfo, args: tuple, result: np.ndarray) -> loom.ir.core.Operation:
    """A module whose @main applies the op once to `args`, typed as `result`."""
    types = [_tensor(np.shape(a), np.asarray(a).dtype) for a in args]
    rtype = _tensor(np.shape(result), result.dtype)
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    operands = ", ".join(f"%a{i}" for i in range(len(args)))
    props = f" <{{{info.properties}}}>" if info.properties else ""
    return loom.ir.parse(f"""
func.func @main({params}) -> {rtype} {{
  %0 = "{info.op}"({operands}){props} : ({", ".join(types)}) -> {rtype}
  return %0 : {rtype}
}}""")


def oracle(fn, *args):
    with jax.enable_x64(True), jax.default_device(CPU):
        return jax.tree_util.tree_map(np.asarray, jax.jit(fn)(*args))




def _id(info: OpInfo) -> str:
    return info.op + (f"[{info.extra['id']}]" if "id" in info.extra else "")


VALUE_CASES = [(info, args, f"{_id(info)}-{np.asarray(args[0]).dtype.name}")
               for info in OP_INFO for args in info.random_samples()] + \
              [(info, args, f"{_id(info)}-fixed{k}") for info in OP_INFO for k, args in enumerate(info.fixed_samples())]


_EXPECTED: dict[int, np.ndarray] = {}  # by id() of a case's arguments (names repeat: select's are by its predicate)


def expected_value(info: OpInfo, args: tuple) -> np.ndarray:
    """The oracle's value on `args`: on all of the op's cases in one jitted program (one
    compilation an op instead of one a case), the first time one of them is asked for."""
    if id(args) not in _EXPECTED:
        cases = [a for i, a, _ in VALUE_CASES if i is info]
        values = oracle(lambda *samples: [info.ref(*a) for a in samples], *cases)
        _EXPECTED.update({id(a): v for a, v in zip(cases, values)})
    return _EXPECTED[id(args)]


@pytest.mark.parametrize("info,args,name", VALUE_CASES, ids=[c[2] for c in VALUE_CASES])
def test_values_match_the_oracle(info, args, name):
    expected = expected_value(info, args)
    module = program(info, args, expected)
    for executor, backend in (("compiled", "numpy"), ("interpreter", "numpy"), ("compiled", "torch")):
        got = loom.execute(module, *args, executor=executor, backend=backend)
        if backend == "torch":
            got = loom.backend.torch_kernels.to_numpy(got)
        assert_matches(got, expected, info.tol, f"{name} on the {executor} executor ({backend})")


GRAD_CASES = [info for info in OP_INFO if info.grad]


def _wrt(info: OpInfo, args: tuple) -> list[int]:
    if info.grad_wrt is not None:
        return list(info.grad_wrt)
    return [i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f"]


def jvp_module(module: loom.ir.core.Operation, wrt: list[int]) -> loom.ir.core.Operation:
    """The JVP of @main with tangents for the operands `wrt` only."""
    fn = next(iter(module.regions[0].entry.ops))
    n = len(fn.regions[0].entry.args)
    out = builtin.ModuleOp.build()
    out.body.append(jvp_function(fn, "main", inactive=[i for i in range(n) if i not in wrt]))
    return out


def _grad_args(info: OpInfo) -> tuple:
    return info.random_samples(shape=(5,), grad=True, dtypes=(np.float64,))[0]


def _partials_by_differences(info: OpInfo, args: tuple, wrt: list[int]) -> list[np.ndarray]:
    """Per operand in `wrt`, the op's partial derivative by central differences in float64 (the
    op is elementwise: its Jacobian is diagonal, so one step of every element at once gives it)."""
    out = []
    for i in wrt:
        x = np.asarray(args[i], np.float64)
        h = 1e-6 * np.maximum(1.0, np.abs(x))
        up, down = list(args), list(args)
        up[i], down[i] = x + h, x - h
        out.append((oracle(info.ref, *up) - oracle(info.ref, *down)) / (2 * h))
    return out


def _closed_over(info: OpInfo, args: tuple, wrt: list[int]):
    """The oracle as a function of the float operands only (the others fixed)."""
    def fn(*floats):
        full = list(args)
        for i, v in zip(wrt, floats):
            full[i] = v
        return info.ref(*full)
    return fn


@pytest.mark.parametrize("info", GRAD_CASES, ids=[_id(i) for i in GRAD_CASES])
def test_vjp_matches_jax(info):
    args = _grad_args(info)
    wrt = _wrt(info, args)
    expected = oracle(info.ref, *args)
    ct = np.random.default_rng(1).normal(size=expected.shape)
    got = loom.execute(vjp_module(program(info, args, expected), wrt), *args, ct)[1:]
    if info.grad_oracle == "differences":
        want, tol = [ct * p for p in _partials_by_differences(info, args, wrt)], 1e-6
    else:
        with jax.enable_x64(True), jax.default_device(CPU):
            _, pullback = jax.vjp(_closed_over(info, args, wrt), *(args[i] for i in wrt))
            want, tol = [np.asarray(v) for v in pullback(ct)], 1e-9
    for i, g, w in zip(wrt, got, want):
        assert_matches(g, w, tol, f"{_id(info)}: cotangent of operand {i}")


@pytest.mark.parametrize("info", GRAD_CASES, ids=[_id(i) for i in GRAD_CASES])
def test_jvp_matches_jax(info):
    args = _grad_args(info)
    wrt = _wrt(info, args)
    expected = oracle(info.ref, *args)
    rng = np.random.default_rng(2)
    tangents = [rng.normal(size=np.shape(a)).astype(np.asarray(a).dtype) if i in wrt else np.zeros_like(a)
                for i, a in enumerate(args)]
    got = loom.execute(jvp_module(program(info, args, expected), wrt), *args, *tangents)[1]
    if info.grad_oracle == "differences":
        partials = _partials_by_differences(info, args, wrt)
        want, tol = sum(tangents[i] * p for i, p in zip(wrt, partials)), 1e-6
    else:
        with jax.enable_x64(True), jax.default_device(CPU):
            _, want = jax.jvp(_closed_over(info, args, wrt), tuple(args[i] for i in wrt),
                              tuple(tangents[i] for i in wrt))
            tol = 1e-9
    assert_matches(got, np.asarray(want), tol, f"{_id(info)}: tangent")


def _batchings(info: OpInfo) -> list[tuple]:
    """in_dims to try: every operand at 0; the first at axis 1; each operand in turn unbatched."""
    n = info.arity
    out = [(0,) * n, (1,) + (0,) * (n - 1)]
    out += [tuple(None if j == i else 0 for j in range(n)) for i in range(n)] if n > 1 else []
    return out


def _batch_operand(info: OpInfo, i: int, d: int | None, size: int, shape: tuple, dt) -> np.ndarray:
    rs = np.random.RandomState(i + 7)
    if d is None:
        return info.operand(rs, i, shape, dt)
    x = np.stack([info.operand(rs, i, shape, dt) for _ in range(size)])
    return np.moveaxis(x, 0, d)


BATCH_CASES = [(info, dims) for info in OP_INFO for dims in _batchings(info)]


@pytest.mark.parametrize("info,in_dims", BATCH_CASES, ids=[f"{_id(i)}-{d}" for i, d in BATCH_CASES])
def test_vmap_matches_a_loop(info, in_dims):
    size, shape, dt = 3, (2, 4), info.dtypes[0]
    batched = [_batch_operand(info, i, d, size, shape, dt) for i, d in enumerate(in_dims)]
    one = [np.take(a, 0, axis=d) if d is not None else a for a, d in zip(batched, in_dims)]
    module = program(info, tuple(one), oracle(info.ref, *one))
    got = loom.execute(vmap_module(module, list(in_dims), size), *batched)
    run = loom.compile(module)
    want = np.stack([run(*(np.take(a, k, axis=d) if d is not None else a for a, d in zip(batched, in_dims)))
                     for k in range(size)])
    assert_matches(got, want, 0.0, f"vmap of {_id(info)} with in_dims {in_dims}")


def test_scalar_operands_batch():
    """select with a scalar predicate and clamp with scalar bounds, batched and not."""
    for info in OP_INFO:
        for i in info.scalar_operands:
            shape, dt = (2, 4), info.dtypes[0]
            rs = np.random.RandomState(0)
            args = [info.operand(rs, j, () if j == i else shape, dt) for j in range(info.arity)]
            module = program(info, tuple(args), oracle(info.ref, *args))
            assert_matches(loom.execute(module, *args), oracle(info.ref, *args), None, info.op)
            batched = [np.stack([a] * 3) if j == i else a for j, a in enumerate(args)]
            in_dims = [0 if j == i else None for j in range(info.arity)]
            got = loom.execute(vmap_module(module, in_dims, 3), *batched)
            assert_matches(got, np.stack([loom.execute(module, *args)] * 3), 0.0, f"vmap of {info.op}")


def test_every_elementwise_row_has_an_op_info_row():
    have = {info.op for info in OP_INFO}
    missing = [row.name for row in elementwise.OPS if row.name not in have]
    assert not missing, f"elementwise ops without sample inputs in tests/support/op_info.py: {missing}"


def test_jvp_is_linear_in_the_tangent_and_vjp_its_transpose():
    """<jvp(t), c> == <t, vjp(c)>: the VJP is the transpose of the JVP, for every differentiated op."""
    for info in GRAD_CASES:
        args = _grad_args(info)
        wrt = _wrt(info, args)
        module = program(info, args, oracle(info.ref, *args))
        rng = np.random.default_rng(3)
        tangents = [rng.normal(size=np.shape(a)) if i in wrt else np.zeros_like(a) for i, a in enumerate(args)]
        c = rng.normal(size=np.shape(args[wrt[0]]))
        jvp = loom.execute(jvp_module(module, wrt), *args, *tangents)[1]
        cts = loom.execute(vjp_module(module, wrt), *args, c)[1:]
        lhs = float(np.sum(jvp * c))
        rhs = float(sum(np.sum(tangents[i] * g) for i, g in zip(wrt, cts)))
        # reduce_precision's derivative rounds the tangent as the op rounds its operand: linear up
        # to that rounding (10 mantissa bits here)
        tol = 2e-3 if info.op == "stablehlo.reduce_precision" else 1e-9
        assert np.isclose(lhs, rhs, rtol=tol, atol=tol), (info.op, lhs, rhs)

