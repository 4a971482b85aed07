#!/usr/bin/env bash
# The closure-layout experiment of docs/closure-layout.md: seeded random
# capture mixes, probe struct vs real closure, at several opt-levels and
# with debuginfo, by stable rustc and (when installed) nightly, plus the
# special cases in special.rs. Takes about 10 minutes on 2 cores (the -O3
# builds of 400 generic instantiations dominate).
#   scripts/closure-layout/run.sh [MIXES_PER_SEED]
set -u
here=$(cd "$(dirname "$0")" && pwd)
count=${1:-400}
work=$(mktemp -d "${TMPDIR:-/tmp}/closure-layout-XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
rustc -vV | head -1
status=0
build() { # seed tag toolchain flags...
  local seed=$1 tag=$2 tc=$3; shift 3
  rustc $tc --edition 2021 -A warnings "$@" "p$seed.rs" -o "b_${seed}_$tag" || { status=1; return; }
  "./b_${seed}_$tag" > "out_${seed}_$tag.txt" || { status=1; return; }
  printf '%-28s ' "seed $seed $tc $*:"
  python3 "$here/check.py" "out_${seed}_$tag.txt" | head -1 | sed 's/^[^:]*: //' || status=1
  cut -d'|' -f1-4 "out_${seed}_$tag.txt" > "layout_${seed}_$tag.txt"
}
for seed in 1 2 3; do
  python3 "$here/gen.py" $seed "$count" > "p$seed.rs"
done
build 1 o0 "" -C opt-level=0
build 1 o3 "" -C opt-level=3
build 1 o0g "" -C opt-level=0 -C debuginfo=2
build 2 o0 "" -C opt-level=0
build 2 o3g "" -C opt-level=3 -C debuginfo=2
build 3 o0 "" -C opt-level=0
build 3 o3 "" -C opt-level=3
if rustc +nightly -V >/dev/null 2>&1; then
  rustc +nightly -V
  build 1 n "+nightly" -C opt-level=0
  # Shuffles struct fields (not closures'): the check must see it.
  rustc +nightly --edition 2021 -A warnings -Z randomize-layout p1.rs -o b_1_nr \
    && ./b_1_nr > out_1_nr.txt
  printf '%-28s ' "seed 1 +nightly -Z randomize-layout:"
  python3 "$here/check.py" out_1_nr.txt | head -1 | sed 's/^[^:]*: //'
fi
echo "same layouts in every build of one program:"
for seed in 1 2 3; do
  n=$(md5sum layout_${seed}_*.txt | awk '{print $1}' | sort -u | wc -l)
  echo "  seed $seed: $(ls layout_${seed}_*.txt | wc -l) builds, $n distinct"
  [ "$n" = 1 ] || status=1
done
echo "special cases:"
rustc --edition 2021 -A warnings "$here/special.rs" -o special && ./special | sed 's/^/  /'
exit $status
