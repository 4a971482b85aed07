#!/usr/bin/env bash
# Tampered bundles are refused before any launch.
#
# From one built bundle folder (default: target/gpu/validate/0many.lto, made
# by scripts/gpu/validate.sh), makes tampered copies — each breaks one thing
# the runtime must check — and runs gpu-run on each. Every copy must be
# refused with `gpu-run: refused before launch:` and exit 1; the untampered
# folder must pass `gpu-run --check` first, so a broken gpu-run cannot make
# this pass. On the GPU machine the real run path is taken (a tampered
# bundle that got through would launch); without a GPU the refusals are
# the same, since they happen before the GPU is touched.
#
#   usage: bash scripts/gpu/tamper.sh [BUNDLE_DIR] [GPU_RUN]
# Needs python3. Exit 0 only when every tampering was refused.
set -euo pipefail
usage="usage: bash scripts/gpu/tamper.sh [BUNDLE_DIR] [GPU_RUN]   (default: target/gpu/validate/0many.lto and its gpu-run)"
case ${1:-} in -h | --help) echo "$usage"; exit 0 ;; -*) echo "$usage" >&2; exit 2 ;; esac
[ $# -le 2 ] || { echo "$usage" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
src=${1:-$root/target/gpu/validate/0many.lto}
run=${2:-$root/target/gpu/validate/gpu-run}
[ -f "$src/bundle.json" ] || { echo "gpu-tamper: $src/bundle.json missing: build it first" >&2; exit 1; }
[ -x "$run" ] || { echo "gpu-tamper: $run is not an executable gpu-run" >&2; exit 1; }
"$run" --check "$src" || { echo "gpu-tamper: the untampered bundle $src does not pass --check" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/rmir-tamper.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Each tampering: a name and a Python statement over `b` (bundle.json),
# `m` (manifest.json) and `d` (the copy's folder).
tamperings=(
  "fingerprint|b['fingerprint'] = '0' * 64"
  "manifest_fingerprint|m['fingerprint'] = 'f' * 64"
  "format|b['format'] = 'bundle/9'"
  "generator|b['generator'] = 'xorshift'"
  "unknown_field|b['extra'] = 1"
  "no_registrations|b['registrations'] = []"
  "registration_left_out|b['registrations'] = [r for r in b['registrations'] if r['registration'] != b['registrations'][0]['registration']]"
  "no_cases|b['registrations'][0]['cases'] = []"
  "size_zero|b['registrations'][0]['cases'][0]['size'] = 0"
  "offset|b['registrations'][0]['cases'][0]['offset'] = 4"
  "unknown_kernel|b['registrations'][0]['kernel'] = 'rcb_nope'"
  "kernel_of_another_registration|b['registrations'][0]['kernel'] = next((r['kernel'] for r in b['registrations'] if r['registration'] != b['registrations'][0]['registration']), 'rcb_nope')"
  "registration_renumbered|b['registrations'][0]['registration'] = 999999"
  "capture_removed|[r['captures'].clear() for r in b['registrations'] if r['captures']]"
  "capture_out_of_range|[c.update(value=2**70) for r in b['registrations'] for c in r['captures']]"
  "capture_wrong_type|[c.update(value='seven') for r in b['registrations'] for c in r['captures']]"
  "manifest_path|b['manifest'] = '../manifest.json'"
  "manifest_kernel_removed|m['kernels'] = [k for k in m['kernels'] if k['name'] != b['registrations'][0]['kernel']]"
  "env_size|m['callbacks'][0]['env']['size'] += 8"
  "cubin_truncated|open(d + '/' + m['cubin'], 'r+b').truncate(64)"
  "cubin_garbage|open(d + '/' + m['cubin'], 'wb').write(b'\\x7fELF' + b'\\x00' * 60)"
  "bundle_not_json|open(d + '/bundle.json', 'w').write('{')"
)

refused=0
problems=()
for t in "${tamperings[@]}"; do
  name=${t%%|*}
  code=${t#*|}
  d="$work/$name"
  cp -r "$src" "$d"
  python3 - "$d" "$code" <<'PY'
import json, sys
d, code = sys.argv[1], sys.argv[2]
b = json.load(open(d + '/bundle.json'))
m = json.load(open(d + '/manifest.json'))
exec(code)
# A statement that rewrote a file itself is not overwritten here.
if 'bundle.json' not in code:
    json.dump(b, open(d + '/bundle.json', 'w'), indent=2)
if "m[" in code:
    json.dump(m, open(d + '/manifest.json', 'w'), indent=2)
PY
  set +e
  "$run" "$d" > "$work/$name.out" 2> "$work/$name.err"
  status=$?
  set -e
  if [ "$status" -eq 1 ] && grep -q '^gpu-run: refused before launch:' "$work/$name.err"; then
    refused=$((refused + 1))
    printf '%-32s refused: %s\n' "$name" "$(sed 's/^gpu-run: refused before launch: //' "$work/$name.err" | head -1 | cut -c1-110)"
  else
    problems+=("$name: exit $status, $(head -c 300 "$work/$name.err" "$work/$name.out" | tr '\n' ' ')")
  fi
done
echo "gpu-tamper: $refused of ${#tamperings[@]} tampered bundles refused before launch"
if [ "${#problems[@]}" -gt 0 ] || [ "$refused" -eq 0 ] || [ "$refused" -ne "${#tamperings[@]}" ]; then
  echo "gpu-tamper: FAILED: not refused:" >&2
  printf '  %s\n' "${problems[@]}" >&2
  exit 1
fi
