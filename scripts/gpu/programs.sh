#!/usr/bin/env bash
# Device validation of real programs and the host API, step 1 (here, no
# GPU): the example workspace built by `driver cargo build` in four
# profiles, its cdylib with a C caller, the same app built by plain cargo
# (no callbacks compiled: must refuse to run them), the CUB baseline source,
# and an admission bundle whose captures rustc reorders (gpu-run); into
# target/gpu/programs. Step 2, on the GPU machine: scripts/gpu/programs-run.sh
#   usage: bash scripts/gpu/programs.sh   (env: DRIVER=path, default target/debug/driver)
set -euo pipefail
usage="usage: bash scripts/gpu/programs.sh   (env: DRIVER=path, default target/debug/driver)"
. "$(dirname "$0")/lib.sh"
refuse_arguments "$usage" "$@"
root=$(repo_root)
cd "$root"
driver=${DRIVER:-target/debug/driver}
[ -x "$driver" ] || { echo "gpu-programs: no driver at $driver" >&2; exit 1; }
ws=examples/gpu-workspace
out=target/gpu/programs
rm -rf "$out" && mkdir -p "$out"
cargo build --release --locked -p runtime --bins
for p in release fat thin cgu1; do
  "$driver" cargo build --manifest-path "$ws/Cargo.toml" --locked --profile "$p"
  cp "$ws/target/$p/app" "$out/app-$p"
done
cp "$ws/target/release/libsumsffi.so" "$out/"
cc -O2 -o "$out/call" "$ws/sumsffi/call.c" -L"$out" -lsumsffi -Wl,-rpath,'$ORIGIN'
# The same program without `driver cargo build`: no kernels inside.
CARGO_TARGET_DIR=target/gpu/plain cargo build --manifest-path "$ws/Cargo.toml" --locked --release -p app
cp target/gpu/plain/release/app "$out/app-plain"
cp benches/cub/reduce_sum.cu "$out/"
"$driver" build tests/admission/04_mixed_scalar_captures.rs --bundle --max-size 16777216 -o "$out/bundle04"
cp target/release/gpu-run "$out/"
"$driver" inspect "$out/app-fat" > "$out/app-fat.inspect.txt"
ls -la "$out"
