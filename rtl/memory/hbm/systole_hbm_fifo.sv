// systole_hbm_fifo — a small synchronous FIFO (register storage, first-word fall-through): the
// controller's in-flight and read-data queues. Pushing when full or popping when empty is a bug
// of the user, caught by the assertions below; the user keeps track of space with `count`.
module systole_hbm_fifo #(
    parameter integer WIDTH = 8,
    parameter integer DEPTH = 16  // a power of two, at least 2
) (
    input  logic                     clk,
    input  logic                     rst,
    input  logic                     push,
    input  logic [WIDTH-1:0]         push_data,
    input  logic                     pop,
    output logic [WIDTH-1:0]         head,       // valid while count != 0
    output logic [$clog2(DEPTH):0]   count
);
  localparam integer PW = $clog2(DEPTH);
  if (DEPTH < 2 || (DEPTH & (DEPTH - 1)) != 0) begin : g_check_depth
    systole_param_error_hbm_fifo_DEPTH_must_be_a_power_of_two u_error ();
  end

  logic [WIDTH-1:0] data_q [DEPTH];
  logic [PW:0] rd_q, wr_q;

  assign head = data_q[rd_q[PW-1:0]];
  assign count = wr_q - rd_q;

  always_ff @(posedge clk) begin
    if (push) data_q[wr_q[PW-1:0]] <= push_data;
  end
  always_ff @(posedge clk) begin
    if (rst) begin
      rd_q <= '0;
      wr_q <= '0;
    end else begin
      if (push) wr_q <= wr_q + 1'b1;
      if (pop) rd_q <= rd_q + 1'b1;
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      assert (!(pop && count == 0)) else $error("systole_hbm_fifo: pop when empty");
      assert (!(push && !pop && count == (PW + 1)'(DEPTH)))
      else $error("systole_hbm_fifo: push when full");
    end
  end
`endif
endmodule
