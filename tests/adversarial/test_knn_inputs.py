"""Random inputs to `knn.search` and `Index`: NaN and inf, zero vectors (which have no direction
for "cos"), k out of [1, n], empty databases, wrong dimensions. A search either gives the exact
top-k of numpy (recall_target=1.0) or raises a ValueError / TypeError that names what is wrong.

A few dozen derandomized examples by default; under `make fuzz` one per 50 of its mutants.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from loom import knn

SEED = int(os.environ.get("LOOM_FUZZ_SEED", "0"))
EXAMPLES = max(60, int(os.environ.get("LOOM_FUZZ_EXAMPLES", "0")) // 50)


def exact(q: np.ndarray, db: np.ndarray, k: int, metric: str) -> tuple[np.ndarray, np.ndarray]:
    q64, d64 = q.astype(np.float64), db.astype(np.float64)
    if metric == "cos":
        q64, d64 = q64 / np.linalg.norm(q64, axis=1, keepdims=True), d64 / np.linalg.norm(d64, axis=1, keepdims=True)
    scores = ((q64[:, None] - d64[None]) ** 2).sum(-1) if metric == "l2" else q64 @ d64.T
    order = np.argsort(scores if metric == "l2" else -scores, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(scores, order, 1), order


def vectors(rng: np.random.Generator, n: int, dim: int, spoil: str) -> np.ndarray:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    if n and spoil != "none":
        x[rng.integers(n)] = {"nan": np.nan, "inf": np.inf, "zero": 0.0}[spoil]
    return x


def problems(q: np.ndarray, db: np.ndarray, k: int, metric: str, spoil_q: str, spoil_db: str) -> list[str]:
    """The words some error about these inputs must contain (none: the search is valid)."""
    found = []
    if db.shape[0] == 0:
        found.append("empty")
    if q.shape[1] != db.shape[1]:
        found.append("dimension")
    if not 1 <= k <= db.shape[0]:
        found.append("k must be")
    for name, x, spoil in (("queries", q, spoil_q), ("database", db, spoil_db), ("vectors", db, spoil_db)):
        if x.shape[0] and spoil in ("nan", "inf"):
            found.append(f"{name} contain NaN or inf")
        if x.shape[0] and spoil == "zero" and metric == "cos":
            found.append(f"{name} contain a zero vector")
    return found


@settings(max_examples=EXAMPLES, derandomize=SEED == 0, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(st.integers(0, 1 << 30), st.sampled_from(["ip", "l2", "cos"]), st.integers(0, 6), st.integers(0, 30),
       st.sampled_from([4, 4, 4, 3]), st.integers(-1, 33), st.sampled_from(["none", "none", "nan", "inf", "zero"]),
       st.sampled_from(["none", "none", "nan", "inf", "zero"]), st.booleans())
def _one(seed_: int, metric: str, nq: int, n: int, q_dim: int, k: int, spoil_q: str, spoil_db: str,
         use_index: bool) -> None:
    rng = np.random.default_rng(seed_)
    q, db = vectors(rng, nq, q_dim, spoil_q), vectors(rng, n, 4, spoil_db)
    expected = problems(q, db, k, metric, spoil_q, spoil_db)

    def run() -> Any:
        if not use_index:
            return knn.search(q, db, k, metric=metric, recall_target=1.0)
        index = knn.Index(4, metric)
        if n:
            index.add(db)
        scores, ids = index.search(q, k, recall_target=1.0)
        return scores, ids

    try:
        scores, ids = run()
    except (ValueError, TypeError) as e:
        assert expected, f"refused a valid search: {e}"
        assert any(words in str(e) for words in expected), (str(e), expected)
        return
    assert not expected, f"ran despite {expected}"
    want_scores, want_ids = exact(q, db, k, metric)
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_allclose(scores, want_scores, rtol=1e-5, atol=1e-5)


def test_knn_inputs_give_exact_results_or_clear_errors() -> None:
    (seed(SEED)(_one) if SEED else _one)()
