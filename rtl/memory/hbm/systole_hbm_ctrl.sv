// systole_hbm_ctrl — the HBM controller: the core's device-memory requester port on one side,
// MEM_CHANNELS DRAM channels on the other (docs/MEMORY.md has the block diagram).
//
// Front end: every request is checked (inside the memory, a multiple of 32) and given a slot in
// a reorder buffer (ROB) in request order; good ones go to the channel their address
// interleaves to (blocks of 2^INTERLEAVE_LOG2 bytes rotate over the channels) with the slot
// number as their ID. Channels answer out of order; the ROB hands responses back strictly in
// request order, one per cycle, as the requester port promises. A bad request is never sent to
// a channel: its response carries mem_rsp_error (and zero data), and the first one is kept in
// error/error_addr until reset, so software can name the address.
//
// The channel ports inside are AXI4-style (valid/ready request with ID, response with ID); an
// FPGA board can replace systole_hbm_channel + the DRAM model with its own controller there.
module systole_hbm_ctrl #(
    // Configuration parameters (rtl/generated/params/*.vc), set by the parent; the defaults
    // fail the checks below.
    parameter integer MEM_CHANNELS = 0,      // a power of two
    parameter integer INTERLEAVE_LOG2 = 0,   // log2(bytes of one channel's block), at least 5
    parameter integer MEM_BYTES_LO = 0,      // memory size (a power of two), low 32 bits
    parameter integer MEM_BYTES_HI = -1,     // high 16 bits
    // DRAM geometry, the configuration's [dram] section (systole_soc), at least 1 each:
    parameter integer BG_BITS = 0,           // log2(bank_groups)
    parameter integer BA_BITS = 0,           // log2(banks_per_group)
    parameter integer COL_BITS = 0,          // log2(row_bytes / 32)
    parameter integer QUEUE_DEPTH = 16,      // per channel
    // Requests in flight (a power of two). Two channels streaming at the port's full rate need
    // about 64: MemoryTimingModel measured 88.6% of peak with 32 and 92.8% with 64.
    parameter integer ROB_DEPTH = 64,
    // Column commands in flight per channel (a power of two): covers t_cl / t_ccd_s reads.
    parameter integer INFLIGHT = 32,
    // 0: DRAM channels (systole_hbm_channel, the dram_* buses); 1: on-chip RAM channels
    // (systole_hbm_bram_channel; the dram_* outputs are idle and its inputs ignored).
    parameter integer BACKEND = 0
) (
    input  logic clk,
    input  logic rst,
    input  logic [15:0] t_burst, t_rcd, t_rp, t_ras, t_wl, t_wr, t_rtp, t_rrd_s, t_rrd_l,
    input  logic [15:0] t_faw, t_ccd_s, t_ccd_l, t_wtr, t_rtw, t_refi, t_rfc, starve_limit,
    // requester port (rtl/README.md)
    input  logic                    mem_req_valid,
    output logic                    mem_req_ready,
    input  logic                    mem_req_write,
    input  logic [47:0]             mem_req_addr,
    input  logic [255:0]            mem_req_wdata,
    input  logic [31:0]             mem_req_wstrb,
    output logic                    mem_rsp_valid,
    output logic [255:0]            mem_rsp_rdata,
    output logic                    mem_rsp_error,  // this response's request was refused
    output logic                    error,          // sticky: some request was refused
    output logic [47:0]             error_addr,     // the first refused address
    // DRAM command buses, channel c in slice c
    output logic [MEM_CHANNELS*3-1:0]   dram_cmd,
    output logic [MEM_CHANNELS*BG_BITS-1:0]  dram_bg,
    output logic [MEM_CHANNELS*BA_BITS-1:0]  dram_ba,
    output logic [MEM_CHANNELS*ROW_BITS-1:0] dram_row,
    output logic [MEM_CHANNELS*COL_BITS-1:0] dram_col,
    output logic [MEM_CHANNELS*256-1:0] dram_wdata,
    output logic [MEM_CHANNELS*32-1:0]  dram_wstrb,
    input  logic [MEM_CHANNELS-1:0]     dram_rvalid,
    input  logic [MEM_CHANNELS*256-1:0] dram_rdata
);
  localparam integer MEM_LOG2 = MEM_BYTES_HI != 0 ? 32 + $clog2(MEM_BYTES_HI) : $clog2(MEM_BYTES_LO);
  localparam integer CH_BITS = $clog2(MEM_CHANNELS);
  localparam integer LOCAL_W = MEM_LOG2 - CH_BITS;  // bytes of one channel
  localparam integer ROW_BITS = LOCAL_W - 5 - BG_BITS - COL_BITS - BA_BITS;
  localparam integer RW = $clog2(ROB_DEPTH);

  if (MEM_BYTES_HI < 0 || MEM_BYTES_HI > 65535 || (MEM_BYTES_HI == 0 && MEM_BYTES_LO == 0))
  begin : g_check_mem
    systole_param_error_hbm_ctrl_MEM_BYTES_missing_or_out_of_range u_error ();
  end
  if (MEM_CHANNELS < 1 || (MEM_CHANNELS & (MEM_CHANNELS - 1)) != 0) begin : g_check_channels
    systole_param_error_hbm_ctrl_CHANNELS_must_be_a_power_of_two u_error ();
  end
  if (INTERLEAVE_LOG2 < 5 || INTERLEAVE_LOG2 + CH_BITS > MEM_LOG2) begin : g_check_interleave
    systole_param_error_hbm_ctrl_INTERLEAVE_LOG2_out_of_range u_error ();
  end
  if (BG_BITS < 1 || BA_BITS < 1 || COL_BITS < 1) begin : g_check_geometry
    systole_param_error_hbm_ctrl_BG_BITS_BA_BITS_COL_BITS_must_be_at_least_1 u_error ();
  end
  if (ROW_BITS < 1) begin : g_check_rows
    systole_param_error_hbm_ctrl_memory_too_small_for_the_dram_geometry u_error ();
  end
  if (ROB_DEPTH < 2 || (ROB_DEPTH & (ROB_DEPTH - 1)) != 0) begin : g_check_rob
    systole_param_error_hbm_ctrl_ROB_DEPTH_must_be_a_power_of_two u_error ();
  end

  // Address check and mapping. A 48-bit address compared with a power-of-two size: everything
  // above bit MEM_LOG2 must be zero.
  wire refused = mem_req_addr[4:0] != 5'd0 || (mem_req_addr >> MEM_LOG2) != 48'd0;
  wire [47:0] channel_wide = (mem_req_addr >> INTERLEAVE_LOG2) & (48'(MEM_CHANNELS) - 48'd1);
  wire [47:0] block = mem_req_addr >> (INTERLEAVE_LOG2 + CH_BITS);
  wire [47:0] offset = mem_req_addr & ((48'd1 << INTERLEAVE_LOG2) - 48'd1);
  wire [LOCAL_W-1:0] local_addr = LOCAL_W'((block << INTERLEAVE_LOG2) | offset);

  // Reorder buffer: slot per request in flight, released in order.
  logic [RW:0]   head_q, tail_q;
  logic          done_q [ROB_DEPTH];
  logic          bad_q [ROB_DEPTH];
  logic [255:0]  data_q [ROB_DEPTH];
  wire rob_full = (tail_q - head_q) == (RW + 1)'(ROB_DEPTH);

  logic [MEM_CHANNELS-1:0] ch_req_ready, ch_rsp_valid;
  logic [MEM_CHANNELS*RW-1:0] ch_rsp_id;
  logic [MEM_CHANNELS*256-1:0] ch_rsp_rdata;
  wire target_ready = ch_req_ready[channel_wide[CH_BITS > 0 ? CH_BITS - 1 : 0:0]];
  assign mem_req_ready = !rob_full && !rst && (refused || target_ready);
  wire accept = mem_req_valid && mem_req_ready;

  for (genvar c = 0; c < MEM_CHANNELS; c++) begin : g_channel
    wire req_valid_c = mem_req_valid && !refused && !rob_full && !rst && channel_wide == 48'(c);
    if (BACKEND == 1) begin : g_bram
      systole_hbm_bram_channel #(.ADDR_BITS(LOCAL_W), .ID_BITS(RW)) u_channel (
          .clk, .rst, .req_valid(req_valid_c), .req_ready(ch_req_ready[c]),
          .req_write(mem_req_write), .req_addr(local_addr), .req_wdata(mem_req_wdata),
          .req_wstrb(mem_req_wstrb), .req_id(tail_q[RW-1:0]), .rsp_valid(ch_rsp_valid[c]),
          .rsp_ready(1'b1), .rsp_id(ch_rsp_id[c*RW +: RW]),
          .rsp_rdata(ch_rsp_rdata[c*256 +: 256]));
      assign dram_cmd[c*3 +: 3] = '0;
      assign dram_bg[c*BG_BITS +: BG_BITS] = '0;
      assign dram_ba[c*BA_BITS +: BA_BITS] = '0;
      assign dram_row[c*ROW_BITS +: ROW_BITS] = '0;
      assign dram_col[c*COL_BITS +: COL_BITS] = '0;
      assign dram_wdata[c*256 +: 256] = '0;
      assign dram_wstrb[c*32 +: 32] = '0;
      /* verilator lint_off UNUSEDSIGNAL */
      wire unused_dram = ^{dram_rvalid[c], dram_rdata[c*256 +: 256], t_burst, t_rcd, t_rp,
                           t_ras, t_wl, t_wr, t_rtp, t_rrd_s, t_rrd_l, t_faw, t_ccd_s, t_ccd_l,
                           t_wtr, t_rtw, t_refi, t_rfc, starve_limit};
      /* verilator lint_on UNUSEDSIGNAL */
    end else begin : g_dram
      systole_hbm_channel #(
          .BG_BITS(BG_BITS), .BA_BITS(BA_BITS), .COL_BITS(COL_BITS), .ROW_BITS(ROW_BITS),
          .ID_BITS(RW), .DEPTH(QUEUE_DEPTH), .INFLIGHT(INFLIGHT)
      ) u_channel (
          .clk, .rst, .t_burst, .t_rcd, .t_rp, .t_ras, .t_wl, .t_wr, .t_rtp, .t_rrd_s, .t_rrd_l,
          .t_faw, .t_ccd_s, .t_ccd_l, .t_wtr, .t_rtw, .t_refi, .t_rfc, .starve_limit,
          .req_valid(req_valid_c),
          .req_ready(ch_req_ready[c]),
          .req_write(mem_req_write),
          .req_addr(local_addr),
          .req_wdata(mem_req_wdata),
          .req_wstrb(mem_req_wstrb),
          .req_id(tail_q[RW-1:0]),
          .rsp_valid(ch_rsp_valid[c]),
          .rsp_ready(1'b1),  // the ROB has a slot for every request it let in
          .rsp_id(ch_rsp_id[c*RW +: RW]),
          .rsp_rdata(ch_rsp_rdata[c*256 +: 256]),
          .dram_cmd(dram_cmd[c*3 +: 3]),
          .dram_bg(dram_bg[c*BG_BITS +: BG_BITS]),
          .dram_ba(dram_ba[c*BA_BITS +: BA_BITS]),
          .dram_row(dram_row[c*ROW_BITS +: ROW_BITS]),
          .dram_col(dram_col[c*COL_BITS +: COL_BITS]),
          .dram_wdata(dram_wdata[c*256 +: 256]),
          .dram_wstrb(dram_wstrb[c*32 +: 32]),
          .dram_rvalid(dram_rvalid[c]),
          .dram_rdata(dram_rdata[c*256 +: 256]));
    end
  end

  wire head_ready = head_q != tail_q && done_q[head_q[RW-1:0]];
  assign mem_rsp_valid = head_ready;
  assign mem_rsp_rdata = data_q[head_q[RW-1:0]];
  assign mem_rsp_error = bad_q[head_q[RW-1:0]];

  always_ff @(posedge clk) begin
    if (accept) begin
      bad_q[tail_q[RW-1:0]] <= refused;
      data_q[tail_q[RW-1:0]] <= '0;
    end
    for (int c = 0; c < MEM_CHANNELS; c++) begin
      if (ch_rsp_valid[c]) data_q[ch_rsp_id[c*RW +: RW]] <= ch_rsp_rdata[c*256 +: 256];
    end
  end
  always_ff @(posedge clk) begin
    if (rst) begin
      head_q <= '0;
      tail_q <= '0;
      error <= 1'b0;
      error_addr <= '0;
      for (int s = 0; s < ROB_DEPTH; s++) done_q[s] <= 1'b0;
    end else begin
      if (accept) begin
        tail_q <= tail_q + 1'b1;
        done_q[tail_q[RW-1:0]] <= refused;
        if (refused && !error) begin
          error <= 1'b1;
          error_addr <= mem_req_addr;
        end
      end
      for (int c = 0; c < MEM_CHANNELS; c++) begin
        if (ch_rsp_valid[c]) done_q[ch_rsp_id[c*RW +: RW]] <= 1'b1;
      end
      if (head_ready) begin
        head_q <= head_q + 1'b1;
        done_q[head_q[RW-1:0]] <= 1'b0;
      end
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      for (int c = 0; c < MEM_CHANNELS; c++) begin
        assert (!(ch_rsp_valid[c] && done_q[ch_rsp_id[c*RW +: RW]]))
        else $error("systole_hbm_ctrl: channel %0d answered slot %0d twice", c,
                    ch_rsp_id[c*RW +: RW]);
      end
    end
  end
`endif
endmodule
