# The step helper of the scripts that run on the GPU machine, sourced:
#   usage: . "$(dirname "$0")/step.sh"; out=LOG_DIR; fail=0; step NAME CMD...
# `step NAME CMD...` runs CMD with its output in $out/NAME.log and prints one
# line, `ok` with the log's last line or `FAIL` with its last three; a
# failure sets fail=1. The caller sets `out` (where logs go) and `fail=0`.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  echo "usage: . scripts/gpu/step.sh   (sourced by scripts/gpu/*-run.sh; then: step NAME CMD...)" >&2
  exit 2
fi
step() {
  local name=$1
  shift
  if "$@" > "$out/$name.log" 2>&1; then
    echo "ok   $name: $(tail -n 1 "$out/$name.log")"
  else
    echo "FAIL $name (exit $?): $(tail -n 3 "$out/$name.log" | tr '\n' ' ')"
    fail=1
  fi
}
