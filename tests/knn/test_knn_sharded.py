"""loom.knn.search over a database sharded by rows over a mesh (loom.knn.sharded): the single-device
search as the oracle at recall_target=1.0, recall against an exact top-k otherwise, padding of
uneven shards, sharded and replicated queries (in one process and over gloo processes), and the
errors naming the shard and row."""

from __future__ import annotations

import numpy as np
import pytest
from crashing_file import CrashingFile

import loom
import loom.knn
from loom.runtime.devices import Device, ShardedArray
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


def assert_scores_agree(scores, want, q, db):
    """Two float32 evaluations of the same scores, by GEMMs of other shapes (shards, batches), agree
    to the rounding bound of a d-term dot product: |difference| <= 2 d eps (|q| R + R^2), R the
    largest row norm of the database (the l2 score also holds |x|^2 / 2). A ULP count is no bound
    here: the l2 score cancels, and BLAS kernels differ by machine in how they block the sums."""
    d = q.shape[-1]
    eps = np.finfo(np.result_type(scores, np.float32)).eps
    r = np.linalg.norm(np.asarray(db, np.float64), axis=-1).max()
    bound = 2 * d * eps * (np.linalg.norm(np.asarray(q, np.float64), axis=-1)[:, None] * r + r * r)
    diff = np.abs(np.asarray(scores, np.float64) - np.asarray(want, np.float64))
    assert np.all(diff <= bound), f"scores differ by {diff.max():.3g}, over the bound {bound.min():.3g}"


def database_rows(index):
    """The vectors a flat or sharded index holds."""
    if isinstance(index, loom.knn.Index):
        return index.vectors
    return np.concatenate([index.shard(i).vectors for i in range(index.num_shards)])


@pytest.mark.parametrize("metric", ["ip", "l2", "cos"])
@pytest.mark.parametrize("shards", [1, 2, 4, 8])
def test_exact_search_equals_the_single_device_search(shards, metric):
    db = RNG.standard_normal((1003, 16)).astype(np.float32)  # uneven: 1003 rows over 2, 4, 8 shards
    q = RNG.standard_normal((37, 16)).astype(np.float32)
    x = sharded(db, mesh_of((shards,), ("x",)), P("x", None))
    scores, ids = loom.knn.search(q, x, 7, metric=metric, recall_target=1.0)
    want_scores, want_ids = loom.knn.search(q, db, 7, metric=metric, recall_target=1.0)
    np.testing.assert_array_equal(ids, want_ids)
    assert_scores_agree(scores, want_scores, q, db)
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
        assert_scores_agree(scores, want_scores, q, db)
    np.testing.assert_array_equal(ids, loom.knn.search(q, db, 5, metric="l2", recall_target=1.0)[1])


def test_float16_database():
    db = RNG.standard_normal((500, 16)).astype(np.float16)
    q = RNG.standard_normal((9, 16)).astype(np.float16)
    x = sharded(db, mesh_of((4,), ("x",)), P("x", None))
    scores, ids = loom.knn.search(q, x, 5, recall_target=1.0)
    want_scores, want_ids = loom.knn.search(q, db, 5, recall_target=1.0)
    np.testing.assert_array_equal(ids, want_ids)
    assert_scores_agree(scores, want_scores, q, db)


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
    from loom.knn.sharded import ShardedDatabase, search_program
    mesh = mesh_of((4,), ("x",))
    db = ShardedDatabase(mesh, ("x",), [RNG.standard_normal((10, 8)).astype(np.float32)] * 4, "ip")
    db.search(RNG.standard_normal((3, 8)).astype(np.float32), 2, 1.0)
    exe = search_program(mesh, ("x",), (), 3, 8, 40, "float32", "float32", 2, 2, 1.0)
    assert type(exe).__name__ == "MeshExecutable"
    ops = [op.name for op in exe.module.walk()]
    assert ops.count("knn.fused_score_top_k") == 1 and ops.count("stablehlo.all_gather") == 2
    assert "chlo.top_k" in ops and "stablehlo.dot_general" not in ops


# The sharded Index -----------------------------------------------------------------------------------

def index_pair(metric, shards=4, n=1001, dim=16):
    """A ShardedIndex and a flat Index with the same additions and removals."""
    sharded_index = loom.knn.ShardedIndex(dim, mesh_of((shards,), ("x",)), metric=metric)
    flat = loom.knn.Index(dim, metric)
    x = RNG.standard_normal((n, dim)).astype(np.float32)
    for a, b in ((0, 500), (500, 503), (503, n)):
        np.testing.assert_array_equal(sharded_index.add(x[a:b]), flat.add(x[a:b]))
    sharded_index.remove(np.arange(0, n, 7))
    flat.remove(np.arange(0, n, 7))
    return sharded_index, flat


