# Sourced by the scripts of scripts/gpu: the argument and folder handling
# they share, and the environment every program they start gets.
# `refuse_arguments "$usage" "$@"` prints the usage line for
# -h/--help (exit 0) and refuses any other argument (exit 2);
# `repo_root` prints the repository's root.
refuse_arguments() {
  local usage=$1
  shift
  if [ $# -gt 0 ]; then
    case $1 in -h | --help) echo "$usage"; exit 0 ;; esac
    echo "$usage" >&2
    exit 2
  fi
}

repo_root() {
  (cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
}

# NVLink multicast stays off in every program these scripts start (NCCL's
# for a GpuSet's exchange among them): on shared hosts a program that uses
# it can put the GPUs out of service. Kept where the caller set them.
export NCCL_NVLS_ENABLE="${NCCL_NVLS_ENABLE:-0}"
export TORCH_SYMM_MEM_DISABLE_MULTICAST="${TORCH_SYMM_MEM_DISABLE_MULTICAST:-1}"
export NVSHMEM_DISABLE_NVLS="${NVSHMEM_DISABLE_NVLS:-1}"
