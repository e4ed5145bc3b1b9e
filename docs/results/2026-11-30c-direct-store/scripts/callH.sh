#!/usr/bin/env bash
# 2026-11-30c call H: eager against the set with call G's six two-copy winners, taking turns.
cd "$(dirname "$0")/../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
VERSUS_STATE=evolve-set/versus-state VERSUS_LIMIT=230 bash scripts/device_set_versus.sh > /dev/null 2>&1
cat $OUT/versus.md
python3 scripts/combine_eager_vs_evolved.py $OUT/eager-vs-evolved.json | tail -3
