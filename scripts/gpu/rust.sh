#!/usr/bin/env bash
# Device validation of callbacks written as Rust users write them, step 1
# (here, no GPU): the program examples/gpu-rust (`callbacks`: generic
# helpers, closures handed to helpers, trait default methods and operator
# traits, each on the GPU against the host, bit for bit) built by
# `driver cargo build --release` and in the dev profile, into
# target/gpu/rust. Step 2, on the GPU
# machine: scripts/gpu/rust-run.sh
#   usage: bash scripts/gpu/rust.sh   (env: DRIVER=path, default target/debug/driver)
set -euo pipefail
usage="usage: bash scripts/gpu/rust.sh   (env: DRIVER=path, default target/debug/driver)"
. "$(dirname "$0")/lib.sh"
refuse_arguments "$usage" "$@"
root=$(repo_root)
cd "$root"
driver=${DRIVER:-target/debug/driver}
[ -x "$driver" ] || { echo "gpu-rust: no driver at $driver" >&2; exit 1; }
out=target/gpu/rust
rm -rf "$out" && mkdir -p "$out"
"$driver" cargo build --release --locked --manifest-path examples/gpu-rust/Cargo.toml
cp examples/gpu-rust/target/release/callbacks "$out/"
# The dev profile too: its overflow checks change what rustc inlines into
# the callbacks' MIR (and so what the core model must stand for).
"$driver" cargo build --locked --manifest-path examples/gpu-rust/Cargo.toml
cp examples/gpu-rust/target/debug/callbacks "$out/callbacks-dev"
# Its debug information is the host's, not needed there (40 MB).
strip --strip-debug "$out/callbacks-dev"
"$driver" inspect "$out/callbacks" > "$out/callbacks.inspect.txt"
du -sh "$out"
echo "gpu-rust: ready in $out; on the GPU machine run scripts/gpu/rust-run.sh"
