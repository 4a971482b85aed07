#!/usr/bin/env bash
# Device validation of debug information on the LTOIR route, step 1 (here,
# no GPU): admission cases 03, 04 and 07 built with `-g`, with `--lineinfo`
# and with neither, as gpu-run bundles, and the runner; into target/gpu/debug.
# 07's `-g` build takes the PTX-thunk fallback (docs/debug-info.md).
# Step 2, on the GPU machine: scripts/gpu/debug-run.sh (cuda-gdb).
#   usage: bash scripts/gpu/debug.sh   (env: DRIVER=path, default target/debug/driver)
set -euo pipefail
usage="usage: bash scripts/gpu/debug.sh   (env: DRIVER=path, default target/debug/driver)"
. "$(dirname "$0")/lib.sh"
refuse_arguments "$usage" "$@"
root=$(repo_root)
cd "$root"
driver=${DRIVER:-target/debug/driver}
[ -x "$driver" ] || { echo "gpu-debug: no driver at $driver" >&2; exit 1; }
out=target/gpu/debug
rm -rf "$out" && mkdir -p "$out"
cargo build --release --locked -p runtime --bins
for c in 03_wrapping_capture 04_mixed_scalar_captures 07_core_scalar_methods; do
  for mode in g lineinfo plain; do
    case $mode in g) flags=(-g) ;; lineinfo) flags=(--lineinfo) ;; plain) flags=() ;; esac
    "$driver" build "tests/admission/$c.rs" "${flags[@]}" --bundle --max-size 1048576 \
      --no-cache -o "$out/$c-$mode"
  done
done
cp target/release/gpu-run "$out/"
ls -la "$out"
