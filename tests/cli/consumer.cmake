# kiln as a library for other projects: installs the build into a fresh prefix, then configures,
# builds and runs tests/consumer against find_package(kiln). Invoked by ctest with -DBUILD=<kiln
# build dir> -DSOURCE=<kiln source dir> -DWORK=<scratch dir>.
file(REMOVE_RECURSE ${WORK})
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${what} failed (${code}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok ${out}")
endfunction()
run("install" ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix)
run("configure the consumer" ${CMAKE_COMMAND} -S ${SOURCE}/tests/consumer -B ${WORK}/build -G Ninja
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${WORK}/prefix)
run("build the consumer" ${CMAKE_COMMAND} --build ${WORK}/build)
run("run the consumer" ${WORK}/build/kiln_consumer)
