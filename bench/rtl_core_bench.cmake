# Included by bench/CMakeLists.txt. The Verilated whole core on code-generator GEMMs: cycles and
# MXU utilisation beside SCALE-Sim's closed form, and simulation speed (rtl_core_bench.cpp).
if(SYSTOLE_RTL)
  # The bare systolic array of each built shape (16x16 of each element type, as in small and
  # small-int8; 4x4 int8, as in tiny), Verilated with the same options as the core: the speed
  # the whole core is compared with.
  set(bench_array_sources ${SYSTOLE_RTL_DIR}/mxu/systole_systolic_array.sv
    ${SYSTOLE_RTL_DIR}/mxu/systole_array_row.sv ${SYSTOLE_RTL_DIR}/mxu/systole_pe.sv
    ${SYSTOLE_RTL_DIR}/mxu/systole_bf16_mul.sv ${SYSTOLE_RTL_DIR}/numerics/systole_fp32_add.sv)
  systole_verilate(vl_bench_array_int8 TOP systole_systolic_array CONFIG small-int8
    SOURCES ${bench_array_sources} PARAMS ROWS COLS BF16)
  systole_verilate(vl_bench_array_bf16 TOP systole_systolic_array CONFIG small
    SOURCES ${bench_array_sources} PARAMS ROWS COLS BF16)
  systole_verilate(vl_bench_array_tiny TOP systole_systolic_array CONFIG tiny
    SOURCES ${bench_array_sources} PARAMS ROWS COLS BF16)
  add_executable(rtl_core_bench ${CMAKE_CURRENT_LIST_DIR}/rtl_core_bench.cpp
    ${CMAKE_CURRENT_LIST_DIR}/rtl_core_bench_onchip.cpp ${CMAKE_CURRENT_LIST_DIR}/rtl_bare_array.cpp)
  target_link_libraries(rtl_core_bench PRIVATE systole_rtl_device systole_codegen systole_asm systole_model
    systole_arch systole_rtl_harness vl_bench_array_int8 vl_bench_array_bf16 vl_bench_array_tiny CLI11::CLI11
    fmt::fmt)
  target_compile_definitions(rtl_core_bench PRIVATE SYSTOLE_SHARED_DIR="${SYSTOLE_SHARED_DIR}")
  systole_warnings(rtl_core_bench)
  # Built by `make bench` (or `--target rtl_core_bench`), not by `make build`: the three bare
  # arrays cost minutes of a cold build that `make test` does not need.
  set_target_properties(vl_bench_array_int8 vl_bench_array_bf16 vl_bench_array_tiny rtl_core_bench
    PROPERTIES EXCLUDE_FROM_ALL ON)
endif()
