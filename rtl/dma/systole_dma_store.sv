// systole_dma_store — the STORE unit: unified-buffer or accumulator rows → device memory.
//
// `store mem=ub|acc, dram=A, stride=S, row=r, col=c, rows=n, elems=e` (docs/ISA.md): elements
// c..c+e-1 of buffer row r+i go to A + i*S. Each row is read once from the buffer, then written
// as the 32-byte words that cover its bytes, with byte strobes so the bytes around it in device
// memory are untouched. Reads run ahead of the writer into a two-row staging FIFO (a read is
// issued while fewer than two rows are staged or arriving, so no read is ever refused room),
// and the writer starts the next row — from the FIFO, or straight from the read port — in the
// cycle its current row's last word is accepted: a stream of rows costs one cycle per word,
// one-word rows included. The unit is done when every write is acknowledged.
module systole_dma_store #(
    parameter integer ROWS = 0,
    parameter integer COLS = 0,
    parameter integer BF16 = -1,
    parameter integer UB_ROWS = 0,
    parameter integer ACC_ROWS = 0,
    localparam integer EW = BF16 != 0 ? 16 : 8,
    localparam integer W = ROWS > COLS ? ROWS : COLS,
    localparam integer UB_AW = $clog2(UB_ROWS),
    localparam integer ACC_AW = $clog2(ACC_ROWS)
) (
    input  logic                 clk,
    input  logic                 rst,
    input  logic                 cmd_valid,
    output logic                 cmd_ready,
    input  logic [255:0]         cmd_insn,
    output logic                 done,
    // unified-buffer read port (shared)
    output logic                 ub_rd_req,
    output logic [UB_AW-1:0]     ub_rd_addr,
    input  logic                 ub_rd_gnt,
    input  logic [W*EW-1:0]      ub_rd_data,
    // accumulator read port (shared)
    output logic                 acc_rd_req,
    output logic [ACC_AW-1:0]    acc_rd_addr,
    input  logic                 acc_rd_gnt,
    input  logic [COLS*32-1:0]   acc_rd_data,
    // device memory (writes; every write is acknowledged)
    output logic                 mem_req_valid,
    input  logic                 mem_req_ready,
    output logic [47:0]          mem_req_addr,
    output logic [255:0]         mem_req_wdata,
    output logic [31:0]          mem_req_wstrb,
    input  logic                 mem_rsp_valid,
    // performance events
    output logic [31:0]          bytes_from_ub,
    output logic [31:0]          bytes_from_acc,
    output logic                 stall_memory
);

  // ---- Parameters --------------------------------------------------------------------------
  // Configuration parameters come from the parent; the defaults fail these checks.
  if (ROWS < 1 || COLS < 1) begin : g_shape_check
    systole_param_error_dma_store_ROWS_and_COLS_must_be_at_least_1 u_error ();
  end
  if (BF16 != 0 && BF16 != 1) begin : g_bf16_check
    systole_param_error_dma_store_BF16_must_be_0_or_1 u_error ();
  end
  if (UB_ROWS < 2 || ACC_ROWS < 2) begin : g_buffer_check
    systole_param_error_dma_store_UB_ROWS_and_ACC_ROWS_must_be_at_least_2 u_error ();
  end
  `include "systole_isa.svh"

  localparam integer E = EW / 8;
  localparam integer UB_BYTES = W * E;
  localparam integer ACC_BYTES = COLS * 4;
  localparam integer ROW_BYTES = UB_BYTES > ACC_BYTES ? UB_BYTES : ACC_BYTES;

  // ---- The instruction ---------------------------------------------------------------------
  // The fields in the widths the sequencer's checks leave them (an instruction that passed
  // them: col + elems <= the row's elements <= W (SHAPE), row + rows <= the buffer's rows
  // (UB_RANGE, ACC_RANGE); asserted below): col and elems below 2^KL, rows below 2^KR. The
  // command queue then holds only these bits of each field (docs/FPGA.md, Tang Nano 20K).
  localparam integer KL = $clog2(W + 1);  // W >= COLS
  localparam integer KR = $clog2((UB_ROWS > ACC_ROWS ? UB_ROWS : ACC_ROWS) + 1);
  logic        active_q, active_d;
  logic        done_q, done_d;
  logic        from_acc_q, from_acc_d;
  logic [31:0] stride_q, stride_d;
  logic [23:0] first_row_q, first_row_d;
  logic [KL-1:0] col_q, col_d;
  logic [KL-1:0] elems_q, elems_d;
  logic [KR-1:0] rows_q, rows_d;
  wire  [15:0] elem_bytes = from_acc_q ? 16'd4 : 16'(E);
  wire  [31:0] row_len = 32'(elems_q) * 32'(elem_bytes);   // bytes per row
  wire  [19:0] row_dst = 20'(32'(col_q) * 32'(elem_bytes));  // first byte within the buffer row

  assign cmd_ready = !active_q;
  assign done = done_q;
  wire take = cmd_valid && cmd_ready;

  // ---- Read side: rows into the staging FIFO (q0 is its head) -------------------------------
  logic [KR-1:0] rd_index_q, rd_index_d;        // next row to read
  logic        rd_pending_q, rd_pending_d;        // read granted last cycle: its data is on the port now
  logic [1:0]  q_count_q, q_count_d;           // rows in the FIFO
  logic [ROW_BYTES*8-1:0] q0_q, q1_q;
  // Only registered state decides a read, so the buffer request never waits on memory.
  wire  rd_want = active_q && rd_index_q != rows_q && 32'(q_count_q) + 32'(rd_pending_q) < 2;
  assign ub_rd_req   = rd_want && !from_acc_q;
  assign acc_rd_req  = rd_want && from_acc_q;
  assign ub_rd_addr  = UB_AW'(32'(first_row_q) + 32'(rd_index_q));
  assign acc_rd_addr = ACC_AW'(32'(first_row_q) + 32'(rd_index_q));
  wire  rd_fire = from_acc_q ? (acc_rd_req && acc_rd_gnt) : (ub_rd_req && ub_rd_gnt);
  wire [ROW_BYTES*8-1:0] rd_data = from_acc_q ? (ROW_BYTES*8)'(acc_rd_data)
                                            : (ROW_BYTES*8)'(ub_rd_data);

  // ---- Write side: the words of the current row ----------------------------------------------
  logic                   writing_q, writing_d;     // `cur` holds the row being written
  logic [ROW_BYTES*8-1:0] cur_q;
  logic [47:0]            row_addr_q, row_addr_d;    // device address of the current row's first byte
  logic [47:0]            next_addr_q, next_addr_d;   // device address of the next row to start
  // A row is at most ROW_BYTES bytes (the sequencer's SHAPE check: col + elems <= the row's
  // elements; asserted below), so it spans at most WMAX words and its byte counts fit PB bits:
  // the word arithmetic below is that narrow.
  localparam integer PB = $clog2(ROW_BYTES + 1);
  localparam integer WMAX = (31 + ROW_BYTES - 1) / 32 + 1;
  localparam integer LW = (WMAX > 1) ? $clog2(WMAX) : 1;
  localparam integer SW = $clog2(32 + ROW_BYTES) + 1;
  logic [LW-1:0]          wr_word_q, wr_word_d;     // word index within the row
  logic [KR-1:0]          wr_index_q, wr_index_d;    // rows fully issued
  logic [31:0]            acks_owed_q, acks_owed_d;   // writes issued and not yet acknowledged

  // The row's last word, counted from its first: (row_addr mod 32 + row_len - 1) / 32. Equal to
  // "this word address == the word address of the row's last byte", without a 48-bit sum and
  // a 43-bit comparison.
  wire [42:0]   first_word = row_addr_q[47:5];
  wire [SW-1:0] end_off    = SW'(row_addr_q[4:0]) + SW'(row_len[PB-1:0]) - SW'(1);
  wire [42:0]   this_word  = first_word + 43'(wr_word_q);
  wire          last_of_row = wr_word_q == LW'(end_off >> 5);

  // Byte b of this word is data byte k = b + e of the row, e = 32*wr_word - (row_addr mod 32),
  // which is byte p = row_dst + k of the buffer row. It is written when 0 <= k < row_len and
  // p < ROW_BYTES, i.e. when lo <= b < hi with lo = -e and hi = min(row_len, ROW_BYTES -
  // row_dst) - e: two bounds computed once for the word (DW bits signed: every value fits
  // without wrapping), clamped to 0..32, then compared with each constant b. (Per byte, the
  // three 20-bit comparisons cost 2 470 carry cells on the GW2AR-18: docs/FPGA.md.)
  localparam integer PW = (ROW_BYTES > 0) ? $clog2(ROW_BYTES + 1) : 1;  // 1 for the failing default
  // The rotation below: RL shift stages over RN bytes.
  localparam bit     RB_POW2 = ROW_BYTES > 0 && (ROW_BYTES & (ROW_BYTES - 1)) == 0;
  localparam integer RL = RB_POW2 ? $clog2(ROW_BYTES) : PW;  // shift stages
  localparam integer RN = 1 << RL;
  localparam integer DW = $clog2(ROW_BYTES + 32 * WMAX + 32) + 2;
  logic signed [DW-1:0] e_word, lo, hi, room;
  logic [5:0]         lo_c, hi_c;
  logic [RL-1:0]      delta;  // p - b, modulo RN: where byte b's data sits in the (rotated) row
  always_comb begin
    e_word = DW'(32 * 32'(wr_word_q)) - DW'(row_addr_q[4:0]);
    room = DW'(ROW_BYTES) - DW'(row_dst[PB-1:0]);
    lo = -e_word;
    hi = (($signed(DW'(row_len[PB-1:0])) < room) ? DW'(row_len[PB-1:0]) : room) - e_word;
    lo_c = (lo < 0) ? 6'd0 : 6'(lo);  // lo <= 31: e >= -31
    // No word is being written: an empty interval. The memory takes the data and strobes only
    // with mem_req_valid (= writing_q), so this changes no result; it lets a simulator skip
    // the byte selects below in the cycles that write nothing (Verilator evaluates this block
    // every cycle), for six gates.
    hi_c = (!writing_q || hi < 0) ? 6'd0 : ((hi > DW'(32)) ? 6'd32 : 6'(hi));
    delta = RL'(row_dst) + RL'(e_word);
  end

  // Byte b takes buffer byte p = (b + delta) mod 2^PW, and only when p < ROW_BYTES (the
  // bounds above). So the row is rotated once by delta (rot[j] = row[(j + delta) mod RN], in
  // log2(RN) shift stages shared by all 32 bytes, where a byte mux per word byte cost ~8 x 15
  // two-input muxes each) and byte b takes rot[b mod RN]. RN = 2^PW, the row zero-extended;
  // or, when ROW_BYTES is a power of two, RN = ROW_BYTES: a byte that is written has
  // p = (b + delta) mod 2^PW < ROW_BYTES, which is then (b + delta) mod ROW_BYTES, so one
  // stage fewer gives the same bytes.
  function automatic logic [RN*8-1:0] rotate_row(logic [RN*8-1:0] row, logic [RL-1:0] by);
    logic [RN*8-1:0] x, y;
    x = row;
    for (int k = RL - 1; k >= 0; k--) begin
      for (int j = 0; j < RN; j++) begin
        y[j*8 +: 8] = by[k] ? x[((j + (1 << k)) % RN)*8 +: 8] : x[j*8 +: 8];
      end
      x = y;
    end
    rotate_row = x;
  endfunction
  // The word's data and strobes: byte b of the rotated row where lo <= b < hi. Computed only
  // while a word is written (Verilator evaluates an always-evaluated rotation every cycle, and
  // its three or four 64-byte stages were the store's largest cost, rtl/README.md); otherwise
  // no byte is in [lo, hi) and both are zero, as they were.
  function automatic logic [32*8+32-1:0] place_word(logic [RN*8-1:0] row, logic [RL-1:0] by,
                                                      logic [5:0] lo_b, logic [5:0] hi_b);
    logic [RN*8-1:0] rot;
    logic [255:0] data;
    logic [31:0] strb;
    rot = rotate_row(row, by);
    data = '0;
    strb = '0;
    for (int b = 0; b < 32; b++) begin
      if (6'(b) >= lo_b && 6'(b) < hi_b) begin
        data[b*8 +: 8] = rot[(b % RN)*8 +: 8];
        strb[b] = 1'b1;
      end
    end
    place_word = {data, strb};
  endfunction
  always_comb begin
    if (writing_q) {mem_req_wdata, mem_req_wstrb} = place_word((RN*8)'(cur_q), delta, lo_c, hi_c);
    else {mem_req_wdata, mem_req_wstrb} = '0;
  end
  assign mem_req_valid = writing_q;
  assign mem_req_addr  = {this_word, 5'b0};
  assign stall_memory  = mem_req_valid && !mem_req_ready;
  wire   wr_fire       = mem_req_valid && mem_req_ready;
  wire   row_issued    = wr_fire && last_of_row;

  // The writer takes the next row when it is free or finishing: the FIFO head, or else the
  // row arriving on the read port (which then bypasses the FIFO).
  wire   start    = active_q && (!writing_q || row_issued) && (q_count_q != 0 || rd_pending_q);
  wire   pop      = start && q_count_q != 0;
  wire   push     = rd_pending_q && !(start && q_count_q == 0);

  assign bytes_from_ub  = row_issued && !from_acc_q ? row_len : 32'd0;
  assign bytes_from_acc = row_issued && from_acc_q ? row_len : 32'd0;

  always_comb begin
    active_d = active_q;
    rd_pending_d = rd_pending_q;
    q_count_d = q_count_q;
    writing_d = writing_q;
    acks_owed_d = acks_owed_q;
    from_acc_d = from_acc_q;
    next_addr_d = next_addr_q;
    stride_d = stride_q;
    first_row_d = first_row_q;
    col_d = col_q;
    elems_d = elems_q;
    rows_d = rows_q;
    rd_index_d = rd_index_q;
    wr_index_d = wr_index_q;
    wr_word_d = wr_word_q;
    row_addr_d = row_addr_q;
    done_d = 1'b0;
    acks_owed_d = acks_owed_q + 32'(wr_fire) - 32'(mem_rsp_valid);
    if (take) begin
      active_d    = 1'b1;
      from_acc_d  = cmd_insn[STORE_MEM_LSB];
      next_addr_d = cmd_insn[STORE_DRAM_LSB +: STORE_DRAM_WIDTH];
      stride_d    = cmd_insn[STORE_STRIDE_LSB +: STORE_STRIDE_WIDTH];
      first_row_d = cmd_insn[STORE_ROW_LSB +: STORE_ROW_WIDTH];
      col_d       = cmd_insn[STORE_COL_LSB +: KL];
      elems_d     = cmd_insn[STORE_ELEMS_LSB +: KL];
      rows_d      = cmd_insn[STORE_ROWS_LSB +: KR];
      rd_index_d  = '0;
      wr_index_d  = '0;
    end else if (active_q) begin
      // Read: the data of a granted read is on the port one cycle later.
      rd_pending_d = rd_fire;
      if (rd_fire) rd_index_d = rd_index_q + KR'(1);
      // Staging FIFO: at most two rows (the rows themselves move in the block below).
      if (pop && !push) q_count_d = q_count_q - 2'd1;
      else if (push && !pop) q_count_d = q_count_q + 2'd1;
      // Write.
      if (row_issued) wr_index_d = wr_index_q + KR'(1);
      if (start) begin
        writing_d   = 1'b1;
        wr_word_d   = '0;
        row_addr_d  = next_addr_q;
        next_addr_d = next_addr_q + 48'(stride_q);
      end else if (row_issued) begin
        writing_d = 1'b0;
      end else if (wr_fire) begin
        wr_word_d = wr_word_q + 1'b1;
      end
      // Done when every row is issued and every write acknowledged.
      if (!writing_q && q_count_q == 0 && !rd_pending_q && wr_index_q == rows_q &&
          rd_index_q == rows_q && acks_owed_q == 32'(mem_rsp_valid)) begin
        active_d = 1'b0;
        done_d = 1'b1;
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      active_q <= '0;
      rd_pending_q <= '0;
      q_count_q <= '0;
      writing_q <= '0;
      acks_owed_q <= '0;
      done_q <= '0;
    end else begin
      active_q <= active_d;
      rd_pending_q <= rd_pending_d;
      q_count_q <= q_count_d;
      writing_q <= writing_d;
      acks_owed_q <= acks_owed_d;
      done_q <= done_d;
    end
  end

  // The instruction's fields, the read index, the staging FIFO and the row being written:
  // meaningful only while active, so not reset (held during reset, as before).
  always_ff @(posedge clk) begin
    if (!rst) begin
      from_acc_q <= from_acc_d;
      next_addr_q <= next_addr_d;
      stride_q <= stride_d;
      first_row_q <= first_row_d;
      col_q <= col_d;
      elems_q <= elems_d;
      rows_q <= rows_d;
      rd_index_q <= rd_index_d;
      wr_index_q <= wr_index_d;
      wr_word_q <= wr_word_d;
      row_addr_q <= row_addr_d;
    end
  end

  // The staging FIFO's rows and the row being written, loaded only when they change: rows are
  // 64 bytes, and copying each through a next-state value every cycle cost the simulation more
  // than the logic that moves them. (`take` needs !active_q, so active_q covers "not taking".)
  always_ff @(posedge clk) begin
    if (!rst && active_q) begin
      if (pop && push) begin
        q0_q <= q_count_q == 2'd2 ? q1_q : rd_data;
        if (q_count_q == 2'd2) q1_q <= rd_data;
      end else if (pop) begin
        q0_q <= q1_q;
      end else if (push) begin
        if (q_count_q == 2'd0) q0_q <= rd_data;
        else q1_q <= rd_data;
      end
      if (start) cur_q <= q_count_q != 0 ? q0_q : rd_data;
    end
  end

  // ---- Assertions --------------------------------------------------------------------------
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst && take) begin
      assert (cmd_insn[7:0] == OP_STORE)
      else $error("systole_dma_store: offered opcode 0x%02x", cmd_insn[7:0]);
      // The checks' guarantees the narrow fields rely on (above).
      assert (cmd_insn[STORE_COL_LSB +: STORE_COL_WIDTH] + cmd_insn[STORE_ELEMS_LSB +: STORE_ELEMS_WIDTH]
              <= 17'(W) && cmd_insn[STORE_ROWS_LSB +: STORE_ROWS_WIDTH] >> KR == '0)
      else $error("systole_dma_store: col %0d + elems %0d past %0d lanes, or rows %0d past the buffers",
                  cmd_insn[STORE_COL_LSB +: STORE_COL_WIDTH], cmd_insn[STORE_ELEMS_LSB +: STORE_ELEMS_WIDTH],
                  W, cmd_insn[STORE_ROWS_LSB +: STORE_ROWS_WIDTH]);
    end
    if (!rst && active_q && start) begin
      assert (32'(row_dst) + row_len <= ROW_BYTES)
      else $error("systole_dma_store: a row of %0d bytes at byte %0d does not fit %0d bytes",
                  row_len, row_dst, ROW_BYTES);
    end
    if (!rst) begin
      assert (!(mem_rsp_valid && acks_owed_q == 0))
      else $error("systole_dma_store: acknowledgement with no write outstanding");
    end
  end
`endif
endmodule
