# Runs each Vitis HLS script of hls/vitis/ with the Vitis commands replaced by stubs that record
# their arguments, and checks what the script would ask Vitis to do: the right top, the kernel
# and testbench sources with C++17 and the configuration, the golden vectors passed to C
# simulation and co-simulation, every step in order. Vitis itself is not available here; this
# catches Tcl errors and drift between the scripts and the tree.
#   tclsh vitis_scripts_check.tcl ROOT
set root [lindex $argv 0]
set failures 0
proc expect {what condition} {
  if {![uplevel 1 [list expr $condition]]} { puts "FAIL: $what"; incr ::failures }
}
foreach cmd {open_project set_top add_files open_solution set_part create_clock csim_design
             csynth_design cosim_design export_design close_project} {
  proc $cmd {args} [format {lappend ::calls [list %s {*}$args]} $cmd]
}
rename exit exit_check  ;# the scripts end with `exit`: keep running after each
proc exit {args} {}

foreach kernel {mxu activate vector reduce} {
  foreach config {tiny small-int8} {
    set ::calls {}
    set ::env(SYSTOLE_CONFIG) $config
    set ::env(SYSTOLE_VECTORS) [info script]  ;# any file that exists
    source [file join $root hls vitis systole_$kernel.tcl]
    set symbol [string map {- _} $config]
    set names [lmap call $::calls {lindex $call 0}]
    expect "$kernel/$config: steps in order ($names)" \
        {$names eq {open_project set_top add_files add_files open_solution set_part create_clock csim_design csynth_design cosim_design export_design close_project}}
    expect "$kernel/$config: top" {[lindex $::calls 1] eq [list set_top systole_$kernel]}
    foreach index {2 3} {
      set call [lindex $::calls $index]
      set file [lindex $call end-2]
      expect "$kernel/$config: $file exists" {[file exists $file]}
      expect "$kernel/$config: cflags" \
          {[lindex $call end] eq "-std=c++17 -I$root -DSYSTOLE_HLS_CONFIG=$symbol"}
    }
    expect "$kernel/$config: csim gets the vectors" \
        {[lindex $::calls 7] eq [list csim_design -argv [info script]]}
  }
}
unset ::env(SYSTOLE_VECTORS)
set ::env(SYSTOLE_CONFIG) no-such-config
set ::calls {}
expect "missing vectors are an error naming `make hls`" \
    {[catch {source [file join $root hls vitis systole_mxu.tcl]} message] && [string match "*make hls*" $message]}
if {$failures > 0} { exit_check 1 }
puts "vitis scripts: every check passed"
