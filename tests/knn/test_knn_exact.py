"""Exact search (recall_target=1.0) over databases large enough for the kernel's exact path (a
sweep with fewer bins, then the chosen bins rescored whole: loom.backend.knn_kernels): against
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
    # every element its own bin (k=1 is the top-1 reduction instead), swept with fewer
    assert num_bins(n, 2, k, 1.0) == n and knn_kernels.EXACT_SWEEP_MIN <= n and knn_kernels.exact_sweep_bins(n, k) < n
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


def test_ties_filling_many_bins_are_all_rescored():
    # every row equal: all bins tie at the threshold, every one is rescored, the first k rows win
    db = np.ones((9000, 8), np.float32)
    q = np.ones((3, 8), np.float32)
    _, ids = loom.knn.search(q, db, 5, recall_target=1.0)
    np.testing.assert_array_equal(ids, np.tile(np.arange(5), (3, 1)))
