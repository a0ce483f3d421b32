# Verilated RTL models for the tests, benchmarks and the `rtl` link.
#
# systole_verilate(NAME TOP <module> CONFIG <config> SOURCES <.sv files...>
#                  PARAMS <parameter names...> [ARGS <extra verilator args...>]
#                  [HIERARCHICAL] [HIERARCHICAL_CONFIGS <configs...>])
#
# Builds a static library NAME holding the Verilated model of TOP, class `V<NAME>`, with the
# top-level parameters taken from rtl/generated/params/<config>.vc (CONFIG is optional: a
# block that needs no configuration takes its parameters through ARGS -GNAME=VALUE) (generated from
# configs/<config>.toml by `systole gen`). PARAMS lists the parameters TOP declares: Verilator
# rejects -G for a parameter the top does not have, and a block's top takes only what it needs.
# Models are built with -Wall (warnings are errors), live assertions (--assert), FST tracing
# compiled in (switched on per test), and X values randomised so reset bugs show up.
# HIERARCHICAL (or a CONFIG listed in HIERARCHICAL_CONFIGS) Verilates hierarchically: see
# systole_verilate_hierarchical below.
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
set(SYSTOLE_CORE_PARAMS ROWS COLS BF16 UB_ROWS ACC_ROWS WFIFO_TILES CMDQ_DEPTH TOKEN_CAP LOAD_CREDITS
    MEM_BYTES_LO MEM_BYTES_HI MEM_CHANNELS INTERLEAVE_LOG2 CLOCK_MHZ NAME0 NAME1 NAME2 NAME3)
# The DRAM geometry the HBM controller is built for (log2 of dram.bank_groups, banks_per_group,
# row_bytes / 32): parameters of systole_soc and the controller, not of the bare core.
set(SYSTOLE_DRAM_PARAMS BG_BITS BA_BITS COL_BITS)

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

# Configurations whose whole-core models are Verilated hierarchically (the sim/rtl models pass
# this list as HIERARCHICAL_CONFIGS). v2's 128x128 bf16 array does not fit Verilator's memory
# flat; tiny/small/small-int8 build faster flat (listing one here checks the hierarchical build
# against its flat twin's tests).
set(SYSTOLE_RTL_HIERARCHICAL_CONFIGS "v2" CACHE STRING
    "Configurations whose core models are Verilated hierarchically (one array row, reused)")

# The Verilator runtime (verilated.cpp, its FST writer and thread pool), compiled once. Each
# verilate() call adds these sources to its own model's library, so a build with 30 models
# compiled the same runtime 30 times (about 13 CPU-minutes of a cold build); every model here
# is Verilated with the same options (FST tracing, no coverage, no SystemC), so one copy with
# those VM_* settings serves them all.
add_library(systole_verilated_runtime STATIC
  ${VERILATOR_ROOT}/include/verilated.cpp
  ${VERILATOR_ROOT}/include/verilated_fst_c.cpp
  ${VERILATOR_ROOT}/include/verilated_threads.cpp)
target_include_directories(systole_verilated_runtime SYSTEM PUBLIC
  ${VERILATOR_ROOT}/include ${VERILATOR_ROOT}/include/vltstd)
target_compile_definitions(systole_verilated_runtime PUBLIC
  VM_COVERAGE=0 VM_SC=0 VM_TRACE=1 VM_TRACE_VCD=0 VM_TRACE_FST=1)
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)  # the FST writer compresses with zlib
target_link_libraries(systole_verilated_runtime PUBLIC Threads::Threads ZLIB::ZLIB)
target_compile_options(systole_verilated_runtime PRIVATE -g0 -w)
set_target_properties(systole_verilated_runtime PROPERTIES UNITY_BUILD OFF)

