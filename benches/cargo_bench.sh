#!/usr/bin/env bash
# The Cargo route, measured (a benchmark, not a timed test), side by side in
# one run, ROUNDS times each, medians of wall time:
#
#   cold:  `driver cargo build` of a small app (one crate, four callbacks,
#          `native` with the `gpu` feature) in an empty target folder and
#          build cache, against a plain `cargo build` of the same app with
#          `native` without the feature (the CPU reference only);
#   edit:  both again after the same one-closure edit (the app's crate
#          rebuilt, its dependencies fresh).
#
# A plain `cargo build` of the app with the `gpu` feature (no callbacks
# compiled: its calls would find no kernel) runs beside them, to tell the
# dependencies' share from the driver's.
#
# Every build must succeed, and each driver build must carry the app's four
# callbacks (`driver inspect`); anything else exits non-zero.
#
#   cargo build --release -p driver
#   DRIVER=target/release/driver ROUNDS=3 bash benches/cargo_bench.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
driver=$(realpath "${DRIVER:-$root/target/release/driver}")
rounds=${ROUNDS:-3}
[ -x "$driver" ] || { echo "cargo_bench: no driver at $driver" >&2; exit 1; }
work=$(mktemp -d /tmp/rmir-cargo-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
export -n RMIR_CACHE RUSTC_WRAPPER RUSTFLAGS

# $1: folder, $2: `native`'s features.
app() {
  mkdir -p "$1/src"
  cat > "$1/Cargo.toml" <<EOF
[package]
name = "app"
version = "0.1.0"
edition = "2021"

[workspace]

[dependencies]
native = { path = "$root/native"$2 }
EOF
  cp "$root/examples/gpu-workspace/Cargo.lock" "$1/Cargo.lock"
  cat > "$1/src/main.rs" <<'EOF'
use native::gpu::{Error, Gpu};

fn run(gpu: &Gpu, data: &[u32], k: u32) -> Result<(u32, u32, Vec<u32>, Vec<u32>), Error> {
    let sum = gpu.reduce(data, 0, |a, b| a.wrapping_add(b))?;
    let top = gpu.reduce(data, 0, move |a, b| a.max(b).min(k))?;
    let scan = gpu.inclusive_scan(data, |a, b| a ^ b)?;
    let kept = gpu.select(data, move |x| x % 7 == k % 7)?;
    Ok((sum, top, scan, kept))
}

fn main() {
    let data: Vec<u32> = (0..1000).collect();
    let k = std::env::args().count() as u32 * 500;
    match Gpu::open(0).and_then(|gpu| run(&gpu, &data, k)) {
        Ok((sum, top, scan, kept)) => println!("{sum} {top} {} {}", scan.len(), kept.len()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1)
        }
    }
}
EOF
}
edit() { sed -i 's/x % 7 == k % 7/x % 5 == k % 5/' "$1/src/main.rs"; }

# Seconds of wall time of one command; its output in $1.log.
timed() {
  local log=$1 start end
  shift
  start=$(date +%s.%N)
  "$@" > "$log" 2>&1 || { echo "cargo_bench: $* failed:" >&2; cat "$log" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
callbacks() {
  "$driver" inspect "$1/target/debug/app" | grep -q "4 callbacks" ||
    { echo "cargo_bench: $1's program does not carry its 4 callbacks:" >&2; "$driver" inspect "$1/target/debug/app" >&2; exit 1; }
}

for r in $(seq "$rounds"); do
  g="$work/gpu-$r" c="$work/cpu-$r" p="$work/plain-$r"
  app "$g" ', features = ["gpu"]'
  app "$c" ''
  app "$p" ', features = ["gpu"]'
  (cd "$c" && timed "$c/cold" cargo build --offline) >> "$work/cpu-cold"
  (cd "$p" && timed "$p/cold" cargo build --offline) >> "$work/plain-cold"
  (cd "$g" && RMIR_CACHE_DIR="$g/cache" timed "$g/cold" "$driver" cargo build --offline) >> "$work/gpu-cold"
  callbacks "$g"
  edit "$c"
  edit "$g"
  edit "$p"
  (cd "$c" && timed "$c/edit" cargo build --offline) >> "$work/cpu-edit"
  (cd "$p" && timed "$p/edit" cargo build --offline) >> "$work/plain-edit"
  (cd "$g" && RMIR_CACHE_DIR="$g/cache" timed "$g/edit" "$driver" cargo build --offline) >> "$work/gpu-edit"
  callbacks "$g"
done
for k in cold edit; do
  cpu=$(median < "$work/cpu-$k")
  plain=$(median < "$work/plain-$k")
  gpu=$(median < "$work/gpu-$k")
  printf '%s: cargo build (CPU only) %.3f s, cargo build (gpu feature) %.3f s, driver cargo build %.3f s: %.2fx, %.2fx\n' \
    "$k" "$cpu" "$plain" "$gpu" "$(echo "$gpu / $cpu" | bc -l)" "$(echo "$gpu / $plain" | bc -l)"
done
