#!/usr/bin/env bash
# Step 2 of scripts/gpu/programs.sh, on the GPU machine, from the
# repository root with target/gpu/programs carried: the example app's
# checks in four profiles, its cdylib from C, the plain-cargo build refused,
# the four sanitizers, a bundle, and Gpu::reduce against CUB's sum (two
# interleaved rounds). Logs go to $OUT (or /tmp), packed as logs.tgz.
# Exits non-zero if any check fails; prints a summary line per step.
#   usage: [OUT=LOG_DIR] bash scripts/gpu/programs-run.sh
set -uo pipefail
usage="usage: [OUT=LOG_DIR] bash scripts/gpu/programs-run.sh   (from the repository root; needs target/gpu/programs from scripts/gpu/programs.sh)"
if [ $# -gt 0 ]; then
  case $1 in -h | --help) echo "$usage"; exit 0 ;; esac
  echo "$usage" >&2; exit 2
fi
s=target/gpu/programs
out=${OUT:-/tmp}
fail=0
. "$(dirname "$0")/step.sh"
expect_fail() {
  local name=$1
  shift
  if "$@" > "$out/$name.log" 2>&1; then
    echo "FAIL $name: succeeded, should have refused"
    fail=1
  else
    echo "ok   $name (refused): $(tail -n 1 "$out/$name.log")"
  fi
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for p in release fat thin cgu1; do
  step "check-$p" "$s/app-$p" check
done
step check-large "$s/app-fat" check --large
step ffi "$s/call"
expect_fail plain "$s/app-plain" check
for tool in memcheck racecheck initcheck synccheck; do
  step "sanitizer-$tool" compute-sanitizer --tool "$tool" --error-exitcode 9 "$s/app-release" check --quick
done
step bundle04 "$s/gpu-run" "$s/bundle04"
nvcc -O3 -arch=sm_90 -o "$s/cub_reduce_sum" "$s/reduce_sum.cu" > "$out/nvcc.log" 2>&1 || { echo "FAIL nvcc"; fail=1; }
for round in 1 2; do
  step "bench-cub-$round" "$s/cub_reduce_sum" 200
  step "bench-rust-$round" "$s/app-fat" bench 200
done
for round in 1 2; do cat "$out/bench-cub-$round.log" "$out/bench-rust-$round.log"; done
# One file back: every log.
(cd "$out" && tar czf logs.tgz ./*.log && rm -f ./*.log)
exit $fail