# systole_tune_verilated_target(TARGET): takes the runtime sources verilate() added to a model's
# library out again and links the shared copy instead, and compiles the code that runs once or
# only while tracing without optimisation. Verilator splits a model into "fast" files (the
# per-cycle evaluation) and "__Slow" files (construction, initial values, trace declarations),
# and writes the FST tracing code into "__Trace__" files; in a cold build those two kinds took
# 62 % of the models' compile time (28 of 45 CPU-minutes, measured on 3ecd658). The fast files
# get -O1: GCC's -O2 took 2.5 times as long on them (20.1 s vs 7.9 s for one 1.9 MB file of the
# small core) while the simulation ran as fast (MxuSmall's three longest tests: 17-22 s at -O2,
# 19.7-20.0 s at -O1, same machine; the README's build-time table has the totals). Clang is
# another matter (below): its -O2 takes no longer than GCC's -O1 and simulates 1.24-1.45 times as fast.
#
# Each kind is then compiled in batches, one translation unit per batch (a unity build of the
# generated files: systole_verilated_batches). Every generated file includes verilated.h and
# the model's headers, which cost about a second to parse: the ten files of vl_control_tiny
# took 9.8 CPU-s one by one and 3.8 CPU-s as two batches; vl_soc_small_int8's 25 files 50.6 s
# in a cold build's log and 30.9 CPU-s as two batches (GCC 12, measured 2026-11-27).
#
# The per-cycle code is one long run of straight-line statements executed every cycle (about
# 1 MB of machine code for the small core with its memory system), so the simulation is bound
# by fetching instructions, and the compiler that writes less code wins. The `make` trees are
# built by clang (Makefile): the small core's three batches as 0.94 MB of code at clang -O2
# against 1.11 MB at GCC -O1, compiled in about the same time (25.4 vs 25.9 CPU-s), and the
# stem convolution of ResNet-50 (03_conv7x7s2_bias_nhwc.hlo, 0.91 M cycles) on `rtl` in 20.2-21.0
# CPU-s against 26.0-27.7 (GCC -O1), 23.7-24.9 (GCC -Os or -Oz), 28.5 (GCC -O2 with profile
# feedback from the same program), 20.4-22.0 (clang -Os) and 22.3 (clang -O1), alternating runs on
# the 2-core machine, 2026-11-27 (rtl/README.md, "Which compiler, which options").
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set(systole_verilated_default_opt -O2)
else()
  set(systole_verilated_default_opt -O1)
endif()
set(SYSTOLE_VERILATED_OPT ${systole_verilated_default_opt} CACHE STRING
    "Optimisation of the Verilated models' per-cycle code (the __Slow and __Trace files get -O0)")
# GCC's value numbering asks its alias oracle up to 1 000 times per memory access; in
# Verilator's evaluation functions (thousands of statements on one model struct) those walks
# were 35 % of a batch's compile time (-ftime-report: "alias stmt walking", 5.1 of 14.8 s for
# vl_core_small's hot_0). Capped at 100, that batch took 8.5 CPU-s instead of 13.1.
set(systole_verilated_gcc_limits $<$<CXX_COMPILER_ID:GNU>:--param=sccvn-max-alias-queries-per-access=100>)
set(SYSTOLE_VERILATED_BATCH_BYTES 8000000 CACHE STRING
    "Generated C++ per translation unit of a Verilated model (bytes of source; 0: file by file)")
function(systole_tune_verilated_target target)
  get_target_property(sources ${target} SOURCES)
  list(FILTER sources EXCLUDE REGEX "^${VERILATOR_ROOT}/include/[^/]+\\.cpp$")
  set_property(TARGET ${target} PROPERTY SOURCES ${sources})
  target_link_libraries(${target} PUBLIC systole_verilated_runtime)
  set(cold ${sources})
  list(FILTER cold INCLUDE REGEX "(__Slow|__Trace__[0-9]+)\\.cpp$")
  set(hot ${sources})
  list(FILTER hot INCLUDE REGEX "\\.cpp$")
  list(FILTER hot EXCLUDE REGEX "(__Slow|__Trace__[0-9]+)\\.cpp$")
  systole_verilated_batches(${target} cold -O0 "${cold}")
  systole_verilated_batches(${target} hot "${SYSTOLE_VERILATED_OPT};${systole_verilated_gcc_limits}" "${hot}")
