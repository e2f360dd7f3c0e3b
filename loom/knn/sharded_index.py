"""`loom.knn.ShardedIndex`: an Index whose vectors are split into row shards over mesh axes, one
`loom.knn.Index` per shard, searched by the sharded search program (loom.knn.sharded).

    mesh = loom.make_mesh((4,), ("x",))
    index = loom.knn.ShardedIndex(dim=128, mesh=mesh, metric="l2")
    ids = index.add(vectors)             # routed to the smallest shards: sizes stay balanced
    index.remove(ids[:10])               # each shard removes the ids it holds
    scores, ids = index.search(queries, k=10)
    index.save("vectors.loomknn.d")      # a directory: one Index file per shard + MANIFEST.json
    index = loom.knn.ShardedIndex.load("vectors.loomknn.d", mesh=loom.make_mesh((2,), ("x",)))

A class of its own rather than `Index(mesh=...)`: its storage is a list of Indexes (each shard
is an ordinary Index, with its file format, checks and atomic save) and its save is a directory,
so one class does not have to be two.

Saved form: a directory holding the shard files `shard-<generation>-<i>-of-<n>.loomknn` (each an
Index file, see loom.knn.index) and `MANIFEST.json`, which names them:

    {"format": "loomknn-sharded", "version": 1, "dim", "metric", "dtype", "next_id",
     "shards": [{"file", "count", "sha256"}, ...], "crc32"}

"sha256" is the shard file's own trailing SHA-256 (of everything before it), so a shard file
replaced or damaged after the manifest was written is rejected, naming it; "crc32" is the CRC-32
of the other fields (`json.dumps(fields, sort_keys=True)`). `save` writes every shard under a new
generation first (each file atomically), then replaces the manifest atomically (the commit), then
removes the shard files the new manifest does not name: a save killed at any point leaves the
previous manifest and every file it names intact. One save at a time per directory.

`load(path, mesh=...)` reopens it on any number of shards: on as many as were saved, shard i is
file i; otherwise the vectors, in file order, are dealt out as consecutive ranges of equal size.
With `shards=[...]` only those shards are loaded (the rows of the files they overlap), as a
process holding part of the mesh does; the others stay unloaded (`shard(i)` is None).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import threading
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from loom.knn.index import Index, IndexFileError, atomic_write
from loom.knn.search import check_k, check_metric, check_recall_target, check_vectors, normalize
from loom.knn.sharded import ShardedDatabase
from loom.sharding import Mesh

MANIFEST = "MANIFEST.json"
FORMAT = "loomknn-sharded"
VERSION = 1
_SHARD_FILE = re.compile(r"shard-[0-9a-f]+-\d+-of-\d+\.loomknn$")


def _axes_of(mesh: Mesh, axis: str | Sequence[str] | None) -> tuple[str, ...]:
    if axis is None:
        return tuple(mesh.axis_names)
    axes = (axis,) if isinstance(axis, str) else tuple(axis)
    for a in axes:
        if a not in mesh.shape:
            raise ValueError(f"axis {a!r} is not an axis of the mesh {mesh.axis_names}")
    return axes


class ShardedIndex:
    """Vectors of dimension `dim` with int64 ids, split by rows over the mesh axes `axis` (all the
    mesh's axes by default) of `mesh`, one shard per position along them; searched with `metric`
    ("ip", "l2" or "cos") by one SPMD program (fused op per shard, all_gather, exact top-k; recall
    as loom.knn.sharded states it). `add`, `remove`, `search`, `save` and `load` as `Index`'s (see
    the module docstring for routing, the saved form and reopening on another shard count).
    Threads: one call at a time (a lock); a search sees the index between whole `add` / `remove`
    calls."""

    def __init__(self, dim: int, mesh: Mesh, metric: str = "ip", dtype: Any = np.float32,
                 axis: str | Sequence[str] | None = None) -> None:
        self.mesh = mesh
        self.axes = _axes_of(mesh, axis)
        self.metric = check_metric(metric)
        count = int(np.prod([mesh.shape[a] for a in self.axes]))
        first = Index(dim, metric, dtype)
        self.dim, self.dtype = first.dim, first.dtype
        self._shards: list[Index | None] = [first] + [Index(dim, metric, dtype) for _ in range(count - 1)]
        self._next_id = 0
        self._lock = threading.RLock()

    @property
    def num_shards(self) -> int:
        return len(self._shards)

    def shard(self, i: int) -> Index | None:
        """Shard i's Index (None when `load` left it unloaded)."""
        return self._shards[i]

    def _loaded(self) -> list[Index]:
        missing = [i for i, s in enumerate(self._shards) if s is None]
        if missing:
            raise ValueError(f"shards {missing} of this index were not loaded (load(..., shards=...)); this "
                             "operation needs every shard")
        return self._shards  # type: ignore[return-value]

    def __len__(self) -> int:
        return sum(len(s) for s in self._loaded())

    def shard_sizes(self) -> list[int]:
        return [len(s) for s in self._loaded()]

    def __repr__(self) -> str:
        return (f"ShardedIndex(dim={self.dim}, metric={self.metric!r}, dtype={self.dtype.name}, "
                f"shards={self.num_shards}, size={len(self)})")

    def add(self, vectors: Any, ids: Any = None) -> np.ndarray:
        """Append `vectors`; returns their ids (consecutive after the largest used by default).
        Each goes to a shard chosen so that the shards' sizes stay as equal as possible (the
        smallest are filled first). Ids already in any shard are an error (nothing is added)."""
        x = check_vectors(vectors, "vectors", dim=self.dim, dtype=self.dtype)
        if self.metric == "cos":
            x = normalize(x, "vectors")
        n = x.shape[0]
        with self._lock:
            shards = self._loaded()
            if ids is None:
                new_ids = np.arange(self._next_id, self._next_id + n, dtype=np.int64)
            else:
                new_ids = np.atleast_1d(np.asarray(ids))
                if new_ids.dtype.kind not in "iu" and new_ids.size:
                    raise TypeError(f"ids must be integers, but got dtype {new_ids.dtype}")
                new_ids = new_ids.astype(np.int64)
                if new_ids.shape != (n,):
                    raise ValueError(f"ids must have one entry per vector ({n}), but got shape {new_ids.shape}")
                if len(np.unique(new_ids)) != n:
                    raise ValueError("ids contain duplicates")
                for i, s in enumerate(shards):
                    taken = s.contains(new_ids)
                    if taken.any():
                        raise ValueError(f"ids already in the index (shard {i}): {new_ids[taken][:10].tolist()}")
            sizes = np.array([len(s) for s in shards], np.int64)
            share = np.maximum(_fill_level(np.sort(sizes), n) - sizes, 0)
            for i in np.argsort(sizes + share, kind="stable")[:n - int(share.sum())]:
                share[i] += 1  # what is left, one each to the smallest
            start = 0
            for s, take in zip(shards, share):
                if take:
                    s.add(x[start:start + take], new_ids[start:start + take])
                start += int(take)
            if n:
                self._next_id = max(self._next_id, int(new_ids.max()) + 1)
            return new_ids

    def remove(self, ids: Any) -> None:
        """Delete the vectors with these ids, from whichever shards hold them; an id in no shard
        is an error (a KeyError, nothing removed)."""
        gone = np.unique(np.atleast_1d(np.asarray(ids)).astype(np.int64))
        with self._lock:
            shards = self._loaded()
            held = [s.contains(gone) for s in shards]
            unknown = ~np.logical_or.reduce(held) if held else np.ones(gone.shape, bool)
            if unknown.any():
                raise KeyError(f"unknown ids: {gone[unknown][:10].tolist()}")
            for s, mine in zip(shards, held):
                if mine.any():
                    s.remove(gone[mine])

    def search(self, queries: Any, k: int, recall_target: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """The `k` best vectors for each query: (scores, ids), best first, as `Index.search`;
        one program over the shards (loom.knn.sharded)."""
        recall_target = check_recall_target(recall_target)
        with self._lock:
            shards = self._loaded()
            total = sum(len(s) for s in shards)
            if total == 0:
                raise ValueError("the index is empty: add vectors before searching")
            k = check_k(k, total)
            q = check_vectors(queries, "queries", dim=self.dim, dtype=self.dtype)
            db = ShardedDatabase(self.mesh, self.axes, [s._vectors for s in shards], self.metric,
                                 None if self.metric != "l2" else [s._norms for s in shards],
                                 sizes=[len(s) for s in shards])
            scores, shard, row = db.search(q, k, recall_target)
            ids = np.empty(shard.shape, np.int64)
            for i, s in enumerate(shards):
                mine = shard == i
                ids[mine] = s._ids[row[mine]]
            return scores, ids

    # Persistence ----------------------------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> None:
        """Write the index to the directory `path` (made if missing; see the module docstring):
        the previous save there stays loadable until the new manifest replaces it."""
        path = os.fspath(path)
        os.makedirs(path, exist_ok=True)
        generation = secrets.token_hex(6)
        with self._lock:
            shards = self._loaded()
            entries = []
            for i, s in enumerate(shards):
                name = f"shard-{generation}-{i:05d}-of-{len(shards):05d}.loomknn"
                s.save(os.path.join(path, name))
                with open(os.path.join(path, name), "rb") as f:
                    f.seek(-32, os.SEEK_END)
                    digest = f.read(32).hex()
                entries.append({"file": name, "count": len(s), "sha256": digest})
            fields = {"format": FORMAT, "version": VERSION, "dim": self.dim, "metric": self.metric,
                      "dtype": self.dtype.name, "next_id": self._next_id, "shards": entries}
            manifest = {**fields, "crc32": _crc(fields)}
            atomic_write(os.path.join(path, MANIFEST), lambda f: f.write(json.dumps(manifest, indent=1).encode()))
        keep = {e["file"] for e in entries}
        for name in os.listdir(path):
            if _SHARD_FILE.match(name) and name not in keep:
                try:
                    os.unlink(os.path.join(path, name))
                except OSError:
                    pass  # removed meanwhile

    @classmethod
    def load(cls, path: str | os.PathLike, mesh: Mesh, axis: str | Sequence[str] | None = None,
             shards: Sequence[int] | None = None, verify: bool = True) -> ShardedIndex:
        """Reopen a saved index on the shards of `mesh` along `axis` (any number of them, see the
        module docstring), loading only `shards` (all by default). A damaged or foreign manifest,
        or a shard file that is damaged or not the one the manifest names, raises
        `IndexFileError` naming the file."""
        path = os.fspath(path)
        manifest_path = os.path.join(path, MANIFEST)
        try:
            with open(manifest_path, "rb") as f:
                manifest = json.loads(f.read())
            fields = {key: value for key, value in manifest.items() if key != "crc32"}
            if manifest.get("format") != FORMAT:
                raise ValueError("not a sharded loom knn index manifest")
            if manifest.get("version") != VERSION:
                raise ValueError(f"unsupported version {manifest.get('version')} (this loom reads {VERSION})")
            if manifest.get("crc32") != _crc(fields):
                raise ValueError("the manifest's CRC-32 does not match its fields: it is corrupted")
            entries = manifest["shards"]
            counts = [int(e["count"]) for e in entries]
        except FileNotFoundError:
            raise IndexFileError(f"{manifest_path}: no such file (not a saved ShardedIndex)") from None
        except (ValueError, KeyError, TypeError) as e:
            raise IndexFileError(f"{manifest_path}: {e}") from None
        index = cls(int(manifest["dim"]), mesh, manifest["metric"], manifest["dtype"], axis)
        index._next_id = int(manifest["next_id"])
        count = index.num_shards
        wanted = range(count) if shards is None else sorted(set(int(i) for i in shards))
        bounds = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        total = int(bounds[-1])
        opened: dict[int, Index] = {}

        def file_shard(j: int) -> Index:
            if j not in opened:
                file = os.path.join(path, entries[j]["file"])
                part = Index.load(file, mmap=True, verify=verify)
                with open(file, "rb") as f:
                    f.seek(-32, os.SEEK_END)
                    if f.read(32).hex() != entries[j]["sha256"] or len(part) != counts[j]:
                        raise IndexFileError(f"{file}: not the shard file the manifest names (its checksum or count "
                                             "differs): the index directory is corrupted")
                opened[j] = part
            return opened[j]

        index._shards = [None] * count
        for i in wanted:
            if not 0 <= i < count:
                raise ValueError(f"shard {i} is not one of the {count} shards of the mesh")
            if count == len(entries):
                ranges = [(i, 0, counts[i])]
            else:  # consecutive equal ranges of all the vectors, in file order
                lo, hi = total * i // count, total * (i + 1) // count
                ranges = [(j, max(lo, bounds[j]) - bounds[j], min(hi, bounds[j + 1]) - bounds[j])
                          for j in range(len(entries)) if bounds[j] < hi and bounds[j + 1] > lo]
            vectors = [file_shard(j)._vectors[a:b] for j, a, b in ranges]
            ids = [file_shard(j)._ids[a:b] for j, a, b in ranges]
            index._shards[i] = Index.from_stored(
                index.dim, index.metric, index.dtype,
                np.concatenate(vectors) if vectors else np.empty((0, index.dim), index.dtype),
                np.concatenate(ids) if ids else np.empty(0, np.int64), index._next_id)
        return index


def _fill_level(sorted_sizes: np.ndarray, n: int) -> int:
    """The largest level L such that raising every size below L to L takes at most n."""
    level = int(sorted_sizes[0])
    hi = int(sorted_sizes[-1]) + n
    while level < hi:  # binary search on the level
        mid = (level + hi + 1) // 2
        if int(np.maximum(mid - sorted_sizes, 0).sum()) <= n:
            level = mid
        else:
            hi = mid - 1
    return level


def _crc(fields: dict[str, Any]) -> int:
    return zlib.crc32(json.dumps(fields, sort_keys=True).encode())


__all__ = ["MANIFEST", "ShardedIndex"]
