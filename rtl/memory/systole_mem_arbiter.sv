// systole_mem_arbiter — shares the device-memory port among the core's requesters
// (instruction fetch, LOAD, WEIGHT, STORE, host).
//
// One request per cycle goes downstream, chosen round-robin among the requesters that are
// valid. The requester of every accepted request is remembered in an in-order FIFO, and each
// response (reads: data; writes: acknowledgement) is routed back to the requester at its head,
// so every requester sees its own responses in its own request order. At most OUTSTANDING
// requests are in flight; the FIFO full stalls new requests.
module systole_mem_arbiter #(
    parameter integer N = 5,
    parameter integer OUTSTANDING = 32
) (
    input  logic           clk,
    input  logic           rst,
    // requesters
    input  logic [N-1:0]     req_valid,
    output logic [N-1:0]     req_ready,
    input  logic [N-1:0]     req_write,
    input  logic [N*48-1:0]  req_addr,
    input  logic [N*256-1:0] req_wdata,
    input  logic [N*32-1:0]  req_wstrb,
    output logic [N-1:0]     rsp_valid,
    output logic [255:0]     rsp_rdata,   // shared by all requesters; qualified by rsp_valid
    // device memory
    output logic           mem_req_valid,
    input  logic           mem_req_ready,
    output logic           mem_req_write,
    output logic [47:0]    mem_req_addr,
    output logic [255:0]   mem_req_wdata,
    output logic [31:0]    mem_req_wstrb,
    input  logic           mem_rsp_valid,
    input  logic [255:0]   mem_rsp_rdata
);
  localparam integer IW = $clog2(N);
  localparam integer OW = $clog2(OUTSTANDING);

  if (N < 2) begin : g_check_n
    systole_param_error_mem_arbiter_N_must_be_at_least_2 u_error ();
  end
  if ((OUTSTANDING & (OUTSTANDING - 1)) != 0 || OUTSTANDING < 2) begin : g_check_out
    systole_param_error_mem_arbiter_OUTSTANDING_must_be_a_power_of_two u_error ();
  end

  // In-order record of who is owed a response.
  logic [IW-1:0] owner_q [OUTSTANDING];  // storage: written, never reset
  logic [OW:0]   head_q, head_d, tail_q, tail_d;
  logic          full, push;
  assign full = (tail_q - head_q) == (OW + 1)'(OUTSTANDING);

  logic [N-1:0] gnt;
  // The choice does not depend on mem_req_ready (valid never waits for ready, as in AXI).
  // Nothing goes out during reset: the requesters' state is not yet defined.
  systole_rr_arbiter #(.N(N)) u_pick (
      .clk, .rst, .enable(!full && !rst), .req(req_valid), .gnt, .advance(mem_req_ready)
  );

  logic [IW-1:0] chosen;
  always_comb begin
    chosen = '0;
    for (int i = 0; i < N; i++) begin
      if (gnt[i]) chosen = IW'(i);
    end
  end

  assign req_ready     = gnt & {N{mem_req_ready}};
  assign mem_req_valid = |gnt;
  // The granted request, as an OR of one-hot-selected inputs rather than a mux on `chosen`:
  // on FPGAs the read-only requesters' constant-zero write data then costs nothing (one LUT4
  // per bit for the two writers, where a binary mux needed two). With no grant, requester 0's
  // fields go out, as the mux on chosen = 0 did.
  logic [N-1:0] sel;
  assign sel = (gnt == '0) ? N'(1) : gnt;
  always_comb begin
    mem_req_write = 1'b0;
    mem_req_addr  = '0;
    mem_req_wdata = '0;
    mem_req_wstrb = '0;
    for (int i = 0; i < N; i++) begin
      mem_req_write = mem_req_write | (req_write[i] & sel[i]);
      mem_req_addr  = mem_req_addr | (req_addr[i*48 +: 48] & {48{sel[i]}});
      mem_req_wdata = mem_req_wdata | (req_wdata[i*256 +: 256] & {256{sel[i]}});
      mem_req_wstrb = mem_req_wstrb | (req_wstrb[i*32 +: 32] & {32{sel[i]}});
    end
  end

  always_comb begin
    rsp_valid = '0;
    if (mem_rsp_valid) rsp_valid[owner_q[head_q[OW-1:0]]] = 1'b1;
  end
  assign rsp_rdata = mem_rsp_rdata;

  assign push = mem_req_valid && mem_req_ready;  // never during reset (enable is low)

  always_comb begin
    head_d = head_q + (OW + 1)'(mem_rsp_valid);
    tail_d = tail_q + (OW + 1)'(push);
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      head_q <= '0;
      tail_q <= '0;
    end else begin
      head_q <= head_d;
      tail_q <= tail_d;
    end
  end

  always_ff @(posedge clk) begin
    if (push) owner_q[tail_q[OW-1:0]] <= chosen;
  end

  // ---- Assertions --------------------------------------------------------------------------
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      assert (!(mem_rsp_valid && head_q == tail_q))
      else $error("systole_mem_arbiter: a response with no request outstanding");
    end
  end
`endif
endmodule
