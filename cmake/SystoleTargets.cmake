# Helpers shared by every CMakeLists.txt.

# systole_warnings(TARGET): the project's warning set, as errors. (-Wnull-dereference is left
# out: GCC 12 reports false positives inside libstdc++ when CLI11 is instantiated at -O2.)
function(systole_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
    -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough
    -Werror)
endfunction()

# How every test source is compiled: the warnings, GoogleTest, the source-tree locations and the
# optimisation level. Shared by systole_test and the target that builds their precompiled header.
function(systole_test_compile_settings target)
  systole_warnings(${target})
  target_link_libraries(${target} PRIVATE GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(${target} PRIVATE
    SYSTOLE_SOURCE_DIR="${SYSTOLE_SOURCE_DIR}" SYSTOLE_SHARED_DIR="${SYSTOLE_SHARED_DIR}")
  # The test sources themselves at -O1 in optimised builds (the libraries they test keep the
  # build type's -O2): GoogleTest and GoogleMock expand into much code that -O2 only makes
  # slower to compile (a test file: 16.3 CPU-s at -O2, 11.6 at -O1). GCC 12's
  # -Wmaybe-uninitialized misfires on std::optional at -O1 (tests/rtl/host/bridge_model.cpp),
  # so it is off there; -Wuninitialized stays on. In the sanitizer build the libraries are at
  # -O1 and the test sources at -O0 (CMakeLists.txt, SYSTOLE_SANITIZE).
  target_compile_options(${target} PRIVATE
    "$<$<CONFIG:RelWithDebInfo,Release,MinSizeRel>:-O1>"
    "$<$<AND:$<CONFIG:RelWithDebInfo,Release,MinSizeRel>,$<CXX_COMPILER_ID:GNU>>:-Wno-maybe-uninitialized>"
    "$<$<AND:$<CONFIG:Debug>,$<BOOL:${SYSTOLE_SANITIZE}>>:-O0>")
endfunction()

# One precompiled header for all test sources: GoogleTest, GoogleMock and the standard headers
# every test includes, parsed once per build tree instead of once per unity batch (cmake/
# test_pch.cpp hosts it; every test target reuses it, so their compile settings must stay those
# of systole_test_compile_settings). SYSTOLE_TEST_PCH=OFF compiles the tests without it.
option(SYSTOLE_TEST_PCH "Compile the tests with one shared precompiled header" ON)
function(systole_test_pch target)
  if(NOT SYSTOLE_TEST_PCH)
    return()
  endif()
  if(NOT TARGET systole_test_pch)
    add_executable(systole_test_pch EXCLUDE_FROM_ALL ${SYSTOLE_SOURCE_DIR}/cmake/test_pch.cpp)
    systole_test_compile_settings(systole_test_pch)
    target_precompile_headers(systole_test_pch PRIVATE
      <gmock/gmock.h> <gtest/gtest.h>
      <algorithm> <array> <cstdint> <filesystem> <functional> <map> <memory> <optional> <random>
      <span> <string> <string_view> <utility> <vector>)
  endif()
  target_precompile_headers(${target} REUSE_FROM systole_test_pch)
endfunction()

# systole_test(NAME SOURCES... [LIBS libs...] [LABELS labels...])
# One GoogleTest executable, registered test-by-test with CTest, each of its tests carrying
# LABELS (and only its own: a folder's LABELS property would label every test of the folder).
# gtest_discover_tests keeps only the first element of a list-valued PROPERTIES value, so the
# labels are set by a script CTest includes after the discovered tests, over the list that
# discovery leaves in <name>_TESTS. Tests labelled `sanitize` also run in the sanitizer build
# (make test-sanitize).
function(systole_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS})
  systole_test_compile_settings(${name})
  systole_test_pch(${name})
  # The sanitizer build runs only the tests labelled `sanitize` (make test-sanitize builds the
  # sanitize_tests target, which depends on exactly those): the others are neither built there
  # nor registered with CTest.
  if("sanitize" IN_LIST ARG_LABELS)
    set_property(GLOBAL APPEND PROPERTY SYSTOLE_SANITIZE_TESTS ${name})
  elseif(SYSTOLE_SANITIZE)
    set_target_properties(${name} PROPERTIES EXCLUDE_FROM_ALL ON)
    return()
  endif()
  include(GoogleTest)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 TEST_LIST ${name}_TESTS)
  if(ARG_LABELS)
    set(script "${CMAKE_CURRENT_BINARY_DIR}/${name}_labels.cmake")
    file(WRITE "${script}"
      "if(${name}_TESTS)\n  set_tests_properties(\${${name}_TESTS} PROPERTIES LABELS \"${ARG_LABELS}\")\nendif()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${script}")
  endif()
endfunction()

# systole_yosys_lint(OUT TOP): the Yosys check every block gets in
# `make lint` (label lint), after reading and elaborating it: synth's coarse steps (every process
# into logic, FSMs, memories and arithmetic inferred, the netlist optimised), then `check
# -assert`, so that multiple drivers, undriven wires and combinational loops fail the test. The
# mapping to gates is what took the time (the HBM controller: 50 CPU-s against 10, the control
# block 38 against 4.5); it is checked where a design is built for a part: the FPGA flow's
# synthesis of the iCEBreaker top (fpga.icebreaker.synth, the whole core), and for the blocks no
# board holds their own generic synthesis (rtl.<block>.yosys_synth), both labelled synth.
function(systole_yosys_lint out top)
  set(${out} "synth -top ${top} -run :fine; check -assert" PARENT_SCOPE)
endfunction()
