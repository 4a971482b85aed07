#!/usr/bin/env bash
# Accepts every pending insta snapshot (`*.snap.new`) under the repository,
# as `cargo insta accept` would, without the `assertion_line` metadata (it
# changes with every edit above the assertion). Review each diff first:
#   for f in $(find . -name '*.snap.new' -not -path './target/*'); do diff "${f%.new}" "$f"; done
set -euo pipefail
cd "$(dirname "$0")/.."
find . -name '*.snap.new' -not -path './target/*' -not -path './*/target/*' | while read -r f; do
  grep -v '^assertion_line: ' "$f" > "${f%.new}"
  rm "$f"
  echo "accepted ${f%.new}"
done
