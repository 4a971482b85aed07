#!/usr/bin/env bash
# Step 2 of scripts/gpu/rust.sh, on the GPU machine: `callbacks` (every
# check on the GPU against the host, bit for bit; exits non-zero when a
# result differs), and the same under compute-sanitizer's memcheck with
# fewer inputs. Logs into $OUT (default target/gpu/rust-logs).
#   usage: [OUT=LOG_DIR] bash scripts/gpu/rust-run.sh   (carry target/gpu/rust)
set -uo pipefail
usage="usage: [OUT=LOG_DIR] bash scripts/gpu/rust-run.sh   (needs target/gpu/rust from scripts/gpu/rust.sh)"
. "$(dirname "$0")/lib.sh"
refuse_arguments "$usage" "$@"
root=$(repo_root)
cd "$root"
r=target/gpu/rust
logs=${OUT:-target/gpu/rust-logs}
mkdir -p "$logs"
[ -x "$r/callbacks" ] || { echo "gpu-rust: no $r/callbacks (run scripts/gpu/rust.sh first)" >&2; exit 1; }
"$r/callbacks" --count 1000000 > "$logs/callbacks.txt" 2>&1
status=$?
cat "$logs/callbacks.txt"
# The dev profile's build (overflow checks on): fewer inputs, its host side
# is unoptimised; the checks that overflow by design are left out.
dev=0
if [ -x "$r/callbacks-dev" ]; then
    "$r/callbacks-dev" --count 200000 --no-overflowing > "$logs/callbacks-dev.txt" 2>&1
    dev=$?
    tail -3 "$logs/callbacks-dev.txt"
else
    echo "gpu-rust: no $r/callbacks-dev (run scripts/gpu/rust.sh)" >&2
    dev=1
fi
compute-sanitizer --tool memcheck --error-exitcode 3 "$r/callbacks" --count 10000 > "$logs/memcheck.txt" 2>&1
m=$?
tail -3 "$logs/memcheck.txt"
[ $status -eq 0 ] && [ $dev -eq 0 ] && [ $m -eq 0 ]
