"""Index files under hostile conditions: saves killed at random points, leftovers of killed
saves, permissions and symbolic links, and damaged headers or ids loaded without the checksum."""

import os
import random
import signal
import stat
import time

import numpy as np
import pytest

from loom.knn import Index, IndexFileError


def _index(seed: int, n: int = 20000, dim: int = 32, metric: str = "ip") -> Index:
    rng = np.random.default_rng(seed)
    index = Index(dim, metric)
    index.add(rng.standard_normal((n, dim)).astype(np.float32), ids=rng.permutation(3 * n)[:n])
    return index


def _same(a: Index, b: Index) -> bool:
    return a.metric == b.metric and np.array_equal(a.ids, b.ids) and np.array_equal(a.vectors, b.vectors)


def _temporaries(directory) -> list[str]:
    return [n for n in os.listdir(directory) if n.startswith(".loomknn-")]


def test_save_killed_at_random_points_leaves_old_or_new_and_next_save_cleans_up(tmp_path):
    old, new = _index(0), _index(1)
    path = tmp_path / "x.loomknn"
    old.save(path)
    queries = np.random.default_rng(2).standard_normal((3, 32)).astype(np.float32)
    rng = random.Random(0)
    left = 0
    for _ in range(10):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: tell the parent it starts, then save for ever
            try:
                os.write(write_end, b"1")
                while True:
                    new.save(path)
                    old.save(path)
            finally:
                os._exit(1)
        os.close(write_end)
        assert os.read(read_end, 1) == b"1"
        os.close(read_end)
        time.sleep(rng.uniform(0, 0.05))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        loaded = Index.load(path)
        assert _same(loaded, old) or _same(loaded, new)
        want = old if _same(loaded, old) else new
        got, expected = loaded.search(queries, 5, recall_target=1.0), want.search(queries, 5, recall_target=1.0)
        for a, b in zip(got, expected):
            np.testing.assert_array_equal(a, b)
        left += len(_temporaries(tmp_path))
    assert left > 0  # some kill landed inside a save (else this test proves nothing)
    old.save(path)
    assert _temporaries(tmp_path) == []
    assert _same(Index.load(path), old)


def test_save_keeps_the_temporary_of_a_live_save_and_removes_old_ones(tmp_path):
    index = _index(0, n=10)
    live = tmp_path / f".loomknn-00000000-{os.getpid()}-abc.tmp"  # another host: kept while fresh
    mine = tmp_path / f".loomknn-{_host()}-{os.getpid()}-abc.tmp"  # this process: alive
    stale = tmp_path / ".loomknn-legacy.tmp"
    for f in (live, mine, stale):
        f.write_bytes(b"partial")
    day_ago = time.time() - 2 * 24 * 3600
    os.utime(stale, (day_ago, day_ago))
    index.save(tmp_path / "x.loomknn")
    assert sorted(_temporaries(tmp_path)) == sorted([live.name, mine.name])


def _host() -> str:
    from loom.knn import index as module
    return module._HOST


def test_save_keeps_permissions_and_writes_through_symlinks(tmp_path):
    index = _index(0, n=10)
    path = tmp_path / "x.loomknn"
    index.save(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~_umask()
    os.chmod(path, 0o640)
    index.save(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    link = tmp_path / "link.loomknn"
    link.symlink_to(path)
    other = _index(1, n=7)
    other.save(link)
    assert link.is_symlink() and os.readlink(link) == str(path)
    assert _same(Index.load(path), other)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("mmap", [False, True])
def test_load_without_verify_rejects_a_damaged_metric(tmp_path, mmap):
    path = tmp_path / "x.loomknn"
    _index(0, n=50).save(path)
    data = bytearray(path.read_bytes())
    at = data.index(b'"ip"')
    data[at + 1:at + 3] = b"l2"  # another valid metric
    path.write_bytes(bytes(data))
    with pytest.raises(IndexFileError, match="x.loomknn: .*corrupted"):
        Index.load(path, verify=False, mmap=mmap)


@pytest.mark.parametrize("mmap", [False, True])
def test_load_without_verify_rejects_damaged_ids(tmp_path, mmap):
    path = tmp_path / "x.loomknn"
    index = _index(0, n=50)
    index.save(path)
    data = bytearray(path.read_bytes())
    first_id = int(index.ids[0]).to_bytes(8, "little")
    at = data.index(first_id, 64)
    data[at + 7] ^= 0x80  # the sign bit: a negative id
    path.write_bytes(bytes(data))
    with pytest.raises(IndexFileError, match="x.loomknn: .*corrupted"):
        Index.load(path, verify=False, mmap=mmap)
    data[at + 7] ^= 0x80
    data[at] ^= 0x01  # another id, still positive
    path.write_bytes(bytes(data))
    with pytest.raises(IndexFileError, match="x.loomknn: .*corrupted"):
        Index.load(path, verify=False, mmap=mmap)


def test_header_check_accepts_files_written_before_it(tmp_path):
    """Files from before the header's CRC (no "crc32" field) still load."""
    import hashlib
    import json
    index = _index(0, n=20)
    data = index.to_bytes()
    header_len = int.from_bytes(data[12:16], "little")
    header = json.loads(data[16:16 + header_len])
    del header["crc32"]
    text = json.dumps(header, sort_keys=True).encode()
    text += b" " * (header_len - len(text))
    body = data[:16] + text + data[16 + header_len:-32]
    old = body + hashlib.sha256(body).digest()
    assert _same(Index.from_bytes(old), index)
    assert _same(Index.from_bytes(old, verify=False), index)
