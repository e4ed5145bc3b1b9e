#!/usr/bin/env bash
# 2026-11-29h call 4: Nsight Compute counters of the set's kernels (the fixed script: built outside ncu).
s=evolve-set/versus-state/set
NCU_SIZE=small NCU_LIMIT=90 timeout 250 bash scripts/device_ncu_candidates.sh kb1-89-cumsum=$s/kb1-89-cumsum/best.cu kb1-44-avgpool-1d=$s/kb1-44-avgpool-1d/best.cu kb1-42-maxpool-2d=$s/kb1-42-maxpool-2d/best.cu kb1-40-layernorm=$s/kb1-40-layernorm/best.cu kb1-36-rmsnorm=$s/kb1-36-rmsnorm/best.cu > /dev/null 2>&1
mv $OUT/ncu-summary.txt $OUT/ncu-summary-small.txt; mv $OUT/ncu.tar.gz $OUT/ncu-small.tar.gz
r=$((400-SECONDS)); [ $r -gt 60 ] || exit 0
NCU_SIZE=kb NCU_REPLAY=application NCU_LIMIT=120 timeout $r bash scripts/device_ncu_candidates.sh kb1-46-avgpool-3d=$s/kb1-46-avgpool-3d/best.cu kb1-23-softmax=$s/kb1-23-softmax/best.cu kb1-43-maxpool-3d=$s/kb1-43-maxpool-3d/best.cu > /dev/null 2>&1
cat $OUT/ncu-summary-small.txt $OUT/ncu-summary.txt