endfunction()

# systole_verilated_batches(TARGET KIND OPTIONS FILES): compiles FILES (generated by Verilator
# for TARGET, which must exist once CMake has run Verilator) with OPTIONS, in batches of at most
# SYSTOLE_VERILATED_BATCH_BYTES of source: each batch is a file of #include lines, written
# only when its list changes. The generated files stay in TARGET as headers, so that Verilator's
# custom command that writes them still runs before the batches compile.
function(systole_verilated_batches target kind options files)
  if(NOT files)
    return()
  endif()
  set(all_exist ON)
  foreach(file IN LISTS files)
    if(NOT EXISTS ${file})
      set(all_exist OFF)
    endif()
  endforeach()
  if(SYSTOLE_VERILATED_BATCH_BYTES EQUAL 0 OR NOT all_exist)
    set_source_files_properties(${files} PROPERTIES COMPILE_OPTIONS "${options}")
    return()
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/${target}.dir/batches)
  set(batches)
  set(content "")
  set(bytes 0)
  foreach(file IN LISTS files)
    file(SIZE ${file} size)
    math(EXPR total "${bytes} + ${size}")
    if(bytes GREATER 0 AND total GREATER SYSTOLE_VERILATED_BATCH_BYTES)
      list(LENGTH batches n)
      file(CONFIGURE OUTPUT ${dir}/${kind}_${n}.cpp CONTENT "${content}" @ONLY)
      list(APPEND batches ${dir}/${kind}_${n}.cpp)
      set(content "")
      set(total ${size})
    endif()
    string(APPEND content "#include \"${file}\"\n")
    set(bytes ${total})
  endforeach()
  list(LENGTH batches n)
  file(CONFIGURE OUTPUT ${dir}/${kind}_${n}.cpp CONTENT "${content}" @ONLY)
  list(APPEND batches ${dir}/${kind}_${n}.cpp)
  set_source_files_properties(${files} PROPERTIES HEADER_FILE_ONLY ON)
  target_sources(${target} PRIVATE ${batches})
  set_source_files_properties(${batches} PROPERTIES COMPILE_OPTIONS "${options}")
endfunction()

# Extra Verilator arguments for every model of the build: for measuring, e.g. --prof-cfuncs
# (functions split per module, so that a profile names the blocks; docs/MODEL.md, "Simulation
# speed"). Empty in every build the tests and CI use.
set(SYSTOLE_VERILATOR_EXTRA_ARGS "" CACHE STRING
    "Extra Verilator arguments for every Verilated model (profiling, experiments)")

function(systole_verilate name)
  cmake_parse_arguments(ARG "HIERARCHICAL" "TOP;CONFIG" "SOURCES;PARAMS;ARGS;HIERARCHICAL_CONFIGS"
                        ${ARGN})
  # Not CMake's unity batches: systole_verilated_batches batches the generated files per -O level.
  set(CMAKE_UNITY_BUILD OFF)
  set(params)
  if(ARG_CONFIG)
    systole_rtl_params(params CONFIG ${ARG_CONFIG} PARAMS ${ARG_PARAMS})
    if(ARG_CONFIG IN_LIST ARG_HIERARCHICAL_CONFIGS)
      set(ARG_HIERARCHICAL ON)
    endif()
  endif()
  set(args -Wall --assert -O3 --x-assign unique --x-initial unique ${params} ${ARG_ARGS}
      ${SYSTOLE_VERILATOR_EXTRA_ARGS})
  add_library(${name} STATIC)
  if(ARG_HIERARCHICAL)
    systole_verilate_hierarchical(${name} TOP ${ARG_TOP} SOURCES ${ARG_SOURCES} ARGS ${args})
    systole_verilated_finish(${name})
    return()
  endif()
  # verilate() runs Verilator at configure time, one model after the other: the run starts
  # here in the background, and verilate() is called at the end of this directory's
  # CMakeLists.txt (systole_verilated_finish), by when the models of the directory have been
  # Verilated side by side.
  set(verilate_args SOURCES ${ARG_SOURCES} TOP_MODULE ${ARG_TOP} PREFIX V${name} TRACE_FST
      INCLUDE_DIRS ${SYSTOLE_RTL_DIR}/generated ${SYSTOLE_RTL_DIR}/include VERILATOR_ARGS ${args})
  systole_verilator_start(${name} "${verilate_args}")
  list(JOIN verilate_args "]] [[" quoted)
  cmake_language(EVAL CODE
    "cmake_language(DEFER CALL systole_verilated_finish [[${name}]] [[${quoted}]])")
