#!/usr/bin/env bash
# Step 2 of scripts/gpu-session17.sh, on the GPU machine, from the
# repository root with target/gpu/s17 carried. Logs go to $OUT (or /tmp).
# Exits non-zero if any check fails; prints a summary line per step.
set -uo pipefail
s=target/gpu/s17
out=${OUT:-/tmp}
fail=0
. scripts/gpu-step.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for b in ffi-lto ffi-ptx case01-lto; do
  step "$b" "$s/gpu-run" "$s/$b"
  # The SASS each route linked: the LTO route inlines the helpers.
  cuobjdump -sass "$s/$b/callbacks.cubin" > "$out/$b.sass.log" 2>&1
  calls=$(grep -c 'CALL' "$out/$b.sass.log")
  echo "     $b: $calls CALL instructions"
  case $b in *-lto) [ "$calls" = 0 ] || { echo "FAIL $b: the LTO route must inline the helpers"; fail=1; } ;; esac
done
for tool in memcheck racecheck initcheck synccheck; do
  step "sanitizer-$tool" compute-sanitizer --tool "$tool" --error-exitcode 9 \
    "$s/gpu-run" --max-size 1025 "$s/ffi-lto"
done
(cd "$out" && tar czf logs.tgz ./*.log && rm -f ./*.log)
exit $fail
