# Vitis HLS: ACTIVATE: bias, requantization or fp32 scale, activation, narrowing.
#   vitis_hls -f hls/vitis/systole_activate.tcl        (from the repository root; settings in systole_hls.tcl)
set here [file dirname [file normalize [info script]]]
source [file join $here systole_hls.tcl]
systole_hls_run systole_activate [file normalize [file join $here .. ..]]
exit
