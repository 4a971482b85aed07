#!/usr/bin/env bash
# Device validation, step 2 (on the GPU machine, after scripts/gpu-validate.sh
# here): runs every bundle, compute-sanitizer's four tools over the provider
# kernels, the bandwidth benchmark and CuPy's sum, and prints a short table
# last. Logs go to $OUT (or target/gpu/logs).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
v=target/gpu/validate
logs=${OUT:-target/gpu/logs}
mkdir -p "$logs"
run=$v/gpu-run
table=()
total_pass=0
total_fail=0
for dir in "$v"/0*; do
  name=$(basename "$dir")
  line=$( { echo "== $name"; "$run" "$dir" 2>&1; } | tee -a "$logs/bundles.log" | grep -E '^[0-9]+ passed' | tail -1)
  p=$(echo "$line" | awk '{print $1}'); f=$(echo "$line" | awk '{print $3}')
  total_pass=$((total_pass + ${p:-0})); total_fail=$((total_fail + ${f:-1}))
  table+=("$(printf '%-40s %s' "$name" "${line:-ERROR (see $name.log)}")")
done
san=()
for build in 07_core_scalar_methods.lto 03_wrapping_capture.ptx-g; do
  for tool in memcheck racecheck initcheck synccheck; do
    max=1025
    [ "$tool" = memcheck ] && max=1000003
    s=$(timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 3 "$run" --max-size "$max" "$v/$build" > "$logs/sanitizer-$tool.txt" 2>&1; echo $?)
    summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/sanitizer-$tool.txt" | tail -1)
    { echo "== $build $tool (exit $s)"; cat "$logs/sanitizer-$tool.txt"; } >> "$logs/sanitizer.log"
    rm -f "$logs/sanitizer-$tool.txt"
    san+=("$(printf '%-30s %-10s exit %s  %s' "$build" "$tool" "$s" "$summary")")
  done
done
"$run" --bench "$v/bench" > "$logs/bench.log" 2>&1
bash scripts/gpu-cupy-sum.sh > "$logs/cupy.log" 2>&1
echo "== bundles (gpu-run, expected values from the rustc-built host code)"
printf '%s\n' "${table[@]}"
echo "total: $total_pass passed, $total_fail failed"
echo "== compute-sanitizer (LTO route and PTX route with -g)"
printf '%s\n' "${san[@]}"
echo "== benchmark"
tail -12 "$logs/bench.log"
echo "== CuPy sum"
tail -3 "$logs/cupy.log"
