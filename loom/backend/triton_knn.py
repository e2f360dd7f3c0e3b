"""The GPU kernel of `knn.fused_score_top_k`: one Triton kernel computes the scores and keeps the
running per-bin maximum and arg-max in registers, so the Q x N score matrix never reaches memory;
an exact `torch.topk` over the Q x L bins follows.

Grid: (query tiles of BLOCK_Q rows, bin tiles of BLOCK_L bins). A program loads its query tile
once, then walks the database in strides of L rows: step m loads rows m*L + [b0, b0 + BLOCK_L)
(element j is in bin j mod L), does one `tl.dot` (BLOCK_Q x D by D x BLOCK_L, fp32 accumulation,
wgmma on Hopper), adds the scaled half squared norms for L2, and merges the tile into its running
(value, index) per (query, bin) with a compare and two selects. Steps that hold a whole row of
bins run without masks; only the last, partial one is masked. Only the Q x L bins are written.
With a "packed" config the step number rides in the low mantissa bits of each score, so one
maximum keeps both (one running tile, two instructions per score) and the k winners per query
are rescored exactly afterwards (`select_top_k`).

Inputs may be bf16, fp16 or fp32 (fp32 uses TF32 tensor cores unless `precision="ieee"`).
`L` starts at XLA's bin count and may be raised (never lowered) to a whole number of bin tiles
and to fill whole waves of programs on the GPU (`gpu_bins`): more bins only raise recall. Tiles
come from `tile_config` (measured on an H200), or from a short timing of `CANDIDATES` when
`autotune=True` (cached per problem shape). benchmarks/NOTES.md has the measurements.

Runs on CUDA tensors, and on CPU tensors under `TRITON_INTERPRET=1` (Triton's interpreter: how
the tests check it on machines without a GPU). The interpreter computes `tl.dot` of bf16 tiles
wrongly (Triton 3.x), so there, and only there, bf16 tiles are widened to fp32 after loading
(`WIDEN`); the loads, masks, running maximum and selection are the same code.
"""

from __future__ import annotations

import os
from typing import Any

import torch
import triton
import triton.language as tl

from loom.dialects.knn import num_bins

INTERPRETING = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


@triton.jit
def _db_tile(db_ptr, rows, dims, d, stride_db, valid, MASKED: tl.constexpr, EVEN_D: tl.constexpr):
    ptrs = db_ptr + rows[:, None] * stride_db + dims[None, :]
    if MASKED:
        if EVEN_D:
            return tl.load(ptrs, mask=valid[:, None], other=0.0)
        return tl.load(ptrs, mask=valid[:, None] & (dims[None, :] < d), other=0.0)
    if EVEN_D:
        return tl.load(ptrs)
    return tl.load(ptrs, mask=dims[None, :] < d, other=0.0)


@triton.jit
def _tile_scores(q, db_ptr, h_ptr, rows, dims, d, stride_db, valid, MASKED: tl.constexpr, EVEN_D: tl.constexpr,
                 HAS_NORMS: tl.constexpr, IEEE: tl.constexpr, WIDEN: tl.constexpr):
    x = _db_tile(db_ptr, rows, dims, d, stride_db, valid, MASKED, EVEN_D)
    if WIDEN:
        x = x.to(tl.float32)
    if IEEE:
        s = tl.dot(q, tl.trans(x), input_precision="ieee")
    else:
        s = tl.dot(q, tl.trans(x))
    if HAS_NORMS:
        if MASKED:
            s = s + tl.load(h_ptr + rows, mask=valid, other=0.0)[None, :]
        else:
            s = s + tl.load(h_ptr + rows)[None, :]
    if MASKED:
        s = tl.where(valid[None, :], s, float("-inf"))
    return s


@triton.jit
def _merge(best, best_idx, s, rows):
    better = s > best
    return tl.where(better, s, best), tl.where(better, rows[None, :], best_idx)


