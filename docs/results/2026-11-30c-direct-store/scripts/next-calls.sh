#!/usr/bin/env bash
# The next session's first device calls, planned at the end of 2026-11-30c (nothing here has run).
# What is untested: 0c8badc, two operand copies under split-K (PhasedMainloop with slices > 1),
# which the K = 8192 products (kb1-2, 16, 17, 18) need to use two copies.
# Here first:
#   ninja -C build -j2 kiln kiln_gpu_tests && bash scripts/pack_carry.sh build/kiln \
#     build/kiln_gpu_tests .deps/cutlass-4.2.0.0/include
#   tar -xJf docs/results/2026-11-30c-direct-store/callG/set-after.tar.xz   (evolve-set/versus-state/set)
# Device, carry ["carry", "evolve-set/versus-state"]:
#   call 1: bash docs/results/2026-11-30c-direct-store/scripts/next-calls.sh probes
#     (EvolveGpu.MatmulSm90* while the set's and the probes' CUTLASS units compile; the sliced
#     two-copy probes beside the set's kernels; winners into the state; returns units.tar.xz and
#     set-after.tar.xz: unpack set-after.tar.xz here, copy units.tar.xz to evolve-set/versus-state/)
#   call 2: bash docs/results/2026-11-30c-direct-store/scripts/next-calls.sh versus
cd "$(dirname "$0")/../../../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
mkdir -p "$OUT/logs" "$OUT/verdicts" /tmp/vcache/units
S=evolve-set/versus-state/set; P=/tmp/probes
here=docs/results/2026-11-30c-direct-store/scripts
[ -f evolve-set/versus-state/units.tar.xz ] && tar -xJf evolve-set/versus-state/units.tar.xz -C /tmp/vcache/units
case "${1:-}" in
  probes)
    mkdir -p $P
    while read -r p name genome; do
      build/kiln evolve generate --problem "$p" --genome "$genome" --out "$P/$p--$name.cu" > /dev/null ||
        echo "not generated: $p $name"
    done < $here/probes-next.txt
    ( python3 scripts/kb1_eager_vs_evolved.py --runs $S --problems 'kb1-*' --build-dir /tmp/vbuild \
        --build-cache /tmp/vcache --prepare --jobs 8 > "$OUT/logs/versus-prepare.txt" 2>&1
      ls $P/*.cu | while read -r f; do b=$(basename "$f" .cu); echo "${b%%--*} $f"; done |
        xargs -P 8 -L 1 sh -c 'build/kiln bench candidate --compile-only --reuse-builds --problem "$0" --source "$1" --build-dir /tmp/pbuild --build-cache /tmp/vcache > /dev/null 2>&1 || echo "compile failed: $1"'
      echo "compiled at ${SECONDS}s" ) > "$OUT/logs/compile.txt" 2>&1 &
    compiler=$!
    timeout 300 build/kiln_gpu_tests --gtest_filter='EvolveGpu.MatmulSm90*' > "$OUT/logs/gpu-tests.txt" 2>&1
    echo "gpu tests exit $? at ${SECONDS}s"
    grep -E "^\[  (PASSED|FAILED|  OK) |Failure|not accepted|rejected" "$OUT/logs/gpu-tests.txt" | head -20
    wait $compiler; cat "$OUT/logs/compile.txt"
    for p in $(ls $P | sed 's/--.*//' | sort -u); do
      cp "$S/$p/best.cu" "$P/$p--set.cu"
      srcs=(); for f in $P/$p--*.cu; do srcs+=(--source "$f"); done
      timeout 60 build/kiln bench candidate --reuse-builds --problem "$p" --sizes kb "${srcs[@]}" \
        --json-per-source --build-dir /tmp/pbuild --build-cache /tmp/vcache -w 3 -n 10 --trials 2 \
        --timeout 50 --timing guarded > "$OUT/logs/$p-judge.txt" 2>&1
      echo "$p judge exit $? at ${SECONDS}s"
      for f in $P/$p--*.cu; do j=${f%.cu}.json; [ -f "$j" ] && cp "$j" "$OUT/verdicts/" &&
        python3 scripts/verdict_rows.py "$j" "$(basename "${f%.cu}")" --width 44; done
      # A probe more than 2% above the set's U in the same launch replaces the set's kernel.
      python3 scripts/pick_probe_winner.py "$P" "$p" "$S"
    done | tee "$OUT/summary.txt"
    tar -cf - -C /tmp/vcache/units . | xz -T16 -3 > "$OUT/units.tar.xz"
    tar -cJf "$OUT/set-after.tar.xz" evolve-set/versus-state/set
    ;;
  versus)
    VERSUS_STATE=evolve-set/versus-state VERSUS_LIMIT=300 bash scripts/device_set_versus.sh \
      > "$OUT/logs/versus-run.txt" 2>&1
    cat "$OUT/versus.md"
    python3 scripts/combine_eager_vs_evolved.py "$OUT/eager-vs-evolved.json" | tail -3
    ;;
  *) echo "usage: $0 probes|versus" >&2; exit 2 ;;
esac
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs verdicts && rm -rf "$OUT/logs" "$OUT/verdicts"
