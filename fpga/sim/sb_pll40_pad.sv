// SB_PLL40_PAD for simulation: the iCE40 PLL's output is its input clock, locked from the start.
// Yosys's cell library (share/ice40/cells_sim.v) declares this PLL as an empty black box, so a
// simulation of the iCEBreaker top (its RTL lint, tests/fpga; its synthesized netlist,
// tests/fpga/netlist) runs the design below the PLL: the harness's clock is the PLL's output,
// 36 MHz in the design's own terms (the UART's bit period is counted in those cycles). The
// netlist simulation lists this file before the cell library and waives MODDUP, so Verilator
// keeps this definition and drops the library's empty one.
/* verilator lint_off DECLFILENAME */
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
module SB_PLL40_PAD #(
    parameter FEEDBACK_PATH = "SIMPLE",
    parameter logic [3:0] DIVR = 4'd0,
    parameter logic [6:0] DIVF = 7'd0,
    parameter logic [2:0] DIVQ = 3'd0,
    parameter logic [2:0] FILTER_RANGE = 3'd0
) (
    input  logic       PACKAGEPIN,
    output logic       PLLOUTGLOBAL,
    output logic       PLLOUTCORE,
    output logic       LOCK,
    input  logic       RESETB,
    input  logic       BYPASS,
    input  logic       EXTFEEDBACK,
    input  logic [7:0] DYNAMICDELAY,
    input  logic       LATCHINPUTVALUE,
    input  logic       SDI,
    input  logic       SCLK,
    output logic       SDO
);
  assign PLLOUTGLOBAL = PACKAGEPIN;
  assign PLLOUTCORE = PACKAGEPIN;
  assign LOCK = 1'b1;
  assign SDO = 1'b0;
endmodule
