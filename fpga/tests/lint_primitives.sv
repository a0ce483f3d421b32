// Port-exact stand-ins for the FPGA primitives the board tops instantiate, for Verilator's
// lint of the tops (tests/fpga: fpga.<board>.verilator_lint): Verilator cannot read the
// families' cell libraries with -Wall. Nothing here is simulated or synthesized. The iCE40 PLL's
// stand-in is fpga/sim/sb_pll40_pad.sv, which the netlist simulation uses too, and the Xilinx
// MMCM's fpga/sim/mmcme2_base.sv.
/* verilator lint_off DECLFILENAME */
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
module SB_SPRAM256KA (
    input  logic [13:0] ADDRESS,
    input  logic [15:0] DATAIN,
    input  logic [3:0]  MASKWREN,
    input  logic        WREN,
    input  logic        CHIPSELECT,
    input  logic        CLOCK,
    input  logic        STANDBY,
    input  logic        SLEEP,
    input  logic        POWEROFF,
    output logic [15:0] DATAOUT
);
  always_ff @(posedge CLOCK) DATAOUT <= DATAIN;
endmodule

module EHXPLLL #(
    parameter PLLRST_ENA = "DISABLED",
    parameter INTFB_WAKE = "DISABLED",
    parameter STDBY_ENABLE = "DISABLED",
    parameter DPHASE_SOURCE = "DISABLED",
    parameter OUTDIVIDER_MUXA = "DIVA",
    parameter OUTDIVIDER_MUXB = "DIVB",
    parameter OUTDIVIDER_MUXC = "DIVC",
    parameter OUTDIVIDER_MUXD = "DIVD",
    parameter integer CLKI_DIV = 1,
    parameter CLKOP_ENABLE = "ENABLED",
    parameter integer CLKOP_DIV = 8,
    parameter integer CLKOP_CPHASE = 0,
    parameter integer CLKOP_FPHASE = 0,
    parameter FEEDBK_PATH = "CLKOP",
    parameter integer CLKFB_DIV = 1
) (
    input  logic RST,
    input  logic STDBY,
    input  logic CLKI,
    output logic CLKOP,
    input  logic CLKFB,
    output logic CLKINTFB,
    input  logic PHASESEL0,
    input  logic PHASESEL1,
    input  logic PHASEDIR,
    input  logic PHASESTEP,
    input  logic PHASELOADREG,
    input  logic PLLWAKESYNC,
    input  logic ENCLKOP,
    output logic LOCK
);
  assign CLKOP = CLKI;
  assign CLKINTFB = 1'b0;
  assign LOCK = 1'b1;
endmodule

// ECP5 output DDR register: D0 is driven while SCLK is high, D1 while it is low.
module ODDRX1F (
    input  logic D0,
    input  logic D1,
    input  logic SCLK,
    input  logic RST,
    output logic Q
);
  assign Q = SCLK ? D0 : D1;
endmodule

// Xilinx global clock buffer (Yosys's share/xilinx/cells_sim.v models it the same way).
module BUFG (
    input  logic I,
    output logic O
);
  assign O = I;
endmodule
