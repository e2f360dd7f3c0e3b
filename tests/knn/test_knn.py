"""loom.knn: search against exact search and faiss, the Index (updates, persistence, crash safety,
corruption), and the errors."""

from __future__ import annotations

import os
import sys

import ml_dtypes
import numpy as np
import pytest
from crashing_file import CrashingFile

import loom.knn
from loom.knn import Index, IndexFileError

# float64 results and int64 indices are checked: 64-bit values on
pytestmark = pytest.mark.usefixtures("loom_x64")

RNG = np.random.default_rng(7)


def exact(queries, db, k, metric):
    q, x = queries.astype(np.float64), db.astype(np.float64)
    if metric == "ip":
        s = q @ x.T
    elif metric == "cos":
        s = (q / np.linalg.norm(q, axis=1, keepdims=True)) @ (x / np.linalg.norm(x, axis=1, keepdims=True)).T
    else:
        s = -((q * q).sum(1)[:, None] - 2 * q @ x.T + (x * x).sum(1)[None, :])
    idx = np.argsort(-s, axis=1, kind="stable")[:, :k]
    return idx, np.take_along_axis(s, idx, 1)


def recall(found, truth):
    return np.mean([len(set(a.tolist()) & set(b.tolist())) / len(b) for a, b in zip(found, truth)])


