#!/usr/bin/env bash
# Step 2 of scripts/gpu-session15.sh, on the GPU machine, from the
# repository root with target/gpu/s15 carried. Logs go to $OUT (or /tmp).
# Exits non-zero if any check fails; prints a summary line per step.
set -uo pipefail
s=target/gpu/s15
out=${OUT:-/tmp}
fail=0
. scripts/gpu-step.sh
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
