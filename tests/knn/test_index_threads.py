"""`loom.knn.Index` shared by threads: searches racing `add` and `remove` see a consistent
snapshot (every returned id with the exact score of that id's vector, no id twice, the vectors
that are never removed always found), concurrent `add` calls number their vectors uniquely, and
ids near the int64 limit or a damaged `next_id` are clear errors. Every thread is joined with a
timeout; each test runs for well under two seconds."""

from __future__ import annotations

import hashlib
import json
import struct
import threading
import time

import numpy as np
import pytest

from loom.knn import Index
from loom.knn.index import IndexFileError

DIM = 16
K = 5


def vector_of(i: int) -> np.ndarray:
    """The vector stored under id `i` (a pure function of it, so any result can be checked alone)."""
    return np.random.default_rng(1000 + i).standard_normal(DIM).astype(np.float32)


def exact_scores(metric: str, q: np.ndarray, ids: np.ndarray) -> np.ndarray:
    x = np.stack([vector_of(int(i)) for i in ids]).astype(np.float64)
    q = q.astype(np.float64)
    if metric == "ip":
        return x @ q
    if metric == "cos":
        return x @ q / np.linalg.norm(x, axis=1) / np.linalg.norm(q)
    return ((x - q) ** 2).sum(1)


def run_threads(targets: list, seconds: float) -> list[BaseException]:
    """Run each target(stop) in a thread for `seconds`; the exceptions they raised."""
    stop = threading.Event()
    errors: list[BaseException] = []

    def guarded(target) -> None:
        try:
            target(stop)
        except BaseException as e:  # reported by the test, with the thread's traceback in the chain
            errors.append(e)
            stop.set()

    threads = [threading.Thread(target=guarded, args=(t,), daemon=True) for t in targets]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join(timeout=10)
        assert not t.is_alive(), "a thread did not finish within 10 s of being asked to stop"
    return errors


@pytest.mark.parametrize("metric", ["ip", "l2", "cos"])
def test_search_racing_add_and_remove_sees_a_consistent_snapshot(metric: str) -> None:
    q = np.random.default_rng(7).standard_normal(DIM).astype(np.float32)
    index = Index(DIM, metric)
    # The K vectors that are never removed sit closest to the query by far: every search must
    # return exactly them, whatever the churn around them.
    permanent = np.arange(K)
    best = {"ip": 50.0, "cos": 1.0, "l2": 1.0}[metric]
    for i in permanent:
        v = q * (best + 0.1 * i) if metric != "l2" else q + 0.01 * (i + 1)
        index.add(v[None], ids=[int(i)])
    vectors = {int(i): index.vectors[list(index.ids).index(i)] for i in permanent}
    churn_rng = np.random.default_rng(3)
    live: list[int] = []
    live_lock = threading.Lock()
    next_id = [K]
    checked = [0]

    def adder(stop: threading.Event) -> None:
        while not stop.is_set():
            n = int(churn_rng.integers(1, 8))
            ids = list(range(next_id[0], next_id[0] + n))
            next_id[0] += n
            index.add(np.stack([vector_of(i) for i in ids]), ids=ids)
            with live_lock:
                live.extend(ids)

    def remover(stop: threading.Event) -> None:
        rng = np.random.default_rng(4)
        while not stop.is_set():
            with live_lock:
                if len(live) < 8:
                    continue
                picks = sorted(set(int(j) for j in rng.integers(0, len(live), 4)), reverse=True)
                gone = [live.pop(j) for j in picks]
            index.remove(gone)

    def searcher(stop: threading.Event) -> None:
        rng = np.random.default_rng(threading.get_ident() % 2**32)
        while not stop.is_set():
            other = rng.standard_normal((2, DIM)).astype(np.float32)
            scores, ids = index.search(np.vstack([q, other]), K, recall_target=1.0)
            assert sorted(ids[0].tolist()) == list(permanent), ids[0]
            for row in range(3):
                assert len(set(ids[row].tolist())) == K, ids[row]
                assert (ids[row] >= 0).all() and (ids[row] < next_id[0] + 8).all(), ids[row]
            for i, s in zip(ids[0], scores[0]):
                x, qq = vectors[int(i)].astype(np.float64), q.astype(np.float64)
                want = {"ip": x @ qq, "cos": x @ qq / np.linalg.norm(qq), "l2": ((x - qq) ** 2).sum()}[metric]
                np.testing.assert_allclose(s, want, rtol=2e-4, atol=2e-4)
            for row in (1, 2):
                mask = ids[row] >= K
                if mask.any():
                    np.testing.assert_allclose(scores[row][mask], exact_scores(metric, other[row - 1], ids[row][mask]),
                                               rtol=2e-4, atol=2e-4)
            checked[0] += 1

    errors = run_threads([adder, remover, searcher, searcher], seconds=1.0)
    if errors:
        raise errors[0]
    assert checked[0] > 5
    assert sorted(index.ids.tolist()) == sorted([*permanent.tolist(), *live])