def assert_same_search(a, b, q, k, recall_target=1.0):
    scores, ids = a.search(q, k, recall_target)
    want_scores, want_ids = b.search(q, k, recall_target)
    np.testing.assert_array_equal(ids, want_ids)
    assert_scores_agree(scores, want_scores, q, database_rows(b))


@pytest.mark.parametrize("metric", ["ip", "l2", "cos"])
def test_sharded_index_searches_as_the_flat_index(metric):
    index, flat = index_pair(metric)
    sizes = index.shard_sizes()
    assert sum(sizes) == len(flat) == 858 and max(sizes) - min(sizes) <= 1  # routed by size
    assert_same_search(index, flat, RNG.standard_normal((20, 16)).astype(np.float32), 10)
    # approximate: the recall of the flat index's exact answer
    q = RNG.standard_normal((30, 16)).astype(np.float32)
    _, ids = index.search(q, 10, recall_target=0.9)
    _, truth = flat.search(q, 10, recall_target=1.0)
    assert np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids.tolist(), truth.tolist())]) >= 0.9


def test_sharded_index_routes_additions_to_the_smallest_shards():
    index = loom.knn.ShardedIndex(4, mesh_of((4,), ("x",)))
    index.add(np.ones((10, 4)))
    assert index.shard_sizes() == [3, 3, 2, 2]
    index.remove(np.arange(3))  # all in shard 0
    assert index.shard_sizes() == [0, 3, 2, 2]
    index.add(np.ones((4, 4)))
    assert index.shard_sizes() == [3, 3, 3, 2]  # shard 0 up to 2, then one more each to the smallest
    with pytest.raises(KeyError, match=r"unknown ids: \[99\]"):
        index.remove([5, 99])
    assert len(index) == 11  # nothing removed
    with pytest.raises(ValueError, match=r"ids already in the index \(shard \d\): \[5\]"):
        index.add(np.ones((2, 4)), ids=[100, 5])
    with pytest.raises(ValueError, match="queries have dimension 3, but the index/database has dimension 4"):
        index.search(np.ones((1, 3)), 1)
    with pytest.raises(ValueError, match=r"k must be in \[1, 11\]"):
        index.search(np.ones((1, 4)), 12)
    with pytest.raises(ValueError, match=r"vectors contain NaN or inf \(row 1\)"):
        index.add(np.array([[1, 2, 3, 4], [np.nan, 0, 0, 0]]))


@pytest.mark.parametrize("metric", ["ip", "l2", "cos"])
def test_saved_index_reopens_on_another_shard_count(tmp_path, metric):
    index, flat = index_pair(metric)
    path = tmp_path / "db"
    index.save(path)
    q = RNG.standard_normal((20, 16)).astype(np.float32)
    for shards in (4, 1, 3, 8):
        reopened = loom.knn.ShardedIndex.load(path, mesh_of((shards,), ("x",)))
        assert (reopened.num_shards, len(reopened), reopened.metric) == (shards, 858, metric)
        assert max(reopened.shard_sizes()) - min(reopened.shard_sizes()) <= 1
        assert_same_search(reopened, flat, q, 10)
    assert reopened.add(np.ones((1, 16)))[0] == 1001  # the id counter survives
    # a process holding shard 2 of 3 loads only it
    part = loom.knn.ShardedIndex.load(path, mesh_of((3,), ("x",)), shards=[2])
    assert part.shard(0) is None and len(part.shard(2)) == 286
    whole = loom.knn.ShardedIndex.load(path, mesh_of((3,), ("x",)))
    np.testing.assert_array_equal(part.shard(2).ids, whole.shard(2).ids)
    with pytest.raises(ValueError, match=r"shards \[0, 1\] of this index were not loaded"):
        part.search(q, 3)


