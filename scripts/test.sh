#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs what it needs
# (idempotent), then runs every crate's tests, then fuzzes every reader of
# outside input for a bounded time (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo test --workspace --all-targets --locked
# Doc tests (`--all-targets` leaves them out): among them the compile-fail
# tests that keep the host API's element bound sound.
cargo test -p native -p vocab --doc --locked
bash scripts/valgrind-link.sh
# cargo-fuzz needs a nightly toolchain; fuzz.sh installs cargo-fuzz itself
# when it is missing. Without a nightly the step says so, loudly.
if cargo +nightly --version >/dev/null 2>&1; then
    bash scripts/fuzz.sh
else
    echo "test.sh: NOT FUZZED: no nightly toolchain (\`cargo +nightly --version\` fails)" >&2
fi
