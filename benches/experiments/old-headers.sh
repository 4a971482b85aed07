#!/usr/bin/env bash
# The previous scan.cuh and select.cuh for benches/experiments/scan_stream.cu,
# renamed so that they compile beside the current ones: into target/exp from
# COMMIT (default 66344d7, the last one-tile-per-block scan).
set -euo pipefail
cd "$(dirname "$0")/../.."
commit=${1:-66344d7}
mkdir -p target/exp
git show "$commit:providers/scan.cuh" |
  sed 's/RCB_PROVIDERS_SCAN_CUH/RCB_OLD_SCAN_CUH/g; s/void scan(/void scan_old(/; s/TileStorage/OldTileStorage/g;
       s/\bload_tile\b/old_load_tile/g; s/\bstore_tile\b/old_store_tile/g;
       s/lanes_with_items/old_lanes_with_items/g; s/lookback_bytes/old_lookback_bytes/g' >target/exp/old_scan.cuh
git show "$commit:providers/select.cuh" |
  sed 's/RCB_PROVIDERS_SELECT_CUH/RCB_OLD_SELECT_CUH/g; s/void select(/void select_old(/; s/TileStorage/OldTileStorage/g;
       s/\bload_tile\b/old_load_tile/g; s/CountSum/OldCountSum/g' >target/exp/old_select.cuh
echo "wrote target/exp/old_scan.cuh, target/exp/old_select.cuh from $commit"
