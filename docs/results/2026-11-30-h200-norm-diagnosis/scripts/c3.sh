#!/usr/bin/env bash
# 2026-11-30 call 3: registers capped to the kept copy's occupancy (kMinBlocks) against the old
# code; cp.async whole-unit staging for softmax; Nsight Compute with L2 and occupancy limits.
cd "$(dirname "$0")/../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
mkdir -p $OUT/logs $OUT/verdicts
D=evolve-set/calls/src3
ls $D/*.cu | while read -r f; do b=$(basename $f .cu); echo "${b%%--*} $f"; done |
  xargs -P 16 -L 1 sh -c 'build/kiln bench candidate --compile-only --reuse-builds --problem "$0" --source "$1" --build-dir /tmp/c3 > /dev/null 2>&1 || echo "compile failed: $1"'
echo "compiled at ${SECONDS}s"
for p in kb1-23-softmax kb1-24-log-softmax kb1-34-instancenorm; do
  srcs=(); for f in $D/$p--*.cu; do srcs+=(--source $f); done
  timeout 120 build/kiln bench candidate --reuse-builds --problem $p --sizes kb "${srcs[@]}" --json-per-source \
    --build-dir /tmp/c3 -w 3 -n 10 --trials 2 --timeout 60 --timing guarded > $OUT/logs/$p-judge.txt 2>&1
  echo "$p judge exit $? at ${SECONDS}s"
  for f in $D/$p--*.cu; do j=${f%.cu}.json; [ -f $j ] && cp $j $OUT/verdicts/ && python3 scripts/verdict_rows.py $j "$(basename ${f%.cu})" --width 50; done
done | tee $OUT/summary.txt
S=evolve-set/versus-state/set
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,smsp__inst_executed.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers
r=$((540-SECONDS)); [ $r -gt 60 ] && NCU_METRICS=$M NCU_SIZE=kb NCU_REPLAY=application NCU_LIMIT=90 timeout $r bash scripts/device_ncu_candidates.sh \
  kb1-23-softmax=$D/kb1-23-softmax--old-best.cu kb1-23-softmax=$D/kb1-23-softmax--mb-c16-k96-cs.cu kb1-23-softmax=$D/kb1-23-softmax--mb-c16-k64-cs.cu \
  kb1-35-groupnorm=$S/kb1-35-groupnorm/best.cu kb1-89-cumsum=$S/kb1-89-cumsum/best.cu kb1-19-relu=$S/kb1-19-relu/best.cu kb1-43-maxpool-3d=$S/kb1-43-maxpool-3d/best.cu > $OUT/logs/ncu.txt 2>&1
echo "ncu at ${SECONDS}s"; cat $OUT/ncu-summary.txt 2>/dev/null
# The extra metrics from the raw pages.
mkdir -p /tmp/ncux && tar -xzf $OUT/ncu.tar.gz -C /tmp/ncux 2>/dev/null
python3 - /tmp/ncux/ncu/*.csv << 'PY' | tee $OUT/ncu-extra.txt
import csv, sys
want = ["dram__throughput.avg.pct_of_peak_sustained_elapsed", "lts__throughput.avg.pct_of_peak_sustained_elapsed",
        "l1tex__throughput.avg.pct_of_peak_sustained_elapsed", "sm__warps_active.avg.pct_of_peak_sustained_active",
        "launch__registers_per_thread", "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_registers"]
for path in sys.argv[1:]:
    if path.endswith("-build.txt"): continue
    rows = [r for r in csv.reader(l for l in open(path, errors="replace") if l.startswith('"'))]
    if len(rows) < 3: print(path.split("/")[-1], "no rows"); continue
    v = dict(zip(rows[0], rows[2]))
    print(path.split("/")[-1][:-4], " ".join(f"{w.split('__')[1].split('.')[0]}={v.get(w,'?')}" for w in want))
PY
tar -czf $OUT/logs.tar.gz -C $OUT logs verdicts && rm -rf $OUT/logs $OUT/verdicts
