# Shared by the per-kernel Vitis HLS scripts (systole_mxu.tcl, systole_activate.tcl,
# systole_vector.tcl, systole_reduce.tcl): one project per kernel and configuration, C simulation against the golden
# vectors, synthesis, C/RTL co-simulation on the same vectors, and an IP-catalog export.
# Not runnable on Systole's own machines (no Vitis there); hls/README.md says what was checked.
#
# Settings, from the environment (defaults in brackets):
#   SYSTOLE_CONFIG    configuration of configs/, e.g. tiny, small, small-int8   [tiny]
#   SYSTOLE_PART      FPGA part                                   [xc7a35ticsg324-1L: Arty A7-35T]
#   SYSTOLE_CLOCK_NS  target clock period in ns                                 [10]
#   SYSTOLE_VECTORS   golden vectors for the configuration   [build/tests/hls/golden_vectors_CONFIG.bin]
#   SYSTOLE_STEPS     which steps to run, any of csim csynth cosim export       [csim csynth cosim export]

proc systole_setting {name default} {
  if {[info exists ::env($name)] && $::env($name) ne ""} { return $::env($name) }
  return $default
}

# systole_hls_run TOP ROOT: ROOT is the repository's root folder.
proc systole_hls_run {top root} {
  set config [systole_setting SYSTOLE_CONFIG tiny]
  set symbol [string map {- _} $config]
  set part [systole_setting SYSTOLE_PART xc7a35ticsg324-1L]
  set clock_ns [systole_setting SYSTOLE_CLOCK_NS 10]
  set vectors [systole_setting SYSTOLE_VECTORS \
                   [file join $root build tests hls golden_vectors_${config}.bin]]
  set steps [systole_setting SYSTOLE_STEPS "csim csynth cosim export"]
  # The kernels are C++17 (inline variables, nested namespaces); the configuration picks the
  # namespace of hls/generated/configs.hpp that sizes the array.
  set cflags "-std=c++17 -I$root -DSYSTOLE_HLS_CONFIG=$symbol"

  open_project -reset [file join $root build-hls ${top}_${config}]
  set_top $top
  add_files [file join $root hls tops systole_kernels.cpp] -cflags $cflags
  add_files -tb [file join $root hls vitis systole_kernels_tb.cpp] -cflags $cflags
  open_solution -reset solution -flow_target vivado
  set_part $part
  create_clock -period $clock_ns -name default

  if {"csim" in $steps || "cosim" in $steps} {
    if {![file exists $vectors]} {
      error "no golden vectors at $vectors: run `make hls` in the repository first (hls/README.md)"
    }
  }
  if {"csim" in $steps} { csim_design -argv $vectors }
  if {"csynth" in $steps} { csynth_design }
  if {"cosim" in $steps} { cosim_design -argv $vectors }
  if {"export" in $steps} { export_design -format ip_catalog }
  close_project
}
