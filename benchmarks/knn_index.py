"""Absorbing a stream of updates while searching: `loom.knn.Index` against faiss's indexes, in one run.

    python benchmarks/knn_index.py                       # N=1M, D=128, float32, l2
    python benchmarks/knn_index.py --quick               # N=10k, 3 rounds (a smoke run)
    python benchmarks/knn_index.py --n 200000 --rounds 5 # smaller

TPU-KNN's point is that a brute-force search needs no index structure, so vectors can be added
and removed at any rate with no rebuild. Per round, 10% of the database (`--batch`, by default
N / 10) is replaced (that many random live ids removed, as many new vectors added under fresh
ids), then a batch of `--q` float32 queries is searched. Contenders:

- loom: `loom.knn.Index` (`remove`, `add`, `search` at `--recall-target`, 0.95);
- faiss `IndexIDMap2(IndexFlat)` (exact: `remove_ids`, `add_with_ids`, `search`);
- faiss `IndexIVFFlat` (sqrt(N) lists trained on the first database, kept; `remove_ids`,
  `add_with_ids`) and `IndexHNSWFlat` (M=32; it cannot remove vectors, so it is rebuilt from the
  live vectors), each with the search setting (nprobe, efSearch) tuned on the first database to
  loom's measured recall there.

Each row gives the time to absorb a round's update and to search, and the recall of every round
is measured against an exact float64 top-k of the live vectors. Then a save and a load of the
whole index, with the memory loom's save and load allocate on top of the index itself
(tracemalloc; faiss's C++ allocations are not traced). The run writes
benchmarks/results/knn_index-DATE.json.
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
from bench_common import Record, cpu_name, fmt, load_average  # noqa: E402
from knn import build_hnsw, build_ivf, exact_top_k, recall, tune  # noqa: E402


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="N=10k, Q=100, 3 rounds (a smoke run)")
    p.add_argument("--n", type=int, default=1_000_000, help="vectors in the index at start")
    p.add_argument("--d", type=int, default=128)
    p.add_argument("--batch", type=int, default=None, help="vectors replaced per round (default N / 10)")
    p.add_argument("--q", type=int, default=100, help="queries per round's search")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--metric", choices=("ip", "l2"), default="l2")
    p.add_argument("--recall-target", type=float, default=0.95)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.quick:
        args.n, args.rounds = 10_000, 3
    import faiss

    import loom.knn
    n, d, k, metric = args.n, args.d, args.k, args.metric
    b = args.batch or max(1, n // 10)
    print(f"Index updates: N={n} D={d} float32 metric={metric}, {args.rounds} rounds of {b} vectors replaced "
          f"and a search of {args.q} queries (k={k}); {cpu_name()}, {len(os.sched_getaffinity(0))} cores, "
          f"load average {load_average():.2f} at start")
    rng = np.random.default_rng(args.seed)
    store = rng.standard_normal((n + args.rounds * b, d), dtype=np.float32)  # the vector of each id
    live = np.zeros(len(store), bool)
    live[:n] = True
    db, ids = store[:n], np.arange(n, dtype=np.int64)
    q = rng.standard_normal((args.q, d), dtype=np.float32)
    truth = exact_top_k(q, db, k, metric)

    builds: dict[str, float] = {}
    t0 = time.perf_counter()
    index = loom.knn.Index(d, metric)
    index.add(db, ids=ids)
    builds["loom Index"] = time.perf_counter() - t0
    target = recall(index.search(q, k, recall_target=args.recall_target)[1], truth)
    t0 = time.perf_counter()
    flat = faiss.IndexIDMap2(faiss.IndexFlatIP(d) if metric == "ip" else faiss.IndexFlatL2(d))
    flat.add_with_ids(db, ids)
    builds["faiss IndexIDMap2(IndexFlat)"] = time.perf_counter() - t0
    peers = {"faiss IndexIDMap2(IndexFlat)": flat}
    settings = {}
    for name, build in (("faiss IndexIVFFlat", build_ivf), ("faiss IndexHNSWFlat M=32", build_hnsw)):
        t0 = time.perf_counter()
        peers[name] = build(db, metric, ids)
        builds[name] = time.perf_counter() - t0
        settings[name] = tune(peers[name], q, k, truth, target)
    print(f"loom's recall at recall_target={args.recall_target} on the first database: {target:.4f}; faiss tuned to "
          "it: " + ", ".join(f"{name} {s[0]}={s[1]}{'' if s[2] else ' (short of it)'}" for name, s in settings.items()))
    hnsw_setting = settings["faiss IndexHNSWFlat M=32"]

    def rebuild_hnsw(live_ids: np.ndarray) -> None:
        peers["faiss IndexHNSWFlat M=32"] = build_hnsw(store[live_ids], metric, live_ids)
        inner = faiss.downcast_index(peers["faiss IndexHNSWFlat M=32"].index)
        inner.hnsw.efSearch = hnsw_setting[1]

    names = ["loom Index", *peers]
    absorb: dict[str, list[float]] = {name: [] for name in names}
    search: dict[str, list[float]] = {name: [] for name in names}
    recalls: dict[str, list[float]] = {name: [] for name in names}
    next_id = n
    for _ in range(args.rounds):
        gone = rng.choice(np.flatnonzero(live), b, replace=False)
        new_ids = np.arange(next_id, next_id + b, dtype=np.int64)
        next_id += b
        live[gone], live[new_ids] = False, True
        live_ids = np.flatnonzero(live)
        new = store[new_ids]
        q = rng.standard_normal((args.q, d), dtype=np.float32)
        truth = live_ids[exact_top_k(q, store[live_ids], k, metric)]
        updates = {
            "loom Index": lambda: (index.remove(gone), index.add(new, ids=new_ids)),  # noqa: B023
            "faiss IndexIDMap2(IndexFlat)": lambda: (flat.remove_ids(gone), flat.add_with_ids(new, new_ids)),  # noqa: B023
            "faiss IndexIVFFlat": lambda: (peers["faiss IndexIVFFlat"].remove_ids(gone),  # noqa: B023
                                           peers["faiss IndexIVFFlat"].add_with_ids(new, new_ids)),  # noqa: B023
            "faiss IndexHNSWFlat M=32": lambda: rebuild_hnsw(live_ids),  # noqa: B023
        }
        searches = {"loom Index": lambda: index.search(q, k, recall_target=args.recall_target)[1],  # noqa: B023
                    **{name: (lambda name=name: peers[name].search(q, k)[1]) for name in peers}}  # noqa: B023
        for name in names:
            t0 = time.perf_counter()
            updates[name]()
            absorb[name].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            found = searches[name]()
            search[name].append(time.perf_counter() - t0)
            recalls[name].append(recall(found, truth))
    assert np.array_equal(np.sort(index.ids), np.flatnonzero(live)), "loom's index holds other ids than expected"
    assert all(peer.ntotal == live.sum() for peer in peers.values())

    record = Record("knn_index", {"n": n, "d": d, "replaced_per_round": b, "q": args.q, "k": k, "metric": metric,
                                  "recall_target": args.recall_target, "rounds": args.rounds, "seed": args.seed})
    print(f"\n{'contender':30s} {'build':>9s} {'absorb (median)':>16s} {'min':>9s} {'max':>9s} "
          f"{'search (median)':>16s} {'recall (min..max over rounds)':>30s}")
    for name in names:
        extra = {"build_seconds": builds[name], "recall_min": min(recalls[name]), "recall_max": max(recalls[name])}
        if name in settings:
            extra[settings[name][0]] = settings[name][1]
        record.add("absorb an update", name, absorb[name], **extra)
        record.add("search after an update", name, search[name], recall_min=min(recalls[name]),
                   recall_max=max(recalls[name]))
        a = absorb[name]
        print(f"{name:30s} {fmt(builds[name]):>9s} {fmt(statistics.median(a)):>16s} {fmt(min(a)):>9s} "
              f"{fmt(max(a)):>9s} {fmt(statistics.median(search[name])):>16s} "
              f"{min(recalls[name]):14.4f} .. {max(recalls[name]):.4f}")
    for name in peers:
        print(f"{name} / loom (medians): absorb {record.ratio('absorb an update', 'loom Index', name):.2f}x, "
              f"search {record.ratio('search after an update', 'loom Index', name):.2f}x")
    peer = flat
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
    for name, mine, theirs in (("save", t_save, t_peer_save), ("load", t_load, t_peer_load)):
        record.add(name, "loom Index", [mine])
        record.add(name, "faiss IndexIDMap2(IndexFlat)", [theirs])
    record.write(memory_beyond_index_bytes={"save": save_peak, "load": max(load_peak, 0)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
