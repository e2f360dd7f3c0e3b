"""knn dialect and loom.lax top-k: bin counts against XLA's (through jax), semantics against jax and
exact search, recall guarantees, the executors, autodiff and vmap rules, the knn-fusion pass."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import loom
import loom.ir as lir
import loom.numpy as lnp
from loom import lax
from loom.backend import knn_kernels
from loom.dialects.knn import num_bins, reduction_output_size
from loom.ir.diagnostics import VerifyError
from loom.rewrite import PassManager

jax = pytest.importorskip("jax")
jnp = jax.numpy
from jax._src.lib import _jax as jax_lib  # noqa: E402

jax.config.update("jax_platforms", "cpu")

RNG = np.random.default_rng(1234)


def exact_top_k(scores: np.ndarray, k: int, largest: bool = True) -> np.ndarray:
    order = np.argsort(-scores if largest else scores, axis=1, kind="stable")
    return order[:, :k]


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    hits = sum(len(set(f.tolist()) & set(t.tolist())) for f, t in zip(found, truth))
    return hits / truth.size


# Bin counts ------------------------------------------------------------------------------------

SIZES = [1, 100, 128, 129, 1000, 1024, 1025, 3000, 10_000, 65_536, 100_000, 1_000_000, 1_183_514]
KS = [1, 2, 10, 50, 100, 1000]
RECALLS = [0.5, 0.8, 0.9, 0.95, 0.99, 0.999, 1.0]


def test_reduction_output_size_matches_xla_over_a_grid():
    checked = 0
    for n in SIZES:
        for rank in (1, 2):
            for k in KS:
                if k > n:
                    continue
                for r in RECALLS:
                    for override in (-1, n, 2 * n + 7, 10 * n):
                        for aggregate in (False, True):
                            want = tuple(jax_lib.approx_top_k_reduction_output_size(n, rank, k, r, aggregate,
                                                                                    override))
                            assert reduction_output_size(n, rank, k, r, aggregate, override) == want, \
                                (n, rank, k, r, override, aggregate)
                            checked += 1
    assert checked > 3000


@pytest.mark.parametrize("n", [100, 129, 1000, 3000, 10_000, 100_000, 1_000_000])
def test_output_width_equals_jax_approx_max_k(n):
    for k in (1, 10, 100):
        if k > n:
            continue
        for r in (0.8, 0.9, 0.95, 0.99):
            for override in (-1, 3 * n):
                spec = jax.ShapeDtypeStruct((2, n), jnp.float32)
                out = jax.eval_shape(lambda x: jax.lax.approx_max_k(  # noqa: B023
                    x, k, recall_target=r, reduction_input_size_override=override,  # noqa: B023
                    aggregate_to_topk=False), spec)
                module = loom.jit(lambda x: lax.approx_max_k(  # noqa: B023
                    x, k, recall_target=r, reduction_input_size_override=override,  # noqa: B023
                    aggregate_to_topk=False)).lower(np.zeros((2, n), np.float32)).module
                (op,) = [op for op in module.walk() if op.name == "knn.approx_top_k"]
                assert out[0].shape == tuple(op.results[0].type.shape) == tuple(op.results[1].type.shape)


def test_output_width_run_on_cpu_equals_jax():
    # Really run jax (not only its shape function) for a few sizes: the width of the array it returns.
    for n, k, r in [(1000, 10, 0.9), (5000, 10, 0.95), (20_000, 100, 0.99), (4000, 1, 0.95)]:
        x = RNG.standard_normal((3, n)).astype(np.float32)
        jv, _ = jax.lax.approx_max_k(x, k, recall_target=r, aggregate_to_topk=False)
        lv, li = lax.approx_max_k(x, k, recall_target=r, aggregate_to_topk=False)
        assert lv.shape == jv.shape and li.shape == jv.shape and li.dtype == np.int32


def test_bins_are_strided_and_exact_cases():
    x = RNG.standard_normal((4, 5000)).astype(np.float32)
    L = num_bins(5000, 2, 10, 0.95)  # noqa: N806
    assert L == 384
    v, i = lax.approx_max_k(x, 10, aggregate_to_topk=False)
    # bin b holds elements b, b + L, b + 2L, ...: its survivor is their maximum
    pad = np.full((4, (-5000) % L), -np.inf, np.float32)
    want = np.concatenate([x, pad], 1).reshape(4, -1, L).max(1)
    np.testing.assert_array_equal(v, want)
    np.testing.assert_array_equal(i % L, np.broadcast_to(np.arange(L), (4, L)))
    np.testing.assert_array_equal(np.take_along_axis(x, i, 1), v)
    # k = 1 is exact, recall_target = 1 is exact, n <= 128 is exact
    v1, i1 = lax.approx_max_k(x, 1)
    np.testing.assert_array_equal(i1[:, 0], x.argmax(1))
    for xs in (x, x[:, :100]):
        ve, ie = lax.approx_min_k(xs, 7, recall_target=1.0)
        np.testing.assert_array_equal(ie, exact_top_k(xs, 7, largest=False))
        np.testing.assert_array_equal(ve, np.take_along_axis(xs, ie, 1))


# Semantics against jax ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape,dim", [((3, 700), -1), ((600, 5), 0), ((2, 300, 4), 1)])
def test_exact_results_equal_jax(shape, dim):
    x = RNG.standard_normal(shape).astype(np.float32)
    for fn, jfn in ((lax.approx_max_k, jax.lax.approx_max_k), (lax.approx_min_k, jax.lax.approx_min_k)):
        v, i = fn(x, 5, reduction_dimension=dim, recall_target=1.0)
        jv, ji = jfn(x, 5, reduction_dimension=dim, recall_target=1.0)
        np.testing.assert_array_equal(v, np.asarray(jv))
        np.testing.assert_array_equal(i, np.asarray(ji))
    last = np.moveaxis(x, dim, -1)
    tv, ti = lax.top_k(last, 5)
    jv, ji = jax.lax.top_k(last, 5)
    np.testing.assert_array_equal(tv, np.asarray(jv))
    np.testing.assert_array_equal(ti, np.asarray(ji))


def test_no_rows_give_empty_results_like_jax():
    x = np.zeros((0, 1000), np.float32)
    for aggregate in (True, False):
        want = jax.lax.approx_max_k(x, 3, aggregate_to_topk=aggregate)
        for got in (lax.approx_max_k(x, 3, aggregate_to_topk=aggregate),
                    loom.jit(lambda a: lax.approx_max_k(a, 3, aggregate_to_topk=aggregate))(x)):  # noqa: B023
            for g, w in zip(got, want):
                assert np.asarray(g).shape == w.shape and np.asarray(g).dtype == w.dtype


def test_top_k_ties_and_ints_like_jax():
    x = np.array([[3, 1, 3, 2, 3, 0]], np.int32)
    v, i = lax.top_k(x, 4)
    jv, ji = jax.lax.top_k(x, 4)
    np.testing.assert_array_equal(v, np.asarray(jv))
    np.testing.assert_array_equal(i, np.asarray(ji))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_dtypes_keep_the_operand_type(dtype):
    x = RNG.standard_normal((4, 2000)).astype(dtype)
    v, i = lax.approx_max_k(x, 10)
    assert v.dtype == dtype and i.dtype == np.int32
    np.testing.assert_array_equal(np.take_along_axis(x, i, 1), v)
    assert np.all(np.diff(v.astype(np.float64), axis=1) <= 0)


def test_errors_name_the_argument():
    x = np.zeros((2, 50), np.float32)
    with pytest.raises(ValueError, match="k must be positive"):
        lax.approx_max_k(x, 0)
    with pytest.raises(ValueError, match="larger than dimension"):
        lax.approx_max_k(x, 51)
    with pytest.raises(ValueError, match="floating-point"):
        lax.approx_max_k(x.astype(np.int32), 3)
    with pytest.raises(TypeError, match="rank >= 1"):
        lax.approx_min_k(np.float32(1.0), 1)
    with pytest.raises(ValueError, match="recall_target"):
        lax.approx_max_k(x, 3, recall_target=1.5)
    with pytest.raises(ValueError, match="reduction_input_size_override"):
        lax.approx_max_k(x, 3, reduction_input_size_override=10)
    with pytest.raises(ValueError, match="reduction_dimension"):
        lax.approx_max_k(x, 3, reduction_dimension=2)
    with pytest.raises(ValueError, match="top_k: k=60"):
        lax.top_k(x, 60)


# Recall ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("k", [1, 10, 100])
@pytest.mark.parametrize("target", [0.8, 0.9, 0.95, 0.99])
def test_recall_on_random_data(k, target):
    q = RNG.standard_normal((48, 32)).astype(np.float32)
    db = RNG.standard_normal((30_000, 32)).astype(np.float32)
    scores = q @ db.T
    truth = exact_top_k(scores, k)
    _, idx = lax.approx_max_k(scores, k, recall_target=target)
    assert recall(idx, truth) >= target
    # the fused kernel: same bins, same recall
    _, fidx = knn_kernels.fused_score_top_k(q, db, None, "ip", k, target, True, -1, True)
    assert recall(fidx, truth) >= target


@pytest.mark.parametrize("k", [1, 10, 100])
@pytest.mark.parametrize("target", [0.8, 0.9, 0.95, 0.99])
def test_recall_on_digits_l2(k, target):
    from sklearn.datasets import load_digits
    data = load_digits().data.astype(np.float32)
    queries, db = data[:200], data[200:]
    half = 0.5 * (db * db).sum(1)
    dist = half[None, :] - queries @ db.T
    truth = exact_top_k(dist, k, largest=False)
    _, idx = lax.approx_min_k(dist, k, recall_target=target)
    assert recall(idx, truth) >= target
    _, fidx = knn_kernels.fused_score_top_k(queries, db, half, "l2", k, target, False, -1, True)
    assert recall(fidx, truth) >= target


# The IR: verifier, text round trip, both executors --------------------------------------------------

APPROX = ('"knn.approx_top_k"(%arg0) <{aggregate_to_topk = false, is_max_k = true, k = 10 : i64, '
          'recall_target = 0.949999988 : f32, reduction_dimension = 1 : i64, reduction_input_size_override = -1 : i64}>'
          ' : (tensor<4x5000xf32>) -> (tensor<4x{w}xf32>, tensor<4x{w}xi32>)')
FUSED = ('"knn.fused_score_top_k"(%arg1, %arg2{norms}) <{{aggregate_to_topk = true, is_max_k = false, k = 10 : i64, '
         'metric = "{metric}", recall_target = 0.899999976 : f32, reduction_input_size_override = -1 : i64}}>'
         ' : (tensor<3x16xf32>, tensor<1000x16xf32>{norms_type}) -> (tensor<3x10xf32>, tensor<3x10xi32>)')


def module_text(width=384, metric="l2", norms=True):
    fused = FUSED.format(metric=metric, norms=", %arg3" if norms else "",
                         norms_type=", tensor<1000xf32>" if norms else "")
    return (
        '"builtin.module"() ({\n'
        '  "func.func"() <{function_type = (tensor<4x5000xf32>, tensor<3x16xf32>, tensor<1000x16xf32>, '
        f'tensor<1000xf32>) -> (tensor<4x{width}xf32>, tensor<4x{width}xi32>, tensor<3x10xf32>, tensor<3x10xi32>), '
        'sym_name = "main"}> ({\n'
        '  ^bb0(%arg0: tensor<4x5000xf32>, %arg1: tensor<3x16xf32>, %arg2: tensor<1000x16xf32>, '
        '%arg3: tensor<1000xf32>):\n'
        f'    %0:2 = {APPROX.replace("{w}", str(width))}\n'
        f'    %1:2 = {fused}\n'
        f'    "func.return"(%0#0, %0#1, %1#0, %1#1) : (tensor<4x{width}xf32>, tensor<4x{width}xi32>, '
        'tensor<3x10xf32>, tensor<3x10xi32>) -> ()\n'
        '  }) : () -> ()\n'
        '}) : () -> ()\n')


def test_generic_form_round_trips_and_runs_in_both_executors():
    text = module_text()
    module = lir.parse(text)
    assert lir.print(module, generic=True) == text
    x = RNG.standard_normal((4, 5000)).astype(np.float32)
    q = RNG.standard_normal((3, 16)).astype(np.float32)
    db = RNG.standard_normal((1000, 16)).astype(np.float32)
    half = 0.5 * (db * db).sum(1)
    outs = {ex: loom.execute(text, x, q, db, half, executor=ex) for ex in ("compiled", "interpreter")}
    want_v, want_i = lax.approx_max_k(x, 10, aggregate_to_topk=False)
    dist = half[None, :] - q @ db.T
    ref_v, ref_i = lax.approx_min_k(dist, 10, recall_target=0.9)
    for v, i, fv, fi in outs.values():
        np.testing.assert_array_equal(v, want_v)
        np.testing.assert_array_equal(i, want_i)
        np.testing.assert_array_equal(fi, ref_i)
        np.testing.assert_allclose(fv, ref_v, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("text,message", [
    (module_text(width=256), "inferred type"),
    (module_text(metric="l2", norms=False), "needs the half_squared_norms"),
    (module_text(metric="ip", norms=True), "takes no half_squared_norms"),
    (module_text(metric="cos", norms=False), "metric"),
    (module_text().replace("k = 10 : i64, recall_target = 0.949999988", "k = 0 : i64, recall_target = 0.949999988"),
     "k must be positive"),
    (module_text().replace("tensor<1000x16xf32>{", "tensor<1000x8xf32>{").replace(
        "(tensor<3x16xf32>, tensor<1000x16xf32>, tensor<1000xf32>) ->",
        "(tensor<3x16xf32>, tensor<1000x8xf32>, tensor<1000xf32>) ->"), None),
])
def test_verifier_rejects_bad_ops(text, message):
    with pytest.raises(Exception) as info:
        lir.parse(text)
    if message is not None:
        assert isinstance(info.value, VerifyError)
        assert message in str(info.value)


# Transformations ------------------------------------------------------------------------------------

def test_grad_scatters_to_selected_positions_like_jax():
    x = RNG.standard_normal((3, 7, 300)).astype(np.float32)
    w = RNG.standard_normal((3, 5, 300)).astype(np.float32)
    g = loom.grad(lambda x: lnp.sum(lax.approx_max_k(x, 5, reduction_dimension=1, recall_target=1.0)[0] * w))(x)
    jg = jax.grad(lambda x: jnp.sum(jax.lax.approx_max_k(x, 5, reduction_dimension=1, recall_target=1.0)[0] * w))(x)
    np.testing.assert_allclose(g, np.asarray(jg), rtol=0, atol=0)
    # approximate top-k: the gradient lands exactly on the returned indices
    y = RNG.standard_normal((4, 6000)).astype(np.float32)
    _, idx = lax.approx_max_k(y, 10)
    gy = loom.jit(loom.grad(lambda y: lnp.sum(lax.approx_max_k(y, 10)[0] * 2.0)))(y)
    want = np.zeros_like(y)
    np.put_along_axis(want, idx, 2.0, 1)
    np.testing.assert_array_equal(gy, want)
    # padding entries (index -1) of aggregate_to_topk=False get no gradient
    gp = loom.grad(lambda y: lnp.sum(lax.approx_max_k(y[:, :1000], 10, aggregate_to_topk=False)[0]))(y)
    _, pidx = lax.approx_max_k(y[:, :1000], 10, aggregate_to_topk=False)
    want = np.zeros_like(y)
    np.put_along_axis(want, pidx, 1.0, 1)
    np.testing.assert_array_equal(gp, want)


def test_top_k_grad_and_jvp_like_jax():
    x = RNG.standard_normal((6, 40)).astype(np.float32)
    g = loom.grad(lambda x: lnp.sum(lax.top_k(x, 3)[0] ** 2))(x)
    jg = jax.grad(lambda x: jnp.sum(jax.lax.top_k(x, 3)[0] ** 2))(x)
    np.testing.assert_allclose(g, np.asarray(jg), rtol=1e-6)
    t = RNG.standard_normal(x.shape).astype(np.float32)
    _, tan = loom.jvp(lambda x: lax.top_k(x, 3)[0], (x,), (t,))
    _, jt = jax.jvp(lambda x: jax.lax.top_k(x, 3)[0], (x,), (t,))
    np.testing.assert_array_equal(np.asarray(tan), np.asarray(jt))


def test_jvp_gathers_the_tangent_like_jax():
    x = RNG.standard_normal((3, 7, 300)).astype(np.float32)
    t = RNG.standard_normal(x.shape).astype(np.float32)
    p, tan = loom.jvp(lambda x: lax.approx_min_k(x, 5, reduction_dimension=2)[0], (x,), (t,))
    jp, jt = jax.jvp(lambda x: jax.lax.approx_min_k(x, 5, reduction_dimension=2)[0], (x,), (t,))
    np.testing.assert_array_equal(np.asarray(p), np.asarray(jp))
    np.testing.assert_array_equal(np.asarray(tan), np.asarray(jt))


def test_vmap_equals_a_loop():
    x = RNG.standard_normal((3, 7, 3000)).astype(np.float32)
    for axis in (0, 1):
        xs = np.moveaxis(x, 0, axis)
        got = loom.vmap(lambda x: lax.approx_max_k(x, 5, aggregate_to_topk=False)[1], in_axes=axis)(xs)
        loop = np.stack([lax.approx_max_k(x[i], 5, aggregate_to_topk=False)[1] for i in range(3)])
        np.testing.assert_array_equal(got, loop)
    got = loom.vmap(lambda x: lax.top_k(x, 3)[1], in_axes=2)(x[:, :, :50])
    np.testing.assert_array_equal(got, np.stack([lax.top_k(x[:, :, i], 3)[1] for i in range(50)]))


# Fusion -----------------------------------------------------------------------------------------

def fuse(module):
    PassManager.parse("builtin.module(func.func(knn-fusion))").run(module)
    return module


def op_names(module):
    return [op.name for op in module.walk()]


@pytest.mark.parametrize("form", ["ip", "l2", "ip_min", "dot_nd", "norms_row"])
def test_fusion_fires_on_traced_programs_and_keeps_results(form):
    q = RNG.standard_normal((37, 16)).astype(np.float32)
    db = RNG.standard_normal((5000, 16)).astype(np.float32)
    fns = {
        "ip": lambda q, db: lax.approx_max_k(q @ db.T, 10),
        "l2": lambda q, db: lax.approx_min_k(0.5 * lnp.sum(db * db, axis=1) - q @ db.T, 10, recall_target=0.9),
        "ip_min": lambda q, db: lax.approx_min_k(q @ db.T, 10, aggregate_to_topk=False),
        "dot_nd": lambda q, db: lax.approx_max_k(q @ lnp.transpose(db * 1.0), 100, recall_target=0.99),
        "norms_row": lambda q, db: lax.approx_min_k(0.5 * lnp.sum(db * db, axis=1, keepdims=True).T - q @ db.T, 10),
    }
    fn = fns[form]
    lowered = loom.jit(fn).lower(q, db)
    unfused = [np.asarray(a) for a in loom.execute(lowered.module, q, db)]
    module = fuse(lowered.module)
    names = op_names(module)
    assert "knn.fused_score_top_k" in names and "knn.approx_top_k" not in names
    assert "stablehlo.dot_general" not in names
    module.verify()
    for executor in ("compiled", "interpreter"):
        fused = loom.execute(module, q, db, executor=executor)
        np.testing.assert_array_equal(fused[1], unfused[1])
        np.testing.assert_allclose(fused[0], unfused[0], rtol=1e-5, atol=1e-4)


def test_fusion_leaves_other_programs_alone():
    q = RNG.standard_normal((4, 8)).astype(np.float32)
    db = RNG.standard_normal((300, 8)).astype(np.float32)

    def shared(q, db):  # the scores are also returned: nothing to save
        s = q @ db.T
        return lax.approx_max_k(s, 5)[1], s

    def over_queries(q, db):  # top-k over the query axis
        return lax.approx_max_k(q @ db.T, 2, reduction_dimension=0)[1]

    for fn in (shared, over_queries):
        module = fuse(loom.jit(fn).lower(q, db).module)
        assert "knn.fused_score_top_k" not in op_names(module)


def test_fused_kernel_leaves_the_blas_thread_count_as_it_found_it():
    # The sweep runs BLAS on one thread per worker; the count is process-wide, so every later
    # matrix product of the process would run on one thread if it were not restored.
    blas = knn_kernels._BLAS
    if blas.get is None:
        pytest.skip("numpy's BLAS is not the OpenBLAS of its wheel: the sweep runs on one worker")
    before = blas.get()
    q = RNG.standard_normal((64, 16)).astype(np.float32)
    db = RNG.standard_normal((20_000, 16)).astype(np.float32)
    with ThreadPoolExecutor(3) as pool:  # concurrent searches restore it once, after the last
        list(pool.map(lambda _: knn_kernels.fused_score_top_k(q, db, None, "ip", 10, 0.95, True, -1, True), range(6)))
    assert blas.get() == before


def test_fused_kernel_uses_no_more_threads_than_blas_was_given():
    # OPENBLAS_NUM_THREADS=1 (a process per core, say): the sweep must run on one worker too.
    import subprocess
    import sys
    code = ("import numpy as np, threading\n"
            "from loom.backend import knn_kernels as kk\n"
            "q = np.random.rand(64, 16).astype(np.float32); db = np.random.rand(20000, 16).astype(np.float32)\n"
            "kk.fused_score_top_k(q, db, None, 'ip', 10, 0.95, True, -1, True)\n"
            "print(kk._workers(), threading.active_count())\n")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["1", "1"]


def test_fused_kernel_equals_reference_across_tilings():
    q = RNG.standard_normal((300, 8)).astype(np.float32)
    db = RNG.standard_normal((8_011, 8)).astype(np.float32)
    half = 0.5 * (db * db).sum(1)
    for metric, is_max, k, r, aggregate in [("ip", True, 10, 0.95, True), ("l2", False, 10, 0.9, False),
                                            ("ip", False, 100, 0.99, True), ("l2", True, 1, 0.9, True),
                                            ("ip", True, 10, 1.0, True)]:
        norms = half if metric == "l2" else None
        rv, ri = knn_kernels.fused_score_top_k_reference(q, db, norms, metric, k, r, is_max, -1, aggregate)
        for tiling in ({}, {"chunk_bytes": 1 << 13}, {"chunk_bytes": 1 << 13, "group_rows": 1},
                       {"chunk_bytes": 1 << 13, "group_rows": 5}, {"query_tile": 200, "group_rows": 3},
                       {"chunk_bytes": 1 << 16, "query_tile": 32, "group_rows": 4},
                       {"query_tile": 300, "chunk_bytes": 1 << 16}, {"query_tile": 300, "chunk_bytes": 1 << 20}):
            fv, fi = knn_kernels.fused_score_top_k(q, db, norms, metric, k, r, is_max, -1, aggregate, **tiling)
            np.testing.assert_allclose(fv, rv, rtol=1e-5, atol=1e-4)
            # Tiles round their dot products differently from the whole-matrix reference: two
            # near-equal scores may swap places; the true score of every pick must still be the
            # reference's value within rounding.
            assert (fi != ri).mean() < 1e-3
            true = q.astype(np.float64) @ db.astype(np.float64).T
            if metric == "l2":
                true = half[None, :] - true
            np.testing.assert_allclose(np.take_along_axis(true, fi.astype(np.int64), 1), rv, rtol=1e-5, atol=1e-4)
            np.testing.assert_array_equal(np.sort(fi, 1), np.sort(ri, 1))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_fused_kernel_on_a_half_precision_database_equals_reference_across_tilings(dtype, monkeypatch):
    # A float16 / bfloat16 database is widened in blocks of whole chunks, each block swept by
    # several query tiles: blocks smaller than a slice and than a group of chunks, and tiles
    # sharing them, must give the reference's answer on the widened values.
    import ml_dtypes
    low = np.dtype(getattr(ml_dtypes, dtype, None) or dtype)
    q = RNG.standard_normal((90, 8)).astype(np.float32)
    db = RNG.standard_normal((30_011, 8)).astype(low)
    wide = db.astype(np.float32)
    half = 0.5 * (wide * wide).sum(1)
    for metric, is_max, k, r in [("ip", True, 10, 0.95), ("l2", False, 10, 0.9), ("ip", True, 100, 0.95)]:
        norms = half if metric == "l2" else None
        rv, ri = knn_kernels.fused_score_top_k_reference(q, wide, norms, metric, k, r, is_max, -1, True)
        for widen_bytes, tiling in [(1 << 12, {"query_tile": 20, "chunk_bytes": 1 << 12}),
                                    (1 << 15, {"query_tile": 32, "chunk_bytes": 1 << 13, "group_rows": 3}),
                                    (1 << 21, {})]:
            monkeypatch.setattr(knn_kernels, "WIDEN_BYTES", widen_bytes)
            fv, fi = knn_kernels.fused_score_top_k(q, db, norms, metric, k, r, is_max, -1, True,
                                                   check_finite="database", **tiling)
            np.testing.assert_allclose(fv, rv, rtol=1e-5, atol=1e-4)
            true = q.astype(np.float64) @ wide.astype(np.float64).T
            if metric == "l2":
                true = half[None, :] - true
            np.testing.assert_allclose(np.take_along_axis(true, fi.astype(np.int64), 1), rv, rtol=1e-5, atol=1e-4)
            assert (fi != ri).mean() < 1e-3


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_fused_kernel_with_many_bins_and_no_aggregation_equals_reference(dtype):
    # Every bin chosen and many bins over a small database (each query's candidates cover the
    # database): the winning positions come from all of a query's scores at once, a float16 /
    # bfloat16 database widened a unit at a time.
    import ml_dtypes
    low = np.dtype(getattr(ml_dtypes, dtype, None) or dtype)
    q = RNG.standard_normal((150, 16)).astype(np.float32)
    db = RNG.standard_normal((3_011, 16)).astype(low)
    wide = db.astype(np.float32)
    half = 0.5 * (wide * wide).sum(1)
    true = q.astype(np.float64) @ wide.astype(np.float64).T
    for metric, is_max, k, r in [("ip", True, 10, 0.99), ("l2", False, 100, 0.9), ("ip", False, 1, 0.8)]:
        norms = half if metric == "l2" else None
        rv, ri = knn_kernels.fused_score_top_k_reference(q, wide, norms, metric, k, r, is_max, -1, False)
        for tiling in ({}, {"chunk_bytes": 1 << 13, "group_rows": 3}):
            fv, fi = knn_kernels.fused_score_top_k(q, db, norms, metric, k, r, is_max, -1, False, **tiling)
            assert fv.shape == rv.shape and fi.shape == ri.shape
            np.testing.assert_allclose(fv, rv, rtol=1e-5, atol=1e-4)
            assert (fi != ri).mean() < 1e-3
            real = fi >= 0
            picked = np.take_along_axis(half[None, :] - true if metric == "l2" else true, np.maximum(fi, 0), 1)
            np.testing.assert_allclose(picked[real], rv[real], rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("nq", [0, 1, 5, 70])
def test_fused_kernel_equals_reference_for_few_queries(nq):
    # Few queries over a database of many units: the workers sweep slices of the database and
    # their per-bin states are merged (ties to the earlier slice, the smaller position).
    q = RNG.standard_normal((nq, 8)).astype(np.float32)
    db = RNG.standard_normal((40_009, 8)).astype(np.float32)
    db[[5, 30_001]] = db[17]  # equal scores in different slices: the smaller position wins
    half = 0.5 * (db * db).sum(1)
    for metric, is_max, k, r, aggregate in [("ip", True, 10, 0.95, True), ("l2", False, 5, 0.9, False),
                                            ("ip", True, 3, 1.0, True)]:
        norms = half if metric == "l2" else None
        rv, ri = knn_kernels.fused_score_top_k_reference(q, db, norms, metric, k, r, is_max, -1, aggregate)
        fv, fi = knn_kernels.fused_score_top_k(q, db, norms, metric, k, r, is_max, -1, aggregate,
                                               check_finite="database")
        assert fv.shape == rv.shape and fi.shape == ri.shape and fv.dtype == rv.dtype and fi.dtype == ri.dtype
        np.testing.assert_allclose(fv, rv, rtol=1e-5, atol=1e-4)
        assert (fi != ri).sum() <= fi.size * 1e-3
    bad = db.copy()
    bad[33_333, 2] = np.nan
    with pytest.raises(ValueError, match=r"database contain NaN or inf \(row 33333\)"):
        knn_kernels.fused_score_top_k(q, bad, None, "ip", 10, 0.95, True, -1, True, check_finite="database")
