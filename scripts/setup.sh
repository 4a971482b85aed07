#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian 12 machine: LLVM/MLIR 22 from Debian's
# packages and the pinned NVIDIA compile libraries from PyPI wheels, installed
# into a project-local, git-ignored folder (.nvidia/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

need_pkgs=(llvm-22-dev libmlir-22-dev mlir-22-tools libpolly-22-dev zlib1g-dev libzstd-dev libclang-22-dev valgrind binutils)
missing=()
for p in "${need_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  $sudo_cmd apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Pinned to the GPU machine's toolkit (CUDA 13.0).
wheels=(
  nvidia-nvjitlink==13.0.88
  nvidia-nvvm==13.0.88
  nvidia-cuda-nvrtc==13.0.88
  nvidia-cuda-cccl==13.0.85
  nvidia-cuda-nvdisasm==13.2.86
  nvidia-cuda-cuobjdump==13.2.86
  nvidia-cuda-nvcc==13.0.88
  nvidia-cuda-runtime==13.0.96
  nvidia-cuda-crt==13.0.88
)
stamp="$root/.nvidia/.installed"
want=$(printf '%s\n' "${wheels[@]}")
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing NVIDIA wheels into .nvidia/" >&2
  rm -rf "$root/.nvidia.tmp"
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --target "$root/.nvidia.tmp" "${wheels[@]}"
  rm -rf "$root/.nvidia"
  mv "$root/.nvidia.tmp" "$root/.nvidia"
  printf '%s\n' "${wheels[@]}" > "$stamp"
fi