def test_concurrent_add_without_ids_numbers_uniquely() -> None:
    index = Index(DIM, "l2")
    per_thread, batches, n_threads = 3, 40, 4
    got: list[list[int]] = [[] for _ in range(n_threads)]

    def worker(t: int) -> None:
        for b in range(batches):
            got[t].extend(index.add(np.stack([vector_of(b * 10 + j) for j in range(per_thread)])).tolist())

    threads = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
        assert not t.is_alive()
    every = [i for ids in got for i in ids]
    assert sorted(every) == list(range(per_thread * batches * n_threads))
    assert sorted(index.ids.tolist()) == sorted(every)


def test_ids_past_int64_are_a_clear_error() -> None:
    index = Index(DIM)
    top = int(np.iinfo(np.int64).max)
    assert index.add(vector_of(0), ids=[top]).tolist() == [top]
    with pytest.raises(ValueError, match="int64 maximum"):
        index.add(vector_of(1))
    assert index.ids.tolist() == [top]
    index.add(vector_of(2), ids=[5])  # explicit ids still work
    with pytest.raises(ValueError, match="fit in int64"):
        index.add(vector_of(3), ids=np.array([2**63], np.uint64))
    with pytest.raises(KeyError, match="unknown ids"):
        index.remove(np.array([2**64 - 1], np.uint64))


def test_empty_id_lists() -> None:
    index = Index(DIM)
    index.add(vector_of(0))
    index.remove([])
    assert index.add(np.empty((0, DIM), np.float32), ids=[]).tolist() == []
    assert len(index) == 1


def _with_header(data: bytes, **changes: object) -> bytes:
    """The file `data` with header fields replaced (as JSON text) and its checksum recomputed."""
    header_len = struct.unpack_from("<I", data, 12)[0]
    header = json.loads(data[16:16 + header_len])
    text = json.dumps(header, sort_keys=True)
    for key, value in changes.items():
        text = text.replace(f'"{key}": {json.dumps(header[key])}', f'"{key}": {value}')
    new = text.encode().ljust(header_len)
    assert len(new) == header_len
    body = data[:16] + new + data[16 + header_len:-32]
    return body + hashlib.sha256(body).digest()


@pytest.mark.parametrize("value", ["1e400", "-1", "9223372036854775809", "1.5e30"])
def test_damaged_next_id_is_an_index_file_error(value: str) -> None:
    index = Index(DIM)
    index.add(np.stack([vector_of(i) for i in range(3)]))
    with pytest.raises(IndexFileError, match="bad header"):
        Index.from_bytes(_with_header(index.to_bytes(), next_id=value))


def test_module_search_from_threads_equals_the_single_threaded_run() -> None:
    from loom import knn
    rng = np.random.default_rng(11)
    db = rng.standard_normal((3000, DIM)).astype(np.float32)
    queries = [rng.standard_normal((4, DIM)).astype(np.float32) for _ in range(8)]
    want = [knn.search(q, db, 10, metric="l2") for q in queries]
    got: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def worker(i: int) -> None:
        for _ in range(5):
            got[i] = knn.search(queries[i], db, 10, metric="l2")

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(len(queries))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
        assert not t.is_alive()
    for i, (scores, ids) in enumerate(want):
        np.testing.assert_array_equal(got[i][1], ids)
        np.testing.assert_array_equal(got[i][0], scores)