@triton.jit
def _pack(s, step, keep, valid, MASKED: tl.constexpr):
    packed = ((s.to(tl.int32, bitcast=True) & keep) | step).to(tl.float32, bitcast=True)
    if MASKED:  # -inf with a step in its mantissa would be a NaN
        packed = tl.where(valid[None, :], packed, float("-inf"))
    return packed


@triton.jit
def _bin_max_kernel(q_ptr, db_ptr, h_ptr, out_val_ptr, out_idx_ptr,
                    nq, n, d, bins, step_bits,
                    stride_q, stride_db, stride_out,
                    HAS_NORMS: tl.constexpr, IEEE: tl.constexpr, WIDEN: tl.constexpr,
                    EVEN_D: tl.constexpr, FULL_TILES: tl.constexpr, PACKED: tl.constexpr,
                    BLOCK_Q: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_q = tl.program_id(0)
    pid_l = tl.program_id(1)
    rows_q = pid_q * BLOCK_Q + tl.arange(0, BLOCK_Q)
    cols_l = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    dims = tl.arange(0, BLOCK_D)
    q_mask = rows_q < nq
    bin_mask = cols_l < bins
    q = tl.load(q_ptr + rows_q[:, None] * stride_q + dims[None, :],
                mask=q_mask[:, None] & (dims[None, :] < d), other=0.0)
    if WIDEN:
        q = q.to(tl.float32)
    best = tl.full((BLOCK_Q, BLOCK_L), float("-inf"), tl.float32)
    # Steps m < n // bins hold a whole row of bins (m * bins + c < n for every bin c): with
    # FULL_TILES (bins a multiple of BLOCK_L) they need no mask at all; the last step is masked.
    full_steps = n // bins
    if PACKED:
        # Each score carries its step in its low `step_bits` mantissa bits, so that one maximum
        # keeps both the value and where it came from: one running tile instead of two (registers
        # for more programs per SM) and two instructions per score instead of three. Values are
        # truncated to 23 - step_bits bits; the caller rescored the winners exactly.
        low = (1 << step_bits) - 1
        keep = ~low
        for m in range(0, full_steps):
            s = _tile_scores(q, db_ptr, h_ptr, m * bins + cols_l, dims, d, stride_db, bin_mask, not FULL_TILES,
                             EVEN_D, HAS_NORMS, IEEE, WIDEN)
            best = tl.maximum(best, _pack(s, m, keep, bin_mask, not FULL_TILES))
        if full_steps * bins < n:
            rows = full_steps * bins + cols_l
            valid = bin_mask & (rows < n)
            s = _tile_scores(q, db_ptr, h_ptr, rows, dims, d, stride_db, valid, True, EVEN_D, HAS_NORMS, IEEE, WIDEN)
            best = tl.maximum(best, _pack(s, full_steps, keep, valid, True))
        bits = best.to(tl.int32, bitcast=True)
        best_idx = tl.where(best == float("-inf"), -1, (bits & low) * bins + cols_l[None, :])
        best = (bits & keep).to(tl.float32, bitcast=True)
    else:
        best_idx = tl.full((BLOCK_Q, BLOCK_L), -1, tl.int32)
        for m in range(0, full_steps):
            rows = m * bins + cols_l
            s = _tile_scores(q, db_ptr, h_ptr, rows, dims, d, stride_db, bin_mask, not FULL_TILES, EVEN_D,
                             HAS_NORMS, IEEE, WIDEN)
            best, best_idx = _merge(best, best_idx, s, rows)
        if full_steps * bins < n:
            rows = full_steps * bins + cols_l
            valid = bin_mask & (rows < n)
            s = _tile_scores(q, db_ptr, h_ptr, rows, dims, d, stride_db, valid, True, EVEN_D, HAS_NORMS, IEEE,
                             WIDEN)
            best, best_idx = _merge(best, best_idx, s, rows)
    out_off = rows_q[:, None] * stride_out + cols_l[None, :]
    out_mask = q_mask[:, None] & bin_mask[None, :]
    tl.store(out_val_ptr + out_off, best, mask=out_mask)
    tl.store(out_idx_ptr + out_off, best_idx, mask=out_mask)


@triton.jit
def _rescore_kernel(q_ptr, db_ptr, h_ptr, idx_ptr, out_ptr, k, d, stride_q, stride_db,
                    HAS_NORMS: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr):
    """out[i, j] = q[i] . db[idx[i, j]] (+ h[idx[i, j]]) in fp32: one program per query."""
    i = tl.program_id(0)
    ks = tl.arange(0, BLOCK_K)
    dims = tl.arange(0, BLOCK_D)
    kmask = ks < k
    rows = tl.load(idx_ptr + i * k + ks, mask=kmask, other=0)
    qv = tl.load(q_ptr + i * stride_q + dims, mask=dims < d, other=0.0).to(tl.float32)
    x = tl.load(db_ptr + rows[:, None].to(tl.int64) * stride_db + dims[None, :],
                mask=kmask[:, None] & (dims[None, :] < d), other=0.0).to(tl.float32)
    s = tl.sum(x * qv[None, :], axis=1)
    if HAS_NORMS:
        s = s + tl.load(h_ptr + rows, mask=kmask, other=0.0)
    tl.store(out_ptr + i * k + ks, s, mask=kmask)


def select_top_k(queries: torch.Tensor, database: torch.Tensor, norms: torch.Tensor | None, values: torch.Tensor,
                 indices: torch.Tensor, k: int, packed: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """The k best of the bins (exact top-k, sorted); bins from the packed kernel hold truncated
    values, so their winners are rescored exactly (fp32 dots of the k rows) and sorted again."""
    values, which = torch.topk(values, k, dim=1, largest=True, sorted=True)
    indices = torch.gather(indices, 1, which)
    if not packed:
        return values, indices
    nq, d = queries.shape
    queries, database, indices = queries.contiguous(), database.contiguous(), indices.contiguous()
    exact = torch.empty((nq, k), dtype=torch.float32, device=queries.device)
    _rescore_kernel[(nq,)](queries, database, norms if norms is not None else exact, indices, exact, k, d,
                           queries.stride(0), database.stride(0), HAS_NORMS=norms is not None,
                           BLOCK_K=max(16, triton.next_power_of_2(k)), BLOCK_D=max(16, triton.next_power_of_2(d)))
    exact, order = torch.sort(exact, dim=1, descending=True, stable=True)
    return exact, torch.gather(indices, 1, order)


def step_bits(n: int, bins: int) -> int:
    """Bits that hold a step number (0 .. n // bins) in the packed kernel's scores."""
    return max(1, (n // bins).bit_length())


def use_packed(config: dict[str, Any], n: int, bins: int) -> bool:
    """Whether the packed kernel runs: asked for by the config, each bin has rows to compete, and
    the step number leaves at least 9 bits of mantissa (bf16's precision) to the score."""
    return bool(config.get("packed")) and bins < n and step_bits(n, bins) <= 14


def tile_config(nq: int, bins: int, d: int, dtype: torch.dtype) -> dict[str, int]:
    """Tiles without timing: BLOCK_Q x BLOCK_L score tiles of 128 x 64, 4 warps, 3 stages (the
    fastest on an H200 at N=1M, Q=10k, D=128 bf16 of the variants timed; benchmarks/NOTES.md),
    smaller when the problem is."""
    if INTERPRETING:
        return {"BLOCK_Q": 16, "BLOCK_L": 16, "num_warps": 1, "num_stages": 1}
    block_q = 128 if nq >= 128 else max(16, triton.next_power_of_2(nq))
    block_l = 64 if bins >= 64 else max(16, triton.next_power_of_2(bins))
    if dtype == torch.float32 and d > 128:
        block_q = min(block_q, 64)
    return {"BLOCK_Q": block_q, "BLOCK_L": block_l, "num_warps": 4, "num_stages": 3}


_TUNED: dict[tuple, tuple[dict[str, int], int]] = {}
_SLOTS: dict[tuple, int] = {}
CANDIDATES = [
    {"BLOCK_Q": 128, "BLOCK_L": 64, "num_warps": 4, "num_stages": 3},
    {"BLOCK_Q": 128, "BLOCK_L": 64, "num_warps": 4, "num_stages": 4},
    {"BLOCK_Q": 256, "BLOCK_L": 32, "num_warps": 8, "num_stages": 3},
    {"BLOCK_Q": 64, "BLOCK_L": 64, "num_warps": 4, "num_stages": 3},
]
# Variants not yet timed and checked on a GPU (Triton's interpreter checks their results in the
# tests): `benchmarks/knn.py --gpu-tune` times and checks them beside CANDIDATES; `tune` does not
# choose them. Packed scores (`use_packed`): one running tile, fewer registers, two instructions
# per score.
TRIAL_CANDIDATES = [
    # 110 registers: two programs of two warpgroups per SM (16 warps) sharing each database tile
    {"BLOCK_Q": 128, "BLOCK_L": 64, "num_warps": 8, "num_stages": 3, "packed": True},
    {"BLOCK_Q": 128, "BLOCK_L": 64, "num_warps": 8, "num_stages": 4, "packed": True},
    {"BLOCK_Q": 128, "BLOCK_L": 64, "num_warps": 4, "num_stages": 3, "packed": True},
    {"BLOCK_Q": 128, "BLOCK_L": 64, "num_warps": 4, "num_stages": 2, "packed": True, "maxnreg": 168},
    {"BLOCK_Q": 64, "BLOCK_L": 64, "num_warps": 4, "num_stages": 3, "packed": True},
    {"BLOCK_Q": 128, "BLOCK_L": 32, "num_warps": 4, "num_stages": 3, "packed": True},
    {"BLOCK_Q": 256, "BLOCK_L": 32, "num_warps": 8, "num_stages": 3, "packed": True},
]


def _launch(queries, database, norms, values, indices, bins, config, precision, warmup=False):
    nq, d = queries.shape
    block_d = max(16, triton.next_power_of_2(d))
    grid = (triton.cdiv(nq, config["BLOCK_Q"]), triton.cdiv(bins, config["BLOCK_L"]))
    h = norms if norms is not None else values
    n = database.shape[0]
    packed = use_packed(config, n, bins)
    args = (queries, database, h, values, indices, nq, n, d, bins, step_bits(n, bins),
            queries.stride(0), database.stride(0), values.stride(0))
    meta = dict(HAS_NORMS=norms is not None, IEEE=precision == "ieee" and queries.dtype == torch.float32,
                WIDEN=INTERPRETING and queries.dtype == torch.bfloat16,
                EVEN_D=d == block_d, FULL_TILES=bins % config["BLOCK_L"] == 0,
                PACKED=packed,
                BLOCK_Q=config["BLOCK_Q"], BLOCK_L=config["BLOCK_L"], BLOCK_D=block_d,
                num_warps=config["num_warps"], num_stages=config["num_stages"])
    if "maxnreg" in config:  # a register cap that lets one more program fit per SM
        meta["maxnreg"] = config["maxnreg"]
    if warmup:
        return _bin_max_kernel.warmup(*args, grid=grid, **meta)
    return _bin_max_kernel[grid](*args, **meta)


def programs_per_sm(queries: torch.Tensor, database: torch.Tensor, norms: torch.Tensor | None,
                    config: dict[str, int], precision: str = "tf32") -> int:
    """How many programs of this kernel variant an SM holds at once (registers, shared memory,
    threads), read off the compiled kernel; 2 if Triton does not say."""
    key = (tuple(sorted(config.items())), queries.dtype, queries.shape[1], norms is not None, precision)
    if key not in _SLOTS:
        per_sm = 2
        try:
            # outputs shaped as a real call's (a row stride divisible by 16: the same specialisation)
            empty = torch.empty((1, config["BLOCK_L"]), dtype=torch.float32, device=queries.device)
            kernel = _launch(queries, database, norms, empty, empty.to(torch.int32), config["BLOCK_L"], config,
                             precision, warmup=True)
            kernel._init_handles()
            props = torch.cuda.get_device_properties(queries.device)
            threads = 32 * config["num_warps"]
            regs = -(-max(int(kernel.n_regs), 1) // 8) * 8 * threads
            by_smem = props.shared_memory_per_multiprocessor // (kernel.metadata.shared + 1024)
            per_sm = max(1, min(65536 // regs, by_smem, props.max_threads_per_multi_processor // threads))
        except Exception:  # a Triton without these fields: keep the estimate
            pass
        _SLOTS[key] = per_sm
    return _SLOTS[key]


def gpu_bins(n: int, k: int, recall_target: float, nq: int, block_q: int, block_l: int,
             override: int = -1, slots: int | None = None) -> int:
    """XLA's bin count, raised to a whole number of BLOCK_L tiles (no masks in the kernel's loop)
    and then to the tile count that best fills the GPU's `slots` (programs that run at once): the
    time is about (waves of programs) x (database rows per bin), so the count minimising
    ceil(programs / slots) / tiles is chosen, the smallest within 2% of the best; each bin keeps at
    least 16 rows and at most 8x XLA's count. More bins only raise recall."""
    bins = num_bins(n, 2, k, recall_target, override)
    if INTERPRETING or bins >= n:
        return bins
    if slots is None:
        slots = 2 * torch.cuda.get_device_properties(0).multi_processor_count
    q_tiles = triton.cdiv(nq, block_q)
    least = triton.cdiv(bins, block_l)
    most = max(least, min(8 * least, n // (16 * block_l)))
    cost = {t: triton.cdiv(q_tiles * t, slots) / t for t in range(least, most + 1)}
    best = min(cost.values())
    return block_l * min(t for t, c in cost.items() if c <= 1.02 * best)


def partial_reduce(queries: torch.Tensor, database: torch.Tensor, half_squared_norms: torch.Tensor | None,
                   bins: int, config: dict[str, int], precision: str = "tf32") -> tuple[torch.Tensor, torch.Tensor]:
    """Per-bin maximum of `queries . database^T (+ half_squared_norms)` and its database row, (Q x
    bins) fp32 values and int32 indices. With a "packed" config (`use_packed`) the values are
    truncated to 23 - step_bits(n, bins) mantissa bits and, among scores equal to that precision,
    any of their rows may be returned; `select_top_k` rescores the winners."""
    nq = queries.shape[0]
    queries = queries.contiguous()
    database = database.contiguous()
    values = torch.empty((nq, bins), dtype=torch.float32, device=queries.device)
    indices = torch.empty((nq, bins), dtype=torch.int32, device=queries.device)
    norms = half_squared_norms.to(torch.float32).contiguous() if half_squared_norms is not None else None
    _launch(queries, database, norms, values, indices, bins, config, precision)
    return values, indices


def choose_bins(queries, database, norms, k, recall_target, config, precision, override=-1) -> int:
    """`gpu_bins` for this kernel variant on this GPU (its programs per SM read off the compiled kernel)."""
    nq = queries.shape[0]
    n = database.shape[0]
    slots = None
    if not INTERPRETING:
        slots = programs_per_sm(queries, database, norms, config, precision) * \
            torch.cuda.get_device_properties(queries.device).multi_processor_count
    return gpu_bins(n, k, recall_target, nq, config["BLOCK_Q"], config["BLOCK_L"], override, slots)


def tune(queries, database, norms, k, recall_target, precision, candidates=None) -> tuple[dict[str, int], int]:
    """The fastest of `candidates` (default `CANDIDATES`) on this problem, each with its own bin
    count, by a short timing (cached per problem shape): (config, bins)."""
    nq, d = queries.shape
    n = database.shape[0]
    key = (nq, n, d, k, float(recall_target), queries.dtype, norms is not None, precision)
    if key not in _TUNED:
        timings = []
        for cfg in candidates or CANDIDATES:
            try:
                bins = choose_bins(queries, database, norms, k, recall_target, cfg, precision)
                packed = use_packed(cfg, n, bins)
                ms = triton.testing.do_bench(lambda: select_top_k(  # noqa: B023
                    queries, database, norms, *partial_reduce(queries, database, norms, bins, cfg, precision),  # noqa: B023
                    k, packed), warmup=5, rep=20)  # noqa: B023
            except Exception:  # a config the GPU cannot run (shared memory, registers): skip it
                continue
            timings.append((ms, cfg, bins))
        if not timings:
            raise RuntimeError("no kernel configuration of knn.fused_score_top_k ran on this GPU")
        _, cfg, bins = min(timings, key=lambda t: t[0])
        _TUNED[key] = (cfg, bins)
    return _TUNED[key]


def fused_score_top_k(queries: torch.Tensor, database: torch.Tensor, half_squared_norms: torch.Tensor | None,
                      metric: str, k: int, recall_target: float = 0.95, is_max_k: bool = True,
                      aggregate_to_topk: bool = True, bins: int | None = None, autotune: bool = False,
                      precision: str = "tf32", reduction_input_size_override: int = -1
                      ) -> tuple[torch.Tensor, torch.Tensor]:
    """`knn.fused_score_top_k` on torch tensors: scores `q . x` ("ip") or `h - q . x` ("l2"),
    approximate top-k (max or min) over the database per query. Returns (values in the queries'
    dtype, int32 indices); without `aggregate_to_topk`, all bins unsorted.
    `reduction_input_size_override` sizes the bins for a database of that many rows of which this
    is one part (XLA's meaning: the union of the parts' bins meets the recall target)."""
    if metric not in ("ip", "l2"):
        raise ValueError(f"metric must be 'ip' or 'l2', but got {metric!r}")
    if metric == "l2" and half_squared_norms is None:
        raise ValueError("metric 'l2' needs half_squared_norms")
    if queries.ndim != 2 or database.ndim != 2 or queries.shape[1] != database.shape[1]:
        raise ValueError(f"queries (Q x D) and database (N x D) must agree, but got {tuple(queries.shape)} and "
                         f"{tuple(database.shape)}")
    nq, d = queries.shape
    n = database.shape[0]
    if not 0 < k <= n:
        raise ValueError(f"k must be in [1, {n}], but got {k}")
    # One maximisation for the four cases, as the CPU kernel: maximise dot_sign * q.x + norm_sign * h.
    dot_sign = 1.0 if is_max_k == (metric == "ip") else -1.0
    norm_sign = 0.0 if metric == "ip" else (1.0 if is_max_k else -1.0)
    q = queries if dot_sign > 0 else -queries
    norms = None if norm_sign == 0.0 else half_squared_norms.to(torch.float32) * norm_sign
    if database.dtype != q.dtype:
        database = database.to(q.dtype)
    override = reduction_input_size_override
    if autotune and not INTERPRETING and override < 0:
        config, nbins = tune(q, database, norms, k, recall_target, precision)
    else:
        config = tile_config(nq, num_bins(n, 2, k, recall_target, override), d, q.dtype)
        nbins = choose_bins(q, database, norms, k, recall_target, config, precision, override)
    if bins is not None:
        nbins = min(n, max(nbins, int(bins)))
    if not aggregate_to_topk:
        # The bins are the result: exactly XLA's count, as the op's type says.
        if bins is not None:
            raise ValueError("bins cannot be raised when aggregate_to_topk is False (the bins are the result)")
        nbins = num_bins(n, 2, k, recall_target, override)
        config = {key: v for key, v in config.items() if key != "packed"}  # exact values in the bins
    values, indices = partial_reduce(q, database, norms, nbins, config, precision)
    if aggregate_to_topk:
        values, indices = select_top_k(q, database, norms, values, indices, k, use_packed(config, n, nbins))
    if not is_max_k:
        values = -values
    return values.to(queries.dtype), indices


def check_rows(x: torch.Tensor, name: str, metric: str, row_offset: int = 0) -> None:
    """A ValueError naming the first row of `x` holding NaN or inf, or (for "cos") a zero row,
    numbered from `row_offset`. On the tensor's device, from each row's minimum and maximum (one
    reduction, which propagates NaN): no N x D temporary, as a per-element `isfinite` would make
    (1.3 GB for 10M x 128), and one flag back to the host."""
    low, high = torch.aminmax(x, dim=1)
    bad = ~(torch.isfinite(low) & torch.isfinite(high))
    if metric == "cos":
        bad |= (low == 0) & (high == 0)
    if bool(bad.any()):
        row = int(bad.nonzero()[0, 0])
        if not (bool(torch.isfinite(low[row])) and bool(torch.isfinite(high[row]))):
            raise ValueError(f"{name} contain NaN or inf (row {row_offset + row})")
        raise ValueError(f"{name} contain a zero vector (row {row_offset + row}), which has no direction for "
                         "metric 'cos'")


def search(queries: torch.Tensor, database: torch.Tensor, k: int, metric: str = "ip", recall_target: float = 0.95,
           batch_rows: int | None = None, progress: bool = False, check: bool = False,
           **options: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """`loom.knn.search` on torch tensors (GPU): (scores, int64 indices). "ip": inner products,
    largest first; "l2": squared Euclidean distances, nearest first; "cos": cosine similarity.

    A database on another device than the queries (one larger than GPU memory, kept in host
    memory), or any database when `batch_rows` is given, streams through in batches of
    `batch_rows` rows (as many as fit in a quarter of free GPU memory by default); each batch's
    bins are sized for the whole database (`reduction_input_size_override`), so the union of the
    batches' candidates meets the recall target, and a running exact top-k merges them. With
    `progress`, a progress line per batch goes to stderr. With `check`, the database is checked on
    the device (`check_rows`), each batch as it arrives."""
    n = database.shape[0]
    stream = batch_rows is not None or database.device != queries.device
    if not stream:
        if check:
            check_rows(database, "database", metric)
        return _search_resident(queries, database, k, metric, recall_target, **options)
    if batch_rows is None:
        free = torch.cuda.mem_get_info(queries.device)[0] if queries.is_cuda else 1 << 30
        batch_rows = max(k, int(free // 4 // (database.shape[1] * database.element_size())))
    batch_rows = max(int(batch_rows), k)
    best_scores: torch.Tensor | None = None
    best_ids: torch.Tensor | None = None
    nearest_first = metric == "l2"
    for start in range(0, n, batch_rows):
        part = database[start:start + batch_rows].to(queries.device, non_blocking=True)
        if check:
            check_rows(part, "database", metric, start)
        kk = min(k, part.shape[0])
        s, i = _search_resident(queries, part, kk, metric, recall_target,
                                reduction_input_size_override=n if part.shape[0] < n else -1, **options)
        i = i + start
        if best_scores is None:
            best_scores, best_ids = s, i
        else:
            both_s = torch.cat([best_scores, s], dim=1)
            both_i = torch.cat([best_ids, i], dim=1)
            top, which = torch.topk(both_s.float(), min(k, both_s.shape[1]), dim=1, largest=not nearest_first)
            best_scores, best_ids = top.to(s.dtype), torch.gather(both_i, 1, which)
        if progress:
            import sys
            done = min(start + batch_rows, n)
            print(f"\rloom.knn (gpu): {done}/{n} database rows", end="" if done < n else "\n", file=sys.stderr,
                  flush=True)
    if best_scores is None or best_scores.shape[1] < k:
        raise ValueError(f"k must be in [1, {n}], but got {k}")
    return best_scores, best_ids


def _by_rows(x: torch.Tensor, fn: Any, out: torch.Tensor, piece_bytes: int = 64 << 20) -> torch.Tensor:
    """out[a:b] = fn(x[a:b] in float32) over pieces of rows, so that the float32 temporaries stay
    under `piece_bytes`: a whole-database `.float()` would take twice a bf16 database's memory
    again on the GPU (5 GB at 10M x 128)."""
    step = max(1, piece_bytes // (4 * max(1, x.shape[1])))
    for a in range(0, x.shape[0], step):
        out[a:a + step] = fn(x[a:a + step].float())
    return out


def _search_resident(queries: torch.Tensor, database: torch.Tensor, k: int, metric: str, recall_target: float,
                     **options: Any) -> tuple[torch.Tensor, torch.Tensor]:
    if metric not in ("ip", "l2", "cos"):
        raise ValueError(f"metric must be one of 'ip', 'l2', 'cos', but got {metric!r}")
    if metric == "cos":
        queries = torch.nn.functional.normalize(queries.float(), dim=1).to(queries.dtype)
        database = _by_rows(database, lambda x: torch.nn.functional.normalize(x, dim=1), torch.empty_like(database))
        metric = "ip"
    if metric == "l2":
        half = _by_rows(database, lambda x: 0.5 * (x * x).sum(1),
                        torch.empty(database.shape[0], dtype=torch.float32, device=database.device))
        v, i = fused_score_top_k(queries, database, half, "l2", k, recall_target, False, **options)
        qn = (queries.float() ** 2).sum(1, keepdim=True)
        return (qn + 2.0 * v.float()).clamp_min(0.0).to(queries.dtype), i.long()
    v, i = fused_score_top_k(queries, database, None, "ip", k, recall_target, True, **options)
    return v, i.long()


def _op_kernel(queries: torch.Tensor, database: torch.Tensor, *rest: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """`knn.fused_score_top_k` for the torch backend of the compiled executor: this Triton kernel on
    CUDA tensors (and on any tensors under Triton's interpreter), the numpy kernel otherwise."""
    *norms, metric, k, recall, is_max, override, aggregate, index_dtype = rest
    h = norms[0] if norms else None
    if queries.is_cuda or INTERPRETING:
        v, i = fused_score_top_k(queries, database, h, metric, k, recall, is_max, aggregate_to_topk=aggregate,
                                 reduction_input_size_override=override,
                                 precision="ieee" if INTERPRETING else "tf32")
        return v, i.to(index_dtype)
    from loom.backend import knn_kernels
    v, i = knn_kernels.fused_score_top_k(queries.numpy(), database.numpy(), None if h is None else h.numpy(), metric,
                                         k, recall, is_max, override, aggregate)
    return torch.from_numpy(v), torch.from_numpy(i).to(index_dtype)


def register_torch_kernel() -> None:
    """Register `_op_kernel` as the torch backend's kernel of `knn.fused_score_top_k` (importing
    this module does it; without it the torch backend runs the numpy kernel on the tensors)."""
    from loom.backend import common
    from loom.backend.kernels import Kernel, Operand, Rest
    from loom.backend.torch_kernels import torch_dtype, torch_kernel

    @torch_kernel("knn.fused_score_top_k")
    def _make(op: Any) -> Any:
        index_dtype = torch_dtype(common.dtype_of(op.results[1].type))
        attrs = (common.string(op.get_attr("metric")), common.integer(op.get_attr("k")),
                 common.floating(op.get_attr("recall_target")), common.boolean(op.get_attr("is_max_k")),
                 common.integer(op.get_attr("reduction_input_size_override")),
                 common.boolean(op.get_attr("aggregate_to_topk")), index_dtype)
        if len(op.operands) == 3:
            return Kernel(_op_kernel, Operand(0), Operand(1), Rest(2), *attrs)
        return Kernel(_op_kernel, Operand(0), Operand(1), *attrs)


register_torch_kernel()

__all__ = ["CANDIDATES", "TRIAL_CANDIDATES", "check_rows", "choose_bins", "fused_score_top_k", "gpu_bins",
           "partial_reduce", "programs_per_sm", "register_torch_kernel", "search", "tile_config", "tune"]
