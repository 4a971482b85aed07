#!/usr/bin/env bash
# The main job on the bundled example, from a fresh Debian 12 machine:
# installs what it needs (idempotent), builds the driver, and compiles every
# callback of examples/quickstart.rs with the reduce provider into
# out/quickstart/{callbacks.cubin, manifest.json, provider.cu}. Then
# examples/borrowed_capture.rs shows a rejection: its diagnostic, and the
# build failing with exit 1 (which this script checks).
# Usage: bash scripts/run-example.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --locked -p driver
./target/release/driver build examples/quickstart.rs --emit cu -o out/quickstart
./target/release/driver inspect out/quickstart/callbacks.cubin
status=0
./target/release/driver build examples/borrowed_capture.rs -o out/borrowed_capture \
    2> out/borrowed_capture.stderr || status=$?
cat out/borrowed_capture.stderr >&2
if [[ $status -ne 1 ]] || ! grep -q '^error\[E0101\]' out/borrowed_capture.stderr; then
    echo "run-example: examples/borrowed_capture.rs must be rejected with E0101 and exit 1 (exit $status)" >&2
    exit 1
fi
echo "run-example: examples/borrowed_capture.rs was rejected (E0101, exit 1), as it must be"
