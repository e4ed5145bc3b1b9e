# scripts/combine_eager_vs_evolved.py: a later call's row replaces an earlier one's, the figures
# are geometric means over the combined rows, and a file that is not an eager-vs-evolved JSON is
# refused naming it. Invoked by ctest with -DPYTHON=<python3> -DSCRIPT=<script> -DWORK=<folder>.
file(MAKE_DIRECTORY ${WORK})
# Older call: p1 at 2x of a 4x headroom (U 0.5), p2 at its roof (1x, U 1). Newer: p1 at 4x (U 1).
file(WRITE ${WORK}/older.json [=[{"rows": [
 {"problem": "p1", "correct": true, "speedup": 2.0, "eager_median_us": 200.0, "roof_us": 50.0, "u": 0.5},
 {"problem": "p2", "correct": true, "speedup": 1.0, "eager_median_us": 100.0, "roof_us": 100.0, "u": 1.0}]}]=])
file(WRITE ${WORK}/newer.json [=[{"rows": [
 {"problem": "p1", "correct": true, "speedup": 4.0, "eager_median_us": 200.0, "roof_us": 50.0, "u": 1.0}]}]=])
execute_process(COMMAND ${PYTHON} ${SCRIPT} ${WORK}/older.json ${WORK}/newer.json --json ${WORK}/out.json
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "combine failed (${code}): ${err}")
endif()
foreach(expected "2 of 2 correct; 2.00x over eager of a 2.00x headroom = 100.0%; median U 1.000"
                 "U >= 0.8 on 100%" "1 rows from ${WORK}/older.json" "1 rows from ${WORK}/newer.json")
  string(FIND "${out}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "combine output lacks '${expected}':\n${out}")
  endif()
endforeach()
# Without the newer call, p1's older row counts: sqrt(2 x 1) over sqrt(4 x 1) = 70.7%.
execute_process(COMMAND ${PYTHON} ${SCRIPT} ${WORK}/older.json RESULT_VARIABLE code OUTPUT_VARIABLE out)
string(FIND "${out}" "= 70.7%; median U 0.750" at)
if(NOT code EQUAL 0 OR at EQUAL -1)
  message(FATAL_ERROR "older call alone: ${out}")
endif()
file(WRITE ${WORK}/not-rows.json [=[{"problems": []}]=])
execute_process(COMMAND ${PYTHON} ${SCRIPT} ${WORK}/not-rows.json RESULT_VARIABLE code ERROR_VARIABLE err)
string(FIND "${err}" "not-rows.json: no 'rows'" at)
if(code EQUAL 0 OR at EQUAL -1)
  message(FATAL_ERROR "a file without rows was not refused (${code}): ${err}")
endif()
message(STATUS "ok: combine_eager_vs_evolved.py")
