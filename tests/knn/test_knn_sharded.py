"""loom.knn.search over a database sharded by rows over a mesh (loom.knn.sharded): the single-device
search as the oracle at recall_target=1.0, recall against an exact top-k otherwise, padding of
uneven shards, sharded and replicated queries, and the errors naming the shard and row."""

from __future__ import annotations

import numpy as np
import pytest

import loom
import loom.knn
from loom.devices import Device, ShardedArray
from loom.sharding import NamedSharding, P, make_mesh

DEVICES = [Device("cpu", i, "numpy") for i in range(8)]  # what LOOM_NUM_CPU_DEVICES=8 lists
RNG = np.random.default_rng(11)


def mesh_of(shape, names):
    return make_mesh(shape, names, devices=DEVICES)


def sharded(x, mesh, spec):
    """`x` split by `spec` over `mesh`, uneven sizes allowed (the last shards shorter or empty, as a
    partitioned program returns them; device_put, as JAX's, takes only even ones)."""
    s = NamedSharding(mesh, spec)
    indices = list(s.devices_indices_map(x.shape).values())
    return ShardedArray.from_shard_data(x.shape, s, indices, [np.array(x[i]) for i in indices], x.dtype)


def exact_ids(q, db, k, metric):
    q, x = q.astype(np.float64), db.astype(np.float64)
    if metric == "cos":
        q, x = q / np.linalg.norm(q, axis=1, keepdims=True), x / np.linalg.norm(x, axis=1, keepdims=True)
    s = -((x * x).sum(1)[None, :] - 2 * q @ x.T) if metric == "l2" else q @ x.T
    return np.argsort(-s, axis=1, kind="stable")[:, :k]


@pytest.mark.parametrize("metric", ["ip", "l2", "cos"])
@pytest.mark.parametrize("shards", [1, 2, 4, 8])
def test_exact_search_equals_the_single_device_search(shards, metric):
    db = RNG.standard_normal((1003, 16)).astype(np.float32)  # uneven: 1003 rows over 2, 4, 8 shards
    q = RNG.standard_normal((37, 16)).astype(np.float32)
    x = sharded(db, mesh_of((shards,), ("x",)), P("x", None))
    scores, ids = loom.knn.search(q, x, 7, metric=metric, recall_target=1.0)
    want_scores, want_ids = loom.knn.search(q, db, 7, metric=metric, recall_target=1.0)
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_array_equal(scores, want_scores)
    assert ids.dtype == np.int64 and scores.dtype == np.float32


@pytest.mark.parametrize("shards", [1, 2, 4, 8])
def test_recall_over_the_whole_database_reaches_the_target(shards):
    db = RNG.standard_normal((20000, 16)).astype(np.float32)
    q = RNG.standard_normal((64, 16)).astype(np.float32)
    x = loom.device_put(db, NamedSharding(mesh_of((shards,), ("x",)), P("x", None)))
    scores, ids = loom.knn.search(q, x, 10, recall_target=0.9)
    truth = exact_ids(q, db, 10, "ip")
    found = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids.tolist(), truth.tolist())])
    assert found >= 0.9, found
    # the scores are those of the rows returned, best first
    np.testing.assert_allclose(scores, np.einsum("qd,qkd->qk", q, db[ids]), rtol=1e-5, atol=1e-5)
    assert (np.diff(scores, axis=1) <= 0).all()


@pytest.mark.parametrize("rows, shards", [(9, 4), (5, 8), (30, 8)])
def test_padding_rows_are_never_returned(rows, shards):
    # every score is negative, so the zero rows padding the short (or empty) shards would win
    db = -np.abs(RNG.standard_normal((rows, 8))).astype(np.float32) - 0.1
    q = np.abs(RNG.standard_normal((6, 8))).astype(np.float32)
    x = sharded(db, mesh_of((shards,), ("x",)), P("x", None))
    scores, ids = loom.knn.search(q, x, rows, recall_target=1.0)  # k = the whole database
    assert sorted(ids[0].tolist()) == list(range(rows))
    np.testing.assert_array_equal(ids, exact_ids(q, db, rows, "ip"))
    assert (scores < 0).all()


