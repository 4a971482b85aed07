#!/usr/bin/env bash
# Session 19 on the H200 (issue 11: the scans' tile stream), step 1, here:
# scripts/gpu-session18.sh's builds into target/gpu/s19, with no tuning
# variants (benches/experiments/scan_stream.cu chose the tiles). Step 2,
# there: GPU_DIR=target/gpu/s19 MODE=full scripts/gpu-session18-run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
GPU_OUT=target/gpu/s19 TUNED1=none TUNED2=none exec scripts/gpu-session18.sh
