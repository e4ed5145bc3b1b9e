#!/usr/bin/env bash
# 2026-11-30d call 7: attribution of call 6's KL-divergence win: the winner's genome with and
# without fast-log, the set's old genome with and without it, beside the state's kernel (the
# winner), one judge launch at KernelBench's size (-n 20). Nothing is replaced here.
cd "$(dirname "$0")/../../../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
S=evolve-set/versus-state/set; P=/tmp/probes; here=docs/results/2026-11-30d-sliced-copies/scripts
mkdir -p $P "$OUT/verdicts"
while read -r p name genome; do
  build/kiln evolve generate --problem "$p" --genome "$genome" --out "$P/$p--$name.cu" > /dev/null
done < $here/probes7.txt
p=kb1-98-kl-div-loss; cp "$S/$p/best.cu" "$P/$p--set.cu"
srcs=(); for f in $P/$p--*.cu; do srcs+=(--source "$f"); done
timeout 150 build/kiln bench candidate --problem "$p" --sizes kb "${srcs[@]}" --json-per-source \
  --build-dir /tmp/pbuild -w 3 -n 20 --trials 2 --timeout 140 --timing guarded > "$OUT/judge.txt" 2>&1
echo "judge exit $?"
for f in $P/$p--*.cu; do j=${f%.cu}.json; [ -f "$j" ] && cp "$j" "$OUT/verdicts/" &&
  python3 scripts/verdict_rows.py "$j" "$(basename "${f%.cu}")" --width 44; done | tee "$OUT/summary.txt"
tar -czf "$OUT/verdicts.tar.gz" -C "$OUT" verdicts && rm -rf "$OUT/verdicts"
