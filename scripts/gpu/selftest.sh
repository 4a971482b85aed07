#!/usr/bin/env bash
# Builds, on this (GPU-less) machine, everything the GPU machine needs to check
# the reduce provider and the runtime without the compiler:
#   target/gpu/selftest/{gpu-run, selftest.cu, selftest.cubin, manifest.json,
#   bundle.json, ptxas.txt}
# Then, on the GPU machine (carry target/gpu/selftest):
#   target/gpu/selftest/gpu-run target/gpu/selftest
#   target/gpu/selftest/gpu-run --bench target/gpu/selftest
#   compute-sanitizer --tool memcheck target/gpu/selftest/gpu-run --max-size 3333333 target/gpu/selftest
#   usage: bash scripts/gpu/selftest.sh [--max-size N]
# --max-size N limits case sizes and the benchmark size (quick runs).
set -euo pipefail
usage="usage: bash scripts/gpu/selftest.sh [--max-size N]"
case $# in
  0) ;;
  1) case $1 in -h | --help) echo "$usage"; exit 0 ;; *) echo "$usage" >&2; exit 2 ;; esac ;;
  2) [ "$1" = --max-size ] || { echo "$usage" >&2; exit 2; } ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/target/gpu/selftest"
export CARGO_TARGET_DIR="$root/target/gpu"
nvcc="$root/.nvidia/nvidia/cu13/bin/nvcc"
[ -x "$nvcc" ] || { echo "gpu-selftest: $nvcc missing: run scripts/setup.sh" >&2; exit 1; }

cargo build --release -j2 -p runtime --bins
rm -rf "$out.tmp"
"$CARGO_TARGET_DIR/release/gpu-make-selftest" "$out.tmp" "$@"
# The flags must match runtime::selftest::NVCC_FLAGS (they are in the fingerprint).
"$nvcc" -arch=sm_90 -cubin -Xptxas -v "$out.tmp/selftest.cu" -o "$out.tmp/selftest.cubin" 2> "$out.tmp/ptxas.txt"
cp "$CARGO_TARGET_DIR/release/gpu-run" "$out.tmp/gpu-run"
if ldd "$out.tmp/gpu-run" | grep -iE 'llvm|mlir|libcuda'; then
  echo "gpu-selftest: gpu-run links LLVM/MLIR or libcuda directly" >&2
  exit 1
fi
rm -rf "$out"
mv "$out.tmp" "$out"
grep -E "Compiling entry|spill|Used" "$out/ptxas.txt" | sed 's/^ptxas info *: //'
du -sh "$out"
echo "gpu-selftest: ready in $out"
