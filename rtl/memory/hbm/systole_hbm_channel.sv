// systole_hbm_channel — one memory channel: a request queue, an FR-FCFS DRAM command scheduler
// with an open-page policy, a starvation bound and refresh, and the DRAM command bus.
//
// Requests arrive on an AXI4-style valid/ready channel (address, write data and strobes in one
// beat, with an ID) and leave on a response channel carrying the ID, in the order their column
// commands issue. Within a channel the local byte address maps, from the lowest bits up, to
// {row, bank, column, bank group, byte}: consecutive 32-byte words rotate over the bank groups,
// so a sequential stream pays tCCD_S rather than tCCD_L, and a row of every group stays open.
//
// Each cycle at most one command issues, chosen in this order:
//   refresh due : precharge open banks one by one, then REF (nothing else issues meanwhile);
//   first ready : the oldest request whose row is open and whose RD/WR timing is met;
//   first come  : the oldest request that can take an ACT (its bank closed) or a PRE (another
//                 row open that no queued request still wants — the open-page policy).
// Once the oldest request has waited `starve_limit` cycles only it is served, so a stream of
// row hits cannot starve a row miss forever. A request never overtakes an older one to the
// same word, so reads and writes to one address keep their order.
//
// Commands (dram_cmd): 0 none, 1 ACT, 2 PRE, 3 RD, 4 WR, 5 REF, as in sim/dram/dram_device.hpp.
// Read data returns on dram_rvalid/dram_rdata, in RD order, after the device's latency.
module systole_hbm_channel #(
    // DRAM geometry, set by systole_hbm_ctrl (the defaults fail the check below):
    parameter integer BG_BITS = 0,   // log2(bank groups), at least 1
    parameter integer BA_BITS = 0,   // log2(banks per group), at least 1
    parameter integer COL_BITS = 0,  // log2(32-byte words per row), at least 1
    parameter integer ROW_BITS = 0,  // log2(rows per bank), at least 1
    parameter integer ID_BITS = 5,
    parameter integer DEPTH = 16,    // request queue entries: the scheduler's window
    parameter integer INFLIGHT = 16  // column commands awaiting their response (power of two)
) (
    input  logic clk,
    input  logic rst,
    input  logic [15:0] t_burst, t_rcd, t_rp, t_ras, t_wl, t_wr, t_rtp, t_rrd_s, t_rrd_l,
    input  logic [15:0] t_faw, t_ccd_s, t_ccd_l, t_wtr, t_rtw, t_refi, t_rfc, starve_limit,
    // request channel
    input  logic                                  req_valid,
    output logic                                  req_ready,
    input  logic                                  req_write,
    input  logic [5+BG_BITS+COL_BITS+BA_BITS+ROW_BITS-1:0] req_addr,  // local byte address
    input  logic [255:0]                          req_wdata,
    input  logic [31:0]                           req_wstrb,
    input  logic [ID_BITS-1:0]                    req_id,
    // response channel (writes: an acknowledgement once the WR has issued)
    output logic                                  rsp_valid,
    input  logic                                  rsp_ready,
    output logic [ID_BITS-1:0]                    rsp_id,
    output logic [255:0]                          rsp_rdata,
    // DRAM command bus
    output logic [2:0]                            dram_cmd,
    output logic [BG_BITS-1:0]                    dram_bg,
    output logic [BA_BITS-1:0]                    dram_ba,
    output logic [ROW_BITS-1:0]                   dram_row,
    output logic [COL_BITS-1:0]                   dram_col,
    output logic [255:0]                          dram_wdata,
    output logic [31:0]                           dram_wstrb,
    input  logic                                  dram_rvalid,
    input  logic [255:0]                          dram_rdata
);
  localparam integer BK = BG_BITS + BA_BITS;
  localparam integer NB = 1 << BK;
  localparam integer QI = $clog2(DEPTH);
  localparam integer FW = $clog2(INFLIGHT);
  localparam logic [2:0] CmdNone = 3'd0, CmdAct = 3'd1, CmdPre = 3'd2, CmdRd = 3'd3,
                         CmdWr = 3'd4, CmdRef = 3'd5;

  if (BG_BITS < 1 || BA_BITS < 1 || COL_BITS < 1 || ROW_BITS < 1) begin : g_check_geometry
    systole_param_error_hbm_channel_needs_2_groups_2_banks_2_columns_2_rows u_error ();
  end
  if (DEPTH < 2 || (DEPTH & (DEPTH - 1)) != 0) begin : g_check_depth
    systole_param_error_hbm_channel_DEPTH_must_be_a_power_of_two u_error ();
  end

  // Request queue, oldest first; entries [0, count_q) are valid. The write data stays where it
  // arrived, in one of DEPTH slots; a queue entry carries its slot's number, so serving an
  // entry moves the younger entries' few address bits up, not their 36 bytes of data (a
  // smaller circuit, and a Verilated model no longer copies the whole queue's data each cycle).
  logic [QI:0]          count_q, count_d;
  logic                 write_q [DEPTH], write_d [DEPTH];
  logic [BK-1:0]        bank_q [DEPTH], bank_d [DEPTH];
  logic [ROW_BITS-1:0]  row_q [DEPTH], row_d [DEPTH];
  logic [COL_BITS-1:0]  col_q [DEPTH], col_d [DEPTH];
  logic [ID_BITS-1:0]   id_q [DEPTH], id_d [DEPTH];
  logic [QI-1:0]        slot_q [DEPTH], slot_d [DEPTH];
  // The data slots: which hold a queued request's data, and the data.
  logic [DEPTH-1:0]     used_q, used_d;
  logic [255:0]         wdata_mem [DEPTH];
  logic [31:0]          wstrb_mem [DEPTH];
  // Bank state.
  logic [NB-1:0]        open_q, open_d;
  logic [ROW_BITS-1:0]  open_row_q [NB], open_row_d [NB];
  logic [15:0]          starve_q, starve_d;

  logic [NB-1:0] act_ok, pre_ok, rd_ok, wr_ok;
  logic ref_ok, ref_due;
  logic [2:0] cmd;
  logic [BK-1:0] cmd_bank;
  systole_hbm_timing #(.BG_BITS(BG_BITS), .BA_BITS(BA_BITS)) u_timing (
      .clk, .rst, .cmd, .cmd_bank, .t_burst, .t_rcd, .t_rp, .t_ras, .t_wl, .t_wr, .t_rtp,
      .t_rrd_s, .t_rrd_l, .t_faw, .t_ccd_s, .t_ccd_l, .t_wtr, .t_rtw, .t_refi, .t_rfc,
      .act_ok, .pre_ok, .rd_ok, .wr_ok, .ref_ok, .ref_due);

  // In-flight column commands (ID, is-write) and the read data returned for them.
  logic [FW:0] inflight_count, rdata_count;
  logic [ID_BITS:0] inflight_head;
  logic issue_col, rsp_pop;
  systole_hbm_fifo #(.WIDTH(ID_BITS + 1), .DEPTH(INFLIGHT)) u_inflight (
      .clk, .rst, .push(issue_col), .push_data({cmd == CmdWr, id_q[pick]}), .pop(rsp_pop),
      .head(inflight_head), .count(inflight_count));
  systole_hbm_fifo #(.WIDTH(256), .DEPTH(INFLIGHT)) u_rdata (
      .clk, .rst, .push(dram_rvalid), .push_data(dram_rdata),
      .pop(rsp_pop && !inflight_head[ID_BITS]), .head(rsp_rdata), .count(rdata_count));
  assign rsp_valid = inflight_count != 0 && (inflight_head[ID_BITS] || rdata_count != 0);
  assign rsp_id = inflight_head[ID_BITS-1:0];
  assign rsp_pop = rsp_valid && rsp_ready;

  // Per-entry state of the scheduler.
  logic [DEPTH-1:0] valid, hit, closed, conflict, col_ready, row_ready;
  logic [NB-1:0] wanted;  // banks whose open row a queued request still needs
  wire starving = count_q != 0 && starve_q >= starve_limit;
  wire space = inflight_count != (FW + 1)'(INFLIGHT);
  always_comb begin
    wanted = '0;
    for (int i = 0; i < DEPTH; i++) begin
      valid[i] = (QI + 1)'(i) < count_q;
      hit[i] = valid[i] && open_q[bank_q[i]] && open_row_q[bank_q[i]] == row_q[i];
      closed[i] = valid[i] && !open_q[bank_q[i]];
      conflict[i] = valid[i] && open_q[bank_q[i]] && open_row_q[bank_q[i]] != row_q[i];
      if (hit[i]) wanted[bank_q[i]] = 1'b1;
    end
    for (int i = 0; i < DEPTH; i++) begin
      col_ready[i] = hit[i] && (write_q[i] ? wr_ok[bank_q[i]] : rd_ok[bank_q[i]]) && space;
      for (int j = 0; j < DEPTH; j++) begin
        if (j < i && valid[j] && bank_q[j] == bank_q[i] && row_q[j] == row_q[i] && col_q[j] == col_q[i])
          col_ready[i] = 1'b0;
      end
      row_ready[i] = (closed[i] && act_ok[bank_q[i]]) ||
                     (conflict[i] && pre_ok[bank_q[i]] && (starving || !wanted[bank_q[i]]));
      if (starving && i != 0) begin
        col_ready[i] = 1'b0;
        row_ready[i] = 1'b0;
      end
    end
  end

  // The command of this cycle, and the queue entry it serves.
  logic [QI-1:0] pick;
  always_comb begin
    cmd = CmdNone;
    cmd_bank = '0;
    pick = '0;
    if (ref_due) begin
      for (int b = NB - 1; b >= 0; b--) begin
        if (open_q[b] && pre_ok[b]) begin
          cmd = CmdPre;
          cmd_bank = BK'(b);
        end
      end
      if (open_q == '0 && ref_ok) cmd = CmdRef;
    end else if (col_ready != '0) begin
      for (int i = DEPTH - 1; i >= 0; i--) if (col_ready[i]) pick = QI'(i);
      cmd = write_q[pick] ? CmdWr : CmdRd;
      cmd_bank = bank_q[pick];
    end else if (row_ready != '0) begin
      for (int i = DEPTH - 1; i >= 0; i--) if (row_ready[i]) pick = QI'(i);
      cmd = closed[pick] ? CmdAct : CmdPre;
      cmd_bank = bank_q[pick];
    end
  end
  assign issue_col = cmd == CmdRd || cmd == CmdWr;
  assign dram_cmd = cmd;
  assign {dram_bg, dram_ba} = cmd_bank;
  assign dram_row = cmd == CmdPre ? open_row_q[cmd_bank] : row_q[pick];
  assign dram_col = col_q[pick];
  assign dram_wdata = wdata_mem[slot_q[pick]];
  assign dram_wstrb = wstrb_mem[slot_q[pick]];

  // Queue: remove the served entry (the younger ones move up), append the new request.
  assign req_ready = count_q != (QI + 1)'(DEPTH);
  wire [BG_BITS+COL_BITS+BA_BITS+ROW_BITS-1:0] word = req_addr[$bits(req_addr)-1:5];
  wire [QI:0] kept = count_q - (QI + 1)'(issue_col);
  wire accept = req_valid && req_ready;
  // A new request's data slot: the lowest free one. A request is accepted only while fewer than
  // DEPTH are queued, and each queued one holds one slot, so one is free.
  logic [QI-1:0] new_slot;
  always_comb begin
    new_slot = '0;
    for (int k = DEPTH - 1; k >= 0; k--) if (!used_q[k]) new_slot = QI'(k);
  end
  logic [QI-1:0] src [DEPTH];  // where entry i comes from
  always_comb begin
    for (int i = 0; i < DEPTH; i++) begin
      src[i] = (issue_col && QI'(i) >= pick && i != DEPTH - 1) ? QI'(i + 1) : QI'(i);
    end
  end
  always_comb begin
    for (int i = 0; i < DEPTH; i++) begin
      write_d[i] = write_q[src[i]];
      bank_d[i] = bank_q[src[i]];
      row_d[i] = row_q[src[i]];
      col_d[i] = col_q[src[i]];
      id_d[i] = id_q[src[i]];
      slot_d[i] = slot_q[src[i]];
    end
    count_d = kept;
    used_d = used_q;
    if (issue_col) used_d[slot_q[pick]] = 1'b0;
    if (accept) begin
      write_d[kept[QI-1:0]] = req_write;
      bank_d[kept[QI-1:0]] = {word[BG_BITS-1:0], word[BG_BITS+COL_BITS +: BA_BITS]};
      row_d[kept[QI-1:0]] = word[BG_BITS+COL_BITS+BA_BITS +: ROW_BITS];
      col_d[kept[QI-1:0]] = word[BG_BITS +: COL_BITS];
      id_d[kept[QI-1:0]] = req_id;
      slot_d[kept[QI-1:0]] = new_slot;
      used_d[new_slot] = 1'b1;
      count_d = kept + 1'b1;
    end
    open_d = open_q;
    for (int b = 0; b < NB; b++) open_row_d[b] = open_row_q[b];
    if (cmd == CmdAct) begin
      open_d[cmd_bank] = 1'b1;
      open_row_d[cmd_bank] = row_q[pick];
    end
    if (cmd == CmdPre) open_d[cmd_bank] = 1'b0;
    // The oldest request's wait: restarts whenever a new request becomes the oldest.
    if (count_q == 0 || (issue_col && pick == '0)) starve_d = '0;
    else if (starve_q != 16'hffff) starve_d = starve_q + 16'd1;
    else starve_d = starve_q;
  end

  always_ff @(posedge clk) begin
    for (int i = 0; i < DEPTH; i++) begin
      write_q[i] <= write_d[i];
      bank_q[i] <= bank_d[i];
      row_q[i] <= row_d[i];
      col_q[i] <= col_d[i];
      id_q[i] <= id_d[i];
      slot_q[i] <= slot_d[i];
    end
    for (int b = 0; b < NB; b++) open_row_q[b] <= open_row_d[b];
    if (accept) begin
      wdata_mem[new_slot] <= req_wdata;
      wstrb_mem[new_slot] <= req_wstrb;
    end
  end
  always_ff @(posedge clk) begin
    if (rst) begin
      count_q <= '0;
      used_q <= '0;
      open_q <= '0;
      starve_q <= '0;
    end else begin
      count_q <= count_d;
      used_q <= used_d;
      open_q <= open_d;
      starve_q <= starve_d;
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      assert (!(req_valid && req_addr[4:0] != 5'd0))
      else $error("systole_hbm_channel: request address 0x%0h is not a multiple of 32", req_addr);
      assert (!(dram_rvalid && rdata_count == inflight_count))
      else $error("systole_hbm_channel: read data with no read outstanding");
      assert ($countones(used_q) == 32'(count_q))
      else $error("systole_hbm_channel: %0d data slots held for %0d queued requests",
                  $countones(used_q), count_q);
    end
  end
`endif
endmodule
