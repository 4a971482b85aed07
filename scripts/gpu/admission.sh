#!/usr/bin/env bash
# Device validation of what admission admits, step 1 (here, no GPU): every
# admitted verdict case (tests/verdicts), the corpus cases that need the
# LTO route's care (lookup tables, 128-bit arithmetic, a local closure
# call) and admission cases 01-08, built by both routes at -O0 and -O, each
# with a run bundle of the rustc-built host results; one 100-callback build
# as the tamper base; the release gpu-run. Into target/gpu/admission.
# Bundles check `i32` reduces; a case with another provider or element type
# (the provider cases, `transform`s) is listed as not checked here, in
# target/gpu/admission/unchecked.txt and at the end, with driver's reason:
# examples/gpu-providers checks those through `native::gpu`.
# Step 2, on the GPU machine: scripts/gpu/admission-run.sh
#   usage: bash scripts/gpu/admission.sh   (env: DRIVER=path, MAX_SIZE=N)
# DRIVER=path (default target/debug/driver), MAX_SIZE=N (default 2^24).
set -euo pipefail
usage="usage: bash scripts/gpu/admission.sh   (env: DRIVER=path default target/debug/driver, MAX_SIZE=N default 16777216)"
. "$(dirname "$0")/lib.sh"
refuse_arguments "$usage" "$@"
root=$(repo_root)
cd "$root"
out=target/gpu/admission
max=${MAX_SIZE:-16777216}
driver=${DRIVER:-target/debug/driver}
[ -x "$driver" ] || { echo "gpu-admission: no driver at $driver" >&2; exit 1; }
[ -x target/release/gpu-run ] || cargo build --release --locked -p runtime --bins
# Resumable: a build already in $out.tmp (it has its bundle) is kept.
mkdir -p "$out.tmp/logs"
built=0
unchecked=()
build() {
  local name=$1
  shift
  # Operations that are not associative and commutative (most corpus
  # cases): the provider's tree order differs from the host's sequential
  # fold for n > 1, so only the size-1 case, op(init, x0), is comparable.
  local size=$max
  case "$name" in
    closure_calls_local_noncapturing.*|core_saturating_*|local_closure_call.*|match_int_ranges.*|wide_int_arith.*) size=1 ;;
  esac
  [ -f "$out.tmp/$name/bundle.json" ] && { built=$((built + 1)); return; }
  if ! "$driver" build "$@" --bundle --max-size "$size" -o "$out.tmp/$name" > "$out.tmp/logs/$name.log" 2>&1; then
    if grep -q "cannot be checked against the host reference, so no bundle is written" "$out.tmp/logs/$name.log"; then
      unchecked+=("$name: $(grep -m1 'bundles check' "$out.tmp/logs/$name.log" | sed 's/^ *//')")
      return
    fi
    cat "$out.tmp/logs/$name.log" >&2
    echo "gpu-admission: build $name failed" >&2
    exit 1
  fi
  built=$((built + 1))
}
cases=(tests/admission/0[1-8]_*.rs tests/corpus/match_int_ranges.rs tests/corpus/wide_int_arith.rs
  tests/corpus/closure_calls_local_noncapturing.rs)
for f in tests/verdicts/*.rs; do
  case "$f" in *formatted_panics*) continue ;; esac  # its assert! can fire on random data
  head -1 "$f" | grep -q "expect: admitted" && cases+=("$f")
done
for case in "${cases[@]}"; do
  name=$(basename "$case" .rs)
  for opt in O0 O3; do
    o=(); [ "$opt" = O3 ] && o=(-O)
    # Admitted cases are admitted at both levels (the verdict test);
    # anything else is a failure of this script, not a case to skip.
    if ! "$driver" admit "$case" "${o[@]}" > /dev/null 2>&1; then
      echo "gpu-admission: $case is not admitted at $opt" >&2
      exit 1
    fi
    build "$name.$opt.lto" "$case" "${o[@]}"
    build "$name.$opt.ptx" "$case" "${o[@]}" --no-lto
  done
done
python3 benches/gen_callbacks.py 100 --associative > "$out.tmp/many.rs"
build 0many.lto "$out.tmp/many.rs"
rm "$out.tmp/many.rs"
cp target/release/gpu-run "$out.tmp/gpu-run"
for dir in "$out.tmp"/*/; do
  [ "$(basename "$dir")" = logs ] && continue
  "$out.tmp/gpu-run" --check "$dir" > /dev/null
done
printf '%s\n' "${unchecked[@]}" > "$out.tmp/unchecked.txt"
rm -rf "$out"
mv "$out.tmp" "$out"
du -sh "$out"
if [ ${#unchecked[@]} -gt 0 ]; then
  echo "gpu-admission: ${#unchecked[@]} builds are not checked by bundles (target/gpu/admission/unchecked.txt):"
  printf '  %s\n' "${unchecked[@]}"
fi
echo "gpu-admission: $built builds ready in $out; on the GPU machine run scripts/gpu/admission-run.sh"
