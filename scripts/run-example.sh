#!/usr/bin/env bash
# The main job on the bundled example, from a fresh Debian 12 machine:
# installs what it needs (idempotent), builds the driver, and compiles every
# admitted callback of examples/quickstart.rs with the reduce provider into
# out/quickstart/{callbacks.cubin, manifest.json, provider.cu}. The one
# rejected registration is reported with its diagnostic.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --locked -p driver
./target/release/driver build examples/quickstart.rs --emit cu -o out/quickstart
./target/release/driver inspect out/quickstart/callbacks.cubin
