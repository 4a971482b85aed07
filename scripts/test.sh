#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs what it needs
# (idempotent), then runs every crate's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo test --workspace --all-targets --locked
bash scripts/valgrind-link.sh
