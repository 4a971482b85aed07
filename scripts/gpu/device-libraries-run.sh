#!/usr/bin/env bash
# Step 2 of scripts/gpu/device-libraries.sh, on the GPU machine, from the
# repository root with target/gpu/device-libraries carried: every bundle,
# the CALLs in each route's SASS (none on the LTO route), the four
# sanitizers. Logs go to $OUT (or /tmp).
# Exits non-zero if any check fails; prints a summary line per step.
#   usage: [OUT=LOG_DIR] bash scripts/gpu/device-libraries-run.sh
set -uo pipefail
usage="usage: [OUT=LOG_DIR] bash scripts/gpu/device-libraries-run.sh   (from the repository root; needs target/gpu/device-libraries)"
if [ $# -gt 0 ]; then
  case $1 in -h | --help) echo "$usage"; exit 0 ;; esac
  echo "$usage" >&2; exit 2
fi
s=target/gpu/device-libraries
out=${OUT:-/tmp}
fail=0
. "$(dirname "$0")/step.sh"
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
