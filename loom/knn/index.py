"""`loom.knn.Index`: a flat, updatable collection of vectors searched by brute force with
approximate top-k. There is no index structure to build (TPU-KNN's point): `add` and `remove`
take effect for the next search at once, and each costs time in proportion to the vectors it
adds or removes, not to the size of the index:

- vectors (and, for "l2", their half squared norms) live in arrays with spare capacity that
  grows geometrically, so a run of small additions copies each vector O(1) times;
- `remove` moves the last vectors into the freed rows (storage order is not insertion order);
- the ids are found through a sorted copy of them with each one's row (binary search; an update
  shifts these two int64 arrays, 16 bytes per vector, where the vectors themselves are not moved).

File format (version 1), little-endian, written atomically (a temporary file in the same
directory, flushed and fsync'ed, then `os.replace`, then the directory fsync'ed), so a crash
during `save` leaves the previous file intact. The temporary file is named
`.loomknn-<host>-<pid>-<random>.tmp` (host: a hash of the host name); a save removes those of its
own host whose process no longer exists (a save killed before it finished), and any
`.loomknn-*.tmp` not modified for a day (a save in progress writes to its file without pause).
`save` through a symbolic link replaces the link's target, and keeps an existing file's
permission bits (a new file gets 0666 less the umask, as `open` gives):

    magic      8 bytes   b"LOOMKNN\\0"
    version    u32       1
    header_len u32       length of the JSON header
    header     JSON      {"dim", "metric", "dtype", "count", "next_id", "crc32"}, padded with
                         spaces so that the ids (and so the vectors) start at a multiple of 64
                         bytes; "crc32" is the CRC-32 of the other fields (as
                         `json.dumps(fields, sort_keys=True)` writes them) followed by the ids
                         (files written before it have none)
    ids        count x i64
    vectors    count x dim x dtype (in storage order; for "cos" the normalised vectors)
    checksum   32 bytes  SHA-256 of everything before it

`save` and `load` stream the file in pieces of at most 64 MiB, hashing as they go: neither
holds a second copy of the index in memory. `load(path, mmap=True)` maps the ids and vectors
instead of reading them (an index larger than memory; pages are read as searches touch them):
the first `add` or `remove` copies them into memory, and the file is never written.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import socket
import stat
import struct
import tempfile
import threading
import time
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, BinaryIO

import ml_dtypes
import numpy as np

from loom.knn.search import (
    as_array,
    as_tensor,
    check_database_batch,
    check_k,
    check_metric,
    check_recall_target,
    check_vectors,
    default_database_batch,
    from_array,
    half_squared_norms,
    is_tensor,
    normalize,
    on_gpu,
    search_gpu,
    search_prepared,
)

MAGIC = b"LOOMKNN\0"
VERSION = 1
_DTYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32, "float64": np.float64}
_PIECE = 64 << 20  # bytes per write or read of the file
_PREFIX = len(MAGIC) + 8  # magic, version, header length
_ALIGN = 64  # the ids start at a multiple of this (files written before may not)
_MAX_ID = int(np.iinfo(np.int64).max)
_HOST = f"{zlib.crc32(socket.gethostname().encode()):08x}"
_STALE_S = 24 * 3600  # a temporary file this long unmodified is no save in progress


class _ReadWriteLock:
    """Many readers or one writer. A waiting writer holds back new readers, so that a stream of
    searches cannot starve `add` / `remove`. Not reentrant."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._cond:
            while self._writing or self._writers_waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        with self._cond:
            self._writers_waiting += 1
            while self._writing or self._readers:
                self._cond.wait()
            self._writers_waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()


class IndexFileError(ValueError):
    """A saved index that cannot be loaded: not an index file, an unknown version, truncated or
    corrupted (checksum mismatch). The message names the file."""