@pytest.mark.parametrize("metric", ["ip", "l2", "cos"])
def test_search_exact_at_recall_one_and_scores(metric):
    q = RNG.standard_normal((40, 24)).astype(np.float32)
    db = RNG.standard_normal((3000, 24)).astype(np.float32)
    scores, idx = loom.knn.search(q, db, 10, metric=metric, recall_target=1.0)
    want_idx, want = exact(q, db, 10, metric)
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_allclose(scores, -want if metric == "l2" else want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("metric", ["ip", "l2"])
def test_search_matches_faiss_recall(metric):
    faiss = pytest.importorskip("faiss")
    q = RNG.standard_normal((64, 32)).astype(np.float32)
    db = RNG.standard_normal((50_000, 32)).astype(np.float32)
    index = faiss.IndexFlatIP(32) if metric == "ip" else faiss.IndexFlatL2(32)
    index.add(db)
    fd, fi = index.search(q, 10)
    scores, idx = loom.knn.search(q, db, 10, metric=metric, recall_target=0.95)
    assert recall(idx, fi) >= 0.95
    # where loom found faiss's neighbour, the scores agree
    for row in range(len(q)):
        common = np.intersect1d(idx[row], fi[row])
        ours = {int(i): s for i, s in zip(idx[row], scores[row])}
        theirs = {int(i): s for i, s in zip(fi[row], fd[row])}
        for i in common:
            assert abs(ours[int(i)] - theirs[int(i)]) <= 1e-3 * max(1.0, abs(theirs[int(i)]))


def test_search_in_batches_with_progress(capsys):
    q = RNG.standard_normal((50, 8)).astype(np.float32)
    db = RNG.standard_normal((2000, 8)).astype(np.float32)
    whole = loom.knn.search(q, db, 5, recall_target=1.0)
    parts = loom.knn.search(q, db, 5, recall_target=1.0, batch_size=16, progress=True)
    np.testing.assert_array_equal(whole[1], parts[1])
    assert "50/50 queries" in capsys.readouterr().err


@pytest.mark.parametrize("metric", ["ip", "l2", "cos"])
def test_search_in_database_batches_and_from_a_memory_map(metric, tmp_path, monkeypatch, capsys):
    # The database in batches (one smaller than k), each swept once for every query batch, the
    # answers merged: exact at recall 1, recall >= the target below it; a memory-mapped database
    # goes through in batches of STREAM_BYTES by default; errors name rows of the whole database.
    q = RNG.standard_normal((37, 8)).astype(np.float32)
    db = RNG.standard_normal((5003, 8)).astype(np.float32)
    truth, truth_scores = exact(q, db, 10, metric)
    for batch in (5003, 2000, 1000, 4):
        scores, idx = loom.knn.search(q, db[:5003 if batch != 4 else 23], 10, metric=metric, recall_target=1.0,
                                      database_batch=batch, batch_size=16, progress=batch == 1000)
        want = truth if batch != 4 else exact(q, db[:23], 10, metric)[0]
        np.testing.assert_array_equal(idx, want)
    assert "database rows 5000-5003 of 5003" in capsys.readouterr().err
    np.testing.assert_allclose(loom.knn.search(q, db, 10, metric=metric, recall_target=1.0, database_batch=999)[0],
                               loom.knn.search(q, db, 10, metric=metric, recall_target=1.0)[0], rtol=1e-5, atol=1e-5)
    for target in (0.8, 0.95):
        _, approx = loom.knn.search(q, db, 10, metric=metric, recall_target=target, database_batch=1500)
        assert recall(approx, truth) >= target
    path = tmp_path / "db.npy"
    np.save(path, db)
    monkeypatch.setattr(sys.modules["loom.knn.search"], "STREAM_BYTES", 1000 * 8 * 4)  # batches of 1000 rows
    mapped = np.load(path, mmap_mode="r")
    np.testing.assert_array_equal(loom.knn.search(q, mapped, 10, metric=metric, recall_target=1.0)[1], truth)
    np.testing.assert_array_equal(loom.knn.search(q, mapped, 10, metric=metric)[1],
                                  loom.knn.search(q, db, 10, metric=metric, database_batch=1000)[1])
    bad = db.copy()
    bad[3456] = 0.0 if metric == "cos" else np.nan
    message = r"zero vector \(row 3456\)" if metric == "cos" else r"NaN or inf \(row 3456\)"
    for queries in (q, q[:0]):
        with pytest.raises(ValueError, match=message):
            loom.knn.search(queries, bad, 10, metric=metric, database_batch=1000)
    with pytest.raises(ValueError, match="database_batch must be a positive int"):
        loom.knn.search(q, db, 10, metric=metric, database_batch=0)


@pytest.mark.parametrize("call,error,message", [
    (lambda q, db: loom.knn.search(q, db, 0), ValueError, "k must be in"),
    (lambda q, db: loom.knn.search(q, db, 101), ValueError, "k must be in"),
    (lambda q, db: loom.knn.search(q, db, 2.5), TypeError, "k must be an int"),
    (lambda q, db: loom.knn.search(q, db, 3, metric="hamming"), ValueError, "metric must be one of"),
    (lambda q, db: loom.knn.search(q[:, :3], db, 3), ValueError, "queries have dimension 3"),
    (lambda q, db: loom.knn.search(q, np.where(np.arange(100)[:, None] == 42, np.nan, db), 3), ValueError,
     r"database contain NaN or inf \(row 42\)"),
    (lambda q, db: loom.knn.search(np.where(np.arange(5)[:, None] == 2, np.inf, q), db, 3), ValueError,
     r"queries contain NaN or inf \(row 2\)"),
    (lambda q, db: loom.knn.search(q, db[:0], 1), ValueError, "database is empty"),
    (lambda q, db: loom.knn.search(q, db, 3, recall_target=0.0), ValueError, "recall_target"),
    (lambda q, db: loom.knn.search(q, np.zeros_like(db), 3, metric="cos"), ValueError, "zero vector"),
])
def test_search_errors(call, error, message):
    q = RNG.standard_normal((5, 4)).astype(np.float32)
    db = RNG.standard_normal((100, 4)).astype(np.float32)
    with pytest.raises(error, match=message):
        call(q, db)


@pytest.mark.parametrize("metric", ["ip", "l2", "cos"])
@pytest.mark.parametrize("target", [0.9, 1.0])
def test_search_inside_jit_is_fused_and_matches_eager(metric, target):
    import loom
    q = RNG.standard_normal((40, 16)).astype(np.float32)
    db = RNG.standard_normal((5000, 16)).astype(np.float32)
    fn = loom.jit(lambda a, b: loom.knn.search(a, b, 7, metric=metric, recall_target=target))
    names = [op.name for op in fn.lower(q, db).compile().module.walk()]
    assert "knn.fused_score_top_k" in names and "stablehlo.dot_general" not in names
    scores, idx = (np.asarray(x) for x in fn(q, db))
    eager_scores, eager_idx = loom.knn.search(q, db, 7, metric=metric, recall_target=target)
    assert idx.dtype == np.int64 and scores.dtype == np.float32
    np.testing.assert_array_equal(idx, eager_idx)
    np.testing.assert_allclose(scores, eager_scores, rtol=1e-5, atol=1e-5)
    if target == 1.0:
        truth, truth_scores = exact(q, db, 7, metric)
        np.testing.assert_array_equal(idx, truth)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_vector_check_finds_each_kind_of_non_finite_value_and_accepts_huge_finite_rows(dtype):
    # The check screens with a matrix-vector product: a NaN, an inf, or +inf and -inf in one row
    # must each be found, and a finite row whose sum overflows must still be accepted.
    from loom.knn.search import check_vectors
    big = float(np.finfo(dtype).max) / 2
    db = np.full((300, 8), big, dtype=dtype)
    assert check_vectors(db, "database").shape == (300, 8)
    for row, values in [(0, [np.nan]), (150, [np.inf]), (299, [np.inf, -np.inf]), (17, [-np.inf])]:
        bad = RNG.standard_normal((300, 8)).astype(dtype)
        bad[row, :len(values)] = values
        with pytest.raises(ValueError, match=rf"database contain NaN or inf \(row {row}\)"):
            check_vectors(bad, "database")


@pytest.mark.parametrize("metric", ["ip", "l2"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_search_finds_each_non_finite_database_row_in_its_sweep(metric, dtype):
    # search checks the database in the sweep (probe queries of all ones and minus ones): each kind
    # of non-finite value must be found, also where every real query's score of the row is -inf
    # (all queries positive, the row holding -inf) and with the queries in batches.
    q = RNG.uniform(0.1, 1.0, (40, 8)).astype(dtype)
    for row, values in [(0, [np.nan]), (150, [np.inf]), (299, [np.inf, -np.inf]), (17, [-np.inf]), (5, [np.inf])]:
        bad = RNG.standard_normal((300, 8)).astype(dtype)
        bad[row, :len(values)] = values
        for batch in (None, 16):
            with pytest.raises(ValueError, match=rf"database contain NaN or inf \(row {row}\)"):
                loom.knn.search(q, bad, 5, metric=metric, batch_size=batch)


def test_search_accepts_a_finite_database_whose_row_sums_overflow():
    # The probe scores overflow (a false alarm the exact per-row check clears); the answer must be
    # the exact top-k of the true scores.
    big = float(np.finfo(np.float32).max) / 8
    db = (RNG.choice([-1.0, 1.0], (500, 64)) * big).astype(np.float32)
    db[:, :40] = big  # every row sums to at least 16 * big: the probes overflow
    q = RNG.uniform(-1e-3, 1e-3, (30, 64)).astype(np.float32)
    scores, idx = loom.knn.search(q, db, 5, recall_target=1.0)
    truth = np.argsort(-(q.astype(np.float64) @ db.astype(np.float64).T), axis=1, kind="stable")[:, :5]
    np.testing.assert_array_equal(idx, truth)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.float64])
def test_half_squared_norms_against_float64(dtype):
    # in the compute dtype: float32 for the low-precision types (their own rounding would move the
    # l2 scores), accurate to that type
    from loom.knn.search import half_squared_norms
    x = (RNG.standard_normal((1000, 37)) * 3).astype(dtype)
    h = half_squared_norms(x)
    wide = np.float64 if dtype == np.float64 else np.float32
    assert h.dtype == wide
    truth = 0.5 * (x.astype(np.float64) ** 2).sum(1)
    np.testing.assert_allclose(h.astype(np.float64), truth, rtol=8 * float(np.finfo(wide).eps))


@pytest.mark.parametrize("metric", ["ip", "l2", "cos"])
@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_low_precision_database_is_searched_exactly_without_a_float32_copy(metric, dtype):
    # The sweep widens each chunk of a float16 / bfloat16 database as it goes: the exact answer
    # on the stored values, with no float32 copy of the database (peak allocations well under the
    # 2x a copy would take).
    import tracemalloc
    db = RNG.standard_normal((200_000, 64)).astype(dtype)
    q = RNG.standard_normal((12, 64)).astype(dtype)
    loom.knn.search(q, db, 10, metric=metric)  # warm-up (the worker threads, imports)
    tracemalloc.start()
    try:
        loom.knn.search(q, db, 10, metric=metric)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < db.nbytes / 2 or metric == "cos"  # "cos" normalises a copy (of the stored type)
    scores, idx = loom.knn.search(q, db, 10, metric=metric, recall_target=1.0)
    assert scores.dtype == dtype and idx.dtype == np.int64
    order, sorted_scores = exact(q.astype(np.float64), db.astype(np.float64), db.shape[0], metric)
    true = np.empty_like(sorted_scores)
    np.put_along_axis(true, order, sorted_scores, 1)
    # Near-ties may swap (the sweep sums in float32): the true scores of the picks must be the
    # best true scores. For "cos" the normalised database is rounded to its dtype first.
    eps = float(ml_dtypes.finfo(dtype).eps)
    tol = 4 * eps if metric == "cos" else 1e-5
    picked = np.take_along_axis(true, idx, 1)
    np.testing.assert_allclose(picked, sorted_scores[:, :10], rtol=tol, atol=tol)
    shown = -picked if metric == "l2" else picked
    np.testing.assert_allclose(scores.astype(np.float64), shown, rtol=4 * eps, atol=4 * eps)
    bad = db.copy()
    bad[123_456, 3] = np.nan
    with pytest.raises(ValueError, match=r"database contain NaN or inf \(row 123456\)"):
        loom.knn.search(q, bad, 10, metric=metric)


@pytest.mark.parametrize("metric", ["ip", "l2", "cos"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_search_on_cpu_torch_tensors_gives_tensors(metric, dtype):
    # CPU tensors go through the CPU kernel on their own memory and come back as tensors: the
    # same answer as the search of the same values as numpy arrays.
    torch = pytest.importorskip("torch")
    q = torch.from_numpy(RNG.standard_normal((7, 24)).astype(np.float32)).to(getattr(torch, dtype))
    db = torch.from_numpy(RNG.standard_normal((3_000, 24)).astype(np.float32)).to(getattr(torch, dtype))
    s, i = loom.knn.search(q, db, 4, metric=metric, batch_size=3)

    def array(t):
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16) if t.dtype == torch.bfloat16 else t.numpy()

    want_s, want_i = loom.knn.search(array(q), array(db), 4, metric=metric, batch_size=3)
    assert isinstance(s, torch.Tensor) and s.dtype == getattr(torch, dtype) and i.dtype == torch.int64
    np.testing.assert_array_equal(i.numpy(), want_i)
    np.testing.assert_array_equal(array(s), want_s)
    # a numpy database with tensor queries: a CPU tensor; a 1-D query is one vector
    np.testing.assert_array_equal(loom.knn.search(q[0], array(db), 4, metric=metric)[1].numpy(), want_i[:1])
    bad = db.clone()
    bad[2_345, 1] = float("nan")
    with pytest.raises(ValueError, match=r"database contain NaN or inf \(row 2345\)"):
        loom.knn.search(q, bad, 4, metric=metric)
    with pytest.raises(ValueError, match="queries have dimension 23, but the index/database has dimension 24"):
        loom.knn.search(q[:, :23], db, 4, metric=metric)
    with pytest.raises(ValueError, match=r"k must be in \[1, 3000\]"):
        loom.knn.search(q, db, 3_001, metric=metric)
    with pytest.raises(ValueError, match=r"database must be a 2-D array .* shape \(3000, 24, 1\)"):
        loom.knn.search(q, db[..., None], 4, metric=metric)
    index = Index(24, metric, dtype=getattr(np, dtype, None) or ml_dtypes.bfloat16)
    index.add(array(db), ids=np.arange(3_000) + 100)
    s, i = index.search(q, 4)
    want_s, want_i = index.search(array(q), 4)
    assert isinstance(s, torch.Tensor) and i.dtype == torch.int64
    np.testing.assert_array_equal(i.numpy(), want_i)
    np.testing.assert_array_equal(array(s), want_s)
    with pytest.raises(ValueError, match="queries have dimension 23, but the index/database has dimension 24"):
        index.search(q[:, :23], 4)


# Index --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("metric", ["ip", "l2", "cos"])
def test_index_add_remove_search_against_exact(metric):
    db = RNG.standard_normal((4000, 16)).astype(np.float32)
    q = RNG.standard_normal((30, 16)).astype(np.float32)
    index = Index(16, metric)
    first = index.add(db[:2500])
    second = index.add(db[2500:], ids=np.arange(10_000, 11_500))
    np.testing.assert_array_equal(first, np.arange(2500))
    np.testing.assert_array_equal(second, np.arange(10_000, 11_500))
    removed = np.concatenate([np.arange(0, 2500, 3), np.arange(10_000, 11_500, 5)])
    index.remove(removed)
    all_ids = np.concatenate([first, second])
    keep = ~np.isin(all_ids, removed)
    assert len(index) == keep.sum()
    scores, ids = index.search(q, 10, recall_target=1.0)
    want_rows, _ = exact(q, db[keep], 10, metric)
    np.testing.assert_array_equal(ids, all_ids[keep][want_rows])
    _, approx = index.search(q, 10, recall_target=0.9)
    assert recall(approx, ids) >= 0.9
    assert not np.isin(ids, removed).any()
    # in database batches, each swept once for all the queries and merged: the same exact answer
    np.testing.assert_array_equal(index.search(q, 10, recall_target=1.0, database_batch=700)[1], ids)
    assert recall(index.search(q, 10, recall_target=0.9, database_batch=700)[1], ids) >= 0.9
    with pytest.raises(ValueError, match="database_batch must be a positive int, but got 0"):
        index.search(q, 10, database_batch=0)


@pytest.mark.parametrize("metric", ["ip", "l2", "cos"])
def test_index_random_updates_against_a_dictionary(metric, tmp_path):
    """Additions (default ids, ids below and between the live ones, single vectors), removals
    (one, many, nearly all, including rows at the end of storage) and a save/load in between:
    after each step the index holds exactly the model's vectors under their ids, and an exact
    search returns the model's exact answer."""
    rng = np.random.default_rng(3)
    dim = 8
    index = Index(dim, metric)
    model: dict[int, np.ndarray] = {}
    used = set()
    for step in range(120):
        action = rng.choice(["add", "add_ids", "remove", "remove_many"], p=[0.3, 0.3, 0.25, 0.15])
        if step == 60:
            index.save(tmp_path / "mid.loomknn")
            index = Index.load(tmp_path / "mid.loomknn")
        if action.startswith("add") or len(model) < 5:
            n = int(rng.choice([1, 3, 40, 300]))
            x = rng.standard_normal((n, dim)).astype(np.float32)
            if action == "add_ids":
                ids = rng.choice(np.setdiff1d(np.arange(5000), list(used)), n, replace=False)
                if n == 1 and rng.random() < 0.5:
                    ids, x = int(ids[0]), x[0]  # one vector, a scalar id
                got = index.add(x, ids=ids)
            else:
                got = index.add(x)
            for i, v in zip(np.atleast_1d(got).tolist(), np.atleast_2d(x)):
                model[i] = v / np.linalg.norm(v) if metric == "cos" else v
                used.add(i)
        else:
            live = np.array(sorted(model))
            count = 1 if action == "remove" else int(rng.integers(1, len(live)))
            gone = rng.choice(live, count, replace=False)
            index.remove(gone)
            for i in gone.tolist():
                del model[i]
        assert len(index) == len(model)
        ids, vectors = index.ids, index.vectors
        assert sorted(ids.tolist()) == sorted(model)
        np.testing.assert_allclose(vectors, np.array([model[i] for i in ids.tolist()]), rtol=1e-6)
        if step % 10 == 9:
            q = rng.standard_normal((5, dim)).astype(np.float32)
            k = min(5, len(model))
            _, found = index.search(q, k, recall_target=1.0)
            keys = np.array(sorted(model))
            want, _ = exact(q, np.array([model[i] for i in keys.tolist()]), k, metric)
            np.testing.assert_array_equal(found, keys[want])
    with pytest.raises(KeyError, match="unknown ids"):
        index.remove(max(used) + 1)


def test_index_add_and_remove_cost_what_they_touch():
    """An update moves only the rows it adds or frees (the rest stay in place, nothing is
    reallocated within capacity): the stored vectors' buffer is the same object before and after."""
    index = Index(4, "l2")
    index.add(RNG.standard_normal((1000, 4)).astype(np.float32))
    index.add(RNG.standard_normal((10, 4)).astype(np.float32))  # capacity grows once
    buffer = index._vectors
    before = index.vectors
    added = RNG.standard_normal((5, 4)).astype(np.float32)
    index.add(added)
    index.remove([3, 500])  # the last two rows move into rows 3 and 500
    assert index._vectors is buffer
    after = index.vectors
    np.testing.assert_array_equal(after[:3], before[:3])
    np.testing.assert_array_equal(after[4:500], before[4:500])
    np.testing.assert_array_equal(after[1010:], added[:3])
    assert index.ids[[3, 500]].tolist() == [1013, 1014]
    np.testing.assert_array_equal(after[[3, 500]], added[3:])
    _, found = index.search(added[3:], 1, recall_target=1.0)  # found at their new rows, under their ids
    assert found[:, 0].tolist() == [1013, 1014]


def test_index_errors():
    index = Index(8, "l2")
    with pytest.raises(ValueError, match="index is empty"):
        index.search(np.zeros((1, 8), np.float32), 1)
    with pytest.raises(ValueError, match="vectors have dimension 7"):
        index.add(np.zeros((3, 7), np.float32))
    with pytest.raises(ValueError, match=r"vectors contain NaN or inf \(row 1\)"):
        index.add(np.array([[0.0] * 8, [np.nan] * 8], np.float32))
    index.add(RNG.standard_normal((20, 8)).astype(np.float32))
    with pytest.raises(ValueError, match="k must be in"):
        index.search(np.zeros((1, 8), np.float32), 21)
    with pytest.raises(ValueError, match="k must be in"):
        index.search(np.zeros((1, 8), np.float32), -1)
    with pytest.raises(ValueError, match="queries have dimension 9"):
        index.search(np.zeros((1, 9), np.float32), 1)
    with pytest.raises(KeyError, match=r"unknown ids: \[99\]"):
        index.remove([3, 99])
    assert len(index) == 20  # nothing removed by the failed call
    with pytest.raises(ValueError, match="already in the index"):
        index.add(np.zeros((1, 8), np.float32), ids=[5])
    with pytest.raises(ValueError, match="duplicates"):
        index.add(np.zeros((2, 8), np.float32), ids=[100, 100])
    with pytest.raises(ValueError, match="metric must be one of"):
        Index(8, "manhattan")
    with pytest.raises(ValueError, match="dim must be a positive int"):
        Index(0)
    for dtype in ("float8", np.int32):
        with pytest.raises(TypeError, match="dtype must be one of float16, bfloat16, float32, float64"):
            Index(8, dtype=dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, ml_dtypes.bfloat16, "bfloat16"])
def test_save_load_round_trip(tmp_path, dtype):
    index = Index(6, "cos", dtype)
    index.add(RNG.standard_normal((50, 6)), ids=np.arange(100, 150))
    index.remove([101, 120])
    path = tmp_path / "a.loomknn"
    index.save(path)
    loaded = Index.load(path)
    assert (loaded.dim, loaded.metric, loaded.dtype, len(loaded)) == (6, "cos", np.dtype(dtype), 48)
    np.testing.assert_array_equal(loaded.ids, index.ids)
    np.testing.assert_array_equal(loaded.vectors, index.vectors)
    q = RNG.standard_normal((4, 6))
    np.testing.assert_array_equal(loaded.search(q, 5)[1], index.search(q, 5)[1])
    assert loaded.add(np.ones((1, 6)))[0] == 150  # the id counter survives
    assert [p.name for p in tmp_path.iterdir()] == ["a.loomknn"]  # no temporary file left


def test_crash_during_save_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "db.loomknn"
    old = Index(4)
    old.add(np.eye(4, dtype=np.float32))
    old.save(path)
    before = path.read_bytes()
    new = Index(4)
    new.add(RNG.standard_normal((1000, 4)).astype(np.float32))

    real_fdopen = os.fdopen

    monkeypatch.setattr(os, "fdopen", lambda fd, mode: CrashingFile(real_fdopen(fd, mode)))
    with pytest.raises(SystemExit):
        new.save(path)
    monkeypatch.setattr(os, "fdopen", real_fdopen)
    assert path.read_bytes() == before
    np.testing.assert_array_equal(Index.load(path).vectors, np.eye(4, dtype=np.float32))

    # a crash after the data is written but before the rename: still the old file
    def no_replace(src, dst):
        raise SystemExit("simulated crash before rename")

    monkeypatch.setattr(os, "replace", no_replace)
    with pytest.raises(SystemExit):
        new.save(path)
    assert path.read_bytes() == before


def test_corrupted_files_are_rejected(tmp_path):
    path = tmp_path / "x.loomknn"
    index = Index(3, "l2")
    index.add(RNG.standard_normal((10, 3)).astype(np.float32))
    index.save(path)
    data = bytearray(path.read_bytes())
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x40
    cases = {
        "flip.loomknn": (bytes(flipped), "checksum mismatch"),
        "short.loomknn": (bytes(data[:-7]), "checksum mismatch"),
        "foreign.loomknn": (b"PK\x03\x04" + bytes(data[4:]), "bad magic"),
        "version.loomknn": (bytes(data[:8]) + (99).to_bytes(4, "little") + bytes(data[12:]), "version 99"),
    }
    for name, (blob, message) in cases.items():
        bad = tmp_path / name
        bad.write_bytes(blob)
        with pytest.raises(IndexFileError, match=message) as info:
            Index.load(bad)
        assert name in str(info.value)


@pytest.mark.parametrize("metric", ["ip", "l2", "cos"])
def test_load_with_mmap_maps_the_file_and_copies_on_first_update(tmp_path, metric, monkeypatch):
    import hashlib
    import tracemalloc
    db = RNG.standard_normal((20_000, 64)).astype(np.float32)
    q = RNG.standard_normal((9, 64)).astype(np.float32)
    index = Index(64, metric)
    index.add(db, ids=np.arange(20_000) * 3)
    index.remove(np.arange(0, 3_000, 3))
    path = tmp_path / "big.loomknn"
    index.save(path)
    header_len = int.from_bytes(path.read_bytes()[12:16], "little")
    assert (16 + header_len) % 64 == 0  # the arrays start aligned, as mapping needs
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    # the vectors stay in the file: memory for the sorted ids (and the l2 norms), and the
    # checksum's pieces (64 MiB, here made 256 KiB), only
    monkeypatch.setattr(sys.modules["loom.knn.index"], "_PIECE", 1 << 18)
    for verify in (True, False):
        tracemalloc.start()
        try:
            mapped = Index.load(path, mmap=True, verify=verify)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < db.nbytes / 4, verify
    assert isinstance(mapped._vectors, np.memmap) and len(mapped) == len(index)
    for target in (1.0, 0.9):
        for got, want in zip(mapped.search(q, 10, target), index.search(q, 10, target)):
            np.testing.assert_array_equal(got, want)
    # updates copy the index into memory; the file stays as it was
    for copy in (mapped, Index.load(path, mmap=True)):
        if copy is mapped:
            copy.remove([3_000, 3_003])
            index.remove([3_000, 3_003])
        else:
            copy.add(np.ones((2, 64)), ids=[1, 2])
        assert not isinstance(copy._vectors, np.memmap)
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    np.testing.assert_array_equal(mapped.search(q, 10, 1.0)[1], index.search(q, 10, 1.0)[1])
    mapped = Index.load(path, mmap=True)
    mapped.save(path)  # over the file it maps
    np.testing.assert_array_equal(Index.load(path).vectors, Index.load(path, mmap=True).vectors)
    # a corrupted vector: found by the checksum, unless verify=False (which trusts the file)
    data = bytearray(path.read_bytes())
    data[-100] ^= 0x40
    path.write_bytes(bytes(data))
    with pytest.raises(IndexFileError, match="checksum mismatch"):
        Index.load(path, mmap=True)
    assert len(Index.load(path, mmap=True, verify=False)) == len(mapped)
    assert len(Index.load(path, verify=False)) == len(mapped)


def test_files_with_unaligned_arrays_still_load(tmp_path):
    # Files written before the header was padded: the arrays may start anywhere; `mmap=True`
    # reads them into memory instead of mapping them unaligned.
    import hashlib
    import json
    import struct
    vectors = RNG.standard_normal((5, 3)).astype(np.float32)
    ids = np.array([7, 1, 9, 4, 2], np.int64)
    header = json.dumps({"count": 5, "dim": 3, "dtype": "float32", "metric": "ip", "next_id": 10},
                        sort_keys=True).encode()
    assert (16 + len(header)) % 8 != 0
    body = b"LOOMKNN\0" + struct.pack("<II", 1, len(header)) + header + ids.tobytes() + vectors.tobytes()
    path = tmp_path / "old.loomknn"
    path.write_bytes(body + hashlib.sha256(body).digest())
    for loaded in (Index.load(path), Index.load(path, mmap=True)):
        assert not isinstance(loaded._vectors, np.memmap)
        np.testing.assert_array_equal(loaded.ids, ids)
        np.testing.assert_array_equal(loaded.vectors, vectors)
        assert loaded.add(np.ones(3))[0] == 10


def test_float16_widening_equals_numpys_cast_for_every_value():
    # The sweep widens float16 chunks with bit operations: every one of the 65536 float16 values
    # (zeros, subnormals, normals, infinities, NaNs of every payload) must come out bit for bit as
    # numpy's cast gives it.
    from loom.backend.knn_kernels import widen_float16
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).reshape(512, 128)
    got = widen_float16(every, np.empty(every.shape, np.float32), np.empty(every.shape, np.uint32))
    np.testing.assert_array_equal(got.view(np.uint32), every.astype(np.float32).view(np.uint32))