endfunction()

# Configure-time Verilation, side by side. verilate() (Verilator's CMake package) runs Verilator
# to learn which files a model consists of, and skips the run when the model's previous command
# (V<NAME>.dir/verilator_args.txt) is the same. systole_verilator_start runs that very command
# in the background first, at most SYSTOLE_CONFIGURE_VERILATOR_JOBS at a time; verilate()'s own
# run then finds Verilator's outputs up to date (Verilator's --skip-identical, on by default)
# and returns at once. A cold configure of the main tree: 49 s wall on the 2-core machine, about
# 45 of them in 37 Verilator runs one after the other (11 s the largest); 36 s with the runs of
# each folder side by side (a folder's models must be done before its CMakeLists.txt ends, for
# verilate()'s build rules to land in it). Should verilate()
# build another command (a different Verilator version), nothing is wrong, only slower:
# systole_verilated_finish warns.
cmake_host_system_information(RESULT systole_cores QUERY NUMBER_OF_LOGICAL_CORES)
set(SYSTOLE_CONFIGURE_VERILATOR_JOBS ${systole_cores} CACHE STRING
    "Verilator runs side by side while CMake configures (1: one after the other)")
set_property(GLOBAL PROPERTY SYSTOLE_VERILATOR_RUNNING "")

# Where verilate() puts model NAME's Verilator outputs (PREFIX V<NAME>, as systole_verilate asks).
function(systole_verilated_dir out name)
  set(${out} ${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/${name}.dir/V${name}.dir PARENT_SCOPE)
endfunction()

# The command verilate() builds for our arguments (verilator-config.cmake, Verilator 5.006).
function(systole_verilate_command out name verilate_args)
  cmake_parse_arguments(V "TRACE_FST" "PREFIX;TOP_MODULE" "SOURCES;INCLUDE_DIRS;VERILATOR_ARGS"
                        ${verilate_args})
  set(args --top ${V_TOP_MODULE} --trace-fst --cc)
  foreach(dir IN LISTS V_INCLUDE_DIRS)
    list(APPEND args -y ${dir})
  endforeach()
  string(TOLOWER ${CMAKE_CXX_COMPILER_ID} compiler)
  if(NOT compiler STREQUAL "clang")
    set(compiler gcc)
  endif()
  systole_verilated_dir(vdir ${name})
  set(${out} ${VERILATOR_BIN} --compiler ${compiler} --prefix ${V_PREFIX} --Mdir ${vdir} --make cmake
      ${args} ${V_VERILATOR_ARGS} ${V_SOURCES} PARENT_SCOPE)
endfunction()

# Waits until one of the background Verilator runs has finished, and forgets it.
function(systole_verilator_wait_any)
  get_property(running GLOBAL PROPERTY SYSTOLE_VERILATOR_RUNNING)
  while(running)
    foreach(done_file IN LISTS running)
      if(EXISTS ${done_file})
        list(REMOVE_ITEM running ${done_file})
        set_property(GLOBAL PROPERTY SYSTOLE_VERILATOR_RUNNING "${running}")
        return()
      endif()
    endforeach()
    execute_process(COMMAND sleep 0.05)
  endwhile()
endfunction()

function(systole_verilator_start name verilate_args)
  if(SYSTOLE_CONFIGURE_VERILATOR_JOBS LESS_EQUAL 1)
    return()
  endif()
  systole_verilate_command(command ${name} "${verilate_args}")
  systole_verilated_dir(vdir ${name})
  set(done_file ${vdir}/systole_prerun.rc)
  file(REMOVE ${done_file})
  # verilate() will not run Verilator at all: nothing to start.
  if(EXISTS ${vdir}/verilator_args.txt AND EXISTS ${vdir}/V${name}_copy.cmake)
    file(READ ${vdir}/verilator_args.txt previous)
    if(previous STREQUAL "${command}")
      return()
    endif()
  endif()
  file(MAKE_DIRECTORY ${vdir})
  get_property(running GLOBAL PROPERTY SYSTOLE_VERILATOR_RUNNING)
  list(LENGTH running n)
  if(n GREATER_EQUAL SYSTOLE_CONFIGURE_VERILATOR_JOBS)
    systole_verilator_wait_any()
  endif()
  # A shell that returns at once, its job still running: the job writes its exit status last.
  set(quoted "")
  foreach(word IN LISTS command)
    string(REPLACE "'" "'\\''" word "${word}")
    string(APPEND quoted " '${word}'")
  endforeach()
  execute_process(COMMAND sh -c
    "(cd '${CMAKE_CURRENT_SOURCE_DIR}' && ${quoted} > '${vdir}/systole_prerun.log' 2>&1; echo $? > '${done_file}.tmp'; mv '${done_file}.tmp' '${done_file}') < /dev/null > /dev/null 2>&1 &")
  set_property(GLOBAL APPEND PROPERTY SYSTOLE_VERILATOR_RUNNING ${done_file})
endfunction()

# The rest of systole_verilate, once the model's background run (if any) has finished.
function(systole_verilated_finish name)
  if(ARGC GREATER 1)
    set(verilate_args ${ARGN})
    systole_verilated_dir(vdir ${name})
    set(done_file ${vdir}/systole_prerun.rc)
    get_property(running GLOBAL PROPERTY SYSTOLE_VERILATOR_RUNNING)
    while(done_file IN_LIST running)
      systole_verilator_wait_any()
      get_property(running GLOBAL PROPERTY SYSTOLE_VERILATOR_RUNNING)
    endwhile()
    # A failed run is left to verilate(), which runs the command again and reports its output.
    verilate(${name} ${verilate_args})
    if(EXISTS ${done_file})
      systole_verilate_command(command ${name} "${verilate_args}")
      file(READ ${vdir}/verilator_args.txt used)
      if(NOT used STREQUAL "${command}")
        message(AUTHOR_WARNING "${name}: verilate() ran another Verilator command than the one "
                "started in the background (cmake/Verilate.cmake, systole_verilate_command): the "
                "configure-time Verilation is not side by side.\nverilate(): ${used}\n"
                "background: ${command}")
      endif()
      file(REMOVE ${done_file})
    endif()
  endif()
  systole_tune_verilated_target(${name})
  # Generated code: optimise, but no debug info (it only slows the build) and none of our
  # warnings. Consumers see its headers as system headers, so -Werror does not reach them.
  target_compile_options(${name} PRIVATE -g0 -w)
  get_target_property(includes ${name} INTERFACE_INCLUDE_DIRECTORIES)
  set_target_properties(${name} PROPERTIES INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${includes}")
endfunction()

# systole_verilate_hierarchical(NAME TOP <module> SOURCES <...> ARGS <...>): Verilator's
# hierarchical mode. Every module marked /*verilator hier_block*/ (systole_array_row: one row
# of the systolic array) is Verilated once per parameter set into its own library, and TOP sees
# a small --lib-create wrapper per instance instead of the flattened block (Verilator manual,
# "Hierarchical Verilation": no hierarchical references into a block, no tracing inside it).
# Verilator's --make cmake output drives this through verilate(): a planning run writes
# V<NAME>.cmake, which calls verilate() once per block (library V<block>, linked into NAME) and
# once for TOP. Verilator 5.006 copies all of our arguments into each block's argument file,
# including `--top TOP` after the block's own --top-module (the block run then fails: "top
# module must be listed in --hierarchical-block") and TOP's -G parameters (which the block does
# not have); both are removed from the blocks' files here, and DECLFILENAME is waived there
# because a block's module is renamed per parameter set (systole_array_row_1 ...).
# --unroll-count: the array's skew, deskew and lane loops run to ROWS/COLS (128 on v2), past
# Verilator's default of 64, and a loop that is not unrolled cannot hold delayed assignments to
# arrays (BLKLOOPINIT).
function(systole_verilate_hierarchical name)
  cmake_parse_arguments(ARG "" "TOP" "SOURCES;ARGS" ${ARGN})
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/${name}.dir/hierarchical)
  set(prefix V${name})
  set(command ${VERILATOR_BIN} --compiler gcc --cc --make cmake --hierarchical --trace-fst
      --prefix ${prefix} --Mdir ${dir} -y ${SYSTOLE_RTL_DIR}/generated -y ${SYSTOLE_RTL_DIR}/include
      --unroll-count 1024 ${ARG_ARGS} --top ${ARG_TOP} ${ARG_SOURCES})
  set(stamp ${dir}/systole_plan_command.txt)
  set(plan ${dir}/${prefix}_plan.cmake)
  set(previous "")
  if(EXISTS ${stamp} AND EXISTS ${plan})
    file(READ ${stamp} previous)
  endif()
  if(NOT previous STREQUAL "${command}")
    message(STATUS "Planning the hierarchical Verilation of ${name}")
    file(REMOVE_RECURSE ${dir})  # blocks of an earlier plan would be reused by verilate()
    file(MAKE_DIRECTORY ${dir})
    execute_process(COMMAND ${command} WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(rc)
      message(FATAL_ERROR "Verilator's hierarchical plan for ${name} failed (${rc}):\n${out}")
    endif()
    file(GLOB block_args ${dir}/*_hierCMakeArgs.f)
    list(REMOVE_ITEM block_args ${dir}/${prefix}_hierCMakeArgs.f)
    if(NOT block_args)
      message(FATAL_ERROR "${name}: HIERARCHICAL, but no module in its sources is marked "
                          "/*verilator hier_block*/")
    endif()
    foreach(file IN LISTS block_args)
      file(READ ${file} text)
      string(REPLACE " \"--top\" \"${ARG_TOP}\"" "" text "${text}")
      string(REGEX REPLACE " \"-G[A-Za-z0-9_]+=[^\"]*\"" "" text "${text}")
      file(WRITE ${file} "${text}\n-Wno-DECLFILENAME\n")
    endforeach()
    configure_file(${dir}/${prefix}.cmake ${plan} COPYONLY)
    file(WRITE ${stamp} "${command}")
  endif()
  # The blocks' libraries are global targets named after the block (Vsystole_array_row_1):
  # two hierarchical models in one build would define them twice.
  file(STRINGS ${plan} block_lines REGEX "^add_library\\([A-Za-z0-9_]+ STATIC\\)")
  set(blocks)
  foreach(line IN LISTS block_lines)
    string(REGEX MATCH "^add_library\\(([A-Za-z0-9_]+)" _ "${line}")
    if(TARGET ${CMAKE_MATCH_1})
      message(FATAL_ERROR "${name}: hierarchical block ${CMAKE_MATCH_1} already belongs to "
                          "another hierarchical model; Verilate only one per build")
    endif()
    list(APPEND blocks ${CMAKE_MATCH_1})
  endforeach()
  set(TARGET ${name})  # what the generated file's verilate() calls attach the top to
  include(${plan})
  foreach(block IN LISTS blocks)
    systole_tune_verilated_target(${block})
    target_compile_options(${block} PRIVATE -g0 -w)
  endforeach()
endfunction()

# systole_rtl_tool_params(YOSYS_OUT IVERILOG_OUT TOP <module> CONFIG <config> PARAMS <names...>)
# The same parameters for the other tools: a Yosys command that elaborates TOP with them
# (`hierarchy -check -top TOP -chparam NAME VALUE ...`; read the sources with
# `read_verilog -defer`, so that no module is elaborated with its own defaults, which inner
# modules make illegal on purpose) and Icarus `-P<top>.NAME=VALUE` arguments.
function(systole_rtl_tool_params yosys_out iverilog_out)
  cmake_parse_arguments(ARG "" "TOP;CONFIG" "PARAMS" ${ARGN})
  systole_rtl_params(gargs CONFIG ${ARG_CONFIG} PARAMS ${ARG_PARAMS})
  set(yosys "hierarchy -check -top ${ARG_TOP}")
  set(iverilog)
  foreach(arg IN LISTS gargs)
    string(REGEX MATCH "^-G([A-Z0-9_]+)=(.*)$" _ "${arg}")
    string(APPEND yosys " -chparam ${CMAKE_MATCH_1} ${CMAKE_MATCH_2}")
    list(APPEND iverilog "-P${ARG_TOP}.${CMAKE_MATCH_1}=${CMAKE_MATCH_2}")
  endforeach()
  set(${yosys_out} "${yosys}" PARENT_SCOPE)
  set(${iverilog_out} ${iverilog} PARENT_SCOPE)
endfunction()

# systole_verilate_configs(NAME <prefix> TOP <module> CONFIGS <configs...> SOURCES <.sv...>
#                          GLUE <template.cpp.in> MACRO <name> [ENTRY_EXTRA <text>]
#                          [PARAMS <names...>] [HIERARCHICAL_CONFIGS <configs...>])
# A whole-core top's parameters are baked in when it is Verilated, so a device that simulates
# it needs one model per configuration. This Verilates TOP once per configuration (library
# <prefix>_<id>, <id> the configuration name with '-' as '_'), configures one C++ glue file per
# model from GLUE (@CONFIG@, @ID@ and @MODEL@ set, and any variable of the caller), and appends
# to the caller's variables <prefix>_GLUE (the glue sources), <prefix>_MODELS (the libraries)
# and <prefix>_TABLE (one `MACRO("config", model<ENTRY_EXTRA>)` line each) — the table that
# sim/rtl/built_models.hpp's lookup reads, so every device picks its model the same way.
# Every model gets the configuration's SYSTOLE_CORE_PARAMS and the PARAMS named besides.
function(systole_verilate_configs)
  cmake_parse_arguments(ARG "" "NAME;TOP;GLUE;MACRO;ENTRY_EXTRA"
                        "CONFIGS;SOURCES;PARAMS;HIERARCHICAL_CONFIGS" ${ARGN})
  set(glue ${${ARG_NAME}_GLUE})
  set(models ${${ARG_NAME}_MODELS})
  set(table "${${ARG_NAME}_TABLE}")
  foreach(CONFIG IN LISTS ARG_CONFIGS)
    string(REPLACE "-" "_" ID ${CONFIG})
    set(MODEL ${ARG_NAME}_${ID})
    systole_verilate(${MODEL} TOP ${ARG_TOP} CONFIG ${CONFIG} SOURCES ${ARG_SOURCES}
      PARAMS ${SYSTOLE_CORE_PARAMS} ${ARG_PARAMS} HIERARCHICAL_CONFIGS ${ARG_HIERARCHICAL_CONFIGS})
    set(file ${CMAKE_CURRENT_BINARY_DIR}/${MODEL}_glue.cpp)
    configure_file(${ARG_GLUE} ${file} @ONLY)
    list(APPEND glue ${file})
    list(APPEND models ${MODEL})
    string(APPEND table "${ARG_MACRO}(\"${CONFIG}\", ${MODEL}${ARG_ENTRY_EXTRA})\n")
  endforeach()
  set(${ARG_NAME}_GLUE ${glue} PARENT_SCOPE)
  set(${ARG_NAME}_MODELS ${models} PARENT_SCOPE)
  set(${ARG_NAME}_TABLE "${table}" PARENT_SCOPE)
endfunction()

# systole_write_if_changed(FILE <path> CONTENT <text>): a generated include that only changes
# (and so only rebuilds what includes it) when its text does.
function(systole_write_if_changed file content)
  file(WRITE ${file}.tmp "${content}")
  configure_file(${file}.tmp ${file} COPYONLY)
endfunction()
