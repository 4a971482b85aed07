#!/usr/bin/env bash
# Step 2 of scripts/gpu/providers.sh, on the GPU machine, from the
# repository root with target/gpu/providers (GPU_DIR=dir: that one) carried:
# the validation program, compute-sanitizer, and gpu-bench against CUB (built
# here by nvcc from benches/cub/providers.cu). Logs go to $OUT (or /tmp),
# packed as logs.tgz; exits non-zero if any step fails.
#   usage: [OUT=LOG_DIR] [GPU_DIR=dir] [MODE=smoke|full] ... bash scripts/gpu/providers-run.sh
#   MODE=smoke   validation up to 10^6 + 3, memcheck, a short benchmark
#   MODE=full    validation at every size, the four sanitizers, the benchmark
#   VALIDATE=0   skip the validation and the sanitizers
#   BENCH=0      skip the benchmark (and CUB's build)
#   SWEEP=1      the benchmark also times other grid policies (gpu-bench --sweep)
#   TOOLS="..."  the sanitizers to run (default: memcheck for smoke, all four for full)
#   VARIANT_ONLY=PROVIDER  time the tuned* variant builds in a second benchmark of
#                that provider alone (sizes 20,24,28) instead of beside every row
#   PROBE=1      first build benches/experiments/race_probe.cu and run it under racecheck
#   EXPERIMENT=benches/experiments/X.cu  last, build it with nvcc (-I providers) and run it
set -uo pipefail
usage="usage: [OUT=LOG_DIR] [GPU_DIR=dir] [MODE=smoke|full] [VALIDATE=0] [BENCH=0] [SWEEP=1] [TOOLS=...] [VARIANT_ONLY=PROVIDER] [PROBE=1] [EXPERIMENT=benches/experiments/X.cu] bash scripts/gpu/providers-run.sh"
if [ $# -gt 0 ]; then
  case $1 in -h | --help) echo "$usage"; exit 0 ;; esac
  echo "$usage" >&2; exit 2
fi
s=${GPU_DIR:-target/gpu/providers}
out=${OUT:-/tmp}
mkdir -p "$out"
fail=0
mode=${MODE:-smoke}
case $mode in smoke | full) ;; *) echo "$usage" >&2; exit 2 ;; esac
. "$(dirname "$0")/step.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
if [ "$mode" = full ]; then
  max=""; sizes=10,16,20,24,28; repeats=30
else
  max="--max-size 1000003"; sizes=10,20,24,28; repeats=10
fi
if [ "${PROBE:-0}" = 1 ]; then
  step probe-build nvcc -O3 -arch=sm_90 -lineinfo -o /tmp/race_probe benches/experiments/race_probe.cu
  # racecheck's summary per kernel, one line each (V3, the product's
  # hand-off, must show none).
  compute-sanitizer --tool racecheck /tmp/race_probe > "$out/race-probe.log" 2>&1
  grep -E "done|SUMMARY|Error: Race" "$out/race-probe.log" | sed -E 's/\+0x[0-9a-f]+//' | sort | uniq -c
fi
if [ "${VALIDATE:-1}" = 1 ]; then
  step validate "$s/validate" $max
  grep -E "passed|FAIL" "$out/validate.log" | tail -n 25
  # The sanitizers: every provider, one element type, sizes up to 100,003
  # (the scans' and select's look-back across tens of tiles, the sort's
  # merge passes, segmented reduce's both shapes).
  tools=${TOOLS:-memcheck racecheck initcheck synccheck}
  [ "$mode" = smoke ] && tools=${TOOLS:-memcheck}
  for tool in $tools; do
    step "sanitizer-$tool" compute-sanitizer --tool "$tool" --error-exitcode 9 \
      "$s/validate" --max-size 100003 --type i32
  done
fi
if [ "${BENCH:-1}" = 1 ]; then
  # CUB, built here by nvcc: one object per algorithm, in parallel.
  cub=$out/cub && mkdir -p "$cub"
  build_cub() {
    for a in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
      nvcc -O3 -arch=sm_90 -Xcompiler -fPIC -DRCB_ALGO=$a -c benches/cub/providers.cu -o "$cub/a$a.o" &
    done
    wait
    nvcc -shared -arch=sm_90 -o "$cub/libcubbench.so" "$cub"/a*.o
  }
  step cub-build build_cub
  sweep=""
  [ "${SWEEP:-0}" = 1 ] && sweep=--sweep
  variants=""
  for v in "$s"/tuned*; do [ -d "$v" ] && variants="$variants --variant $v"; done
  only=${VARIANT_ONLY:-}
  if [ -n "$only" ]; then
    step bench "$s/gpu-bench" "$s/bench" --cub "$cub/libcubbench.so" --sizes "$sizes" \
      --repeats "$repeats" --tsv "$out/bench.tsv" $sweep
  else
    step bench "$s/gpu-bench" "$s/bench" --cub "$cub/libcubbench.so" --sizes "$sizes" \
      --repeats "$repeats" --tsv "$out/bench.tsv" $sweep $variants
  fi
  grep -v "^[a-z_0-9]* [a-z0-9]* 2^[0-9]*: ours" "$out/bench.log" | tail -n 60
  if [ -n "$only" ] && [ -n "$variants" ]; then
    step bench-variants "$s/gpu-bench" "$s/bench" --cub "$cub/libcubbench.so" --sizes 20,24,28 \
      --repeats "$repeats" --only "$only" --tsv "$out/bench-variants.tsv" $variants
    grep -v "^[a-z_0-9]* [a-z0-9]* 2^[0-9]*: ours" "$out/bench-variants.log" | tail -n 30
  fi
  rm -rf "$cub"
fi
if [ -n "${EXPERIMENT:-}" ]; then
  name=$(basename "$EXPERIMENT" .cu)
  step "$name-build" nvcc -O3 -std=c++17 -arch=sm_90 -I providers -o "/tmp/$name" "$EXPERIMENT"
  step "$name" "/tmp/$name"
  cat "$out/$name.log"
fi
(cd "$out" && tar czf logs.tgz ./*.log && rm -f ./*.log)
exit $fail
