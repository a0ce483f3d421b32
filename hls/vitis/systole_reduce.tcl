# Vitis HLS: REDUCE: max or sum over the elements of each row or across rows, then the scale.
#   vitis_hls -f hls/vitis/systole_reduce.tcl        (from the repository root; settings in systole_hls.tcl)
set here [file dirname [file normalize [info script]]]
source [file join $here systole_hls.tcl]
systole_hls_run systole_reduce [file normalize [file join $here .. ..]]
exit
