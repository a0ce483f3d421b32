// systole_uart_tx — 8N1 transmitter: takes a byte when idle (valid/ready) and sends a start
// bit, eight data bits LSB first and a stop bit, each CLKS_PER_BIT cycles long. The next byte
// may be offered during the stop bit and is taken as it ends, so back-to-back bytes leave no
// idle time on the line. The line is a register, so it never glitches between bits.
// CLKS_PER_BIT: see systole_uart_rx.
module systole_uart_tx #(
    parameter integer CLKS_PER_BIT = 0  // set by the parent; the default fails the check
) (
    input  logic       clk,
    input  logic       rst,
    input  logic       valid_i,
    output logic       ready_o,
    input  logic [7:0] data_i,
    output logic       uart_tx_o  // the serial line, idle high
);
  if (CLKS_PER_BIT < 4) begin : g_clks_check
    systole_param_error_uart_tx_CLKS_PER_BIT_must_be_at_least_4 u_error ();
  end
  localparam integer CW = $clog2(CLKS_PER_BIT + 1);
  localparam logic [CW-1:0] BIT_LAST = CW'(CLKS_PER_BIT - 1);

  logic          busy_q, busy_d;
  logic          line_q, line_d;   // the bit on the line now
  logic [8:0]    shift_q, shift_d; // the bits after it: data LSB first, then the stop bit
  logic [3:0]    left_q, left_d;   // bits still to send after the current one
  logic [CW-1:0] count_q, count_d; // cycles into the current bit
  logic          take;

  // Idle, or in the last cycle of the stop bit: the line is free at the next edge.
  assign ready_o = !busy_q || (left_q == 4'd0 && count_q == BIT_LAST);
  assign take = valid_i && ready_o;

  always_comb begin
    busy_d = busy_q;
    line_d = line_q;
    shift_d = shift_q;
    left_d = left_q;
    count_d = count_q + CW'(1);
    if (busy_q && count_q == BIT_LAST) begin
      count_d = '0;
      if (left_q == 4'd0) begin
        busy_d = 1'b0;
        line_d = 1'b1;
      end else begin
        line_d = shift_q[0];
        shift_d = {1'b1, shift_q[8:1]};
        left_d = left_q - 4'd1;
      end
    end
    if (take) begin
      busy_d = 1'b1;
      line_d = 1'b0;  // start bit
      shift_d = {1'b1, data_i};
      left_d = 4'd9;
      count_d = '0;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      busy_q <= 1'b0;
      line_q <= 1'b1;
      shift_q <= '1;
      left_q <= '0;
      count_q <= '0;
    end else begin
      busy_q <= busy_d;
      line_q <= line_d;
      shift_q <= shift_d;
      left_q <= left_d;
      count_q <= count_d;
    end
  end

  assign uart_tx_o = line_q;

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      assert (busy_q || line_q) else $error("systole_uart_tx: line low while idle");
      assert (left_q <= 4'd9) else $error("systole_uart_tx: more than ten bits in a byte");
    end
  end
`endif
endmodule
