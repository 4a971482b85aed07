#!/usr/bin/env bash
# Adds the CUDA runtime and CRT headers (from PyPI wheels) to the project-local
# toolkit in .nvidia/, so that the wheel's `nvcc` can compile whole .cu files
# (nvcc force-includes cuda_runtime.h; NVRTC does not need these headers).
# Idempotent; run after scripts/setup.sh, which may recreate .nvidia/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/.nvidia"
wheels=(nvidia-cuda-runtime==13.0.96 nvidia-cuda-crt==13.0.88)
stamp="$dest/.gpu-headers-installed"
want=$(printf '%s\n' "${wheels[@]}")
if [ ! -d "$dest/nvidia/cu13/bin" ]; then
  echo "gpu-setup: $dest/nvidia/cu13 is missing: run scripts/setup.sh first" >&2
  exit 1
fi
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$dest/nvidia/cu13/include/cuda_runtime.h" ]; then
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download -q --disable-pip-version-check --no-deps -d "$tmp" "${wheels[@]}"
for w in "$tmp"/*.whl; do
  # Headers only: the runtime library itself is never linked by this project.
  python3 - "$w" "$dest" <<'PY'
import sys, zipfile
whl, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(whl) as z:
    for name in z.namelist():
        if name.startswith("nvidia/cu13/include/"):
            z.extract(name, dest)
PY
done
printf '%s\n' "${wheels[@]}" > "$stamp"
echo "gpu-setup: CUDA runtime and CRT headers installed into $dest/nvidia/cu13/include" >&2
