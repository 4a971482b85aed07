#!/usr/bin/env bash
# Device validation and benchmark of every provider over every element type,
# step 1 (here, no GPU): the validation program (examples/gpu-providers,
# built by `driver cargo build --release`), the providers benchmark's build
# (benches/providers.rs) and the runtime's binaries, into
# target/gpu/providers (GPU_OUT=dir: elsewhere), with the pipeline program
# of the same workspace. Step 2, on the GPU machine:
# scripts/gpu/providers-run.sh (MODE=smoke or full) and
# scripts/gpu/pipeline-run.sh.
#   usage: bash scripts/gpu/providers.sh   (env: DRIVER, GPU_OUT, TUNED1, TUNED2)
# DRIVER=path (default target/debug/driver). TUNED1=SPEC and TUNED2=SPEC
# (RMIR_TUNING strings, manifest::provider::Tuning) also build the same
# file under other tunings, into tuned1 and tuned2, which the run script
# times beside the product's tuning; without them only the product's.
set -euo pipefail
usage="usage: bash scripts/gpu/providers.sh   (env: DRIVER=path, GPU_OUT=dir, TUNED1=RMIR_TUNING, TUNED2=RMIR_TUNING)"
. "$(dirname "$0")/lib.sh"
refuse_arguments "$usage" "$@"
root=$(repo_root)
cd "$root"
driver=${DRIVER:-target/debug/driver}
[ -x "$driver" ] || { echo "gpu-providers: no driver at $driver" >&2; exit 1; }
out=${GPU_OUT:-target/gpu/providers}
rm -rf "$out" && mkdir -p "$out"
cargo build --release --locked -p runtime --bins
"$driver" cargo build --release --locked --manifest-path examples/gpu-providers/Cargo.toml
"$driver" build benches/providers.rs --no-lint -o "$out/bench"
# The same file under other tunings, timed beside it ("none" or unset: no
# variant), e.g. TUNED1="select@8.items=17,transform@8.items=16".
v1=${TUNED1:-none}
v2=${TUNED2:-none}
[ "$v1" = none ] || RMIR_TUNING="$v1" "$driver" build benches/providers.rs --no-lint --no-cache -o "$out/tuned1"
[ "$v2" = none ] || RMIR_TUNING="$v2" "$driver" build benches/providers.rs --no-lint --no-cache -o "$out/tuned2"
cp examples/gpu-providers/target/release/validate examples/gpu-providers/target/release/pipeline \
  target/release/gpu-bench "$out/"
ls -la "$out"
