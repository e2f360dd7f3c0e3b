"""Updating a `loom.knn.Index` while searching it, against faiss's `IndexIDMap2(IndexFlat)`, in one run.

    python benchmarks/knn_index.py                       # N=1M, D=128, float32, l2, batches of 1000
    python benchmarks/knn_index.py --n 200000 --rounds 5 # smaller

TPU-KNN's point is that a brute-force search needs no index structure, so vectors can be added
and removed at any rate with no rebuild. This measures what one update costs on a large index:
per round, each side adds a batch of new vectors with fresh ids, removes a batch of random live
ids, and searches a few queries (the first search after an update pays for any state the update
invalidated). Then a save and a load of the whole index, with the memory loom's save and load
allocate on top of the index itself (tracemalloc; faiss's C++ allocations are not traced).

Both sides are checked to hold the same ids at the end, and to return the same neighbours with
loom's `recall_target=1` (exact).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Sequence

import numpy as np
from bench_common import cpu_name, fmt, load_average  # noqa: E402


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1_000_000, help="vectors in the index at start")
    p.add_argument("--d", type=int, default=128)
    p.add_argument("--batch", type=int, default=1000, help="vectors added and removed per round")
    p.add_argument("--q", type=int, default=10, help="queries per round's search")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--metric", choices=("ip", "l2"), default="l2")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    import faiss

    import loom.knn
    n, d, b = args.n, args.d, args.batch
    print(f"Index updates: N={n} D={d} float32 metric={args.metric}, {args.rounds} rounds of +{b} / -{b} vectors "
          f"and a search of {args.q} queries (k={args.k}); {cpu_name()}, {len(os.sched_getaffinity(0))} cores, "
          f"load average {load_average():.2f} at start")
    rng = np.random.default_rng(args.seed)
    db = rng.standard_normal((n, d), dtype=np.float32)
    ids = np.arange(n, dtype=np.int64)
    index = loom.knn.Index(d, args.metric)
    peer = faiss.IndexIDMap2(faiss.IndexFlatIP(d) if args.metric == "ip" else faiss.IndexFlatL2(d))
    t0 = time.perf_counter()
    index.add(db, ids=ids)
    t_loom_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    peer.add_with_ids(db, ids)
    t_peer_build = time.perf_counter() - t0
    del db
    live = set(range(n))
    next_id = n
    times: dict[str, dict[str, list[float]]] = {side: {"add": [], "remove": [], "search": []}
                                                for side in ("loom", "faiss")}
    for _ in range(args.rounds):
        new = rng.standard_normal((b, d), dtype=np.float32)
        new_ids = np.arange(next_id, next_id + b, dtype=np.int64)
        next_id += b
        gone = rng.choice(np.fromiter(live, np.int64, len(live)), b, replace=False)
        live.update(new_ids.tolist())
        live.difference_update(gone.tolist())
        q = rng.standard_normal((args.q, d), dtype=np.float32)
        steps = {
            "loom": (lambda: index.add(new, ids=new_ids), lambda: index.remove(gone),  # noqa: B023
                     lambda: index.search(q, args.k)),  # noqa: B023
            "faiss": (lambda: peer.add_with_ids(new, new_ids), lambda: peer.remove_ids(gone),  # noqa: B023
                      lambda: peer.search(q, args.k)),  # noqa: B023
        }
        for side, (add, remove, search) in steps.items():
            for name, fn in (("add", add), ("remove", remove), ("search", search)):
                t0 = time.perf_counter()
                fn()
                times[side][name].append(time.perf_counter() - t0)
    # the same contents, and the same exact answers
    want = np.sort(np.fromiter(live, np.int64, len(live)))
    assert np.array_equal(np.sort(index.ids), want), "loom's index holds other ids than expected"
    assert peer.ntotal == len(want)
    q = rng.standard_normal((20, d), dtype=np.float32)
    mine = index.search(q, args.k, recall_target=1.0)[1]
    theirs = peer.search(q, args.k)[1]
    agree = float(np.mean([len(np.intersect1d(a, c)) / args.k for a, c in zip(mine, theirs)]))
    print(f"\nbuild ({n} vectors): loom {fmt(t_loom_build)}, faiss {fmt(t_peer_build)}; after the rounds both hold "
          f"{len(want)} ids; exact answers agree on {agree:.4f} of the neighbours")
    print(f"\n{'per round (median)':20s} {'loom':>10s} {'faiss':>10s} {'faiss / loom':>13s}")
    for name in ("add", "remove", "search"):
        a, c = statistics.median(times["loom"][name]), statistics.median(times["faiss"][name])
        print(f"{name:20s} {fmt(a):>10s} {fmt(c):>10s} {c / a:12.2f}x")
    total = [sum(statistics.median(times[s][x]) for x in ("add", "remove", "search")) for s in ("loom", "faiss")]
    print(f"{'one round in all':20s} {fmt(total[0]):>10s} {fmt(total[1]):>10s} {total[1] / total[0]:12.2f}x")

    size = len(index) * d * 4 + len(index) * 8
    with tempfile.TemporaryDirectory() as tmp:
        mine_path, theirs_path = os.path.join(tmp, "a.loomknn"), os.path.join(tmp, "a.faiss")
        tracemalloc.start()
        t0 = time.perf_counter()
        index.save(mine_path)
        t_save = time.perf_counter() - t0
        save_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        t0 = time.perf_counter()
        loaded = loom.knn.Index.load(mine_path)
        t_load = time.perf_counter() - t0
        load_peak = tracemalloc.get_traced_memory()[1] - size
        tracemalloc.stop()
        assert np.array_equal(loaded.ids, index.ids)
        del loaded
        t0 = time.perf_counter()
        faiss.write_index(peer, theirs_path)
        t_peer_save = time.perf_counter() - t0
        t0 = time.perf_counter()
        faiss.read_index(theirs_path)
        t_peer_load = time.perf_counter() - t0
        mapped = {}
        for verify in (True, False):
            t0 = time.perf_counter()
            m = loom.knn.Index.load(mine_path, mmap=True, verify=verify)
            mapped[verify] = time.perf_counter() - t0
            assert len(m) == len(index)
            del m
        try:
            t0 = time.perf_counter()
            faiss.read_index(theirs_path, faiss.IO_FLAG_MMAP)
            peer_mapped = fmt(time.perf_counter() - t0)
        except RuntimeError as e:  # not every faiss index type maps
            peer_mapped = f"n/a ({str(e).splitlines()[0][:60]})"
    print(f"\nsave: loom {fmt(t_save)} (checksummed, fsync'ed, atomic), faiss {fmt(t_peer_save)}; "
          f"load: loom {fmt(t_load)} (checksum verified), faiss {fmt(t_peer_load)}")
    print(f"load mapped (mmap=True): loom {fmt(mapped[True])} (checksum verified), {fmt(mapped[False])} "
          f"(verify=False); faiss IO_FLAG_MMAP {peer_mapped}")
    print(f"memory loom allocates beyond the index ({size / 2**20:.0f} MiB): save {save_peak / 2**20:.0f} MiB, "
          f"load {max(load_peak, 0) / 2**20:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
