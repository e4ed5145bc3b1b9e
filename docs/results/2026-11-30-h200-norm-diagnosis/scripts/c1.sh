#!/usr/bin/env bash
# 2026-11-30 call 1: the in-process judge and --ncu GPU tests; the norm probes on the H200; ncu counters.
cd "$(dirname "$0")/../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
cat carry/MANIFEST | head -2
mkdir -p $OUT/logs
timeout 170 build/kiln_gpu_tests --gtest_filter='CandidateGpu.Kb1InProcess*:EvolveGpu.NcuCounters*' > $OUT/logs/gpu-tests.txt 2>&1
echo "gpu tests exit $? at ${SECONDS}s"; grep -E "^\[  (PASSED|FAILED|  OK|SKIPPED) |FAILED|Failure" $OUT/logs/gpu-tests.txt | head -20
PROBE_JOBS=16 timeout 120 bash scripts/device_probe_genomes.sh prepare scripts/probes/norm-h200.txt > $OUT/logs/prepare.txt 2>&1
echo "prepare exit $? at ${SECONDS}s"; tail -3 $OUT/logs/prepare.txt
r=$((520-SECONDS)); PROBE_LIMIT=75 timeout $r bash scripts/device_probe_genomes.sh run scripts/probes/norm-h200.txt > $OUT/logs/probe.txt 2>&1
echo "probe exit $? at ${SECONDS}s"; cat $OUT/probe-summary.txt
s=evolve-set/versus-state/set
r=$((575-SECONDS)); [ $r -gt 60 ] && NCU_SIZE=kb NCU_REPLAY=application NCU_LIMIT=100 timeout $r bash scripts/device_ncu_candidates.sh kb1-23-softmax=$s/kb1-23-softmax/best.cu kb1-42-maxpool-2d=$s/kb1-42-maxpool-2d/best.cu kb1-46-avgpool-3d=$s/kb1-46-avgpool-3d/best.cu > $OUT/logs/ncu.txt 2>&1
echo "ncu at ${SECONDS}s"; cat $OUT/ncu-summary.txt 2>/dev/null
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
