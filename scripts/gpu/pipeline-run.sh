#!/usr/bin/env bash
# Data that stays on the GPU, on the GPU machine, with target/gpu/providers
# from scripts/gpu/providers.sh carried (GPU_DIR=dir: that one): the
# pipeline program's checks (every device-resident form against the CPU)
# and its trap case (a kernel's error names its call site), the overlap of
# copies and kernels on three streams (the GPU's own timestamps), a soak of
# SOAK_SECONDS (default 60) from 8 threads sharing one Gpu, memcheck over
# the checks, then its timings beside benches/cub/pipeline.cu (CUB and
# cudaMemcpy, built here by nvcc), run one after the other in this run,
# and a table of the ratios (CUB's time / ours: above 1 is faster than
# CUB). Logs go to $OUT (or /tmp); exits non-zero if any step fails.
#   usage: [OUT=LOG_DIR] [GPU_DIR=dir] [REPS=N] [SOAK_SECONDS=N] [SANITIZER=0] bash scripts/gpu/pipeline-run.sh
set -uo pipefail
usage="usage: [OUT=LOG_DIR] [GPU_DIR=dir] [REPS=N] [SOAK_SECONDS=N] [SANITIZER=0] bash scripts/gpu/pipeline-run.sh"
. "$(dirname "$0")/lib.sh"
refuse_arguments "$usage" "$@"
cd "$(repo_root)"
s=${GPU_DIR:-target/gpu/providers}
out=${OUT:-/tmp}
mkdir -p "$out"
reps=${REPS:-10}
fail=0
. "$(dirname "$0")/step.sh"
[ -x "$s/pipeline" ] || { echo "pipeline-run: no $s/pipeline (run scripts/gpu/providers.sh first)" >&2; exit 1; }
step pipeline-check "$s/pipeline" check
grep -E "FAIL|passed" "$out/pipeline-check.log"
step pipeline-trap "$s/pipeline" trap
# Chunks up, through a kernel and down on three streams against one: the
# GPU's marks (events with timing) show the three stages overlapping.
step pipeline-overlap "$s/pipeline" overlap
cat "$out/pipeline-overlap.log"
# Calls from 8 threads sharing one Gpu; memory must not grow after the
# first tenth of the time.
step pipeline-soak "$s/pipeline" soak "${SOAK_SECONDS:-60}" 8
if [ "${SANITIZER:-1}" = 1 ]; then
  step pipeline-memcheck compute-sanitizer --tool memcheck --error-exitcode 9 "$s/pipeline" check --sanitizer
fi
step pipeline-cub-build nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/pipeline_cub benches/cub/pipeline.cu
step pipeline-bench-cub /tmp/pipeline_cub "$reps"
step pipeline-bench-rust "$s/pipeline" bench "$reps"
# NAME SIZE: ours, CUB's, CUB / ours.
awk '$1 == "cub" && $2 != "check" { cub[$2" "$3] = $4 }
     $1 == "rust" { rust[$2" "$3] = $4; order[++n] = $2" "$3 }
     END {
       printf "%-26s %5s %12s %12s %8s\n", "call", "log2", "ours us", "CUB us", "CUB/ours"
       for (i = 1; i <= n; i++) {
         k = order[i]; split(k, p, " ")
         if (k in cub) printf "%-26s %5s %12.1f %12.1f %8.3f\n", p[1], p[2], rust[k], cub[k], cub[k] / rust[k]
         else printf "%-26s %5s %12.1f %12s %8s\n", p[1], p[2], rust[k], "-", "-"
       }
     }' "$out/pipeline-bench-cub.log" "$out/pipeline-bench-rust.log" | tee "$out/pipeline-table.txt"
[ -s "$out/pipeline-table.txt" ] || { echo "pipeline-run: no timings" >&2; fail=1; }
# Fusion: each `par_iter` chain against the same work unfused (a transform,
# then a reduce or a select), both ours: unfused / fused.
awk '$1 == "rust" && $2 ~ /^chain_/ { fused[substr($2, 7)" "$3] = $4 }
     $1 == "rust" && $2 ~ /^unfused_/ { unfused[substr($2, 9)" "$3] = $4 }
     END {
       printf "%-26s %5s %12s %12s %8s\n", "chain", "log2", "fused us", "unfused us", "unf/fused"
       for (k in fused) if (k in unfused) {
         split(k, p, " ")
         printf "%-26s %5s %12.1f %12.1f %8.3f\n", p[1], p[2], fused[k], unfused[k], unfused[k] / fused[k]
       }
     }' "$out/pipeline-bench-rust.log" | tee "$out/pipeline-fusion.txt"
grep -q "map_sum" "$out/pipeline-fusion.txt" || { echo "pipeline-run: no fusion timings" >&2; fail=1; }
exit $fail