class Index:
    """Vectors of dimension `dim` with int64 ids, searched with `metric` ("ip", "l2" or "cos").

    `add(vectors, ids=None)` appends (ids default to consecutive integers), `remove(ids)` deletes,
    `search(queries, k, recall_target=0.95)` returns (scores, ids) as `loom.knn.search` does, and
    `save(path)` / `Index.load(path)` persist it. Additions and removals cost time in proportion
    to their own size (see the module docstring). `dtype` is the stored vectors' type: float32,
    float64, float16 or bfloat16 (half-precision vectors take half the memory and are searched
    as stored, widened chunk by chunk).

    Threads: an Index may be shared by any number of threads. `search`, `ids`, `vectors`,
    `write` / `save` / `to_bytes` read a consistent snapshot: the state after some sequence of
    whole `add` / `remove` calls, never one in the middle (so every returned id comes with the
    score of that id's vector, and no id twice). They run in parallel with each other; `add` and
    `remove` run one at a time, each waiting for the reads in progress to finish (and holding
    back new ones while it waits). Ids that `add` assigns are unique across threads."""

    def __init__(self, dim: int, metric: str = "ip", dtype: Any = np.float32) -> None:
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim <= 0:
            raise ValueError(f"dim must be a positive int, but got {dim!r}")
        self.dim = int(dim)
        self.metric = check_metric(metric)
        try:
            name = np.dtype(dtype).name
        except TypeError:
            name = repr(dtype)
        if name not in _DTYPES:
            raise TypeError(f"dtype must be one of {', '.join(_DTYPES)}, but got {name}")
        self.dtype = np.dtype(name)
        self._size = 0
        # rows [0, _size) of these are live; the rest is spare capacity
        self._vectors = np.empty((0, self.dim), self.dtype)
        self._ids = np.empty((0,), np.int64)
        self._norms = half_squared_norms(self._vectors) if self.metric == "l2" else None
        # rows [0, _size) of these: every live id, ascending, and the row holding it
        self._sorted_ids = np.empty((0,), np.int64)
        self._sorted_rows = np.empty((0,), np.int64)
        self._next_id = 0
        self._lock = _ReadWriteLock()

    def __len__(self) -> int:
        return self._size

    def __repr__(self) -> str:
        return f"Index(dim={self.dim}, metric={self.metric!r}, dtype={self.dtype.name}, size={len(self)})"

    @property
    def ids(self) -> np.ndarray:
        """The ids in storage order (a copy)."""
        with self._lock.reading():
            return self._ids[:self._size].copy()

    @property
    def vectors(self) -> np.ndarray:
        """The stored vectors in storage order (for "cos", normalised; a copy)."""
        with self._lock.reading():
            return self._vectors[:self._size].copy()

    def add(self, vectors: Any, ids: Any = None) -> np.ndarray:
        """Append `vectors` (n x dim, or one vector); returns their ids. `ids` (n distinct ints not
        in the index) default to consecutive integers after the largest id used so far."""
        x = check_vectors(vectors, "vectors", dim=self.dim, dtype=self.dtype)
        if self.metric == "cos":
            x = normalize(x, "vectors")
        with self._lock.writing():
            return self._add(x, ids)

    def _add(self, x: np.ndarray, ids: Any) -> np.ndarray:
        n = x.shape[0]
        if ids is None:
            if self._next_id + n - 1 > _MAX_ID:
                raise ValueError(f"cannot number {n} more vectors: ids would pass the int64 maximum {_MAX_ID} "
                                 f"(the largest id used is {self._next_id - 1}); pass ids explicitly")
            new_ids = np.arange(self._next_id, self._next_id + n, dtype=np.int64)
        else:
            new_ids = np.asarray(ids)
            if new_ids.ndim == 0:
                new_ids = new_ids[None]
            if new_ids.size == 0:
                new_ids = new_ids.astype(np.int64)  # [] is float64 to numpy
            if new_ids.dtype.kind not in "iu":
                raise TypeError(f"ids must be integers, but got dtype {new_ids.dtype}")
            if new_ids.dtype == np.uint64 and new_ids.size and new_ids.max() > np.iinfo(np.int64).max:
                raise ValueError(f"ids must fit in int64, but got {int(new_ids.max())}")
            new_ids = new_ids.astype(np.int64)
            if new_ids.shape != (n,):
                raise ValueError(f"ids must have one entry per vector ({n}), but got shape {new_ids.shape}")
        order = np.argsort(new_ids, kind="stable")
        ascending = new_ids[order]
        if n > 1 and (ascending[1:] == ascending[:-1]).any():
            raise ValueError("ids contain duplicates")
        known = self._sorted_ids[:self._size]
        at = np.searchsorted(known, ascending)
        taken = known[np.minimum(at, self._size - 1)] == ascending if self._size else at < 0
        if taken.any():
            raise ValueError(f"ids already in the index: {ascending[taken][:10].tolist()}")
        start, stop = self._size, self._size + n
        self._reserve(stop)
        self._vectors[start:stop] = x
        self._ids[start:stop] = new_ids
        if self._norms is not None:
            self._norms[start:stop] = half_squared_norms(x)
        if n and at[0] < start:
            # make room: each sorted entry from the first insertion point up moves by the number
            # of new ids before it (additions in ascending order of id, the usual case, move none)
            tail = np.arange(at[0], start)
            to = tail + np.searchsorted(at, tail, side="right")
            self._sorted_ids[to] = self._sorted_ids[at[0]:start].copy()
            self._sorted_rows[to] = self._sorted_rows[at[0]:start].copy()
        slots = at + np.arange(n)
        self._sorted_ids[slots] = ascending
        self._sorted_rows[slots] = start + order
        self._size = stop
        if n:
            self._next_id = max(self._next_id, int(ascending[-1]) + 1)
        return new_ids

    def contains(self, ids: Any) -> np.ndarray:
        """Whether each of `ids` (ints) is in the index: a bool array of their shape."""
        wanted = np.asarray(ids, dtype=np.int64)
        with self._lock.reading():
            known = self._sorted_ids[:self._size]
            if not self._size:
                return np.zeros(wanted.shape, bool)
            return known[np.minimum(np.searchsorted(known, wanted), self._size - 1)] == wanted

    @classmethod
    def from_stored(cls, dim: int, metric: str, dtype: Any, vectors: np.ndarray, ids: np.ndarray,
                    next_id: int) -> Index:
        """An index of vectors as another index stores them (checked, and normalised for "cos":
        taken bit for bit), with these ids and id counter."""
        index = cls(dim, metric, dtype)
        index._add(np.asarray(vectors, index.dtype), np.asarray(ids, np.int64))
        index._next_id = max(index._next_id, int(next_id))
        return index

    def remove(self, ids: Any) -> None:
        """Delete the vectors with these ids; an id not in the index is an error (nothing is
        removed then)."""
        gone = np.atleast_1d(np.asarray(ids))
        if gone.size == 0:
            return  # `[]` is float64 to numpy: nothing to remove, whatever its dtype
        if gone.dtype.kind not in "iu":
            raise TypeError(f"ids must be integers, but got dtype {gone.dtype}")
        if gone.dtype == np.uint64 and gone.max() > _MAX_ID:
            raise KeyError(f"unknown ids: {[int(i) for i in gone[gone > _MAX_ID][:10]]}")
        with self._lock.writing():
            self._remove(np.unique(gone.astype(np.int64).reshape(-1)))

    def _remove(self, gone: np.ndarray) -> None:
        known = self._sorted_ids[:self._size]
        at = np.searchsorted(known, gone)
        present = known[np.minimum(at, self._size - 1)] == gone if self._size else at < 0
        if not present.all():
            raise KeyError(f"unknown ids: {gone[~present][:10].tolist()}")
        if not self._vectors.flags.writeable:  # mapped from a file by `load(mmap=True)`
            self._resize(len(self._ids))
        rows = self._sorted_rows[at]
        size = self._size - len(gone)
        # The last live rows that stay fill the freed rows below `size`.
        holes = rows[rows < size]
        tail = np.ones(self._size - size, bool)
        tail[rows[rows >= size] - size] = False
        fillers = size + np.flatnonzero(tail)
        holes.sort()
        self._vectors[holes] = self._vectors[fillers]
        self._ids[holes] = self._ids[fillers]
        if self._norms is not None:
            self._norms[holes] = self._norms[fillers]
        if len(at):  # close the gaps in the sorted ids from the first removed one up
            lo, end = at[0], self._size
            keep = np.ones(end - lo, bool)
            keep[at - lo] = False
            self._sorted_ids[lo:size] = self._sorted_ids[lo:end][keep]
            self._sorted_rows[lo:size] = self._sorted_rows[lo:end][keep]
        self._sorted_rows[np.searchsorted(self._sorted_ids[:size], self._ids[holes])] = holes
        self._size = size
        if size <= len(self._ids) // 4:
            self._resize(size)  # give memory back after large removals

    def _reserve(self, size: int) -> None:
        """Capacity for `size` rows: at least 1.5x the current, so that n additions copy O(n) rows."""
        if size > len(self._ids):
            self._resize(max(size, len(self._ids) * 3 // 2, 16))

    def _resize(self, capacity: int) -> None:
        n = self._size

        def moved(a: np.ndarray) -> np.ndarray:
            # zeros (pages the system maps as they are touched, so no slower than empty): the
            # spare rows hold finite values, which a sharded search pads with (loom.knn.sharded)
            b = np.zeros((capacity, *a.shape[1:]), a.dtype)
            b[:n] = a[:n]
            return b

        self._vectors, self._ids = moved(self._vectors), moved(self._ids)
        self._sorted_ids, self._sorted_rows = moved(self._sorted_ids), moved(self._sorted_rows)
        if self._norms is not None:
            self._norms = moved(self._norms)

    def search(self, queries: Any, k: int, recall_target: float = 0.95, batch_size: int | None = None,
               progress: bool = False, database_batch: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The `k` best vectors for each query: (scores, ids), best first (see `loom.knn.search`).
        The index goes through in batches of `database_batch` rows, each swept once for all the
        queries (all at once by default). Tensor queries give tensors back; CUDA ones are searched
        on the GPU, the index streaming from host memory through it in batches (by default as many
        rows as fit in a quarter of the free GPU memory)."""
        recall_target = check_recall_target(recall_target)
        database_batch = check_database_batch(database_batch)
        with self._lock.reading():
            return self._search(queries, k, recall_target, batch_size, progress, database_batch)

    def _search(self, queries: Any, k: int, recall_target: float, batch_size: int | None, progress: bool,
                database_batch: int | None) -> tuple[np.ndarray, np.ndarray]:
        if len(self) == 0:
            raise ValueError("the index is empty: add vectors before searching")
        k = check_k(k, len(self))
        n = self._size
        if is_tensor(queries):
            t = as_tensor(queries, "queries")
            if t.shape[1] != self.dim:
                raise ValueError(f"queries have dimension {t.shape[1]}, but the index/database has dimension "
                                 f"{self.dim}")
            if on_gpu(t):
                import torch
                db = from_array(self._vectors[:n])
                # the stored vectors were checked when added (and normalised for "cos")
                scores, rows = search_gpu(t.to(db.dtype), db, k, self.metric, recall_target, batch_size, progress,
                                          database_batch, check_database=False)
                return scores, torch.as_tensor(self._ids[:n], device=rows.device)[rows]
            scores, ids = self._search(as_array(t), k, recall_target, batch_size, progress, database_batch)
            return from_array(scores), from_array(ids)
        q = check_vectors(queries, "queries", dim=self.dim, dtype=self.dtype)
        norms = None if self._norms is None else self._norms[:n]
        if database_batch is None:
            database_batch = default_database_batch(self._vectors)
        scores, rows = search_prepared(q, self._vectors[:n], norms, k, self.metric, recall_target, batch_size,
                                       progress, database_rows=database_batch)
        return scores, self._ids[rows]

    # Persistence ----------------------------------------------------------------------------------

    def write(self, f: BinaryIO) -> None:
        """Write the index in the file format (module docstring) to the binary file `f`."""
        with self._lock.reading():
            self._write(f)

    def _write(self, f: BinaryIO) -> None:
        n = self._size
        fields = {"dim": self.dim, "metric": self.metric, "dtype": self.dtype.name, "count": n,
                  "next_id": self._next_id}
        ids = self._ids[:n].astype("<i8", copy=False)
        header = json.dumps({**fields, "crc32": _fields_crc(fields, ids)}, sort_keys=True).encode()
        header += b" " * (-(_PREFIX + len(header)) % _ALIGN)  # aligned arrays for `load(mmap=True)`
        head = MAGIC + struct.pack("<II", VERSION, len(header)) + header
        digest = hashlib.sha256()
        with ThreadPoolExecutor(1, thread_name_prefix="loom-knn-sha256") as hasher:
            last = hasher.submit(digest.update, head)
            f.write(head)
            for piece in _pieces(ids,
                                 self._vectors[:n].astype(self.dtype.newbyteorder("<"), copy=False)):
                last = hasher.submit(digest.update, piece)  # hashed while the next piece is written
                f.write(piece)
            last.result()
        f.write(digest.digest())

    def to_bytes(self) -> bytes:
        """The index in the file format (module docstring)."""
        out = io.BytesIO()
        self.write(out)
        return out.getvalue()

    def save(self, path: str | os.PathLike) -> None:
        """Write the index to `path` atomically: the old file stays intact until the new one is
        complete on disk. A symbolic link is written through (its target replaced); an existing
        file keeps its permission bits. Temporary files left by killed saves in the same directory
        are removed (module docstring)."""
        atomic_write(path, self.write)

    @classmethod
    def read(cls, f: BinaryIO, source: str = "<stream>", verify: bool = True, mmap: bool = False) -> Index:
        """Read an index in the file format (module docstring) from the binary file `f`, which
        must be seekable; `source` names it in errors (`IndexFileError`). `verify=False` skips
        the checksum over the whole file: the header fields, the size, and the header's CRC-32
        of its fields and the ids are still checked (so a damaged metric or id is an error), but
        damaged vector bytes go undetected. With `mmap`, the ids and vectors are
        mapped from the file `f` is open on (see `load`)."""
        def fail(why: str) -> IndexFileError:
            return IndexFileError(f"{source}: {why}")

        total = f.seek(0, io.SEEK_END)
        f.seek(0)
        prefix = f.read(_PREFIX)
        if total < _PREFIX + 32 or not prefix.startswith(MAGIC):
            raise fail("not a loom knn index file (bad magic)")
        version, header_len = struct.unpack_from("<II", prefix, len(MAGIC))
        if version != VERSION:
            raise fail(f"unsupported index file version {version} (this loom reads version {VERSION})")
        corrupted = fail("checksum mismatch: the file is corrupted or truncated")
        header_bytes = f.read(header_len) if _PREFIX + header_len <= total - 32 else b""
        try:
            header = json.loads(header_bytes)
            dim, metric, dtype = int(header["dim"]), header["metric"], _DTYPES[header["dtype"]]
            count, next_id = int(header["count"]), int(header["next_id"])
            if not 0 <= next_id <= _MAX_ID + 1:
                raise ValueError(f"next_id {next_id} is not in [0, 2^63]")
            index = cls(dim, metric, dtype)
        except (ValueError, KeyError, TypeError, OverflowError) as e:
            # a damaged header is reported as damage when the checksum says so
            raise (corrupted if not _checksum_matches(f, total) else fail(f"bad header ({e})")) from None
        if count < 0 or _PREFIX + header_len + count * (8 + dim * index.dtype.itemsize) + 32 != total:
            raise (corrupted if not _checksum_matches(f, total) else
                   fail(f"size mismatch: header says {count} vectors of dimension {dim}"))
        at = _PREFIX + header_len
        mapped = mmap and np.little_endian and count > 0 and at % 8 == 0
        if mapped:
            if verify and not _checksum_matches(f, total):
                raise corrupted
            index._ids = np.memmap(f, "<i8", "r", at, (count,))
            index._vectors = np.memmap(f, index.dtype, "r", at + 8 * count, (count, dim))
            capacity = count
        else:
            digest = hashlib.sha256(prefix + header_bytes) if verify else None
            index._reserve(count)
            with ThreadPoolExecutor(1, thread_name_prefix="loom-knn-sha256") as hasher:
                last = None
                for piece in _pieces(index._ids[:count], index._vectors[:count]):
                    if f.readinto(piece) != piece.size:
                        raise corrupted
                    if digest is not None:
                        last = hasher.submit(digest.update, piece)  # hashed while the next piece is read
                if last is not None:
                    last.result()
            if digest is not None and f.read(32) != digest.digest():
                raise corrupted
            if not np.little_endian:
                index._ids.byteswap(inplace=True)
                index._vectors.byteswap(inplace=True)
            capacity = len(index._ids)
        index._size = count
        ids = index._ids[:count]
        if "crc32" in header and header["crc32"] != _fields_crc(
                {key: header[key] for key in ("dim", "metric", "dtype", "count", "next_id")}, ids):
            raise fail("the header's CRC-32 does not match its fields and the ids: the file is corrupted")
        if count and int(ids.max()) >= next_id:
            raise fail(f"id {int(ids.max())} is not below the header's next_id {next_id}: the file is corrupted")
        order = np.argsort(ids, kind="stable")
        index._sorted_ids, index._sorted_rows = np.empty(capacity, np.int64), np.empty(capacity, np.int64)
        index._sorted_ids[:count], index._sorted_rows[:count] = ids[order], order
        if count > 1 and (index._sorted_ids[1:count] == index._sorted_ids[:count - 1]).any():
            raise fail("the file holds duplicate ids")
        if index._norms is not None:
            index._norms = np.empty(capacity, index._norms.dtype)
            index._norms[:count] = half_squared_norms(index._vectors[:count])
        index._next_id = next_id
        return index

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "<bytes>", verify: bool = True) -> Index:
        """Read an index from bytes in the file format (see `read`)."""
        return cls.read(io.BytesIO(data), source, verify)

    @classmethod
    def load(cls, path: str | os.PathLike, mmap: bool = False, verify: bool = True) -> Index:
        """Read an index saved by `save`; a corrupted, truncated or foreign file raises
        `IndexFileError` naming it.

        With `mmap`, the ids and vectors stay in the file, mapped read-only: an index larger
        than memory loads at once (its pages are read as searches touch them, the searches
        going through it in batches of about 1 GiB) and takes 16 bytes per vector of memory
        (sorted ids), 20 for "l2" (the norms). The first `add` or `remove` copies it into
        memory; the file is never written. A file written before the header was padded to
        align the arrays is read into memory instead. `verify=False` skips the checksum, which
        otherwise reads the whole file once (without keeping it); the header and the ids are
        checked either way (see `read`)."""
        path = os.fspath(path)
        with open(path, "rb") as f:
            return cls.read(f, path, verify, mmap)


def atomic_write(path: str | os.PathLike, write: Any) -> None:
    """`write(f)` into a temporary file beside `path` (flushed and fsync'ed), renamed over `path`,
    then the directory fsync'ed: `path` holds the old content or the new, never a part (see the
    module docstring: permission bits, symbolic links, temporaries of killed saves)."""
    path = os.path.realpath(os.fspath(path))
    directory = os.path.dirname(path)
    _remove_stale_temporaries(directory)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".loomknn-{_HOST}-{os.getpid()}-", suffix=".tmp", dir=directory)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            write(f)
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


def _pieces(*arrays: np.ndarray) -> Iterator[np.ndarray]:
    """The bytes of the (contiguous) arrays in order, as uint8 views of at most _PIECE bytes.
    On another thread, hashlib releases the GIL for each piece, as file reads and writes do: hashing one
    piece overlaps the I/O of the next (save and load take ~25% less time than hashing in line)."""
    for part in arrays:
        flat = part.reshape(-1).view(np.uint8)
        for a in range(0, flat.size, _PIECE):
            yield flat[a:a + _PIECE]


def _fields_crc(fields: dict[str, Any], ids: np.ndarray) -> int:
    """CRC-32 of the header fields (canonical JSON) followed by the little-endian ids."""
    crc = zlib.crc32(json.dumps(fields, sort_keys=True).encode())
    return zlib.crc32(np.ascontiguousarray(ids, "<i8").view(np.uint8), crc)


def _umask() -> int:
    """The process's umask, read without changing it (os.umask would, for every thread)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    return 0o022


def _remove_stale_temporaries(directory: str) -> None:
    """Remove the temporary files of saves that can no longer finish: those of this host whose
    process is gone, and any not modified for `_STALE_S` seconds."""
    try:
        names = [n for n in os.listdir(directory) if n.startswith(".loomknn-") and n.endswith(".tmp")]
    except OSError:
        return
    for name in names:
        parts = name.split("-")
        gone = False
        if len(parts) >= 4 and parts[1] == _HOST and parts[2].isdigit():
            try:
                os.kill(int(parts[2]), 0)
            except ProcessLookupError:
                gone = True
            except (PermissionError, OverflowError):
                pass  # alive (another user's) or not a pid
        try:
            if gone or time.time() - os.stat(os.path.join(directory, name)).st_mtime > _STALE_S:
                os.unlink(os.path.join(directory, name))
        except OSError:
            pass  # removed meanwhile, or not ours to remove


def _checksum_matches(f: BinaryIO, total: int) -> bool:
    """Whether the last 32 bytes of `f` are the SHA-256 of the rest."""
    f.seek(0)
    digest = hashlib.sha256()
    left = total - 32
    while left > 0:
        piece = f.read(min(_PIECE, left))
        if not piece:
            return False
        digest.update(piece)
        left -= len(piece)
    return f.read(32) == digest.digest()


__all__ = ["Index", "IndexFileError", "atomic_write"]
