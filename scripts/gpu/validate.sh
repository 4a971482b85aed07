#!/usr/bin/env bash
# Device validation, step 1 (here, no GPU): builds every admitted case of the
# admission suite by both routes and with -g, each with a run bundle whose
# expected results come from the rustc-built host code, plus the benchmark
# build, and the GPU runner. Everything lands in target/gpu/validate (a few
# MiB), which the GPU machine receives.
# Step 2, on the GPU machine: scripts/gpu/validate-run.sh
#   usage: bash scripts/gpu/validate.sh      (MAX_SIZE=N, default 2^28, limits case sizes)
# Every build must succeed and bundle every callback (a callback the host
# reference cannot check fails the build): any failure stops this script
# with a non-zero exit, and each build's full log is kept in $out/logs.
set -euo pipefail
usage="usage: bash scripts/gpu/validate.sh   (env: MAX_SIZE=N, default 268435456)"
. "$(dirname "$0")/lib.sh"
refuse_arguments "$usage" "$@"
root=$(repo_root)
cd "$root"
out=target/gpu/validate
max=${MAX_SIZE:-268435456}
cargo build --release --locked -p driver -p runtime --bins
driver=target/release/driver
rm -rf "$out.tmp"
mkdir -p "$out.tmp/logs"
# Runs one build, keeping its whole log; prints the log and stops on failure.
build() {
  local log="$out.tmp/logs/$1.log"
  shift
  if ! "$driver" build "$@" > "$log" 2>&1; then
    cat "$log" >&2
    echo "gpu-validate: the build above failed (log: $log)" >&2
    exit 1
  fi
  tail -1 "$log"
}
for case in tests/admission/0[1-8]_*.rs; do
  name=$(basename "$case" .rs)
  opt=()
  case "$name" in *opt3*) opt=(-O) ;; esac
  for route in lto ptx ptx-g; do
    flags=()
    case "$route" in
      ptx) flags=(--no-lto) ;;
      ptx-g) flags=(--no-lto -g) ;;
    esac
    build "$name.$route" "$case" "${opt[@]}" "${flags[@]}" --bundle --max-size "$max" \
      -o "$out.tmp/$name.$route"
  done
done
build bench benches/bench_sum.rs --bench --cpp-baseline 'a + b' --bundle \
  --max-size "$max" -o "$out.tmp/bench"
# A build of many callbacks: several chunks, so several cubins in one manifest.
python3 benches/gen_callbacks.py 100 --associative > "$out.tmp/many.rs"
build 0many.lto "$out.tmp/many.rs" --bundle --max-size 3333333 -o "$out.tmp/0many.lto"
rm "$out.tmp/many.rs"
cp target/release/gpu-run "$out.tmp/gpu-run"
# Every bundle must hold together with its build before it travels.
for dir in "$out.tmp"/0* "$out.tmp/bench"; do
  "$out.tmp/gpu-run" --check "$dir" > /dev/null
done
if ldd "$out.tmp/gpu-run" | grep -iE 'llvm|mlir|libcuda'; then
  echo "gpu-validate: gpu-run links LLVM/MLIR or libcuda directly" >&2
  exit 1
fi
rm -rf "$out"
mv "$out.tmp" "$out"
du -sh "$out"
echo "gpu-validate: ready in $out; on the GPU machine run scripts/gpu/validate-run.sh"
