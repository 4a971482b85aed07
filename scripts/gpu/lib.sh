# Sourced by the scripts of scripts/gpu: the argument and folder handling
# they share. `refuse_arguments "$usage" "$@"` prints the usage line for
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
