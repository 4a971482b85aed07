#!/usr/bin/env bash
# Device validation of user device libraries, step 1 (here, no GPU):
# examples/ffi (Rust callbacks calling CUDA C++ helpers of
# examples/ffi/mix.cu) built with bundles by both routes, and FFI case 01;
# gpu-run; into target/gpu/device-libraries. Step 2, on the GPU machine:
# scripts/gpu/device-libraries-run.sh
#   usage: bash scripts/gpu/device-libraries.sh   (env: DRIVER=path, default target/debug/driver)
set -euo pipefail
usage="usage: bash scripts/gpu/device-libraries.sh   (env: DRIVER=path, default target/debug/driver)"
. "$(dirname "$0")/lib.sh"
refuse_arguments "$usage" "$@"
root=$(repo_root)
cd "$root"
driver=${DRIVER:-target/debug/driver}
[ -x "$driver" ] || { echo "gpu-device-libraries: no driver at $driver" >&2; exit 1; }
out=target/gpu/device-libraries
rm -rf "$out" && mkdir -p "$out"
cargo build --release --locked -p runtime --bins
"$driver" build examples/ffi/ffi.rs --link examples/ffi/mix.cu --bundle -o "$out/ffi-lto"
"$driver" build examples/ffi/ffi.rs --link examples/ffi/mix.cu --bundle --no-lto \
  --max-size 16777216 -o "$out/ffi-ptx"
"$driver" build tests/ffi/01_extern_call.rs --link tests/ffi/lib/helpers.cu \
  --link tests/ffi/lib/leaf.cu --bundle --max-size 16777216 -o "$out/case01-lto"
cp target/release/gpu-run "$out/"
ls -la "$out"
