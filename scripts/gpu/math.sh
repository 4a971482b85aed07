#!/usr/bin/env bash
# Device measurement of std's float math in callbacks, step 1 (here, no
# GPU): the program examples/gpu-math (`ulp`: every transcendental method
# on the GPU against the host) built by `driver cargo build --release`, and
# tests/verdicts/float_transcendentals.rs built by both routes (for its
# SASS). Into target/gpu/math. Step 2, on the GPU machine:
# scripts/gpu/math-run.sh
#   usage: bash scripts/gpu/math.sh   (env: DRIVER=path, default target/debug/driver)
set -euo pipefail
usage="usage: bash scripts/gpu/math.sh   (env: DRIVER=path, default target/debug/driver)"
. "$(dirname "$0")/lib.sh"
refuse_arguments "$usage" "$@"
root=$(repo_root)
cd "$root"
driver=${DRIVER:-target/debug/driver}
[ -x "$driver" ] || { echo "gpu-math: no driver at $driver" >&2; exit 1; }
out=target/gpu/math
rm -rf "$out" && mkdir -p "$out"
"$driver" cargo build --release --locked --manifest-path examples/gpu-math/Cargo.toml
cp examples/gpu-math/target/release/ulp "$out/"
"$driver" build tests/verdicts/float_transcendentals.rs -o "$out/ft"
"$driver" build tests/verdicts/float_transcendentals.rs --no-lto -o "$out/ft-ptx"
du -sh "$out"
echo "gpu-math: ready in $out; on the GPU machine run scripts/gpu/math-run.sh"
