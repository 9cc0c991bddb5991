# CTest's "examples: consumers of the installed package": installs the build's library into a
# fresh prefix, then configures, builds and runs the two consumer projects against it, as a user
# would: cmake -DBUILD=<build dir> -DSOURCE=<repository> -DWORK=<scratch dir> -P run_examples.cmake
file(REMOVE_RECURSE "${WORK}")
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${err}")
  endif()
endfunction()
step(${CMAKE_COMMAND} --install "${BUILD}" --prefix "${WORK}/prefix" --component library)
foreach(example solve network)
  step(${CMAKE_COMMAND} -S "${SOURCE}/examples/${example}" -B "${WORK}/${example}"
       -DCMAKE_PREFIX_PATH=${WORK}/prefix -DCMAKE_BUILD_TYPE=Release)
  step(${CMAKE_COMMAND} --build "${WORK}/${example}")
endforeach()
step("${WORK}/solve/solve_poisson")
step("${WORK}/network/run_network" "${SOURCE}/data/networks/Net1.inp" 6h)
