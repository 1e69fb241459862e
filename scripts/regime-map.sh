#!/usr/bin/env bash
# The LUT regime map (docs/perf/regime-map.md): for each x86 target, the
# LUT strategies against up-convert on the bitnet-b1.58-2b and llama3-8b
# GEMV shapes, 1 thread warm (the core is the limit) and 2 threads cold
# (memory is), every pair timed in the same rounds (--interleave).
#
#   bash scripts/regime-map.sh [OUT_DIR]     # then: python3 scripts/regime_map.py OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/regime-map}
lowbit=${LOWBIT:-build/bin/lowbit}
shapes=2560x2560,6912x2560,2560x6912,4096x4096,14336x4096,4096x14336
mkdir -p "$out"
for target in x86-avx2 x86-avxvnni x86-avx512vnni; do
  for regime in warm1 cold2; do
    if [ $regime = warm1 ]; then opts=(--threads 1 --warm); else opts=(--threads 2); fi
    echo "$target $regime: $(date -u +%FT%TZ), load $(cut -d' ' -f1 /proc/loadavg)"
    "$lowbit" bench --shapes $shapes --format i2s,w1g128,w2g64,w4g32 \
      --strategy upconvert,lut-bitserial --target $target "${opts[@]}" \
      --interleave --reps 7 --json "$out/$target.$regime.bitserial.json" >/dev/null
    "$lowbit" bench --shapes $shapes --format i2s,tl2 --strategy auto \
      --target $target "${opts[@]}" --interleave --reps 7 \
      --json "$out/$target.$regime.tl2.json" >/dev/null
  done
done
python3 scripts/regime_map.py "$out"
