#!/usr/bin/env bash
# Compiles every case file the way the frontend's bridge does: the provider API
# crate as an rlib, then each case to MIR at opt-level 0 and 3 with overflow
# checks on and off. Prints one line per failure and exits 1 if any failed.
#
# Usage: tests/check-cases.sh [--keep DIR] [FILE...]
#   --keep DIR  keep the generated MIR as DIR/<case>.O<level>.oc<on|off>.mir
#   FILE...     cases to check (default: tests/admission, tests/corpus, examples)
set -u

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
keep=""
if [ "${1:-}" = "--keep" ]; then
    keep="${2:?--keep needs a directory}"
    shift 2
    mkdir -p "$keep"
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

rustc --edition 2021 --crate-type rlib --crate-name native -O \
    "$root/native/src/lib.rs" -o "$tmp/libnative.rlib" || {
    echo "FAIL: building native/src/lib.rs" >&2
    exit 1
}

if [ "$#" -eq 0 ]; then
    set -- "$root"/tests/admission/*.rs "$root"/tests/corpus/*.rs "$root"/examples/*.rs
fi

total=0
failed=0
for file in "$@"; do
    name="$(basename "$file" .rs)"
    if ! head -n 1 "$file" | grep -q '^//'; then
        echo "FAIL: $file: first line is not a // comment saying what the case shows"
        failed=$((failed + 1))
    fi
    for opt in 0 3; do
        for oc in on off; do
            total=$((total + 1))
            out="$tmp/x.mir"
            [ -n "$keep" ] && out="$keep/$name.O$opt.oc$oc.mir"
            if ! rustc --edition 2021 --crate-type lib --emit=mir \
                -C opt-level="$opt" -C overflow-checks="$oc" \
                --extern native="$tmp/libnative.rlib" \
                "$file" -o "$out" 2>"$tmp/err"; then
                echo "FAIL: $file (opt-level=$opt, overflow-checks=$oc)"
                sed 's/^/    /' "$tmp/err"
                failed=$((failed + 1))
            elif grep -q '^warning' "$tmp/err"; then
                echo "WARN: $file (opt-level=$opt, overflow-checks=$oc)"
                sed 's/^/    /' "$tmp/err"
            fi
        done
    done
done

echo "checked $# files, $total compilations, $failed failures"
[ "$failed" -eq 0 ]