def test_a_save_killed_midway_leaves_the_previous_index(tmp_path, monkeypatch):
    import os
    path = tmp_path / "db"
    old, _ = index_pair("l2", n=40)
    old.save(path)
    before = {p.name: p.read_bytes() for p in path.iterdir()}
    new, _ = index_pair("l2", n=300)
    real_fdopen, real_replace = os.fdopen, os.replace

    def check_old_index_intact():
        reopened = loom.knn.ShardedIndex.load(path, mesh_of((4,), ("x",)))
        assert len(reopened) == len(old)
        assert_same_search(reopened, old, np.ones((2, 16), np.float32), 3)
        assert {p.name: p.read_bytes() for p in path.iterdir() if p.name in before} == before

    # killed while writing a shard file (its second write: the ids)
    monkeypatch.setattr(os, "fdopen", lambda fd, mode: CrashingFile(real_fdopen(fd, mode), crash_at=2))
    with pytest.raises(SystemExit):
        new.save(path)
    monkeypatch.setattr(os, "fdopen", real_fdopen)
    check_old_index_intact()

    # killed after every shard file is written, before the manifest's rename (the commit)
    def crash_on_manifest(src, dst):
        if str(dst).endswith("MANIFEST.json"):
            raise SystemExit("simulated crash before the manifest's rename")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", crash_on_manifest)
    with pytest.raises(SystemExit):
        new.save(path)
    monkeypatch.setattr(os, "replace", real_replace)
    check_old_index_intact()
    # the next save commits and removes the files of the killed ones
    new.save(path)
    assert len(list(path.iterdir())) == 5  # the manifest and four shard files
    assert len(loom.knn.ShardedIndex.load(path, mesh_of((2,), ("x",)))) == len(new)


