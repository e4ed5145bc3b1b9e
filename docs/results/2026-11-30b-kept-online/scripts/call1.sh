#!/usr/bin/env bash
# 2026-11-30b call 1: the judge's relative-L2 check and kept-online norms on a GPU for the first
# time (CandidateGpu.*, NormFamily), memcheck on kept-online kernels (judge's compare kernel runs
# too), the probes norm-online-keep and pool-h200.
cd "$(dirname "$0")/../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
mkdir -p $OUT/logs
( PROBE_JOBS=14 bash scripts/device_probe_genomes.sh prepare scripts/probes/norm-online-keep.txt > $OUT/logs/prepare1.txt 2>&1
  PROBE_JOBS=14 bash scripts/device_probe_genomes.sh prepare scripts/probes/pool-h200.txt > $OUT/logs/prepare2.txt 2>&1 ) &
prep=$!
timeout 200 build/kiln_gpu_tests --gtest_filter='CandidateGpu.*:EvolveGpu.NormFamily*' > $OUT/logs/gpu-tests.txt 2>&1
echo "gpu tests exit $? at ${SECONDS}s"; grep -E "^\[  (PASSED|FAILED|  OK|SKIPPED) |FAILED|Failure" $OUT/logs/gpu-tests.txt | head -40
wait $prep; echo "prepare done at ${SECONDS}s"; tail -2 $OUT/logs/prepare1.txt $OUT/logs/prepare2.txt
SAN_LIMIT=100 SAN_PROBLEMS= SAN_TOOLS=memcheck SAN_SOURCES="kb1-23-softmax=evolve-set/calls/kept-online-softmax.cu kb1-40-layernorm=evolve-set/calls/kept-online-layernorm.cu" timeout 220 bash scripts/device_evolve_quality.sh sanitizer > $OUT/logs/sanitizer.txt 2>&1
echo "sanitizer exit $? at ${SECONDS}s"; grep -E "ERROR SUMMARY|exit|rejected|accepted" $OUT/logs/sanitizer.txt | head -10
for l in norm-online-keep pool-h200; do
  r=$((580-SECONDS)); [ $r -gt 40 ] || break
  PROBE_LIMIT=75 timeout $r bash scripts/device_probe_genomes.sh run scripts/probes/$l.txt > $OUT/logs/probe-$l.txt 2>&1
  echo "probe $l exit $? at ${SECONDS}s"; cp $OUT/probe-summary.txt $OUT/probe-summary-$l.txt; cat $OUT/probe-summary.txt
  [ -f $OUT/probe.tar.gz ] && mv $OUT/probe.tar.gz $OUT/logs/probe-$l.tar.gz
done
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
