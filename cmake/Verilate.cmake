# Verilated RTL models for the tests, benchmarks and the `rtl` link.
#
# systole_verilate(NAME TOP <module> CONFIG <config> SOURCES <.sv files...>
#                  PARAMS <parameter names...> [ARGS <extra verilator args...>])
#
# Builds a static library NAME holding the Verilated model of TOP, class `V<NAME>`, with the
# top-level parameters taken from rtl/generated/params/<config>.vc (CONFIG is optional: a
# block that needs no configuration takes its parameters through ARGS -GNAME=VALUE) (generated from
# configs/<config>.toml by `systole gen`). PARAMS lists the parameters TOP declares: Verilator
# rejects -G for a parameter the top does not have, and a block's top takes only what it needs.
# Models are built with -Wall (warnings are errors), live assertions (--assert), FST tracing
# compiled in (switched on per test), and X values randomised so reset bugs show up.
find_package(verilator REQUIRED HINTS $ENV{VERILATOR_ROOT} /usr/share/verilator)

set(SYSTOLE_RTL_DIR ${SYSTOLE_SOURCE_DIR}/rtl)
# The whole core: every .sv under rtl/ except the blocks that sit around it (the USB bridge in
# rtl/host/, the HBM controller in rtl/memory/hbm/ and the SoC top that joins core and
# controller), and the parameters systole_core takes. Tops around the core add their own lists,
# so the core's lint and synthesis read only what the core is made of.
file(GLOB_RECURSE systole_core_sources CONFIGURE_DEPENDS ${SYSTOLE_RTL_DIR}/*.sv)
list(FILTER systole_core_sources EXCLUDE REGEX "/rtl/(host|memory/hbm)/|/rtl/systole_soc\\.sv$")
file(GLOB systole_hbm_sources CONFIGURE_DEPENDS ${SYSTOLE_RTL_DIR}/memory/hbm/*.sv)
file(GLOB systole_host_sources CONFIGURE_DEPENDS ${SYSTOLE_RTL_DIR}/host/*.sv)
set(systole_soc_sources ${systole_core_sources} ${systole_hbm_sources} ${SYSTOLE_RTL_DIR}/systole_soc.sv)
set(systole_usb_top_sources ${systole_core_sources} ${systole_host_sources})
set(systole_pcie_top_sources ${systole_core_sources} ${systole_host_sources})
set(SYSTOLE_CORE_PARAMS ROWS COLS BF16 UB_ROWS ACC_ROWS WFIFO_TILES CMDQ_DEPTH TOKEN_CAP
    MEM_BYTES_LO MEM_BYTES_HI MEM_CHANNELS INTERLEAVE_LOG2 CLOCK_MHZ NAME0 NAME1 NAME2 NAME3)

# systole_rtl_params(OUT CONFIG <config> PARAMS <names...>): the -GNAME=VALUE arguments.
function(systole_rtl_params out)
  cmake_parse_arguments(ARG "" "CONFIG" "PARAMS" ${ARGN})
  set(file ${SYSTOLE_RTL_DIR}/generated/params/${ARG_CONFIG}.vc)
  if(NOT EXISTS ${file})
    message(FATAL_ERROR "no RTL parameters for configuration '${ARG_CONFIG}': ${file}")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
  file(STRINGS ${file} lines REGEX "^-G")
  set(args)
  set(found)
  foreach(line IN LISTS lines)
    string(REGEX MATCH "^-G([A-Z0-9_]+)=" _ "${line}")
    if(CMAKE_MATCH_1 IN_LIST ARG_PARAMS)
      list(APPEND args "${line}")
      list(APPEND found ${CMAKE_MATCH_1})
    endif()
  endforeach()
  foreach(param IN LISTS ARG_PARAMS)
    if(NOT param IN_LIST found)
      message(FATAL_ERROR "${file} has no parameter ${param}")
    endif()
  endforeach()
  set(${out} ${args} PARENT_SCOPE)
endfunction()

function(systole_verilate name)
  cmake_parse_arguments(ARG "" "TOP;CONFIG" "SOURCES;PARAMS;ARGS" ${ARGN})
  set(params)
  if(ARG_CONFIG)
    systole_rtl_params(params CONFIG ${ARG_CONFIG} PARAMS ${ARG_PARAMS})
  endif()
  add_library(${name} STATIC)
  verilate(${name}
    SOURCES ${ARG_SOURCES}
    TOP_MODULE ${ARG_TOP}
    PREFIX V${name}
    TRACE_FST
    INCLUDE_DIRS ${SYSTOLE_RTL_DIR}/generated ${SYSTOLE_RTL_DIR}/include
    VERILATOR_ARGS -Wall --assert -O3 --x-assign unique --x-initial unique
                   ${params} ${ARG_ARGS})
  # Generated code: optimise, but no debug info (it only slows the build) and none of our
  # warnings. Consumers see its headers as system headers, so -Werror does not reach them.
  target_compile_options(${name} PRIVATE -g0 -w)
  get_target_property(includes ${name} INTERFACE_INCLUDE_DIRECTORIES)
  set_target_properties(${name} PROPERTIES INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${includes}")
endfunction()

# systole_rtl_tool_params(CHPARAM_OUT IVERILOG_OUT TOP <module> CONFIG <config> PARAMS <names...>)
# The same parameters for the other tools: a Yosys `chparam -set ... <top>` command and Icarus
# `-P<top>.NAME=VALUE` arguments.
function(systole_rtl_tool_params chparam_out iverilog_out)
  cmake_parse_arguments(ARG "" "TOP;CONFIG" "PARAMS" ${ARGN})
  systole_rtl_params(gargs CONFIG ${ARG_CONFIG} PARAMS ${ARG_PARAMS})
  set(chparam "chparam")
  set(iverilog)
  foreach(arg IN LISTS gargs)
    string(REGEX MATCH "^-G([A-Z0-9_]+)=(.*)$" _ "${arg}")
    string(APPEND chparam " -set ${CMAKE_MATCH_1} ${CMAKE_MATCH_2}")
    list(APPEND iverilog "-P${ARG_TOP}.${CMAKE_MATCH_1}=${CMAKE_MATCH_2}")
  endforeach()
  string(APPEND chparam " ${ARG_TOP}")
  set(${chparam_out} "${chparam}" PARENT_SCOPE)
  set(${iverilog_out} ${iverilog} PARENT_SCOPE)
endfunction()
