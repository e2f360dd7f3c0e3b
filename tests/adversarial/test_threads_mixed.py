"""Eight threads at once, each picking at random: first calls of `jit(grad(f))` (a fresh function
each time), `knn.search`, and `Index.add` (with and without ids), `remove` and `search` on two
shared indexes ("ip" and "cos"). Every result is checked against a single-threaded computation:
gradients and plain searches against numpy; each index search against the exact top-k of a
state the index can have had while the search ran (from a log of when each add and remove
started and finished): every id returned may have been present, comes with its own vector's
score, appears once, and no id present all along scores better than the k-th returned.

A few seconds by default; 30 s under `make fuzz` (LOOM_FUZZ_EXAMPLES set), or
LOOM_THREADS_SECONDS.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from dataclasses import dataclass, field

import numpy as np

import loom
import loom.numpy as lnp
from loom import knn

SECONDS = float(os.environ.get("LOOM_THREADS_SECONDS", "30" if os.environ.get("LOOM_FUZZ_EXAMPLES") else "3"))
THREADS, DIM, K = 8, 8, 5
_tick = itertools.count()  # next() is atomic: a global order of events


@dataclass
class Shared:
    """One index and the log of what was done to it."""

    metric: str
    index: knn.Index = field(init=False)
    vectors: dict[int, np.ndarray] = field(default_factory=dict)
    added: dict[int, tuple[int, int]] = field(default_factory=dict)  # id -> (started, finished)
    removed: dict[int, tuple[int, int]] = field(default_factory=dict)
    removable: list[int] = field(default_factory=list)
    searches: list[tuple[np.ndarray, np.ndarray, np.ndarray, int, int]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)  # guards the log, never the index

    def __post_init__(self) -> None:
        self.index = knn.Index(DIM, self.metric)

    def add(self, rng: np.random.Generator, explicit_ids: list[int] | None) -> None:
        x = rng.standard_normal((len(explicit_ids) if explicit_ids else int(rng.integers(1, 4)), DIM))
        x = x.astype(np.float32)
        start = next(_tick)
        ids = self.index.add(x, ids=explicit_ids)
        end = next(_tick)
        with self.lock:
            for i, v in zip(ids.tolist(), x):
                assert i not in self.added, f"id {i} given twice"
                self.vectors[i], self.added[i] = v, (start, end)
                self.removable.append(i)

    def remove(self, rng: np.random.Generator) -> None:
        with self.lock:
            if len(self.removable) < 8:
                return
            gone = [self.removable.pop(int(rng.integers(len(self.removable)))) for _ in range(2)]
        start = next(_tick)
        self.index.remove(gone)
        end = next(_tick)
        with self.lock:
            for i in gone:
                self.removed[i] = (start, end)

    def search(self, rng: np.random.Generator) -> None:
        q = rng.standard_normal((2, DIM)).astype(np.float32)
        start = next(_tick)
        if len(self.index) < K + 8:
            return
        scores, ids = self.index.search(q, K, recall_target=1.0)
        end = next(_tick)
        self.searches.append((q, scores, ids, start, end))

    def check(self) -> int:
        """Every search against the exact top-k of a state the index can have had."""
        for q, scores, ids, start, end in self.searches:
            possible = {i for i, (began, _) in self.added.items() if began < end and
                        (i not in self.removed or self.removed[i][1] > start)}
            always = [i for i, (_, done) in self.added.items() if done < start and
                      (i not in self.removed or self.removed[i][0] > end)]
            for row in range(len(q)):
                got = ids[row].tolist()
                assert len(set(got)) == K, f"duplicate ids in {got}"
                assert set(got) <= possible, f"ids never present during the search: {set(got) - possible}"
                exact = np.array([self.score(q[row], self.vectors[i]) for i in got])
                np.testing.assert_allclose(scores[row], exact, rtol=1e-4, atol=1e-5)
                better = [i for i in always if i not in got and self.score(q[row], self.vectors[i]) >
                          scores[row, -1] + 1e-4 * (1 + abs(scores[row, -1]))]
                assert not better, f"ids {better} present all along score better than the k-th returned"
        return len(self.searches)

    def score(self, q: np.ndarray, v: np.ndarray) -> float:
        q64, v64 = q.astype(np.float64), v.astype(np.float64)
        if self.metric == "cos":
            q64, v64 = q64 / np.linalg.norm(q64), v64 / np.linalg.norm(v64)
        return float(q64 @ v64)


def grad_first_call(rng: np.random.Generator) -> None:
    c = float(rng.uniform(0.5, 2.0))
    g = loom.jit(loom.grad(lambda x: lnp.sum(lnp.sin(x) * c)))  # a new function: traced on this call
    x = rng.standard_normal(5).astype(np.float32)
    np.testing.assert_allclose(np.asarray(g(x)), np.cos(x.astype(np.float64)) * c, rtol=1e-5, atol=1e-6)


def plain_search(rng: np.random.Generator) -> None:
    metric = str(rng.choice(["ip", "l2", "cos"]))
    db = rng.standard_normal((64, DIM)).astype(np.float32)
    q = rng.standard_normal((3, DIM)).astype(np.float32)
    scores, ids = knn.search(q, db, K, metric=metric, recall_target=1.0)
    q64, d64 = q.astype(np.float64), db.astype(np.float64)
    if metric == "cos":
        q64, d64 = q64 / np.linalg.norm(q64, axis=1, keepdims=True), d64 / np.linalg.norm(d64, axis=1, keepdims=True)
    exact = ((q64[:, None] - d64[None]) ** 2).sum(-1) if metric == "l2" else q64 @ d64.T
    order = np.argsort(exact if metric == "l2" else -exact, axis=1)[:, :K]
    np.testing.assert_array_equal(ids, order)
    np.testing.assert_allclose(scores, np.take_along_axis(exact, order, 1), rtol=1e-4, atol=1e-4)


def test_threads_mixing_jit_grad_knn_search_and_index_updates_agree_with_single_threaded_results() -> None:
    shared = [Shared("ip"), Shared("cos")]
    for s in shared:  # something to search from the start
        s.add(np.random.default_rng(99), None)
        for _ in range(4):
            s.add(np.random.default_rng(_), None)
    errors: list[str] = []
    counts = [0] * THREADS
    deadline = time.monotonic() + SECONDS

    def work(t: int) -> None:
        rng = np.random.default_rng(t)
        explicit = itertools.count(1)
        try:
            while time.monotonic() < deadline and not errors:
                op = int(rng.integers(6))
                s = shared[int(rng.integers(2))]
                if op == 0:
                    grad_first_call(rng)
                elif op == 1:
                    plain_search(rng)
                elif op == 2:
                    s.add(rng, None)
                elif op == 3:  # negative ids: never among the ones `add` assigns
                    s.add(rng, [-(t * 10**6 + next(explicit)) for _ in range(int(rng.integers(1, 3)))])
                elif op == 4:
                    s.remove(rng)
                else:
                    s.search(rng)
                counts[t] += 1
        except BaseException as e:  # noqa: BLE001  (reported below with the thread)
            errors.append(f"thread {t}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=work, args=(t,), name=f"mixed-{t}") for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=SECONDS + 120)
    assert not any(th.is_alive() for th in threads), "a thread did not finish (hang)"
    assert not errors, errors
    checked = sum(s.check() for s in shared)
    for s in shared:  # the final state, single-threaded
        live = sorted(set(s.added) - set(s.removed))
        assert sorted(s.index.ids.tolist()) == live
    assert all(counts) and checked > 0, (counts, checked)
