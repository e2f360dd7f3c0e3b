"""`loom demo`, nearest-neighbour part: loom.knn.search against exact search in numpy, on
clustered random vectors (so the neighbours are meaningful), with the recall it reaches."""

from __future__ import annotations

import sys
import time
from typing import TextIO

import numpy as np


def clustered_vectors(rng: np.random.Generator, n: int, dim: int, clusters: int = 256) -> np.ndarray:
    """`n` float32 vectors drawn around `clusters` random centres."""
    centres = rng.standard_normal((clusters, dim)).astype(np.float32)
    return centres[rng.integers(0, clusters, n)] + 0.5 * rng.standard_normal((n, dim)).astype(np.float32)


def exact_l2(queries: np.ndarray, database: np.ndarray, k: int) -> np.ndarray:
    """Indices of the `k` nearest database vectors by L2 distance, nearest first (numpy)."""
    scores = (0.5 * (database * database).sum(1))[None, :] - queries @ database.T
    top = np.argpartition(scores, k - 1, axis=1)[:, :k]
    order = np.argsort(np.take_along_axis(scores, top, 1), axis=1, kind="stable")
    return np.take_along_axis(top, order, 1)


def run(out: TextIO = sys.stdout, n: int = 100_000, dim: int = 64, n_queries: int = 500, k: int = 10) -> None:
    import loom.knn
    rng = np.random.default_rng(0)
    database = clustered_vectors(rng, n, dim)
    queries = clustered_vectors(rng, n_queries, dim)
    loom.knn.search(queries[:8], database, k, metric="l2")  # first call: set-up outside the timing
    t0 = time.perf_counter()
    truth = exact_l2(queries, database, k)
    t_exact = time.perf_counter() - t0
    print(f"{n_queries} queries against {n:,} vectors of dimension {dim}, k={k}, L2 distance", file=out)
    for recall_target in (0.9, 0.99):
        t0 = time.perf_counter()
        _, found = loom.knn.search(queries, database, k, metric="l2", recall_target=recall_target)
        t_loom = time.perf_counter() - t0
        recall = np.mean([len(np.intersect1d(a, b)) / k for a, b in zip(found, truth)])
        print(f"  loom.knn.search(recall_target={recall_target}): {t_loom * 1e3:7.1f} ms, recall {recall:.3f}",
              file=out)
    print(f"  exact search in numpy (matmul + argpartition): {t_exact * 1e3:7.1f} ms", file=out)
    print("  (the score matrix is never stored: each tile's scores are reduced to per-bin maxima while hot)", file=out)
