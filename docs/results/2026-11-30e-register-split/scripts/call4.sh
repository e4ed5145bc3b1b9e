#!/usr/bin/env bash
# 2026-11-30e call 4 (carry ["carry", "evolve-set/versus-state", "evolve-set/unit-cache.tar.xz"]):
# probes4.txt beside the set's kernels (neighbours of the register-split winners of call 3, and
# register split on the irregular, large-K and thin-K products; a probe more than 2% above the
# set's kernel replaces it), then the whole set against PyTorch eager in the same call (the
# session's set figure). The state's units.tar.xz holds the set's CUTLASS units, built here.
cd "$(dirname "$0")/../../../.." || exit 2
list=docs/results/2026-11-30e-register-split/scripts/probes4.txt
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
[ -d evolve-set/unit-cache ] || tar -xJf evolve-set/unit-cache.tar.xz
PROBE_JOBS=16 PROBE_BUILD_CACHE=evolve-set/unit-cache bash scripts/device_probe_genomes.sh prepare "$list" 2>&1 | tail -2
PROBE_VS_SET=evolve-set/versus-state PROBE_BUILD_CACHE=evolve-set/unit-cache PROBE_LIMIT=100 \
  bash scripts/device_probe_genomes.sh run "$list" > /dev/null
grep -E "stays|replaces|correct=False" "$OUT/probe-summary.txt"
tar -cJf "$OUT/set-after.tar.xz" evolve-set/versus-state/set
echo "versus from ${SECONDS}s"
mkdir -p "$OUT/logs"
VERSUS_STATE=evolve-set/versus-state VERSUS_LIMIT=$((570 - SECONDS - 40)) bash scripts/device_set_versus.sh \
  > "$OUT/logs/versus-run.txt" 2>&1
cat "$OUT/versus.md"
python3 scripts/combine_eager_vs_evolved.py "$OUT/eager-vs-evolved.json" | tail -3
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