@pytest.mark.parametrize("mesh_shape, names, q_spec", [
    ((4,), ("x",), P("x", None)),                # queries split over the database's axis
    ((2, 4), ("d", "x"), P("d", None)),          # data parallel: queries over "d", database over "x"
    ((2, 4), ("d", "x"), P(("d", "x"), None)),
    ((2, 4), ("d", "x"), P(("x", "d"), None)),
    ((2, 4), ("d", "x"), P()),                   # replicated
])
def test_sharded_and_replicated_queries(mesh_shape, names, q_spec):
    mesh = mesh_of(mesh_shape, names)
    db = RNG.standard_normal((1000, 16)).astype(np.float32)
    q = RNG.standard_normal((40, 16)).astype(np.float32)
    x = loom.device_put(db, NamedSharding(mesh, P("x", None)))
    qs = loom.device_put(q, NamedSharding(mesh, q_spec))
    for recall_target in (1.0, 0.9):
        scores, ids = loom.knn.search(qs, x, 5, metric="l2", recall_target=recall_target)
        want_scores, want_ids = loom.knn.search(q, x, 5, metric="l2", recall_target=recall_target)
        np.testing.assert_array_equal(ids, want_ids)
        np.testing.assert_array_equal(scores, want_scores)
    np.testing.assert_array_equal(ids, loom.knn.search(q, db, 5, metric="l2", recall_target=1.0)[1])


def test_float16_database():
    db = RNG.standard_normal((500, 16)).astype(np.float16)
    q = RNG.standard_normal((9, 16)).astype(np.float16)
    x = sharded(db, mesh_of((4,), ("x",)), P("x", None))
    scores, ids = loom.knn.search(q, x, 5, recall_target=1.0)
    want_scores, want_ids = loom.knn.search(q, db, 5, recall_target=1.0)
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_array_equal(scores, want_scores)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_bad_input_names_the_shard_and_row(bad):
    db = RNG.standard_normal((40, 8)).astype(np.float32)
    db[23, 3] = bad
    x = sharded(db, mesh_of((4,), ("x",)), P("x", None))
    q = RNG.standard_normal((3, 8)).astype(np.float32)
    with pytest.raises(ValueError, match=r"database shard 2 contains NaN or inf in its row 3 \(database row 23\)"):
        loom.knn.search(q, x, 5)
    good = sharded(np.ones((40, 8), np.float32), mesh_of((4,), ("x",)), P("x", None))
    with pytest.raises(ValueError, match=r"queries have dimension 7, but the index/database has dimension 8"):
        loom.knn.search(q[:, :7], good, 5)
    with pytest.raises(ValueError, match=r"k must be in \[1, 40\]"):
        loom.knn.search(q, good, 41)
    q[1, 2] = bad
    with pytest.raises(ValueError, match=r"queries contain NaN or inf \(row 1\)"):
        loom.knn.search(q, good, 5)


def test_the_search_is_one_partitioned_program():
    from loom.knn.sharded import ShardedDatabase, _program
    mesh = mesh_of((4,), ("x",))
    db = ShardedDatabase(mesh, ("x",), [RNG.standard_normal((10, 8)).astype(np.float32)] * 4, "ip")
    db.search(RNG.standard_normal((3, 8)).astype(np.float32), 2, 1.0)
    exe = _program(mesh, ("x",), (), 3, 8, 40, "float32", 2, 2, 1.0)
    assert type(exe).__name__ == "MeshExecutable"
    ops = [op.name for op in exe.module.walk()]
    assert ops.count("knn.fused_score_top_k") == 1 and ops.count("stablehlo.all_gather") == 2
    assert "chlo.top_k" in ops and "stablehlo.dot_general" not in ops
