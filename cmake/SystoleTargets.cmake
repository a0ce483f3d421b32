# Helpers shared by every CMakeLists.txt.

# systole_warnings(TARGET): the project's warning set, as errors. (-Wnull-dereference is left
# out: GCC 12 reports false positives inside libstdc++ when CLI11 is instantiated at -O2.)
function(systole_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
    -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough
    -Werror)
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
  systole_warnings(${name})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(${name} PRIVATE
    SYSTOLE_SOURCE_DIR="${SYSTOLE_SOURCE_DIR}" SYSTOLE_SHARED_DIR="${SYSTOLE_SHARED_DIR}")
  # The test sources themselves at -O1 in optimised builds (the libraries they test keep the
  # build type's -O2): GoogleTest and GoogleMock expand into much code that -O2 only makes
  # slower to compile (a test file: 16.3 CPU-s at -O2, 11.6 at -O1). GCC 12's
  # -Wmaybe-uninitialized misfires on std::optional at -O1 (tests/rtl/host/bridge_model.cpp),
  # so it is off there; -Wuninitialized stays on. In the sanitizer build the libraries are at
  # -O1 and the test sources at -O0 (CMakeLists.txt, SYSTOLE_SANITIZE).
  target_compile_options(${name} PRIVATE
    "$<$<CONFIG:RelWithDebInfo,Release,MinSizeRel>:-O1>"
    "$<$<AND:$<CONFIG:RelWithDebInfo,Release,MinSizeRel>,$<CXX_COMPILER_ID:GNU>>:-Wno-maybe-uninitialized>"
    "$<$<AND:$<CONFIG:Debug>,$<BOOL:${SYSTOLE_SANITIZE}>>:-O0>")
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
