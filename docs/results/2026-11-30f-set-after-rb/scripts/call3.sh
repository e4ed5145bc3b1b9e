#!/usr/bin/env bash
# 2026-11-30f call 3 (carry ["carry", "evolve-set/versus-state", "evolve-set/unit-cache.tar.xz"];
# carry/ packed with build/kiln and CUTLASS's headers): neighbours of the two shared_split
# kernels call 2 adopted (kb1-6, kb1-9; call3-probes.txt, beside the set, a probe more than 2%
# above replaces one), then the whole set against PyTorch eager in the same call. Here first:
# tar -xJf docs/results/2026-11-30f-set-after-rb/call2/set-after.tar.xz (the state after call 2).
cd "$(dirname "$0")/../../../.." || exit 2
list=docs/results/2026-11-30f-set-after-rb/scripts/call3-probes.txt
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
[ -d evolve-set/unit-cache ] || tar -xJf evolve-set/unit-cache.tar.xz
PROBE_JOBS=16 PROBE_BUILD_CACHE=evolve-set/unit-cache bash scripts/device_probe_genomes.sh prepare "$list" 2>&1 | tail -1
for p in $(grep -v '^#' "$list" | awk '{print $1}' | sort -u); do
  cp evolve-set/versus-state/set/$p/best.cu evolve-set/probe/src/$p--set.cu; echo "$p evolve-set/probe/src/$p--set.cu"
done | xargs -P 8 -L 1 sh -c 'build/kiln bench candidate --compile-only --reuse-builds --problem "$0" --source "$1" --build-dir evolve-set/probe/build --build-cache evolve-set/unit-cache > /dev/null 2>&1 || echo "not built: $1"'
echo "built at ${SECONDS}s"
PROBE_VS_SET=evolve-set/versus-state PROBE_BUILD_CACHE=evolve-set/unit-cache PROBE_LIMIT=90 \
  bash scripts/device_probe_genomes.sh run "$list" > /dev/null
grep -E "correct=|stays|replaces" "$OUT/probe-summary.txt" | awk '{print $1, $4, $5, $6, $7, $8, $9, $10}'
tar -cJf "$OUT/set-after.tar.xz" evolve-set/versus-state/set
# Every unit built here or there is offered to the versus run (it copies prebuilt-units/units).
mkdir -p prebuilt-units && rm -rf prebuilt-units/units && cp -r evolve-set/unit-cache/units prebuilt-units/units
echo "versus from ${SECONDS}s"
mkdir -p "$OUT/logs"
VERSUS_STATE=evolve-set/versus-state VERSUS_LIMIT=$((565 - SECONDS - 30)) bash scripts/device_set_versus.sh \
  > "$OUT/logs/versus-run.txt" 2>&1
cat "$OUT/versus.md"
python3 scripts/combine_eager_vs_evolved.py "$OUT/eager-vs-evolved.json" | tail -3
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
echo "done at ${SECONDS}s"
