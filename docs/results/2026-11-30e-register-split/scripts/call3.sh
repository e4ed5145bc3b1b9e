#!/usr/bin/env bash
# 2026-11-30e call 3 (carry ["carry", "evolve-set/versus-state",
# "evolve-set/unit-cache.tar.xz"]): probes2.txt beside the set's kernels in
# one judge launch a problem (PROBE_VS_SET; a probe more than 2% above the set's kernel
# replaces it): the set's matmul genomes regenerated with NDEBUG, and A split in registers in
# three tiles. Units prebuilt here (PROBE_BUILD_CACHE=evolve-set/unit-cache).
cd "$(dirname "$0")/../../../.." || exit 2
list=docs/results/2026-11-30e-register-split/scripts/probes2.txt
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
# The CUTLASS units built here, carried compressed (the carry is 64 MiB at most).
[ -d evolve-set/unit-cache ] || tar -xJf evolve-set/unit-cache.tar.xz
PROBE_JOBS=16 PROBE_BUILD_CACHE=evolve-set/unit-cache bash scripts/device_probe_genomes.sh prepare "$list" 2>&1 | tail -3
PROBE_VS_SET=evolve-set/versus-state PROBE_BUILD_CACHE=evolve-set/unit-cache PROBE_LIMIT=120 \
  bash scripts/device_probe_genomes.sh run "$list" > /dev/null
grep -E "stays|replac|REJECT|correct=False" "$OUT/probe-summary.txt"
tar -cJf "$OUT/set-after.tar.xz" evolve-set/versus-state/set
