"""Exact search (recall_target=1.0) over databases large enough for the kernel's exact path (the
threshold sweep of loom.backend.knn_kernels.exact_top_k): against
numpy's stable argsort of exactly computed scores (small integers: every score exact in float32,
many ties, each to the smaller position)."""

from __future__ import annotations

import numpy as np
import pytest

import loom.knn
from loom.backend import knn_kernels
from loom.dialects.knn import num_bins

RNG = np.random.default_rng(5)


def oracle(q, db, k, metric):
    q, x = q.astype(np.float64), db.astype(np.float64)
    s = q @ x.T if metric == "ip" else -((x * x).sum(1)[None, :] - 2 * q @ x.T)  # l2 ranks as -|x|^2 + 2 q.x
    ids = np.argsort(-s, axis=1, kind="stable")[:, :k]
    return ids, np.take_along_axis(s, ids, axis=1)


@pytest.mark.parametrize("metric", ["ip", "l2"])
@pytest.mark.parametrize("k", [2, 10, 100])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_exact_search_on_the_exact_path(metric, k, dtype):
    n = 20_011  # not a multiple of the bins: a last, partial row of bins
    # every element its own bin (k=1 is the top-1 reduction instead): the threshold sweep
    assert num_bins(n, 2, k, 1.0) == n and knn_kernels.EXACT_SWEEP_MIN <= n and k * 8 < n
    db = RNG.integers(-4, 5, (n, 16)).astype(dtype)
    db[7000:7100] = db[100:200]  # duplicate rows: equal scores, the smaller position first
    q = RNG.integers(-4, 5, (70, 16)).astype(dtype)
    scores, ids = loom.knn.search(q, db, k, metric=metric, recall_target=1.0)
    want_ids, want = oracle(q, db, k, metric)
    np.testing.assert_array_equal(ids, want_ids)
    if metric == "ip":
        np.testing.assert_array_equal(scores, want)
    else:
        np.testing.assert_array_equal(scores, (q.astype(np.float64) ** 2).sum(1)[:, None] - want)


def test_ties_everywhere_go_to_the_first_rows():
    # every row equal: every score ties the threshold, the first k rows win
    db = np.ones((9000, 8), np.float32)
    q = np.ones((3, 8), np.float32)
    _, ids = loom.knn.search(q, db, 5, recall_target=1.0)
    np.testing.assert_array_equal(ids, np.tile(np.arange(5), (3, 1)))


@pytest.mark.parametrize("metric", ["ip", "l2"])
def test_exact_path_with_many_query_tiles(metric):
    # more queries than one tile (knn_kernels.QUERY_TILE): tiles and database slices merged
    n = 20_011
    db = RNG.integers(-4, 5, (n, 8)).astype(np.float32)
    q = RNG.integers(-4, 5, (knn_kernels.QUERY_TILE + 61, 8)).astype(np.float32)
    _, ids = loom.knn.search(q, db, 7, metric=metric, recall_target=1.0)
    np.testing.assert_array_equal(ids, oracle(q, db, 7, metric)[0])


@pytest.mark.parametrize("metric", ["ip", "l2"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_exact_path_finds_each_non_finite_database_row(metric, dtype):
    # the sweep's probe queries (all ones, all minus ones) see NaN, inf and -inf rows: a NaN passes
    # no threshold, so it is caught by the probes' running maximum
    q = RNG.uniform(0.1, 1.0, (40, 8)).astype(dtype)
    for row, values in [(0, [np.nan]), (9_150, [np.inf]), (20_010, [np.inf, -np.inf]), (17, [-np.inf])]:
        bad = RNG.standard_normal((20_011, 8)).astype(dtype)
        bad[row, :len(values)] = values
        with pytest.raises(ValueError, match=rf"database contain NaN or inf \(row {row}\)"):
            loom.knn.search(q, bad, 5, metric=metric, recall_target=1.0)
