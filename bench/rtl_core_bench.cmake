# Included by bench/CMakeLists.txt. The Verilated whole core on code-generator GEMMs: cycles and
# MXU utilisation beside SCALE-Sim's closed form, and simulation speed (rtl_core_bench.cpp).
if(SYSTOLE_RTL)
  add_executable(rtl_core_bench ${CMAKE_CURRENT_LIST_DIR}/rtl_core_bench.cpp
    ${CMAKE_CURRENT_LIST_DIR}/rtl_core_bench_onchip.cpp)
  target_link_libraries(rtl_core_bench PRIVATE systole_rtl_device systole_codegen systole_asm systole_model
    systole_arch CLI11::CLI11 fmt::fmt)
  target_compile_definitions(rtl_core_bench PRIVATE SYSTOLE_SHARED_DIR="${SYSTOLE_SHARED_DIR}")
  systole_warnings(rtl_core_bench)
endif()
