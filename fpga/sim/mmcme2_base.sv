// MMCME2_BASE for simulation: the Xilinx 7-series MMCM's CLKOUT0 is its input clock, locked from
// the start. Yosys's cell library declares this cell as an empty black box
// (share/xilinx/cells_xtra.v), so a simulation of the Arty A7 top (its RTL lint, tests/fpga)
// runs the design below the MMCM, as fpga/sim/sb_pll40_pad.sv does for the iCE40 PLL: the
// harness's clock is the MMCM's output, 30 MHz in the design's own terms. Only the ports and
// parameters arty_a7_top uses are modelled; the other outputs are 0.
/* verilator lint_off DECLFILENAME */
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
module MMCME2_BASE #(
    parameter real CLKIN1_PERIOD = 0.0,
    parameter integer DIVCLK_DIVIDE = 1,
    parameter real CLKFBOUT_MULT_F = 5.0,
    parameter real CLKOUT0_DIVIDE_F = 1.0
) (
    input  logic CLKIN1,
    input  logic CLKFBIN,
    input  logic RST,
    input  logic PWRDWN,
    output logic CLKFBOUT,
    output logic CLKFBOUTB,
    output logic CLKOUT0,
    output logic CLKOUT0B,
    output logic CLKOUT1,
    output logic CLKOUT1B,
    output logic CLKOUT2,
    output logic CLKOUT2B,
    output logic CLKOUT3,
    output logic CLKOUT3B,
    output logic CLKOUT4,
    output logic CLKOUT5,
    output logic CLKOUT6,
    output logic LOCKED
);
  assign CLKOUT0 = CLKIN1;
  assign CLKOUT0B = !CLKIN1;
  assign CLKFBOUT = 1'b0;
  assign CLKFBOUTB = 1'b0;
  assign {CLKOUT1, CLKOUT1B, CLKOUT2, CLKOUT2B, CLKOUT3, CLKOUT3B} = '0;
  assign {CLKOUT4, CLKOUT5, CLKOUT6} = '0;
  assign LOCKED = 1'b1;
endmodule
