#!/usr/bin/env bash
# 2026-11-29h call 1: tests, probes (ring prefetch, split_k, divisor, screen vs guarded), sanitizer, ncu.
set -u
d=evolve-set/ncu-src
bash scripts/unpack_carry.sh > $OUT/unpack.txt 2>&1; source scripts/device_env.sh > /dev/null 2>&1
nvidia-smi > $OUT/nvidia-smi.txt
t0=$SECONDS
timeout 120 build/kiln_gpu_tests --gtest_filter='ScanOddShapesGpu.*' > $OUT/test-odd.txt 2>&1; echo "odd exit $? $((SECONDS-t0))s" | tee $OUT/steps.txt
timeout 150 build/kiln_gpu_tests --gtest_filter='EvolveGpu.ScanFamily*:EvolveGpu.PoolingWarpRow*' > $OUT/test-evolve.txt 2>&1; echo "evolve exit $? $((SECONDS-t0))s" | tee -a $OUT/steps.txt
tail -3 $OUT/test-odd.txt $OUT/test-evolve.txt
cat $d/list-a.txt $d/list-b.txt > /tmp/all.txt
PROBE_JOBS=16 bash scripts/device_probe_genomes.sh prepare /tmp/all.txt > $OUT/prepare.txt 2>&1; echo "prepare $((SECONDS-t0))s" | tee -a $OUT/steps.txt; tail -2 $OUT/prepare.txt
mkdir -p $OUT/a $OUT/b
OUT=$OUT/a PROBE_LIMIT=80 bash scripts/device_probe_genomes.sh run $d/list-a.txt > /dev/null 2>&1; echo "probe a $((SECONDS-t0))s" | tee -a $OUT/steps.txt
OUT=$OUT/b PROBE_LIMIT=60 PROBE_TIMING="guarded screen" bash scripts/device_probe_genomes.sh run $d/list-b.txt > /dev/null 2>&1; echo "probe b $((SECONDS-t0))s" | tee -a $OUT/steps.txt
cat $OUT/a/probe-summary.txt $OUT/b/probe-summary.txt
SAN_PROBLEMS= SAN_TOOLS="memcheck racecheck" SAN_LIMIT=40 SAN_SOURCES="kb1-93-masked-cumsum=evolve-set/probe/src/kb1-93-masked-cumsum--p1.cu" timeout 100 bash scripts/device_evolve_quality.sh sanitizer > $OUT/sanitizer.txt 2>&1; echo "san $((SECONDS-t0))s" | tee -a $OUT/steps.txt
tail -8 $OUT/sanitizer.txt
r=$((560-SECONDS)); [ $r -gt 60 ] || exit 0
NCU_SIZE=kb NCU_LIMIT=50 timeout $r bash scripts/device_ncu_candidates.sh kb1-46-avgpool-3d=$d/kb1-46-avgpool-3d-warprow.cu kb1-46-avgpool-3d=evolve-set/probe/src/kb1-46-avgpool-3d--planes-u4-t256-r8-p16.cu kb1-23-softmax=$d/kb1-23-softmax.cu > /dev/null 2>&1
cp $OUT/ncu-summary.txt $OUT/ncu-summary-kb.txt; r=$((570-SECONDS)); [ $r -gt 40 ] || exit 0
NCU_LIMIT=30 timeout $r bash scripts/device_ncu_candidates.sh kb1-89-cumsum=evolve-set/probe/src/kb1-89-cumsum--p1.cu kb1-40-layernorm=$d/kb1-40-layernorm.cu kb1-42-maxpool-2d=$d/kb1-42-maxpool-2d.cu kb1-36-rmsnorm=$d/kb1-36-rmsnorm.cu kb1-44-avgpool-1d=$d/kb1-44-avgpool-1d.cu > /dev/null 2>&1
echo "ncu $((SECONDS-t0))s" | tee -a $OUT/steps.txt; cat $OUT/ncu-summary-kb.txt $OUT/ncu-summary.txt
