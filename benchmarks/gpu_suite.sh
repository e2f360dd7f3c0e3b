#!/usr/bin/env bash
# Everything loom has to measure or check on a CUDA GPU, in one call under 10 minutes: the
# CUDA-only tests, the KNN suite (N=1M and 10M, Q=10k, k=10 and 100) and the whole-program benchmark.
#
#   bash benchmarks/gpu_suite.sh [OUTDIR]      # OUTDIR defaults to $OUT, else ./gpu_suite_out
#
# Runs from the repository root with the machine's own python3 (torch, triton, jax); loom is
# imported from the working tree. Each step has its own time limit so that one stuck step cannot
# use up the others' time; each step's full output goes to OUTDIR/<step>.log, and the short
# table of results is printed last (limits add up to under 10 minutes); the records the benchmarks
# write (benchmarks/results/*.json) are copied to OUTDIR/results. Steps
# run in order of what they are needed for; set STEPS to a subset (e.g. STEPS="tests knn") to rerun part.
set -u
cd "$(dirname "$0")/.."
out="${1:-${OUT:-gpu_suite_out}}"
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
# jax and torch share the GPU in one process: jax must not take 75% of its memory up front
export XLA_PYTHON_CLIENT_PREALLOCATE=false
py="${PYTHON:-python3}"
steps="${STEPS:-info knn profile tests knn_tests demo gpu}"
summary="$out/summary.txt"
: > "$summary"
started="$out/.started"  # records newer than this were written by this run
touch "$started"

step() {  # step NAME SECONDS COMMAND...
    local name=$1 limit=$2
    shift 2
    case " $steps " in *" $name "*) ;; *) return 0 ;; esac
    local t0=$SECONDS
    timeout --kill-after=10 "$limit" "$@" > "$out/$name.log" 2>&1
    local rc=$?
    echo "== $name: exit $rc in $((SECONDS - t0)) s (limit $limit s); log $out/$name.log" | tee -a "$summary"
}

step info 20 bash -c "nvidia-smi; $py -c 'import torch, triton, jax; print(torch.__version__, torch.cuda.get_device_name(0), \"triton\", triton.__version__, \"jax\", jax.__version__, jax.devices())'"
# the kernel variants checked and timed, then N=1M/10M, Q=10k against torch and jax
step knn 120 "$py" benchmarks/knn.py --device gpu --gpu-tune --gpu-suite --rounds 5
# hardware counters of the KNN kernel (the untuned tiles, then packed scores, 16 warps per SM):
# all launches but the very first (which compiles)
ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
step profile 60 "${ncu_bin:-ncu}" --clock-control none --kernel-name regex:_bin_max_kernel --launch-skip 1 \
    --launch-count 3 --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section Occupancy --section LaunchStats "$py" benchmarks/knn_profile.py 0 4
# CUDA-only paths (device placement, DLPack, CUDA graphs, pinned offload, fused programs) and the
# conformance suite on CUDA tensors; in 4 worker processes, so that a crash is one failed test
step tests 150 "$py" -m pytest -q -p no:cacheprovider -n 4 -rfE --tb=short tests/test_devices.py \
    tests/test_offload_policy.py tests/test_torch_backend.py tests/test_jit_fast_path.py tests/test_device_outputs.py \
    tests/test_fuse.py tests/test_backend_conformance.py -k "cuda or not jax_conformance"
# loom.knn.search and Index.search on CUDA tensors, resident and streamed from host memory
step knn_tests 40 "$py" -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_knn_triton.py -k cuda
# the demo, which finds the GPU and runs its parts there
step demo 40 "$py" -c "import sys; from loom.tools.loom_main import main; sys.exit(main(['demo']))"
# whole programs: loom (op by op, CUDA graphs, Inductor-fused) vs PyTorch eager vs jax.jit
step gpu 130 "$py" benchmarks/gpu.py --repeat 15

mkdir -p "$out/results"
find benchmarks/results -name '*.json' -newer "$started" -exec cp {} "$out/results/" \;
echo "== records: $(ls "$out/results" | tr '\n' ' ')" | tee -a "$summary"

{
    echo
    for name in info knn profile tests knn_tests demo gpu; do
        [ -f "$out/$name.log" ] || continue
        echo "---- $name (last lines)"
        tail -n 40 "$out/$name.log"
    done
    echo
    cat "$summary"
} | tee "$out/tail.txt"
