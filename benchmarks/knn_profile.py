"""Run loom's KNN bin-maximum kernel once per variant at N=1M, Q=10k, D=128, for a profiler:

    ncu --clock-control none --section SpeedOfLight ... python benchmarks/knn_profile.py

N=1M, D=128, Q=10k, bf16; each variant of `triton_knn.CANDIDATES + TRIAL_CANDIDATES` named on
the command line by its index (default: 0, the untuned tiles), with its own bin count, launched
twice (the first launch compiles)."""

from __future__ import annotations

import sys

import torch

from loom.backend import triton_knn


def main(argv: list[str]) -> None:
    gen = torch.Generator(device="cuda").manual_seed(0)
    db = torch.randn((1_000_000, 128), device="cuda", generator=gen).to(torch.bfloat16)
    q = torch.randn((10_000, 128), device="cuda", generator=gen).to(torch.bfloat16)
    for which in map(int, argv or ["0"]):
        cfg = (triton_knn.CANDIDATES + triton_knn.TRIAL_CANDIDATES)[which]
        bins = triton_knn.choose_bins(q, db, None, 10, 0.95, cfg, "tf32")
        for _ in range(2):
            triton_knn.partial_reduce(q, db, None, bins, cfg)
        torch.cuda.synchronize()
        print(f"variant {which}: {cfg}, {bins} bins", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
