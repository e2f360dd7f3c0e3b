"""`loom.knn.Index`: a flat, updatable collection of vectors searched by brute force with
approximate top-k. There is no index structure to build (TPU-KNN's point): `add` and `remove`
take effect for the next search at once.

File format (version 1), little-endian, written atomically (a temporary file in the same
directory, flushed and fsync'ed, then `os.replace`, then the directory fsync'ed), so a crash
during `save` leaves the previous file intact:

    magic      8 bytes   b"LOOMKNN\\0"
    version    u32       1
    header_len u32       length of the JSON header
    header     JSON      {"dim", "metric", "dtype", "count", "next_id"}
    ids        count x i64
    vectors    count x dim x dtype (as added; for "cos" the normalised vectors)
    checksum   32 bytes  SHA-256 of everything before it
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
from typing import Any

import numpy as np

from loom.knn.search import (
    check_k,
    check_metric,
    check_recall_target,
    check_vectors,
    half_squared_norms,
    normalize,
    search_prepared,
)

MAGIC = b"LOOMKNN\0"
VERSION = 1
_DTYPES = {"float16": np.float16, "float32": np.float32, "float64": np.float64}


class IndexFileError(ValueError):
    """A saved index that cannot be loaded: not an index file, an unknown version, truncated or
    corrupted (checksum mismatch). The message names the file."""


class Index:
    """Vectors of dimension `dim` with int64 ids, searched with `metric` ("ip", "l2" or "cos").

    `add(vectors, ids=None)` appends (ids default to consecutive integers), `remove(ids)` deletes,
    `search(queries, k, recall_target=0.95)` returns (scores, ids) as `loom.knn.search` does, and
    `save(path)` / `Index.load(path)` persist it."""

    def __init__(self, dim: int, metric: str = "ip", dtype: Any = np.float32) -> None:
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim <= 0:
            raise ValueError(f"dim must be a positive int, but got {dim!r}")
        self.dim = int(dim)
        self.metric = check_metric(metric)
        name = np.dtype(dtype).name
        if name not in _DTYPES:
            raise TypeError(f"dtype must be one of {', '.join(_DTYPES)}, but got {np.dtype(dtype)}")
        self.dtype = np.dtype(name)
        self._vectors = np.empty((0, self.dim), self.dtype)
        self._ids = np.empty((0,), np.int64)
        self._norms: np.ndarray | None = None
        self._next_id = 0

    def __len__(self) -> int:
        return int(self._ids.shape[0])

    def __repr__(self) -> str:
        return f"Index(dim={self.dim}, metric={self.metric!r}, dtype={self.dtype.name}, size={len(self)})"

    @property
    def ids(self) -> np.ndarray:
        """The ids in storage order (a copy)."""
        return self._ids.copy()

    @property
    def vectors(self) -> np.ndarray:
        """The stored vectors in storage order (for "cos", normalised; a copy)."""
        return self._vectors.copy()

    def add(self, vectors: Any, ids: Any = None) -> np.ndarray:
        """Append `vectors` (n x dim, or one vector); returns their ids. `ids` (n distinct ints not
        in the index) default to consecutive integers after the largest id used so far."""
        x = check_vectors(vectors, "vectors", dim=self.dim, dtype=self.dtype)
        n = x.shape[0]
        if ids is None:
            new_ids = np.arange(self._next_id, self._next_id + n, dtype=np.int64)
        else:
            new_ids = np.asarray(ids)
            if new_ids.ndim == 0:
                new_ids = new_ids[None]
            if new_ids.dtype.kind not in "iu":
                raise TypeError(f"ids must be integers, but got dtype {new_ids.dtype}")
            new_ids = new_ids.astype(np.int64)
            if new_ids.shape != (n,):
                raise ValueError(f"ids must have one entry per vector ({n}), but got shape {new_ids.shape}")
            if len(np.unique(new_ids)) != n:
                raise ValueError("ids contain duplicates")
            taken = np.isin(new_ids, self._ids)
            if taken.any():
                raise ValueError(f"ids already in the index: {new_ids[taken][:10].tolist()}")
        if self.metric == "cos":
            x = normalize(x, "vectors")
        self._vectors = np.concatenate([self._vectors, x]) if len(self) else np.ascontiguousarray(x)
        self._ids = np.concatenate([self._ids, new_ids])
        if n:
            self._next_id = max(self._next_id, int(new_ids.max()) + 1)
        self._norms = None
        return new_ids

    def remove(self, ids: Any) -> None:
        """Delete the vectors with these ids; an id not in the index is an error (nothing is
        removed then)."""
        gone = np.atleast_1d(np.asarray(ids))
        if gone.dtype.kind not in "iu":
            raise TypeError(f"ids must be integers, but got dtype {gone.dtype}")
        gone = gone.astype(np.int64)
        present = np.isin(gone, self._ids)
        if not present.all():
            raise KeyError(f"unknown ids: {gone[~present][:10].tolist()}")
        keep = ~np.isin(self._ids, gone)
        self._vectors = np.ascontiguousarray(self._vectors[keep])
        self._ids = self._ids[keep]
        self._norms = None

    def search(self, queries: Any, k: int, recall_target: float = 0.95, batch_size: int | None = None,
               progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The `k` best vectors for each query: (scores, ids), best first (see `loom.knn.search`)."""
        recall_target = check_recall_target(recall_target)
        q = check_vectors(queries, "queries", dim=self.dim, dtype=self.dtype)
        if len(self) == 0:
            raise ValueError("the index is empty: add vectors before searching")
        k = check_k(k, len(self))
        norms = None
        if self.metric == "l2":
            if self._norms is None:
                self._norms = half_squared_norms(self._vectors)
            norms = self._norms
        scores, rows = search_prepared(q, self._vectors, norms, k, self.metric, recall_target, batch_size, progress)
        return scores, self._ids[rows]

    # Persistence ----------------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        header = json.dumps({"dim": self.dim, "metric": self.metric, "dtype": self.dtype.name, "count": len(self),
                             "next_id": self._next_id}, sort_keys=True).encode()
        vectors = self._vectors.astype(self.dtype.newbyteorder("<"))
        body = b"".join([MAGIC, struct.pack("<II", VERSION, len(header)), header, self._ids.astype("<i8").tobytes(),
                         vectors.tobytes()])
        return body + hashlib.sha256(body).digest()

    def save(self, path: str | os.PathLike) -> None:
        """Write the index to `path` atomically: the old file stays intact until the new one is
        complete on disk."""
        path = os.fspath(path)
        data = self.to_bytes()
        directory = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".loomknn-", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        try:  # make the rename itself durable
            dir_fd = os.open(directory, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(dir_fd)
        except OSError:
            pass
        finally:
            os.close(dir_fd)

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "<bytes>") -> Index:
        def fail(why: str) -> IndexFileError:
            return IndexFileError(f"{source}: {why}")

        if len(data) < len(MAGIC) + 8 + 32 or not data.startswith(MAGIC):
            raise fail("not a loom knn index file (bad magic)")
        version, header_len = struct.unpack_from("<II", data, len(MAGIC))
        if version != VERSION:
            raise fail(f"unsupported index file version {version} (this loom reads version {VERSION})")
        body, digest = data[:-32], data[-32:]
        if hashlib.sha256(body).digest() != digest:
            raise fail("checksum mismatch: the file is corrupted or truncated")
        start = len(MAGIC) + 8
        try:
            header = json.loads(body[start:start + header_len])
            dim, metric, dtype = int(header["dim"]), header["metric"], _DTYPES[header["dtype"]]
            count, next_id = int(header["count"]), int(header["next_id"])
        except (ValueError, KeyError, TypeError) as e:
            raise fail(f"bad header ({e})") from None
        index = cls(dim, metric, dtype)
        offset = start + header_len
        ids_end = offset + 8 * count
        vec_end = ids_end + count * dim * index.dtype.itemsize
        if vec_end != len(body):
            raise fail(f"size mismatch: header says {count} vectors of dimension {dim}")
        index._ids = np.frombuffer(body[offset:ids_end], "<i8").astype(np.int64)
        index._vectors = np.frombuffer(body[ids_end:vec_end], index.dtype.newbyteorder("<")).astype(
            index.dtype).reshape(count, dim)
        index._next_id = next_id
        return index

    @classmethod
    def load(cls, path: str | os.PathLike) -> Index:
        """Read an index saved by `save`; a corrupted, truncated or foreign file raises
        `IndexFileError` naming it."""
        path = os.fspath(path)
        with open(path, "rb") as f:
            data = f.read()
        return cls.from_bytes(data, path)


__all__ = ["Index", "IndexFileError"]
