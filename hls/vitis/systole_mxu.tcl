# Vitis HLS: the weight-stationary MXU tile (MATMUL).
#   vitis_hls -f hls/vitis/systole_mxu.tcl        (from the repository root; settings in systole_hls.tcl)
set here [file dirname [file normalize [info script]]]
source [file join $here systole_hls.tcl]
systole_hls_run systole_mxu [file normalize [file join $here .. ..]]
exit
