#!/usr/bin/env bash
# Step 2 of scripts/gpu/debug.sh, on the GPU machine, from the repository
# root with target/gpu/debug carried. Logs go to $OUT (or /tmp).
# Every bundle must pass (debug builds compute the same results); then
# cuda-gdb stops inside the Rust callbacks of the `-g` builds.
#   usage: [OUT=LOG_DIR] bash scripts/gpu/debug-run.sh
set -uo pipefail
usage="usage: [OUT=LOG_DIR] bash scripts/gpu/debug-run.sh   (from the repository root; needs target/gpu/debug from scripts/gpu/debug.sh)"
if [ $# -gt 0 ]; then
  case $1 in -h | --help) echo "$usage"; exit 0 ;; esac
  echo "$usage" >&2; exit 2
fi
s=target/gpu/debug
out=${OUT:-/tmp}
fail=0
for b in "$s"/*-g "$s"/*-lineinfo "$s"/*-plain; do
  name=$(basename "$b")
  if "$s/gpu-run" "$b" > "$out/run-$name.log" 2>&1; then
    echo "ok   $name: $(tail -n 1 "$out/run-$name.log")"
  else
    echo "FAIL $name: $(tail -n 3 "$out/run-$name.log" | tr '\n' ' ')"; fail=1
  fi
done
debug() { # bundle, breakpoint, then gdb commands
  local bundle=$1 bp=$2; shift 2
  # Stop at the first kernel launch (the module is loaded then, so the
  # Rust file is known), set the breakpoint, and continue to it.
  # gpu-run loads libcuda with dlopen (cudarc); preloaded, cuda-gdb sees it
  # from the start.
  local cuda
  cuda=$(ldconfig -p | awk '/libcuda\.so\.1 / {print $NF; exit}')
  local cmds=(-ex "set pagination off" -ex "set environment LD_PRELOAD=$cuda"
    -ex "set cuda break_on_launch application" -ex run
    -ex "info sources" -ex "break $bp" -ex continue)
  for c in "$@"; do cmds+=(-ex "$c"); done
  cmds+=(-ex kill -ex quit)
  timeout 300 cuda-gdb -batch -nx "${cmds[@]}" --args "$s/gpu-run" "$s/$bundle" 2>&1
}
debug 03_wrapping_capture-g 03_wrapping_capture.rs:4 \
  "bt" "info locals" "print k" "print a" "print b" "info cuda kernels" \
  "continue" "info locals" "continue" "info locals" "continue" "info locals" \
  "continue" "bt" "info locals" > "$out/gdb-03.log"
debug 04_mixed_scalar_captures-g 04_mixed_scalar_captures.rs:11 \
  "bt" "info locals" "print negate" "print a" "print b" \
  "continue" "info locals" "continue" "info locals" "continue" "info locals" > "$out/gdb-04.log"
debug 07_core_scalar_methods-g 07_core_scalar_methods.rs:8 \
  "bt" "info locals" "print a" "print b" "continue" "info locals" > "$out/gdb-07.log"
grep -v "Thread 0x\|Objfile has no\|^\$\|cuda-dbg\|^/lib\|^/usr" "$out/gdb-03.log" "$out/gdb-04.log" "$out/gdb-07.log"
grep -q "03_wrapping_capture.rs:4" "$out/gdb-03.log" || { echo "FAIL: no stop at 03:4"; fail=1; }
grep -Eq '^\$[0-9]+ = ' "$out/gdb-03.log" || { echo "FAIL: nothing printed"; fail=1; }
grep -Eq '^k = -?[0-9]+' "$out/gdb-03.log" || { echo "FAIL: k never shown"; fail=1; }
grep -q "07_core_scalar_methods.rs:8" "$out/gdb-07.log" || { echo "FAIL: no stop at 07:8 (the -g PTX-thunk fallback)"; fail=1; }
(cd "$out" && tar czf logs.tgz ./*.log && rm -f ./*.log)
exit $fail
