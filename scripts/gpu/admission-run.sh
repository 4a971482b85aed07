#!/usr/bin/env bash
# Step 2 of scripts/gpu/admission.sh, on the GPU machine: runs every bundle
# (each must pass every case it holds), the tamper cases (each refused
# before launch), and compute-sanitizer memcheck and racecheck on two
# builds. Exits non-zero with the reasons when anything did not pass.
#   usage: [OUT=LOG_DIR] bash scripts/gpu/admission-run.sh   (carry target/gpu/admission)
set -uo pipefail
usage="usage: [OUT=LOG_DIR] bash scripts/gpu/admission-run.sh   (needs target/gpu/admission from scripts/gpu/admission.sh)"
. "$(dirname "$0")/lib.sh"
refuse_arguments "$usage" "$@"
root=$(repo_root)
cd "$root"
v=target/gpu/admission
logs=${OUT:-target/gpu/admission-logs}
mkdir -p "$logs"
run=$v/gpu-run
problems=()
pass=0; fail=0; bundles=0
for dir in "$v"/*/; do
  name=$(basename "$dir")
  [ "$name" = logs ] && continue
  bundles=$((bundles + 1))
  cases=$("$run" --check "$dir" 2>/dev/null | sed -n 's/^bundle ok: [0-9]* registrations, \([0-9]*\) cases.*/\1/p')
  "$run" "$dir" > "$logs/$name.log" 2>&1
  status=$?
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$logs/$name.log" | tail -1)
  p=$(echo "$line" | awk '{print $1}'); f=$(echo "$line" | awk '{print $3}')
  pass=$((pass + ${p:-0})); fail=$((fail + ${f:-0}))
  printf '%-50s %s\n' "$name" "${line:-ERROR exit $status}"
  if [ "$status" -ne 0 ] || [ -z "$line" ] || [ "${p:-0}" != "${cases:-x}" ]; then
    problems+=("$name: exit $status, ${p:-0} passed of ${cases:-?} cases")
  fi
done
[ "$bundles" -gt 0 ] || problems+=("no bundle")
echo "== tamper"
bash scripts/gpu/tamper.sh "$v/0many.lto" "$run" > "$logs/tamper.log" 2>&1 || problems+=("tamper.sh failed")
tail -3 "$logs/tamper.log"
echo "== compute-sanitizer"
for b in core_fn_items.O3.lto u128_shift.O0.lto enum_keys.O0.lto enum_keys.O3.ptx; do
  for tool in memcheck racecheck; do
    timeout 240 compute-sanitizer --tool "$tool" --error-exitcode 3 "$run" --max-size 1025 "$v/$b" > "$logs/san-$b-$tool.log" 2>&1
    s=$?
    printf '%-30s %-10s exit %s  %s\n' "$b" "$tool" "$s" "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/san-$b-$tool.log" | tail -1)"
    [ "$s" -eq 0 ] || problems+=("compute-sanitizer $tool on $b exited $s")
  done
done
echo "total: $pass passed, $fail failed in $bundles bundles"
if [ -s "$v/unchecked.txt" ]; then
  echo "not checked by bundles (other providers and element types: examples/gpu-providers):"
  sed 's/^/  /' "$v/unchecked.txt"
fi
if [ ${#problems[@]} -gt 0 ]; then
  printf 'PROBLEM: %s\n' "${problems[@]}"
  exit 1
fi
