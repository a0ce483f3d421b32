// systole_rr_arbiter — round-robin grant among N requesters of a shared row port.
//
// gnt is one-hot (or zero) and combinational from req, so a requester that holds req sees its
// grant in the same cycle; the requester granted last has the lowest priority next time, so
// no requester starves while it keeps asking.
module systole_rr_arbiter #(
    parameter integer N = 2
) (
    input  logic         clk,
    input  logic         rst,
    input  logic         enable,   // low: grant nobody (the port is taken by a priority user)
    input  logic [N-1:0] req,
    output logic [N-1:0] gnt,
    input  logic         advance   // the grant was used: rotate priority past it
);
  localparam integer IW = N > 1 ? $clog2(N) : 1;

  if (N < 2) begin : g_check
    systole_param_error_rr_arbiter_N_must_be_at_least_2 u_error ();
  end

  logic [IW-1:0] last_q, last_d;  // requester granted most recently

  // Scan positions last+1 .. last+N of the request vector repeated twice; walking down and
  // overwriting leaves the first requester after `last`.
  always_comb begin
    gnt = '0;
    for (int k = 2 * N - 1; k >= 0; k--) begin
      if (enable && k > 32'(last_q) && k <= 32'(last_q) + N && req[k%N]) begin
        gnt = '0;
        gnt[k%N] = 1'b1;
      end
    end
  end

  always_comb begin
    last_d = last_q;
    if (advance) begin
      for (int i = 0; i < N; i++) begin
        if (gnt[i]) last_d = IW'(i);
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      last_q <= IW'(N - 1);
    end else begin
      last_q <= last_d;
    end
  end
endmodule
