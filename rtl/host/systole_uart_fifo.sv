// systole_uart_fifo — the UART receiver's byte FIFO. The receiver cannot be told to wait (the
// host sends whenever it likes), while the bridge behind it takes bytes only between replies,
// so bytes that arrive while it is busy wait here. A byte pushed while the FIFO is full is
// dropped and reported (overflow_o), never written over another.
// DEPTH: bytes held; a power of two, so that the pointers wrap by themselves.
module systole_uart_fifo #(
    parameter integer DEPTH = 0  // set by the parent; the default fails the check
) (
    input  logic       clk,
    input  logic       rst,
    input  logic       push_i,
    input  logic [7:0] data_i,
    output logic       overflow_o,  // one-cycle pulse: push_i while full, the byte dropped
    output logic       valid_o,     // the oldest byte is on data_o
    input  logic       ready_i,     // taken at this edge (valid_o && ready_i)
    output logic [7:0] data_o
);
  if (DEPTH < 2 || (DEPTH & (DEPTH - 1)) != 0) begin : g_depth_check
    systole_param_error_uart_fifo_DEPTH_must_be_a_power_of_two_of_at_least_2 u_error ();
  end
  localparam integer AW = $clog2(DEPTH);

  logic [7:0]  mem_q [DEPTH];
  logic [AW:0] wr_q, wr_d, rd_q, rd_d;  // one bit more than the address: full vs empty
  logic        full, write, overflow_q, overflow_d;

  assign full = (wr_q[AW] != rd_q[AW]) && (wr_q[AW-1:0] == rd_q[AW-1:0]);
  assign valid_o = wr_q != rd_q;
  assign data_o = mem_q[rd_q[AW-1:0]];
  assign write = push_i && !full;

  always_comb begin
    wr_d = wr_q + (AW + 1)'(write);
    rd_d = rd_q + (AW + 1)'(valid_o && ready_i);
    overflow_d = push_i && full;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      wr_q <= '0;
      rd_q <= '0;
      overflow_q <= 1'b0;
    end else begin
      wr_q <= wr_d;
      rd_q <= rd_d;
      overflow_q <= overflow_d;
    end
  end

  always_ff @(posedge clk) begin  // storage: written with an enable, never reset
    if (write) mem_q[wr_q[AW-1:0]] <= data_i;
  end

  assign overflow_o = overflow_q;

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      assert ((wr_q - rd_q) <= (AW + 1)'(DEPTH)) else $error("systole_uart_fifo: count past DEPTH");
    end
  end
`endif
endmodule
