"""The Triton kernel of knn.fused_score_top_k, run by Triton's interpreter (TRITON_INTERPRET=1) on
CPU tensors at small sizes, against the numpy reference kernel and exact search. The interpreter
must be chosen before triton is imported, so the checks run in a fresh Python process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from support.paths import ROOT

pytest.importorskip("torch")
pytest.importorskip("triton")

CHECKS = textwrap.dedent("""
    import json
    import numpy as np
    import torch
    from loom.backend import knn_kernels, triton_knn
    assert triton_knn.INTERPRETING
    rng = np.random.default_rng(3)
    out = []
    cases = [  # dtype, metric, is_max_k, n, queries, dim, k, recall_target, aggregate
        ("float32", "ip", True, 700, 37, 24, 5, 0.95, True),
        ("float32", "l2", False, 1200, 20, 16, 10, 0.9, True),
        ("bfloat16", "ip", True, 1000, 20, 32, 10, 0.95, True),
        ("float16", "l2", False, 900, 18, 20, 3, 1.0, True),
        ("float32", "ip", False, 1300, 17, 8, 4, 0.8, False),
    ]
    for dtype, metric, is_max, n, nq, d, k, r, aggregate in cases:
        q = rng.standard_normal((nq, d)).astype(np.float32)
        db = rng.standard_normal((n, d)).astype(np.float32)
        tq = torch.from_numpy(q).to(getattr(torch, dtype))
        tdb = torch.from_numpy(db).to(getattr(torch, dtype))
        qf, dbf = tq.float().numpy(), tdb.float().numpy()  # the values the kernel sees
        h = 0.5 * (dbf * dbf).sum(1) if metric == "l2" else None
        v, i = triton_knn.fused_score_top_k(tq, tdb, None if h is None else torch.from_numpy(h), metric, k, r,
                                            is_max, aggregate_to_topk=aggregate, precision="ieee")
        rv, ri = knn_kernels.fused_score_top_k_reference(qf, dbf, h, metric, k, r, is_max, -1, aggregate)
        scores = qf.astype(np.float64) @ dbf.astype(np.float64).T
        if metric == "l2":
            scores = h[None, :] - scores
        exact = np.argsort(-scores if is_max else scores, axis=1, kind="stable")[:, :k]
        got = i.numpy()
        hits = sum(len(set(a.tolist()) & set(b.tolist())) for a, b in zip(got[:, :k] if aggregate else got, exact))
        out.append({"case": [dtype, metric, is_max, n, k, r, aggregate], "shape": list(got.shape),
                    "ref_shape": list(ri.shape), "same_indices": float((got == ri).mean()),
                    "value_error": float(np.abs(v.float().numpy() - rv).max()), "recall": hits / exact.size,
                    "values_match_indices": float(np.abs(np.take_along_axis(scores, got.astype(np.int64), 1)
                                                        - v.float().numpy().astype(np.float64)).max())})
    # the search API: l2 distances and cosine against exact search
    q = rng.standard_normal((9, 12)).astype(np.float32)
    db = rng.standard_normal((600, 12)).astype(np.float32)
    for metric in ("l2", "cos"):
        s, i = triton_knn.search(torch.from_numpy(q), torch.from_numpy(db), 6, metric=metric, recall_target=1.0,
                                 precision="ieee")
        if metric == "l2":
            full = ((q[:, None, :] - db[None, :, :]) ** 2).sum(-1)
            want = np.argsort(full, axis=1, kind="stable")[:, :6]
        else:
            qn = q / np.linalg.norm(q, axis=1, keepdims=True)
            dn = db / np.linalg.norm(db, axis=1, keepdims=True)
            full = -(qn @ dn.T)
            want = np.argsort(full, axis=1, kind="stable")[:, :6]
        out.append({"search": metric, "same_indices": float((i.numpy() == want).mean()),
                    "score_error": float(np.abs(np.abs(s.numpy()) - np.abs(np.take_along_axis(full, want, 1))).max())})
    # a database streamed through in batches: exact at recall_target=1, recall kept otherwise
    db = rng.standard_normal((1100, 12)).astype(np.float32)
    exact = np.argsort(-(q @ db.T), axis=1, kind="stable")[:, :7]
    for target in (1.0, 0.9):
        s, i = triton_knn.search(torch.from_numpy(q), torch.from_numpy(db), 7, recall_target=target, batch_rows=300,
                                 precision="ieee")
        hits = sum(len(set(a.tolist()) & set(b.tolist())) for a, b in zip(i.numpy(), exact))
        out.append({"stream": target, "recall": hits / exact.size, "same_indices": float((i.numpy() == exact).mean()),
                    "scores_sorted": bool(np.all(np.diff(s.numpy(), axis=1) <= 0)),
                    "scores_match": float(np.abs(np.take_along_axis(q @ db.T, i.numpy(), 1) - s.numpy()).max())})
    # the torch backend of the compiled executor runs knn.fused_score_top_k with this kernel
    import loom
    from loom import lax
    q = rng.standard_normal((5, 16)).astype(np.float32)
    db = rng.standard_normal((400, 16)).astype(np.float32)
    module = loom.jit(lambda q, db: lax.approx_max_k(q @ db.T, 4)).lower(q, db).compile().as_text()
    got = loom.execute(module, torch.from_numpy(q), torch.from_numpy(db), backend="torch")
    want = lax.approx_max_k(q @ db.T, 4)
    out.append({"torch_backend": "knn.fused_score_top_k" in module,
                "same_indices": float((np.asarray(got[1]) == want[1]).mean()),
                "value_error": float(np.abs(np.asarray(got[0]) - want[0]).max())})
    # the bin maximum itself, for every mask case of the kernel: bins a multiple of the bin tile or
    # not (FULL_TILES), the dimension a power of two or not (EVEN_D), a last partial row of bins or
    # none; every other case with packed scores (values truncated to 23 - step_bits bits)
    base = triton_knn.tile_config(8, 64, 16, torch.float32)
    for case, (n, d, bins) in enumerate(((640, 16, 32), (650, 16, 32), (650, 20, 40), (640, 24, 40), (37, 16, 48),
                                         (1000, 16, 16))):
        q = rng.standard_normal((19, d)).astype(np.float32)
        db = rng.standard_normal((n, d)).astype(np.float32)
        h = rng.standard_normal(n).astype(np.float32)
        for norms in (None, h):
            packed = case % 2 == 1 and triton_knn.use_packed({"packed": True}, n, bins)
            cfg = dict(base, packed=packed)
            tq, tdb = torch.from_numpy(q), torch.from_numpy(db)
            th = None if norms is None else torch.from_numpy(norms)
            v, i = triton_knn.partial_reduce(tq, tdb, th, bins, cfg, "ieee")
            scores = q.astype(np.float64) @ db.astype(np.float64).T + (0 if norms is None else norms[None, :])
            padded = np.full((19, -(-n // bins) * bins), -np.inf)
            padded[:, :n] = scores
            per_bin = padded.reshape(19, -1, bins)
            want_v = per_bin.max(1)
            want_i = per_bin.argmax(1) * bins + np.arange(bins)
            want_i[want_v == -np.inf] = -1
            empty = want_v == -np.inf
            got_i = i.numpy().astype(np.int64)
            at_index = np.take_along_axis(scores, np.where(empty, 0, got_i), 1)
            tol = 2.0 ** -(23 - triton_knn.step_bits(n, bins)) if packed else 5e-5
            row = {"partial": [n, d, bins, norms is not None, bool(packed)],
                   "same_indices": float((got_i == want_i).mean()),
                   "index_is_a_bin_max": bool(np.all(empty | (np.abs(at_index - want_v) <= 2 * tol * np.abs(want_v)
                                                             + 1e-4))),
                   "index_in_its_bin": bool(np.all(empty | (got_i % bins == np.arange(bins)))),
                   "value_error": float(np.max(np.where(empty, 0, np.abs(v.numpy() - want_v)
                                                        / (np.abs(want_v) + 1e-3)))),
                   "tolerance": 2 * tol, "empty_bins_are_minus_inf": bool(np.all(v.numpy()[empty] == -np.inf))}
            if packed:  # the winners rescored exactly, against the exact kernel's selection
                k = 5
                sv, si = triton_knn.select_top_k(tq, tdb, th, v, i, k, True)
                ev, ei = triton_knn.partial_reduce(tq, tdb, th, bins, base, "ieee")
                xv, xi = triton_knn.select_top_k(tq, tdb, th, ev, ei, k, False)
                row["rescored_error"] = float(np.abs(sv.numpy() - np.take_along_axis(scores, si.numpy(), 1)).max())
                row["rescored_sorted"] = bool(np.all(np.diff(sv.numpy(), axis=1) <= 0))
                row["same_selection"] = float((si.numpy() == xi.numpy()).mean())
            out.append(row)
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def results():
    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.run([sys.executable, "-c", CHECKS], capture_output=True, text=True, env=env, timeout=600,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_kernel_equals_reference_kernel(results):
    for r in results:
        if "case" not in r:
            continue
        dtype = r["case"][0]
        assert r["shape"] == r["ref_shape"], r
        assert r["same_indices"] == 1.0, r
        # the kernel returns its fp32 scores rounded to the input dtype
        assert r["value_error"] <= {"float32": 1e-4, "float16": 1e-2, "bfloat16": 0.1}[dtype], r
        assert r["values_match_indices"] <= {"float32": 1e-4, "float16": 1e-2, "bfloat16": 0.1}[dtype], r


def test_recall_and_exact_cases(results):
    for r in results:
        if "case" not in r:
            continue
        _, _, _, _, _, target, aggregate = r["case"]
        if aggregate:
            assert r["recall"] >= target, r
        if target == 1.0:
            assert r["recall"] == 1.0, r


def test_streamed_database(results):
    rows = {r["stream"]: r for r in results if "stream" in r}
    assert rows[1.0]["same_indices"] == 1.0
    assert rows[0.9]["recall"] >= 0.9
    for r in rows.values():
        assert r["scores_sorted"] and r["scores_match"] <= 1e-4, r


def test_torch_backend_uses_the_kernel(results):
    (r,) = [r for r in results if "torch_backend" in r]
    assert r["torch_backend"] and r["same_indices"] == 1.0 and r["value_error"] <= 1e-4, r


def test_bin_maximum_every_mask_case(results):
    rows = [r for r in results if "partial" in r]
    assert len(rows) == 12 and sum(r["partial"][4] for r in rows) == 6
    for r in rows:
        assert r["index_is_a_bin_max"] and r["index_in_its_bin"] and r["empty_bins_are_minus_inf"], r
        assert r["value_error"] <= r["tolerance"], r
        if not r["partial"][4]:  # exact kernel: the exact arg-max (no ties in random data)
            assert r["same_indices"] == 1.0, r
        else:  # packed: the winners rescored exactly and sorted, the same selection as the exact kernel
            assert r["same_indices"] >= 0.99 and r["rescored_error"] <= 1e-4 and r["rescored_sorted"], r
            assert r["same_selection"] == 1.0, r


def test_gpu_bin_count_fills_the_gpu():
    from loom.backend import triton_knn
    from loom.dialects.knn import num_bins
    if triton_knn.INTERPRETING:
        pytest.skip("the interpreter keeps XLA's bin count")
    n, k, r = 1_000_000, 10, 0.95
    xla = num_bins(n, 2, k, r)
    for nq, block_q, block_l, slots in ((10_000, 256, 32, 264), (10_000, 128, 64, 264), (1024, 128, 64, 132),
                                        (100_000, 256, 32, 264)):
        bins = triton_knn.gpu_bins(n, k, r, nq, block_q, block_l, slots=slots)
        tiles = bins // block_l
        assert bins % block_l == 0 and xla <= bins <= 8 * -(-xla // block_l) * block_l
        q_tiles = -(-nq // block_q)
        least = -(-xla // block_l)
        cost = {t: -(-(q_tiles * t) // slots) / t for t in range(least, 8 * least + 1)}  # waves x rows per bin
        best = min(cost.values())
        assert cost[tiles] <= 1.02 * best
        assert all(cost[t] > 1.02 * best for t in range(least, tiles))
    # 10k queries in 40 tiles of 256 over 264 slots: XLA's 8 bin tiles make 320 programs (2 waves,
    # the second a fifth full); 13 tiles make 520 (2 waves, 98% full), within 2% of 33 tiles' 5 full waves
    assert triton_knn.gpu_bins(n, k, r, 10_000, 256, 32, slots=264) == 13 * 32
    # XLA's count is kept where it already covers the database, and a tiny database is not split further
    assert triton_knn.gpu_bins(100, 10, 0.95, 10_000, 256, 32, slots=264) == num_bins(100, 2, 10, 0.95)


def test_search_api_against_exact(results):
    rows = [r for r in results if "search" in r]
    assert {r["search"] for r in rows} == {"l2", "cos"}
    for r in rows:
        assert r["same_indices"] == 1.0, r
        assert r["score_error"] <= 1e-3, r


SEARCH_API = textwrap.dedent("""
    import json
    import numpy as np
    import torch
    import loom
    rng = np.random.default_rng(5)
    q = rng.standard_normal((9, 12)).astype(np.float32)
    db = rng.standard_normal((600, 12)).astype(np.float32)
    out = {}
    for metric in ("ip", "l2", "cos"):
        want_s, want_i = loom.knn.search(q, db, 5, metric=metric, recall_target=1.0)
        for how, kw in (("resident", {}), ("streamed", {"database_batch": 250}), ("query batches", {"batch_size": 4})):
            s, i = loom.knn.search(torch.from_numpy(q), torch.from_numpy(db), 5, metric=metric, recall_target=1.0,
                                   **kw)
            out[f"{metric} {how}"] = [type(s).__name__, type(i).__name__, str(i.dtype),
                                      bool((i.numpy() == want_i).all()), float(np.abs(s.numpy() - want_s).max())]
    s, i = loom.knn.search(torch.from_numpy(q), db, 5, recall_target=1.0)  # an array database: a CPU tensor
    out["mixed"] = bool((i.numpy() == loom.knn.search(q, db, 5, recall_target=1.0)[1]).all())
    errors = []
    bad = torch.from_numpy(db.copy())
    bad[333, 4] = float("inf")
    zero = torch.from_numpy(db.copy())
    zero[401] = 0.0
    for database, kw in ((bad, {"database_batch": 250}), (bad, {}), (zero, {"metric": "cos", "database_batch": 250})):
        try:
            loom.knn.search(torch.from_numpy(q), database, 5, **kw)
            errors.append(None)
        except ValueError as e:
            errors.append(str(e))
    out["errors"] = errors
    for metric in ("ip", "l2", "cos"):  # an Index searched with tensor queries: its ids, as tensors
        index = loom.knn.Index(12, metric)
        index.add(db, ids=np.arange(600) * 7 + 3)
        index.remove([10, 17, 4_000])
        want_s, want_i = index.search(q, 5, recall_target=1.0)
        for how, kw in (("resident", {}), ("streamed", {"database_batch": 250})):
            s, i = index.search(torch.from_numpy(q), 5, recall_target=1.0, **kw)
            out[f"index {metric} {how}"] = [type(s).__name__, str(i.dtype), bool((i.numpy() == want_i).all()),
                                            float(np.abs(s.numpy() - want_s).max())]
    print(json.dumps(out))
""")


def test_knn_search_on_torch_tensors_takes_the_triton_kernel():
    # loom.knn.search on torch tensors: CUDA tensors take the Triton kernel; under Triton's
    # interpreter CPU tensors do too, which is how this checks that route (resident, streamed in
    # database batches, in query batches) against the CPU kernel at recall 1 (exact).
    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.run([sys.executable, "-c", SEARCH_API], capture_output=True, text=True, env=env, timeout=600,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    for metric in ("ip", "l2", "cos"):
        for how in ("resident", "streamed", "query batches"):
            kind, index_kind, index_dtype, same, error = out[f"{metric} {how}"]
            assert (kind, index_kind, index_dtype, same) == ("Tensor", "Tensor", "torch.int64", True), (metric, how)
            assert error <= 1e-4, (metric, how, error)
    for metric in ("ip", "l2", "cos"):
        for how in ("resident", "streamed"):
            kind, index_dtype, same, error = out[f"index {metric} {how}"]
            assert (kind, index_dtype, same) == ("Tensor", "torch.int64", True) and error <= 1e-4, (metric, how)
    assert out["mixed"]
    assert out["errors"] == ["database contain NaN or inf (row 333)"] * 2 + [
        "database contain a zero vector (row 401), which has no direction for metric 'cos'"]


def test_knn_search_on_cuda_tensors_resident_and_streamed_from_host():
    # On a GPU: a database on the device, and one in host memory streamed through it in batches
    # (as a database larger than the GPU's memory is), against exact search in float64.
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device (the same route runs above under Triton's interpreter)")
    import numpy as np

    import loom
    rng = np.random.default_rng(11)
    q = rng.standard_normal((300, 64)).astype(np.float32)
    db = rng.standard_normal((200_000, 64)).astype(np.float32)
    true = q.astype(np.float64) @ db.astype(np.float64).T
    exact = np.argsort(-true, axis=1, kind="stable")[:, :10]
    tq = torch.from_numpy(q).cuda()
    for database, kw in ((torch.from_numpy(db).cuda(), {}), (torch.from_numpy(db), {"database_batch": 30_000})):
        for target in (1.0, 0.95):
            s, i = loom.knn.search(tq, database, 10, recall_target=target, **kw)
            assert s.is_cuda and i.is_cuda and i.dtype == torch.int64
            got = i.cpu().numpy()
            found = sum(len(set(a) & set(b)) for a, b in zip(got.tolist(), exact.tolist())) / exact.size
            # fp32 inputs run on TF32 tensor cores: near-ties may swap against the float64 order
            assert found >= target - 0.01, (kw, target, found)
            picked = np.take_along_axis(true, got, 1)
            np.testing.assert_allclose(s.cpu().double().numpy(), picked, rtol=2e-2, atol=2e-2)
    index = loom.knn.Index(64, "ip")
    index.add(db, ids=np.arange(db.shape[0]) + 5)
    s, i = index.search(tq, 10, recall_target=0.95, database_batch=50_000)
    assert i.is_cuda and i.dtype == torch.int64
    found = sum(len(set(a) & set(b)) for a, b in zip((i.cpu().numpy() - 5).tolist(), exact.tolist())) / exact.size
    assert found >= 0.95 - 0.01


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_device_row_check_finds_the_first_bad_row(dtype):
    # The device-side check of the tensor search (from each row's minimum and maximum) against a
    # per-element check: every kind of non-finite value, zero rows for "cos" only, huge finite
    # rows accepted, rows numbered from the batch's offset.
    import torch

    from loom.backend import triton_knn
    dt = getattr(torch, dtype)
    big = torch.finfo(dt).max
    for bad_value in (float("nan"), float("inf"), float("-inf")):
        x = torch.randn(50, 7).to(dt)
        x[11] = big
        x[19] = 0.0
        x[23, 6] = bad_value
        x[40, 0] = float("nan")
        with pytest.raises(ValueError, match=r"database contain NaN or inf \(row 1023\)"):
            triton_knn.check_rows(x, "database", "ip", 1000)
        with pytest.raises(ValueError, match=r"database contain a zero vector \(row 1019\)"):
            triton_knn.check_rows(x, "database", "cos", 1000)
        triton_knn.check_rows(x[:19], "database", "cos")  # huge but finite: accepted
        triton_knn.check_rows(x[:23], "database", "l2")  # a zero row: only "cos" rejects it


def test_database_preparation_in_pieces_equals_the_whole():
    # The half squared norms (l2) and the normalised rows (cos) of the tensor search are made a
    # piece of rows at a time, so that no float32 copy of the whole database is made.
    import torch

    from loom.backend import triton_knn
    x = torch.randn(1_001, 24).to(torch.bfloat16)
    half = triton_knn._by_rows(x, lambda p: 0.5 * (p * p).sum(1), torch.empty(1_001), piece_bytes=24 * 4 * 37)
    torch.testing.assert_close(half, 0.5 * (x.float() ** 2).sum(1), rtol=0, atol=0)
    unit = triton_knn._by_rows(x, lambda p: torch.nn.functional.normalize(p, dim=1), torch.empty_like(x),
                               piece_bytes=24 * 4 * 37)
    assert unit.dtype == torch.bfloat16
    torch.testing.assert_close(unit, torch.nn.functional.normalize(x.float(), dim=1).to(x.dtype), rtol=0, atol=0)
