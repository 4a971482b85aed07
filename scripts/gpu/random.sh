#!/usr/bin/env bash
# Differential testing on the GPU, step 1 (here, no GPU): writes FILES files
# of 50 random callbacks (driver/tests/common/gen.rs, seeds SEED_BASE…) and
# builds each by both routes (LTOIR and PTX), with a run bundle whose
# expected results come from the rustc-built host code. Even seeds build at
# -O, odd ones at opt-level 0; overflow checks alternate every two seeds.
#
# Bundles hold size-1 cases only (--max-size 1): the provider folds in a
# tree, so for a random (non-associative) callback only `op(init, x0)` is
# comparable with the host's sequential fold, bit for bit. Each callback
# has its own random `init` and captures.
#
# Each build is packed as a .tar.gz (a build is ~1.2 MiB of cubins, ~0.15
# MiB packed) so that everything fits the 64 MiB the GPU machine receives:
# target/gpu/random. Step 2, on the GPU machine: scripts/gpu/random-run.sh
#   usage: bash scripts/gpu/random.sh   (env: FILES, SEED_BASE, DRIVER, GEN)
# FILES=N (default 56: about 2,200 admitted callbacks, as rejections at -O
# leave some 28 of 50), SEED_BASE=S (default 1000).
set -euo pipefail
usage="usage: bash scripts/gpu/random.sh   (env: FILES=N default 56, SEED_BASE=S default 1000, DRIVER=path, GEN=path)"
. "$(dirname "$0")/lib.sh"
refuse_arguments "$usage" "$@"
root=$(repo_root)
cd "$root"
out=target/gpu/random
files=${FILES:-56}
base=${SEED_BASE:-1000}
# DRIVER=… GEN=… use builds that already exist (a debug driver builds the
# same bytes, only slower to compile with); gpu-run is always the release one.
if [ -z "${DRIVER:-}" ] || [ -z "${GEN:-}" ]; then
  cargo build --release --locked -p driver -p runtime --bins --example gen_callbacks
fi
[ -x target/release/gpu-run ] || cargo build --release --locked -p runtime --bins
driver=${DRIVER:-target/release/driver}
gen=${GEN:-target/release/examples/gen_callbacks}
rm -rf "$out.tmp"
mkdir -p "$out.tmp/src" "$out.tmp/work"
admitted=0
for ((k = 0; k < files; k++)); do
  seed=$((base + k))
  src="$out.tmp/src/gen_$seed.rs"
  "$gen" "$seed" 50 > "$src" 2> /dev/null
  opt=()
  ((seed % 2 == 0)) && opt=(-O)
  checks=on
  (((seed / 2) % 2 == 1)) && checks=off
  for route in lto ptx; do
    flags=()
    [ "$route" = ptx ] && flags=(--no-lto)
    name="gen_$seed.$route"
    # --keep-going: the admitted callbacks are built when others are
    # rejected (exit 1 then, after the `wrote` line and the rejections).
    status=0
    log=$("$driver" build "$src" "${opt[@]}" "${flags[@]}" --overflow-checks "$checks" \
      --keep-going --bundle --max-size 1 -o "$out.tmp/work/$name" 2>&1) || status=$?
    if ! grep -q '^wrote ' <<<"$log" ||
      { [ "$status" -ne 0 ] && ! grep -q '^error: [0-9]* rejected of ' <<<"$log"; }; then
      echo "$log" >&2
      echo "gpu-random: building seed $seed ($route, ${opt[*]:-O0}, checks $checks) failed;" \
        "cargo run -p driver --example gen_callbacks -- $seed 50 writes the file" >&2
      exit 1
    fi
    line=$(echo "$log" | grep '^wrote ')
    echo "$name: ${line##*; }"
    n=${line##*; }
    admitted=$((admitted + ${n%% admitted*}))
    tar -C "$out.tmp/work" -czf "$out.tmp/$name.tar.gz" "$name"
    rm -rf "$out.tmp/work/$name"
  done
done
rmdir "$out.tmp/work"
cp target/release/gpu-run "$out.tmp/gpu-run"
if ldd "$out.tmp/gpu-run" | grep -iE 'llvm|mlir|libcuda'; then
  echo "gpu-random: gpu-run links LLVM/MLIR or libcuda directly" >&2
  exit 1
fi
echo "$admitted" > "$out.tmp/admitted"
rm -rf "$out"
mv "$out.tmp" "$out"
du -sh "$out"
echo "gpu-random: $admitted admitted callback builds (both routes) ready in $out;" \
  "on the GPU machine run scripts/gpu/random-run.sh"
