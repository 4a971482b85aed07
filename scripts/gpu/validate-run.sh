#!/usr/bin/env bash
# Device validation, step 2 (on the GPU machine, after scripts/gpu/validate.sh
# here): runs every bundle, compute-sanitizer's four tools over the provider
# kernels, the bandwidth benchmark and CuPy's sum, and prints a short table
# last. Logs go to $OUT (or target/gpu/logs).
#
# Exits non-zero, with the reasons last, when anything did not pass: a failed
# or erroring bundle, fewer cases passed than the bundles hold, no bundle at
# all, a sanitizer finding or error, or a failed benchmark check.
#   usage: OUT=DIR bash scripts/gpu/validate-run.sh   (carry target/gpu/validate)
set -uo pipefail
usage="usage: [OUT=LOG_DIR] bash scripts/gpu/validate-run.sh   (needs target/gpu/validate from scripts/gpu/validate.sh)"
. "$(dirname "$0")/lib.sh"
refuse_arguments "$usage" "$@"
root=$(repo_root)
cd "$root"
v=target/gpu/validate
logs=${OUT:-target/gpu/logs}
mkdir -p "$logs"
run=$v/gpu-run
table=()
problems=()
total_pass=0
total_fail=0
total_cases=0
bundles=0
for dir in "$v"/0*; do
  [ -d "$dir" ] || continue
  name=$(basename "$dir")
  bundles=$((bundles + 1))
  # How many cases the bundle holds, checked without a GPU.
  cases=$("$run" --check "$dir" 2>>"$logs/bundles.log" | sed -n 's/^bundle ok: [0-9]* registrations, \([0-9]*\) cases.*/\1/p')
  "$run" "$dir" > "$logs/$name.log" 2>&1
  status=$?
  { echo "== $name (exit $status)"; cat "$logs/$name.log"; } >> "$logs/bundles.log"
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$logs/$name.log" | tail -1)
  p=$(echo "$line" | awk '{print $1}'); f=$(echo "$line" | awk '{print $3}')
  total_pass=$((total_pass + ${p:-0})); total_fail=$((total_fail + ${f:-0}))
  total_cases=$((total_cases + ${cases:-0}))
  if [ "$status" -ne 0 ] || [ -z "$line" ]; then
    problems+=("$name: gpu-run exited $status (see $logs/$name.log)")
  elif [ -z "$cases" ] || [ "${p:-0}" -ne "$cases" ]; then
    problems+=("$name: ${p:-0} cases passed of ${cases:-an unknown number} in the bundle")
  fi
  table+=("$(printf '%-40s %s' "$name" "${line:-ERROR (exit $status, see $logs/$name.log)}")")
done
[ "$bundles" -gt 0 ] || problems+=("no bundle found under $v/0*: run scripts/gpu/validate.sh first")
[ "$total_pass" -gt 0 ] || problems+=("no case passed")
san=()
for build in 07_core_scalar_methods.lto 03_wrapping_capture.ptx-g; do
  for tool in memcheck racecheck initcheck synccheck; do
    max=1025
    [ "$tool" = memcheck ] && max=1000003
    s=$(timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 3 "$run" --max-size "$max" "$v/$build" > "$logs/sanitizer-$tool.txt" 2>&1; echo $?)
    summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/sanitizer-$tool.txt" | tail -1)
    { echo "== $build $tool (exit $s)"; cat "$logs/sanitizer-$tool.txt"; } >> "$logs/sanitizer.log"
    rm -f "$logs/sanitizer-$tool.txt"
    [ "$s" -eq 0 ] || problems+=("compute-sanitizer $tool on $build exited $s")
    san+=("$(printf '%-30s %-10s exit %s  %s' "$build" "$tool" "$s" "$summary")")
  done
done
"$run" --bench "$v/bench" > "$logs/bench.log" 2>&1 || problems+=("gpu-run --bench exited $? (see $logs/bench.log)")
bash scripts/gpu/cupy-sum.sh > "$logs/cupy.log" 2>&1 || problems+=("cupy-sum.sh failed (see $logs/cupy.log)")
echo "== bundles (gpu-run, expected values from the rustc-built host code)"
printf '%s\n' "${table[@]}"
echo "total: $total_pass passed, $total_fail failed, of $total_cases cases in $bundles bundles"
echo "== compute-sanitizer (LTO route and PTX route with -g)"
printf '%s\n' "${san[@]}"
echo "== benchmark"
tail -12 "$logs/bench.log"
echo "== CuPy sum"
tail -3 "$logs/cupy.log"
if [ "${#problems[@]}" -gt 0 ]; then
  echo "== FAILED: ${#problems[@]} problem(s)"
  printf '  %s\n' "${problems[@]}"
  exit 1
fi
echo "== all passed"
