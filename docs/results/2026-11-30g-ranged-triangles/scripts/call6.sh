#!/usr/bin/env bash
# 2026-11-30g call 6: the ranged triangle with A's copies split only in each row block's band
# (banded-probes.txt, 2f5e517): small-size correctness, memcheck
# and synccheck on a banded kernel, KernelBench's size beside the set (a probe 2% above
# replaces best.cu), then, if one replaced a kernel, the whole set against PyTorch eager in the same call.
# Here first: tar -xJf docs/results/2026-11-30g-ranged-triangles/call3/set-after.tar.xz (the state after call 3);
#   ninja -C build -j2 kiln; bash scripts/pack_carry.sh build/kiln .deps/cutlass-4.2.0.0/include;
#   PROBE_BUILD_CACHE=evolve-set/unit-cache PROBE_VS_SET=evolve-set/versus-state bash
#   scripts/device_probe_genomes.sh prepare $d/banded-probes.txt;
#   tar -cJf evolve-set/probe.tar.xz evolve-set/probe/src evolve-set/probe/build/*.so*;
#   tar -cJf evolve-set/unit-cache.tar.xz evolve-set/unit-cache/units
# Device, carry ["carry", "evolve-set/versus-state", "evolve-set/probe.tar.xz",
#   "evolve-set/unit-cache.tar.xz"]: bash docs/results/2026-11-30g-ranged-triangles/scripts/call6.sh
cd "$(dirname "$0")/../../../.." || exit 2
d=docs/results/2026-11-30g-ranged-triangles/scripts
list=$d/banded-probes.txt
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
tar -xJf evolve-set/probe.tar.xz; tar -xJf evolve-set/unit-cache.tar.xz
SIZE=small PROBE_LIMIT=90 bash scripts/device_probe_genomes.sh run $list > /dev/null
mv "$OUT/probe-summary.txt" "$OUT/small-summary.txt"; mv "$OUT/probe.tar.gz" "$OUT/small-probe.tar.gz"
grep -E "correct=|exit" "$OUT/small-summary.txt" | awk '{print $1, $4, $5, $6, $7}'
for tool in memcheck synccheck; do
  s=evolve-set/probe/src/kb1-14-upper-triangular-matmul--banded-r1-s0-co.cu
  timeout 60 compute-sanitizer --tool $tool --target-processes all --report-api-errors no \
    build/kiln bench candidate --problem kb1-14-upper-triangular-matmul --sizes small --source $s --reuse-builds \
    --build-dir evolve-set/probe/build -w 1 -n 2 --trials 1 --timeout 50 > "$OUT/$tool-banded.txt" 2>&1
  echo "$tool banded kb1-14: exit $? $(grep -h 'ERROR SUMMARY' "$OUT/$tool-banded.txt" | sort | uniq -c | tr '\n' ' ')"
done
PROBE_VS_SET=evolve-set/versus-state PROBE_LIMIT=120 bash scripts/device_probe_genomes.sh run $list > /dev/null
grep -E "correct=|stays|replaces|exit" "$OUT/probe-summary.txt" | awk '{print $1, $4, $5, $6, $7, $8, $9, $10}'
tar -cJf "$OUT/set-after.tar.xz" evolve-set/versus-state/set
# The whole set again only when a probe replaced a kernel.
grep -q replaces "$OUT/probe-summary.txt" || { echo "nothing replaced: no versus run; done at ${SECONDS}s"; exit 0; }
mkdir -p prebuilt-units && rm -rf prebuilt-units/units && cp -r evolve-set/unit-cache/units prebuilt-units/units
echo "versus from ${SECONDS}s"
mkdir -p "$OUT/logs"
VERSUS_STATE=evolve-set/versus-state VERSUS_LIMIT=$((565 - SECONDS - 30)) bash scripts/device_set_versus.sh \
  > "$OUT/logs/versus-run.txt" 2>&1
cat "$OUT/versus.md"
python3 scripts/combine_eager_vs_evolved.py "$OUT/eager-vs-evolved.json" | tail -3
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
echo "done at ${SECONDS}s"
