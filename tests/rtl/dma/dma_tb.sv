// Test top for the three DMA engines: LOAD, STORE and LOAD_WEIGHTS share one device-memory
// port through systole_mem_arbiter, with the unified buffer and accumulators as row RAMs. The
// test feeds instructions straight to each engine (no sequencer), takes weight rows from the
// WEIGHT engine with random back-pressure, and reads UB/ACC rows through a second read port.
module dma_tb #(
    parameter integer ROWS = 4,
    parameter integer COLS = 4,
    parameter integer BF16 = 0,
    parameter integer UB_ROWS = 1024,
    parameter integer ACC_ROWS = 64,
    parameter integer LOAD_CREDITS = 16,
    localparam integer EW = BF16 != 0 ? 16 : 8,
    localparam integer W = ROWS > COLS ? ROWS : COLS,
    localparam integer UB_AW = $clog2(UB_ROWS),
    localparam integer ACC_AW = $clog2(ACC_ROWS)
) (
    input  logic               clk,
    input  logic               rst,
    // instructions: 0 LOAD, 1 WEIGHT, 2 STORE
    input  logic [2:0]         cmd_valid,
    output logic [2:0]         cmd_ready,
    input  logic [255:0]       cmd_insn,
    output logic [2:0]         done,
    // weight rows
    output logic               wrow_valid,
    input  logic               wrow_ready,
    output logic [COLS*EW-1:0] wrow_data,
    // inspection: read one UB and one ACC row (data the cycle after)
    input  logic [UB_AW-1:0]   peek_ub_addr,
    output logic [W*EW-1:0]    peek_ub_data,
    input  logic [ACC_AW-1:0]  peek_acc_addr,
    output logic [COLS*32-1:0] peek_acc_data,
    // device memory
    output logic               mem_req_valid,
    input  logic               mem_req_ready,
    output logic               mem_req_write,
    output logic [47:0]        mem_req_addr,
    output logic [255:0]       mem_req_wdata,
    output logic [31:0]        mem_req_wstrb,
    input  logic               mem_rsp_valid,
    input  logic [255:0]       mem_rsp_rdata,
    // performance events, summed by the test
    output logic [31:0]        bytes_total
);
  logic [2:0]     rq_valid, rq_ready, rq_write, rsp_valid;
  logic [3*48-1:0]  rq_addr;
  logic [3*256-1:0] rq_wdata;
  logic [3*32-1:0]  rq_wstrb;
  logic [255:0]   rsp_rdata;

  systole_mem_arbiter #(.N(3), .OUTSTANDING(64)) u_arb (
      .clk, .rst,
      .req_valid(rq_valid), .req_ready(rq_ready), .req_write(rq_write), .req_addr(rq_addr),
      .req_wdata(rq_wdata), .req_wstrb(rq_wstrb), .rsp_valid, .rsp_rdata,
      .mem_req_valid, .mem_req_ready, .mem_req_write, .mem_req_addr, .mem_req_wdata,
      .mem_req_wstrb, .mem_rsp_valid, .mem_rsp_rdata
  );

  logic ub_wr_req, acc_wr_req, ub_rd_req, acc_rd_req;
  logic [UB_AW-1:0] ub_wr_addr, ub_rd_addr;
  logic [ACC_AW-1:0] acc_wr_addr, acc_rd_addr;
  logic [W-1:0] ub_wr_lanes;
  logic [COLS-1:0] acc_wr_lanes;
  logic [W*EW-1:0] ub_wr_data;
  logic [COLS*32-1:0] acc_wr_data;
  logic [2*W*EW-1:0] ub_q;
  logic [2*COLS*32-1:0] acc_q;
  logic [31:0] b_ub, b_acc, b_w, b_from_ub, b_from_acc;
  logic [2:0] stalls;

  systole_dma_load #(.ROWS(ROWS), .COLS(COLS), .BF16(BF16), .UB_ROWS(UB_ROWS), .ACC_ROWS(ACC_ROWS),
                     .LOAD_CREDITS(LOAD_CREDITS)) u_load (
      .clk, .rst, .cmd_valid(cmd_valid[0]), .cmd_ready(cmd_ready[0]), .cmd_insn, .done(done[0]),
      .ub_wr_req, .ub_wr_addr, .ub_wr_lanes, .ub_wr_data, .ub_wr_gnt(ub_wr_req),
      .acc_wr_req, .acc_wr_addr, .acc_wr_lanes, .acc_wr_data, .acc_wr_gnt(acc_wr_req),
      .mem_req_valid(rq_valid[0]), .mem_req_ready(rq_ready[0]), .mem_req_addr(rq_addr[0 +: 48]),
      .mem_rsp_valid(rsp_valid[0]), .mem_rsp_rdata(rsp_rdata),
      .bytes_to_ub(b_ub), .bytes_to_acc(b_acc), .stall_memory(stalls[0])
  );
  assign rq_write[0] = 1'b0;
  assign rq_wdata[0 +: 256] = '0;
  assign rq_wstrb[0 +: 32] = '0;

  systole_dma_weights #(.ROWS(ROWS), .COLS(COLS), .BF16(BF16)) u_weights (
      .clk, .rst, .cmd_valid(cmd_valid[1]), .cmd_ready(cmd_ready[1]), .cmd_insn, .done(done[1]),
      .wrow_valid, .wrow_ready, .wrow_data,
      .mem_req_valid(rq_valid[1]), .mem_req_ready(rq_ready[1]), .mem_req_addr(rq_addr[48 +: 48]),
      .mem_rsp_valid(rsp_valid[1]), .mem_rsp_rdata(rsp_rdata),
      .bytes_weights(b_w), .stall_memory(stalls[1])
  );
  assign rq_write[1] = 1'b0;
  assign rq_wdata[256 +: 256] = '0;
  assign rq_wstrb[32 +: 32] = '0;

  systole_dma_store #(.ROWS(ROWS), .COLS(COLS), .BF16(BF16), .UB_ROWS(UB_ROWS), .ACC_ROWS(ACC_ROWS)) u_store (
      .clk, .rst, .cmd_valid(cmd_valid[2]), .cmd_ready(cmd_ready[2]), .cmd_insn, .done(done[2]),
      .ub_rd_req, .ub_rd_addr, .ub_rd_gnt(ub_rd_req), .ub_rd_data(ub_q[0 +: W*EW]),
      .acc_rd_req, .acc_rd_addr, .acc_rd_gnt(acc_rd_req), .acc_rd_data(acc_q[0 +: COLS*32]),
      .mem_req_valid(rq_valid[2]), .mem_req_ready(rq_ready[2]), .mem_req_addr(rq_addr[96 +: 48]),
      .mem_req_wdata(rq_wdata[512 +: 256]), .mem_req_wstrb(rq_wstrb[64 +: 32]),
      .mem_rsp_valid(rsp_valid[2]),
      .bytes_from_ub(b_from_ub), .bytes_from_acc(b_from_acc), .stall_memory(stalls[2])
  );
  assign rq_write[2] = 1'b1;

  systole_row_ram #(.DEPTH(UB_ROWS), .LANES(W), .LANE_BITS(EW), .READ_PORTS(2)) u_ub (
      .clk, .wr_en(ub_wr_req), .wr_addr(ub_wr_addr), .wr_lanes(ub_wr_lanes), .wr_data(ub_wr_data),
      .rd_en({1'b1, ub_rd_req}), .rd_addr({peek_ub_addr, ub_rd_addr}), .rd_data(ub_q)
  );
  systole_row_ram #(.DEPTH(ACC_ROWS), .LANES(COLS), .LANE_BITS(32), .READ_PORTS(2)) u_acc (
      .clk, .wr_en(acc_wr_req), .wr_addr(acc_wr_addr), .wr_lanes(acc_wr_lanes), .wr_data(acc_wr_data),
      .rd_en({1'b1, acc_rd_req}), .rd_addr({peek_acc_addr, acc_rd_addr}), .rd_data(acc_q)
  );
  assign peek_ub_data = ub_q[W*EW +: W*EW];
  assign peek_acc_data = acc_q[COLS*32 +: COLS*32];
  assign bytes_total = b_ub + b_acc + b_w + b_from_ub + b_from_acc;
  wire unused_ok = &{1'b0, stalls};
endmodule
