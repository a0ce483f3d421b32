// systole_board_reset — the reset of a board top. The device is held in reset from
// configuration (the counter's initial value, which every FPGA family loads with the
// bitstream), while the clock generator is not locked, and while the board's reset button is
// pressed, and for 2^HOLD_LOG2 cycles after the last of these, so that the clock has settled
// before the first instruction. The button is asynchronous: two flip-flops bring it into the
// clock domain.
module systole_board_reset #(
    parameter integer HOLD_LOG2 = 12  // cycles held after lock / button release, as a power of 2
) (
    input  logic clk,
    input  logic locked,  // the PLL's lock output (tie high without a PLL)
    input  logic button,  // 1 while the reset button is pressed (active-high here)
    output logic rst
);
  if (HOLD_LOG2 < 1 || HOLD_LOG2 > 30) begin : g_check
    systole_param_error_board_reset_HOLD_LOG2_must_be_1_to_30 u_error ();
  end

  logic [1:0]         button_q = 2'b11;
  logic [HOLD_LOG2:0] count_q = '0;

  always_ff @(posedge clk) begin
    button_q <= {button_q[0], button};
    if (!locked || button_q[1]) count_q <= '0;
    else if (!count_q[HOLD_LOG2]) count_q <= count_q + 1'b1;
  end
  assign rst = !count_q[HOLD_LOG2];
endmodule
