# Runs the kiln binary with wrong flags: each must exit 2 with exactly one line on stderr that
# names the flag. Invoked by ctest with -DKILN=<path to kiln>.
function(expect_usage_error expected_text)
  execute_process(COMMAND ${KILN} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 60)
  string(STRIP "${err}" err)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines extra_lines)
  if(NOT code EQUAL 2)
    message(FATAL_ERROR "kiln ${ARGN}: exit code ${code}, expected 2 (stderr: ${err})")
  endif()
  if(NOT extra_lines EQUAL 0)
    message(FATAL_ERROR "kiln ${ARGN}: expected one line on stderr, got:\n${err}")
  endif()
  string(FIND "${err}" "${expected_text}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "kiln ${ARGN}: stderr '${err}' does not mention '${expected_text}'")
  endif()
  message(STATUS "ok: kiln ${ARGN} -> ${err}")
endfunction()

expect_usage_error("-b 0" bench collective -g 1 -b 0)
expect_usage_error("-e" bench collective -g 1 -b 1M -e 1K)
expect_usage_error("unknown collective 'gather'" bench collective -g 1 -o gather)
expect_usage_error("unknown data type" bench collective -g 1 -d fp64)
expect_usage_error("-f" bench collective -g 1 -b 1K -e 1M -f 1)
expect_usage_error("-n 0" bench collective -g 1 -n 0)
expect_usage_error("-b" bench collective -g 1 -b 12Q)
expect_usage_error("-g 9" bench collective -g 9 -b 1M -e 1M)
expect_usage_error("--bogus" bench collective --bogus)
expect_usage_error("unknown hardware profile" bench collective --dry-run --device z80)
expect_usage_error("unknown hardware profile" bench collective --dry-run --profile z80)  # old spelling
# Several ranks on one GPU: the flag's accepted range.
expect_usage_error("--ranks-per-gpu" bench collective -g 2 --ranks-per-gpu 0)
expect_usage_error("--ranks-per-gpu" bench suite -g 2 --ranks-per-gpu 17)
expect_usage_error("--ranks-per-gpu" overlap bench -g 2 --ranks-per-gpu -1)
expect_usage_error("--settle-seconds 99: accepted range 0..60" overlap bench -g 1 --settle-seconds 99)
expect_usage_error("--inputs: 'randn'; accepted: uniform" overlap bench -g 1 --inputs randn)
expect_usage_error("--comms ce3: accepted nccl, ce, ce2" overlap bench -g 1 --comms ce3)
# kiln evolve: problems without a generator, budgets, a resume with nothing to resume.
expect_usage_error("--problem allreduce" evolve run --problem allreduce --out ${CMAKE_CURRENT_BINARY_DIR}/evolve-none)
expect_usage_error("--budget 0" evolve run --problem kb1-19-relu --budget 0 --out ${CMAKE_CURRENT_BINARY_DIR}/evolve-none)
expect_usage_error("--ncu and --random: the random baseline takes no guidance" evolve run --problem kb1-19-relu --ncu --random --out ${CMAKE_CURRENT_BINARY_DIR}/evolve-none)
expect_usage_error("--uniform-knobs and --random: the random baseline mutates no knobs" evolve run --problem kb1-19-relu --uniform-knobs --random --out ${CMAKE_CURRENT_BINARY_DIR}/evolve-none)
expect_usage_error("--budget 0" evolve set --problems kb1-* --budget 0 --out ${CMAKE_CURRENT_BINARY_DIR}/evolve-set-none)
expect_usage_error("--screen-trials 0: accepted range 1..1000" evolve run --problem kb1-19-relu --screen-trials 0 --out ${CMAKE_CURRENT_BINARY_DIR}/evolve-none)
expect_usage_error("--screen-trials 0: accepted range 1..1000" evolve set --problems kb1-* --screen-trials 0 --out ${CMAKE_CURRENT_BINARY_DIR}/evolve-set-none)
expect_usage_error("--trials 0: accepted range 1..1000" evolve run --problem kb1-19-relu --trials 0 --out ${CMAKE_CURRENT_BINARY_DIR}/evolve-none)
expect_usage_error("none of the problems matched has a generator" evolve set --problems allreduce --out ${CMAKE_CURRENT_BINARY_DIR}/evolve-set-none)
expect_usage_error("--parallel-problems: Value 9 not in range" evolve set --problems kb1-* --parallel-problems 9 --out ${CMAKE_CURRENT_BINARY_DIR}/evolve-set-none)
expect_usage_error("--heavy-problems: Value 9 not in range" evolve set --problems kb1-* --heavy-problems 9 --out ${CMAKE_CURRENT_BINARY_DIR}/evolve-set-none)
expect_usage_error("--resume" evolve run --problem kb1-19-relu --resume --out ${CMAKE_CURRENT_BINARY_DIR}/evolve-none)
expect_usage_error("--seed-naive: only for whole-array sums" evolve run --problem kb1-19-relu --seed-naive --out ${CMAKE_CURRENT_BINARY_DIR}/evolve-none)
expect_usage_error("reduce-sum-int32 accepts 1e6, 1e8, 1e9" evolve run --problem reduce-sum-int32 --size small --out ${CMAKE_CURRENT_BINARY_DIR}/evolve-none)
# --seeds: a file that is not there, one that does not fit the problem (checked for the whole set
# before any search), and the random baseline, which takes no seeds.
set(seed_list ${CMAKE_CURRENT_BINARY_DIR}/evolve-seeds.txt)
file(WRITE ${seed_list} "# a reduce-axis genome for a map problem\nkb1-19-relu wrong {\"family\":\"reduce-axis\",\"strategies\":[\"row-per-block\",\"shared-tree\",\"scalar-loads\"]}\n")
expect_usage_error("--seeds: File does not exist" evolve run --problem kb1-19-relu --seeds ${CMAKE_CURRENT_BINARY_DIR}/no-such-seeds.txt --out ${CMAKE_CURRENT_BINARY_DIR}/evolve-none)
expect_usage_error("evolve-seeds.txt:2 (kb1-19-relu wrong): a reduce-axis genome, but kb1-19-relu is a map problem" evolve set --problems kb1-19-relu --seeds ${seed_list} --out ${CMAKE_CURRENT_BINARY_DIR}/evolve-set-none)
expect_usage_error("--seeds and --random" evolve run --problem kb1-19-relu --random --seeds ${seed_list} --out ${CMAKE_CURRENT_BINARY_DIR}/evolve-none)
expect_usage_error("--torch-json" bench suite -g 1 --problems kb1-19-relu --torch-json /nonexistent/torch.json)
expect_usage_error("--json-per-source" bench candidate --problem kb1-19-relu --source a.cu --source b.cu --json out.json)
expect_usage_error("choose one" bench candidate --problem kb1-19-relu --source a.cu --json out.json --json-per-source)
expect_usage_error("a second candidate named x" bench candidate --problem kb1-19-relu --source d1/x.cu --source d2/x.cu --json-per-source)
expect_usage_error("no log.json" evolve show ${CMAKE_CURRENT_BINARY_DIR}/evolve-none)
expect_usage_error("no run.json" evolve export ${CMAKE_CURRENT_BINARY_DIR}/evolve-none --out ${CMAKE_CURRENT_BINARY_DIR}/evolve-export)

# A judgement compiles into a fresh folder of its own inside --build-dir, removed afterwards
# (nothing a candidate left there is loaded later); --reuse-builds (kiln evolve's compile-ahead)
# compiles into --build-dir itself. `-g 9` ends the judgement after the compile on any machine.
set(judge_dir ${CMAKE_CURRENT_BINARY_DIR}/judge-build-dir)
file(REMOVE_RECURSE ${judge_dir})
file(MAKE_DIRECTORY ${judge_dir}/src)
file(WRITE ${judge_dir}/src/plain.cu
     "#include \"kiln/candidate.h\"\nextern \"C\" int kiln_candidate_run(const KilnCandidateArgs*) { return 0; }\n")
foreach(reuse OFF ON)
  set(flag "")
  if(reuse)
    set(flag --reuse-builds)
  endif()
  execute_process(COMMAND ${KILN} bench candidate --problem kb1-19-relu -g 9 ${flag}
                          --source ${judge_dir}/src/plain.cu --build-dir ${judge_dir}/out
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  if(NOT out MATCHES "# compiled:")
    message(FATAL_ERROR "kiln bench candidate ${flag}: did not compile (exit ${code}): ${out} ${err}")
  endif()
  file(GLOB left RELATIVE ${judge_dir}/out ${judge_dir}/out/*)
  list(FIND left plain.so library)
  if(reuse AND library EQUAL -1)
    message(FATAL_ERROR "--reuse-builds: no plain.so in --build-dir (found: ${left})")
  elseif(NOT reuse AND left)
    message(FATAL_ERROR "a judgement left files in --build-dir: ${left}")
  endif()
  message(STATUS "ok: kiln bench candidate ${flag} -> --build-dir holds '${left}'")
endforeach()

# --compile-only: the library built into --build-dir, nothing judged (exit 0 on any machine: no
# rank starts), for a later --reuse-builds judgement; without --reuse-builds it is a usage error.
expect_usage_error("--compile-only keeps what it builds" bench candidate --problem kb1-19-relu
                   --compile-only --source ${judge_dir}/src/plain.cu)
file(REMOVE_RECURSE ${judge_dir}/ahead)
foreach(round first again)
  execute_process(COMMAND ${KILN} bench candidate --problem kb1-19-relu --compile-only --reuse-builds
                          --source ${judge_dir}/src/plain.cu --build-dir ${judge_dir}/ahead
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  if(NOT code EQUAL 0 OR NOT out MATCHES "# candidate plain: built \\(--compile-only: not judged\\)"
     OR out MATCHES "# kiln bench suite:")  # the judgement's header: no rank may start
    message(FATAL_ERROR "--compile-only (${round}): exit ${code}: ${out} ${err}")
  endif()
  if(NOT EXISTS ${judge_dir}/ahead/plain.so)
    message(FATAL_ERROR "--compile-only (${round}): no plain.so in --build-dir")
  endif()
endforeach()
if(NOT out MATCHES "reused: built from the same source")
  message(FATAL_ERROR "--compile-only a second time did not reuse the library: ${out}")
endif()
message(STATUS "ok: kiln bench candidate --compile-only builds once, then reuses")

# --in-process runs the one rank in kiln's own process: more ranks or the judge server are usage
# errors, named.
expect_usage_error("--in-process judges on one rank in this process: -g 1 (not 2)" bench candidate
                   --problem kb1-19-relu --in-process -g 2 --source ${judge_dir}/src/plain.cu)
expect_usage_error("--in-process and --serve" bench candidate --problem kb1-19-relu --in-process -g 1
                   --reuse-builds --serve ${judge_dir}/serve)

# A candidate that does not compile is a verdict, not a usage error: exit 1, a REJECTED line, and
# its JSON says so (no GPU needed: the judgement ends before any rank starts).
set(verdict_json ${judge_dir}/does_not_compile.json)
file(WRITE ${verdict_json} "{\"stale\": true}")  # a previous run's report must not survive
execute_process(COMMAND ${KILN} bench candidate --problem kb1-19-relu -g 1
                        --source ${CMAKE_CURRENT_LIST_DIR}/../candidates/does_not_compile.cu
                        --build-dir ${judge_dir}/out --json ${verdict_json}
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
if(NOT code EQUAL 1 OR NOT out MATCHES "# candidate does_not_compile: REJECTED \\(did not compile")
  message(FATAL_ERROR "does_not_compile: exit ${code}, expected 1 and a REJECTED line: ${out} ${err}")
endif()
if(NOT err MATCHES "nvcc failed")
  message(FATAL_ERROR "does_not_compile: stderr does not carry nvcc's failure: ${err}")
endif()
file(READ ${verdict_json} report)
string(JSON accepted GET "${report}" verdict accepted)
string(JSON reason GET "${report}" verdict reason)
string(JSON log GET "${report}" verdict build_log)
string(JSON stale ERROR_VARIABLE no_stale GET "${report}" stale)
if(NOT accepted STREQUAL "OFF" OR NOT reason STREQUAL "did not compile" OR NOT log MATCHES
   "expected an expression" OR NOT no_stale)
  message(FATAL_ERROR "does_not_compile: the JSON's verdict is wrong or stale: ${report}")
endif()
message(STATUS "ok: kiln bench candidate does_not_compile -> exit 1, verdict in its JSON")