def test_a_corrupted_shard_file_is_rejected_naming_it(tmp_path):
    index, _ = index_pair("ip", n=200)
    path = tmp_path / "db"
    index.save(path)
    mesh = mesh_of((4,), ("x",))
    shard_file = sorted(p for p in path.iterdir() if p.name.startswith("shard-"))[2]
    good = shard_file.read_bytes()
    data = bytearray(good)
    data[len(data) // 2] ^= 0x10
    shard_file.write_bytes(bytes(data))
    with pytest.raises(loom.knn.IndexFileError, match=rf"{shard_file.name}: checksum mismatch"):
        loom.knn.ShardedIndex.load(path, mesh)
    # a valid Index file, but not the one the manifest names
    other = loom.knn.Index(16)
    other.add(np.ones((len(index.shard(2)), 16)), ids=index.shard(2).ids)
    other.save(shard_file)
    with pytest.raises(loom.knn.IndexFileError, match=rf"{shard_file.name}: not the shard file the manifest names"):
        loom.knn.ShardedIndex.load(path, mesh)
    shard_file.write_bytes(good)
    manifest = path / "MANIFEST.json"
    manifest.write_bytes(manifest.read_bytes().replace(b'"next_id": 200', b'"next_id": 201'))
    with pytest.raises(loom.knn.IndexFileError, match=r"MANIFEST.json: the manifest's CRC-32 does not match"):
        loom.knn.ShardedIndex.load(path, mesh)


# An f16 database searched by f32 queries: one fused op, no widened copy -------------------------------

def test_a_narrow_database_under_wider_queries_is_fused_without_a_widened_copy():
    from loom import lax
    q = RNG.standard_normal((6, 8)).astype(np.float32)
    db = RNG.standard_normal((300, 8)).astype(np.float16)
    forms = {
        "ip": lambda q, db, h: lax.approx_max_k(q @ db.T.astype(np.float32), 4, recall_target=1.0),
        "ip, converted then transposed": lambda q, db, h: lax.approx_max_k(q @ db.astype(np.float32).T, 4,
                                                                            recall_target=1.0),
        "l2": lambda q, db, h: lax.approx_min_k(h[None, :] - q @ db.T, 4, recall_target=1.0),
    }
    wide = db.astype(np.float32)
    h = 0.5 * (wide ** 2).sum(1)
    for name, f in forms.items():
        jitted = loom.jit(f)
        ops = [op for op in jitted.lower(q, db, h).compile().module.walk()]
        fused = [op for op in ops if op.name == "knn.fused_score_top_k"]
        assert len(fused) == 1 and "f16" in str(fused[0].operands[1].type), name
        assert not any(op.name == "stablehlo.convert" and op.results[0].type.shape == (300, 8) for op in ops), name
        scores = q @ wide.T if name.startswith("ip") else -(h[None, :] - q @ wide.T)
        want = np.argsort(-scores, axis=1, kind="stable")[:, :4]
        np.testing.assert_array_equal(np.asarray(jitted(q, db, h)[1]), want)


def test_the_fused_op_takes_f32_queries_with_an_f16_or_bf16_database_only():
    from loom.dialects import knn
    from loom.dialects.stablehlo import ShapeError
    from loom.ir.types import RankedTensorType, bf16, f16, f32, f64
    props = knn._attrs(2, 0.95, True, -1, True)
    props["metric"] = knn.StringAttr("ip")
    for q, db in ((f32, f16), (f32, bf16), (f32, f32)):
        knn.FusedScoreTopKOp.infer_result_types([RankedTensorType((4, 8), q), RankedTensorType((10, 8), db)], props)
    for q, db in ((f16, f32), (f32, f64), (bf16, f16)):
        with pytest.raises(ShapeError, match="queries and database must have one element type"):
            knn.FusedScoreTopKOp.infer_result_types([RankedTensorType((4, 8), q), RankedTensorType((10, 8), db)],
                                                    props)


# Over processes: examples/knn_sharded.py under torchrun -----------------------------------------------

@pytest.fixture(scope="module")
def run_example(tmp_path_factory):
    """Runs examples/knn_sharded.py on one database file (made by the first run) and returns the ids
    it found; the single-process answer of a metric is computed once for the cases that need it."""
    import json
    import os
    import subprocess
    import sys

    from support.paths import EXAMPLES, ROOT
    folder = tmp_path_factory.mktemp("knn_sharded")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    singles: dict[str, np.ndarray] = {}

    def run(metric: str, world: int | None, recall: float) -> np.ndarray:
        if world is None and metric in singles:
            return singles[metric]
        out = folder / f"{metric}-{world}-{recall}.json"
        sizes = ["--database", str(folder / "db.npy"), "--rows", "3001", "--dim", "16", "--queries", "60",
                 "--batch", "20", "--k", "5", "--timeout", "60", "--distance", metric]
        launcher = [sys.executable] if world is None else [
            sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(world)]
        cmd = [*launcher, str(EXAMPLES / "knn_sharded.py"), *sizes, "--recall", str(recall), "--ids-out", str(out)]
        done = subprocess.run(cmd + (["--single"] if world is None else ["--memory-limit-mb", "4096"]), env=env,
                              capture_output=True, text=True, timeout=240)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert "60 queries, k=5" in done.stdout and "queries/s" in done.stdout
        ids = np.array(json.loads(out.read_text()))
        if world is None:
            singles[metric] = ids
        return ids
    return run


@pytest.mark.slow  # several processes under torchrun: 15-30 s on a loaded 2-core machine
@pytest.mark.parametrize("world, recall_target, metric", [(2, 0.9, "ip"), (4, 1.0, "ip"), (2, 1.0, "cos")])
def test_the_example_over_gloo_processes_answers_as_one_process(run_example, world, recall_target, metric):
    """examples/knn_sharded.py: each of `world` processes maps its rows of a float16 database file;
    exact search gives the single-process search's ids, approximate search at least its recall."""
    single = run_example(metric, None, 1.0)
    sharded = run_example(metric, world, recall_target)
    assert sharded.shape == single.shape == (60, 5)
    if recall_target == 1.0:
        np.testing.assert_array_equal(sharded, single)
    else:
        found = np.mean([len(set(a) & set(b)) / 5 for a, b in zip(sharded.tolist(), single.tolist())])
        assert found >= recall_target, found


# Over processes: the partitioned program, one partition per gloo process ------------------------------

@pytest.mark.slow  # processes started by forkserver: 7-30 s on a loaded 2-core machine
@pytest.mark.parametrize("world", [2, 4])
def test_sharded_and_replicated_queries_over_gloo_processes(world):
    """Each process holds its shard only; queries split over the database's axis, over another
    axis, over both, or replicated: every process gets the single-device search's ids (exact) or
    at least the target recall."""
    pytest.importorskip("torch")
    from knn_sharded_worker import CASES, K, data, launch

    db, q = data()
    outcomes = launch("search", world, timeout_s=60.0, deadline_s=240.0)
    want_scores, want_ids = loom.knn.search(q, db, K, metric="l2", recall_target=1.0)
    for rank in range(world):
        assert outcomes[rank][0] == "ok", outcomes[rank]
        got = outcomes[rank][1]
        assert len(got) == 2 * len(CASES[world])
        for case, (scores, ids) in got.items():
            if case.endswith(" 1.0"):
                np.testing.assert_array_equal(ids, want_ids, err_msg=f"rank {rank}, {case}")
                assert_scores_agree(scores, want_scores, q, db)
            else:
                found = np.mean([len(set(a) & set(b)) / K for a, b in zip(ids.tolist(), want_ids.tolist())])
                assert found >= 0.9, (rank, case, found)
