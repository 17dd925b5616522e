# whatif.cmake - profile a CMake target with whatif by linking the tool in.
#
#   include(/path/to/whatif/cmake/whatif.cmake)
#   whatif_profile(my_openmp_program)
#
# Links build/lib/libwhatif.a (build whatif first with ./setup.sh) with
# -Wl,-u,ompt_start_tool, without which the linker would drop the tool from
# the archive and nothing would be profiled.  Run the program as usual:
# WHATIF_OUT, WHATIF_MODE and WHATIF_METRIC configure it (README).
set(WHATIF_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." CACHE PATH "whatif source tree")
set(WHATIF_STATIC_LIB "${WHATIF_ROOT}/build/lib/libwhatif.a" CACHE FILEPATH
    "whatif's static tool")

function(whatif_profile target)
  if(NOT EXISTS "${WHATIF_STATIC_LIB}")
    message(FATAL_ERROR "whatif_profile: ${WHATIF_STATIC_LIB} not found: "
                        "build whatif first (./setup.sh in ${WHATIF_ROOT})")
  endif()
  # The tool sees OpenMP through LLVM libomp's tools interface: GCC's
  # libgomp has none, so a GCC build would run unprofiled.
  foreach(_lang C CXX)
    if(CMAKE_${_lang}_COMPILER_LOADED AND
       NOT CMAKE_${_lang}_COMPILER_ID MATCHES "Clang")
      message(FATAL_ERROR "whatif_profile(${target}): the ${_lang} compiler "
              "is ${CMAKE_${_lang}_COMPILER_ID}; whatif needs clang with "
              "-fopenmp (LLVM libomp). Configure with "
              "-DCMAKE_${_lang}_COMPILER=clang-19 (or clang++-19), or profile "
              "the GCC build with `whatif run`, which runs it on libomp.")
    endif()
  endforeach()
  target_compile_options(${target} PRIVATE -g)
  target_link_options(${target} PRIVATE -Wl,-u,ompt_start_tool)
  target_link_libraries(${target} PRIVATE ${WHATIF_STATIC_LIB} sqlite3 dw elf m
                        pthread ${CMAKE_DL_LIBS})
endfunction()
