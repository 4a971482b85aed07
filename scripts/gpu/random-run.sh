#!/usr/bin/env bash
# Differential testing on the GPU, step 2 (on the GPU machine, after
# scripts/gpu/random.sh here): unpacks and runs every random-callback build
# with gpu-run, each against the rustc-built host results in its bundle.
# Fails on any mismatch or error, and when fewer cases ran than callbacks
# were admitted. Logs go to $OUT (or target/gpu/logs).
#   usage: [OUT=LOG_DIR] bash scripts/gpu/random-run.sh   (carry target/gpu/random)
set -uo pipefail
usage="usage: [OUT=LOG_DIR] bash scripts/gpu/random-run.sh   (needs target/gpu/random from scripts/gpu/random.sh)"
. "$(dirname "$0")/lib.sh"
refuse_arguments "$usage" "$@"
root=$(repo_root)
cd "$root"
r=target/gpu/random
logs=${OUT:-target/gpu/logs}
mkdir -p "$logs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0
fail=0
errors=0
builds=0
for t in "$r"/*.tar.gz; do
  [ -e "$t" ] || break
  name=$(basename "$t" .tar.gz)
  tar -C "$work" -xzf "$t"
  res=$( { echo "== $name"; "$r/gpu-run" "$work/$name" 2>&1; echo "exit $?"; } | tee -a "$logs/random.log")
  rm -rf "${work:?}/$name"
  builds=$((builds + 1))
  line=$(echo "$res" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -1)
  if [ -z "$line" ] || ! echo "$res" | grep -qx 'exit 0'; then
    errors=$((errors + 1))
    echo "$name: ERROR (see $logs/random.log)"
  fi
  p=$(echo "$line" | awk '{print $1}')
  f=$(echo "$line" | awk '{print $3}')
  pass=$((pass + ${p:-0}))
  fail=$((fail + ${f:-0}))
  [ "${f:-0}" != 0 ] && echo "$res" | grep -E '^FAIL' | head -5
done
admitted=$(cat "$r/admitted" 2>/dev/null || echo 0)
echo "random callbacks: $builds builds, $admitted admitted callback builds, $pass cases passed, $fail failed, $errors builds with errors"
if ((builds == 0 || pass == 0)); then
  echo "gpu-random-run: nothing ran" >&2
  exit 1
fi
if ((fail > 0 || errors > 0 || pass < admitted)); then
  echo "gpu-random-run: FAILED (mismatches, errors, or fewer cases than admitted callbacks)" >&2
  exit 1
fi
echo "gpu-random-run: all $pass cases equal the host's, bit for bit"
