#!/usr/bin/env bash
# Idempotent set-up of the numba-cuda baseline for benches/numba_compile.py:
# a scratch virtual environment outside the repository with numba-cuda and
# the CUDA 13 compile libraries (NVVM, NVRTC, nvJitLink) from PyPI wheels.
#
# By default the NVIDIA wheels are pinned to the project's toolkit (13.0.88,
# the same as scripts/setup.sh), so the baseline runs the very libNVVM our
# compiler uses. Set NUMBA_BENCH_TOOLKIT=latest to let pip pick the newest
# CUDA 13 wheels instead (the SPEC's earlier figure came from 13.5).
#
#   benches/numba-setup.sh                 # -> /tmp/numba-venv
#   NUMBA_BENCH_VENV=/tmp/nv135 NUMBA_BENCH_TOOLKIT=latest benches/numba-setup.sh
set -euo pipefail

venv=${NUMBA_BENCH_VENV:-/tmp/numba-venv}
toolkit=${NUMBA_BENCH_TOOLKIT:-13.0}

case "$toolkit" in
  13.0)
    # cuda-toolkit 13.0.2 is the meta-package whose extras pin the 13.0.88
    # NVVM/NVRTC/nvJitLink wheels; the explicit pins keep pip from drifting.
    pkgs=(
      "numba-cuda[cu13]==0.30.4"
      cuda-toolkit==13.0.2
      cuda-bindings==13.0.3
      nvidia-nvvm==13.0.88
      nvidia-cuda-nvrtc==13.0.88
      nvidia-nvjitlink==13.0.88
    )
    ;;
  latest)
    pkgs=("numba-cuda[cu13]")
    ;;
  *)
    echo "numba-setup: NUMBA_BENCH_TOOLKIT must be 13.0 or latest, got '$toolkit'" >&2
    exit 2
    ;;
esac

stamp="$venv/.numba-bench-installed"
want=$(printf '%s\n' "${pkgs[@]}")
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check "${pkgs[@]}"
printf '%s\n' "$want" > "$stamp"
echo "numba-setup: ready: $venv ($("$venv/bin/python" -c 'import importlib.metadata as m; print("numba-cuda", m.version("numba-cuda"), "nvidia-nvvm", m.version("nvidia-nvvm"))'))" >&2
