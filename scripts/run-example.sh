#!/usr/bin/env bash
# The main job on the bundled example, from a fresh Debian 12 machine:
# installs what it needs (idempotent), builds the driver, and compiles
# examples/quickstart.rs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --locked -p driver
./target/release/driver import examples/quickstart.rs --summary
