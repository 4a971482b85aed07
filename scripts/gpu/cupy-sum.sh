#!/usr/bin/env bash
# Times CuPy's int32 sum (CUB device reduction) the way `gpu-run --bench`
# times the providers: same element count, 4 rotated buffers of non-zero
# values in [-1000, 1000], warm-up, CUDA events around each launch, median
# per pass, two passes. For the target "Rust callback >= 1.0x CuPy/CUB sum".
# Runs on the GPU machine (its python3 has CuPy); scripts/gpu/validate-run.sh
# calls it.
#   usage: bash scripts/gpu/cupy-sum.sh [N]   (N elements, default 2^28)
set -euo pipefail
usage="usage: bash scripts/gpu/cupy-sum.sh [N]   (N elements, default 268435456)"
case ${1:-} in -h | --help) echo "$usage"; exit 0 ;; esac
if [ $# -gt 1 ] || { [ $# -eq 1 ] && ! [[ $1 =~ ^[0-9]+$ ]]; }; then
  echo "$usage" >&2; exit 2
fi
export N="${1:-268435456}"
PYTHONUNBUFFERED=1 CUPY_ACCELERATORS="${CUPY_ACCELERATORS:-cub}" python3 - <<'PY'
import os, statistics
import cupy as cp

n = int(os.environ["N"])
buffers = []
for seed in range(4):
    rng = cp.random.default_rng(seed)
    x = rng.integers(1, 1001, size=n, dtype=cp.int32)
    sign = rng.integers(0, 2, size=n, dtype=cp.int32) * 2 - 1
    buffers.append(x * sign)  # never zero
del x, sign
out = cp.empty((), dtype=cp.int32)
warmup, repeats = 5, 50
print(f"cupy {cp.__version__}, accelerators {os.environ['CUPY_ACCELERATORS']}, {n} i32 ({n * 4 / 1e9:.3f} GB), 4 buffers")
for p in range(2):
    for w in range(warmup):
        cp.sum(buffers[w % 4], out=out)
    events = [cp.cuda.Event() for _ in range(repeats + 1)]
    events[0].record()
    for r in range(repeats):
        cp.sum(buffers[r % 4], out=out)
        events[r + 1].record()
    events[-1].synchronize()
    times = [cp.cuda.get_elapsed_time(events[r], events[r + 1]) for r in range(repeats)]
    ms = statistics.median(times)
    print(f"pass{p + 1}: median {ms * 1e3:.1f} us, {n * 4 / (ms * 1e-3) / 1e9:.1f} GB/s")
# Sanity: the sum agrees with a 64-bit sum taken modulo 2^32.
ref = int(cp.sum(buffers[0], dtype=cp.int64).get())
got = int(cp.sum(buffers[0], out=out).get())
ok = ((ref - got) % (1 << 32)) == 0
print("check", "ok" if ok else f"FAILED: {got} vs {ref}")
PY
