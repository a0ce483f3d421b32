// systole_uart_rx — 8N1 receiver: one start bit, eight data bits LSB first, one stop bit.
//
// The line comes from another clock domain (the USB-serial chip), so it passes a two-flop
// synchronizer before anything looks at it. A falling edge starts a byte; the start bit is
// checked again half a bit later (a shorter low pulse is a glitch and is ignored), and from
// there every bit is sampled once, a whole bit period apart, i.e. in the middle of the bit.
// That tolerates a baud mismatch of roughly ±4 % across the ten bits of a byte (half a bit of
// drift), which is why systole_uart_top accepts clocks that make the baud within 2 %.
// A stop bit that reads low is a framing error: the byte is dropped (frame_error_o pulses) and
// the receiver waits for the line to go high again before it looks for the next start bit, so
// a break (a line held low) costs one error, not a stream of 0x00 bytes.
//
// CLKS_PER_BIT exists because the baud is the board's choice and the clock is the core's:
// the parent derives it from both (systole_uart_top: CLOCK_MHZ and BAUD). At least 4, so that
// half a bit is at least two cycles and the start-bit check is meaningful.
module systole_uart_rx #(
    parameter integer CLKS_PER_BIT = 0  // set by the parent; the default fails the check
) (
    input  logic       clk,
    input  logic       rst,
    input  logic       uart_rx_i,      // the serial line, idle high, asynchronous to clk
    output logic       valid_o,        // one-cycle pulse: data_o is a received byte
    output logic [7:0] data_o,
    output logic       frame_error_o   // one-cycle pulse: a byte whose stop bit read low
);
  if (CLKS_PER_BIT < 4) begin : g_clks_check
    systole_param_error_uart_rx_CLKS_PER_BIT_must_be_at_least_4 u_error ();
  end
  localparam integer CW = $clog2(CLKS_PER_BIT + 1);
  localparam logic [CW-1:0] HALF_LAST = CW'(CLKS_PER_BIT / 2 - 1);
  localparam logic [CW-1:0] BIT_LAST = CW'(CLKS_PER_BIT - 1);

  typedef enum logic [2:0] {
    S_IDLE,   // line high, waiting for a falling edge
    S_START,  // counting to the middle of the start bit
    S_DATA,   // sampling eight data bits
    S_STOP,   // sampling the stop bit
    S_BREAK   // after a framing error: waiting for the line to return high
  } state_e;

  logic          meta_q, sync_q;  // the two-flop synchronizer
  state_e        state_q, state_d;
  logic [CW-1:0] count_q, count_d;  // cycles into the current bit
  logic [2:0]    bit_q, bit_d;      // data bit being sampled
  logic [7:0]    shift_q, shift_d;  // data bits so far, LSB first
  logic          valid_q, valid_d, error_q, error_d;

  always_comb begin
    state_d = state_q;
    count_d = count_q + CW'(1);
    bit_d = bit_q;
    shift_d = shift_q;
    valid_d = 1'b0;
    error_d = 1'b0;
    case (state_q)
      S_IDLE: begin
        count_d = '0;
        if (!sync_q) state_d = S_START;
      end
      S_START: begin
        if (count_q == HALF_LAST) begin
          count_d = '0;
          bit_d = '0;
          if (sync_q) begin
            state_d = S_IDLE;  // high again by mid-bit: a glitch
          end else begin
            state_d = S_DATA;
          end
        end
      end
      S_DATA: begin
        if (count_q == BIT_LAST) begin
          count_d = '0;
          shift_d = {sync_q, shift_q[7:1]};
          bit_d = bit_q + 3'd1;
          if (bit_q == 3'd7) state_d = S_STOP;
        end
      end
      S_STOP: begin
        if (count_q == BIT_LAST) begin
          count_d = '0;
          valid_d = sync_q;
          error_d = !sync_q;
          if (sync_q) begin
            state_d = S_IDLE;
          end else begin
            state_d = S_BREAK;
          end
        end
      end
      S_BREAK: begin
        count_d = '0;
        if (sync_q) state_d = S_IDLE;
      end
      default: state_d = S_IDLE;
    endcase
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      meta_q <= 1'b1;
      sync_q <= 1'b1;
      state_q <= S_IDLE;
      count_q <= '0;
      bit_q <= '0;
      shift_q <= '0;
      valid_q <= 1'b0;
      error_q <= 1'b0;
    end else begin
      meta_q <= uart_rx_i;
      sync_q <= meta_q;
      state_q <= state_d;
      count_q <= count_d;
      bit_q <= bit_d;
      shift_q <= shift_d;
      valid_q <= valid_d;
      error_q <= error_d;
    end
  end

  assign valid_o = valid_q;
  assign data_o = shift_q;
  assign frame_error_o = error_q;

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      assert (!(valid_q && error_q)) else $error("systole_uart_rx: a byte both valid and in error");
      assert (count_q <= BIT_LAST) else $error("systole_uart_rx: bit counter past the bit");
    end
  end
`endif
endmodule
