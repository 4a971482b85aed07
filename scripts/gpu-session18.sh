#!/usr/bin/env bash
# Device validation and benchmark of every provider over every element type
# (issue 11), step 1 (here, no GPU): the validation program
# (examples/gpu-providers, built by `driver cargo build --release`), the
# providers benchmark's build (benches/providers.rs) and the runtime's
# binaries, into target/gpu/s18 (GPU_OUT=dir: elsewhere). Step 2, on the GPU
# machine: scripts/gpu-session18-run.sh (MODE=smoke or full). DRIVER=path
# (default target/debug/driver).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
driver=${DRIVER:-target/debug/driver}
[ -x "$driver" ] || { echo "gpu-session18: no driver at $driver" >&2; exit 1; }
out=${GPU_OUT:-target/gpu/s18}
rm -rf "$out" && mkdir -p "$out"
cargo build --release --locked -p runtime --bins
"$driver" cargo build --release --locked --manifest-path examples/gpu-providers/Cargo.toml
"$driver" build benches/providers.rs --no-lint -o "$out/bench"
# The same file under other tunings (RMIR_TUNING, manifest::provider::Tuning),
# timed beside it: the scans' and select's tiles larger (31 and 15 items a
# thread), or as large with more of them in flight (four a multiprocessor
# for 4-byte elements, eight of 128 threads for 8-byte ones).
# TUNED1/TUNED2 replace them ("none": no variant).
v1="scan@4.items=31,select@4.items=31,scan@8.items=15,select@8.items=15"
v2="scan@4.min_blocks=4,select@4.min_blocks=4"
v2="$v2,scan@8.block=128,scan@8.min_blocks=8,select@8.block=128,select@8.min_blocks=8"
v1=${TUNED1:-$v1}
v2=${TUNED2:-$v2}
[ "$v1" = none ] || RMIR_TUNING="$v1" "$driver" build benches/providers.rs --no-lint --no-cache -o "$out/tuned1"
[ "$v2" = none ] || RMIR_TUNING="$v2" "$driver" build benches/providers.rs --no-lint --no-cache -o "$out/tuned2"
cp examples/gpu-providers/target/release/validate target/release/gpu-bench "$out/"
ls -la "$out"
