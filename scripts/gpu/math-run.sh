#!/usr/bin/env bash
# Step 2 of scripts/gpu/math.sh, on the GPU machine: the ulp table (`ulp`,
# a million random inputs and the edge values per method and type; exits
# non-zero when a result's NaN-ness differs from the host's or `sqrt` or
# `mul_add` differs at all), and the `CALL`s in the SASS of the callbacks
# calling libdevice, by route. Logs into $OUT (default target/gpu/math-logs).
#   usage: [OUT=LOG_DIR] bash scripts/gpu/math-run.sh   (carry target/gpu/math)
set -uo pipefail
usage="usage: [OUT=LOG_DIR] bash scripts/gpu/math-run.sh   (needs target/gpu/math from scripts/gpu/math.sh)"
. "$(dirname "$0")/lib.sh"
refuse_arguments "$usage" "$@"
root=$(repo_root)
cd "$root"
m=target/gpu/math
logs=${OUT:-target/gpu/math-logs}
mkdir -p "$logs"
[ -x "$m/ulp" ] || { echo "gpu-math: no $m/ulp (run scripts/gpu/math.sh first)" >&2; exit 1; }
"$m/ulp" --count 1000000 > "$logs/ulp.md"
status=$?
cat "$logs/ulp.md"
for d in ft ft-ptx; do
  echo "== $d: CALL instructions in SASS: $(cuobjdump -sass "$m/$d/callbacks.cubin" | grep -c CALL)"
done | tee "$logs/sass.txt"
exit $status
