# Vitis HLS: VECTOR: elementwise add, sub, mul, max, min or pass, the transcendental `math`, the activation.
#   vitis_hls -f hls/vitis/systole_vector.tcl        (from the repository root; settings in systole_hls.tcl)
set here [file dirname [file normalize [info script]]]
source [file join $here systole_hls.tcl]
systole_hls_run systole_vector [file normalize [file join $here .. ..]]
exit
