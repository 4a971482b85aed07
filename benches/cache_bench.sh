#!/usr/bin/env bash
# The build cache, measured (a benchmark, not a timed test): one file of 48
# callbacks built cold (empty cache), rebuilt unchanged (warm), and rebuilt
# after one callback's body changed; ratios against the cold build, all in
# one run, ROUNDS times each, medians. Then one callback cold and warm, and
# from an empty cache with the operator contract lint and without. Every
# warm output is compared byte for byte with a cold build of the same file
# (a fresh cache); any difference or failed build exits non-zero.
#
#   cargo build --release -p driver
#   DRIVER=target/release/driver ROUNDS=5 bash benches/cache_bench.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
driver=${DRIVER:-$root/target/release/driver}
rounds=${ROUNDS:-5}
[ -x "$driver" ] || { echo "cache_bench: no driver at $driver" >&2; exit 1; }
work=$(mktemp -d /tmp/rmir-cache-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
export -n RMIR_CACHE

python3 "$root/benches/gen_callbacks.py" 48 --associative > "$work/gen48.rs"
# The edit: callback 7's constant operand changes (same shape, new body).
sed 's/^\(pub fn entry7(.*\)(a ^ b) & k7/\1(a ^ b) \& (k7 | 1)/' "$work/gen48.rs" > "$work/gen48-edit.rs"
if cmp -s "$work/gen48.rs" "$work/gen48-edit.rs"; then
  echo "cache_bench: the edit changed nothing" >&2
  exit 1
fi
cp "$root/tests/admission/03_wrapping_capture.rs" "$work/one.rs"

# Seconds of wall time of one build ($1 file, $2 cache, $3 output, then
# more arguments).
build() {
  local start end file=$1 cache=$2 out=$3
  shift 3
  start=$(date +%s.%N)
  RMIR_CACHE_DIR="$cache" "$driver" build "$file" -o "$out" "$@" > "$out.log" 2>&1 ||
    { echo "cache_bench: build of $file failed:" >&2; cat "$out.log" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}
same() {
  diff -r "$1" "$2" > /dev/null ||
    { echo "cache_bench: $1 and $2 differ" >&2; diff -rq "$1" "$2" >&2; exit 1; }
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

: > "$work/cold" ; : > "$work/warm" ; : > "$work/edit"
: > "$work/one-cold" ; : > "$work/one-warm"
: > "$work/one-lint" ; : > "$work/one-nolint"
for r in $(seq "$rounds"); do
  c="$work/cache-$r"
  build "$work/gen48.rs" "$c" "$work/o-cold-$r" >> "$work/cold"
  build "$work/gen48.rs" "$c" "$work/o-warm-$r" >> "$work/warm"
  same "$work/o-cold-$r" "$work/o-warm-$r"
  build "$work/gen48-edit.rs" "$c" "$work/o-edit-$r" >> "$work/edit"
  build "$work/one.rs" "$c" "$work/o-one-cold-$r" >> "$work/one-cold"
  build "$work/one.rs" "$c" "$work/o-one-warm-$r" >> "$work/one-warm"
  same "$work/o-one-cold-$r" "$work/o-one-warm-$r"
  # One callback from an empty cache, with the operator contract lint and
  # without it.
  build "$work/one.rs" "$work/cache-lint-$r" "$work/o-one-lint-$r" >> "$work/one-lint"
  build "$work/one.rs" "$work/cache-nolint-$r" "$work/o-one-nolint-$r" --no-lint >> "$work/one-nolint"
  same "$work/o-one-lint-$r" "$work/o-one-nolint-$r"
done
# The edited file built cold, in a cache of its own: the same bytes.
build "$work/gen48-edit.rs" "$work/cache-edit-cold" "$work/o-edit-cold" > /dev/null
same "$work/o-edit-1" "$work/o-edit-cold"

cold=$(median < "$work/cold")
warm=$(median < "$work/warm")
edit=$(median < "$work/edit")
printf 'driver: %s, %s rounds, medians\n' "$driver" "$rounds"
printf '48 callbacks, cold build          %7.3f s  1.00x\n' "$cold"
printf '48 callbacks, unchanged rebuild   %7.3f s  %.2fx\n' "$warm" "$(echo "$warm / $cold" | bc -l)"
printf '48 callbacks, one callback edited %7.3f s  %.2fx\n' "$edit" "$(echo "$edit / $cold" | bc -l)"
printf 'one callback, cold (to a linked cubin) %7.3f s\n' "$(median < "$work/one-cold")"
printf 'one callback, warm                     %7.3f s\n' "$(median < "$work/one-warm")"
lint=$(median < "$work/one-lint")
nolint=$(median < "$work/one-nolint")
printf 'one callback, empty cache, lint %7.3f s, --no-lint %7.3f s: %.2fx\n' "$lint" "$nolint" "$(echo "$lint / $nolint" | bc -l)"
# Where a warm build's time goes.
RMIR_CACHE_DIR="$work/cache-1" "$driver" build "$work/gen48.rs" -o "$work/o-timings" --timings 2>&1 | tail -n 25
