// systole_dma_load — the LOAD unit: device memory → unified-buffer or accumulator rows.
//
// `load mem=ub|acc, dram=A, stride=S, row=r, col=c, rows=n, elems=e` (docs/ISA.md): for each
// row i, the e elements at A + i*S land in elements c..c+e-1 of buffer row r+i; the rest of the
// row is untouched (a lane-masked write). With `widen` (mem=acc) the device elements are of the
// array's type and each is widened exactly into its accumulator: bf16 bits become the upper half
// of the fp32, an int8 is sign-extended. Rows stream through systole_row_reader, so row i+1's
// words are requested while row i's come back. The sequencer has checked every operand.
module systole_dma_load #(
    parameter integer ROWS = 0,
    parameter integer COLS = 0,
    parameter integer BF16 = -1,
    parameter integer UB_ROWS = 0,
    parameter integer ACC_ROWS = 0,
    parameter integer LOAD_CREDITS = 0,
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
    // unified-buffer write port (shared)
    output logic                 ub_wr_req,
    output logic [UB_AW-1:0]     ub_wr_addr,
    output logic [W-1:0]         ub_wr_lanes,
    output logic [W*EW-1:0]      ub_wr_data,
    input  logic                 ub_wr_gnt,
    // accumulator write port (shared; the MXU has priority)
    output logic                 acc_wr_req,
    output logic [ACC_AW-1:0]    acc_wr_addr,
    output logic [COLS-1:0]      acc_wr_lanes,
    output logic [COLS*32-1:0]   acc_wr_data,
    input  logic                 acc_wr_gnt,
    // device memory
    output logic                 mem_req_valid,
    input  logic                 mem_req_ready,
    output logic [47:0]          mem_req_addr,
    input  logic                 mem_rsp_valid,
    input  logic [255:0]         mem_rsp_rdata,
    // performance events
    output logic [31:0]          bytes_to_ub,
    output logic [31:0]          bytes_to_acc,
    output logic                 stall_memory
);

  // ---- Parameters --------------------------------------------------------------------------
  // Configuration parameters come from the parent; the defaults fail these checks.
  if (ROWS < 1 || COLS < 1) begin : g_shape_check
    systole_param_error_dma_load_ROWS_and_COLS_must_be_at_least_1 u_error ();
  end
  if (BF16 != 0 && BF16 != 1) begin : g_bf16_check
    systole_param_error_dma_load_BF16_must_be_0_or_1 u_error ();
  end
  if (UB_ROWS < 2 || ACC_ROWS < 2) begin : g_buffer_check
    systole_param_error_dma_load_UB_ROWS_and_ACC_ROWS_must_be_at_least_2 u_error ();
  end
  // The row reader checks that it is a power of two of at least 2.
  if (LOAD_CREDITS < 2 || LOAD_CREDITS > 128) begin : g_credits_check
    systole_param_error_dma_load_LOAD_CREDITS_must_be_2_to_128 u_error ();
  end
  `include "systole_isa.svh"

  localparam integer E = EW / 8;
  localparam integer UB_BYTES = W * E;
  localparam integer ACC_BYTES = COLS * 4;
  localparam integer ROW_BYTES = UB_BYTES > ACC_BYTES ? UB_BYTES : ACC_BYTES;

  // ---- The instruction being executed ---------------------------------------------------
  // The fields in the widths the sequencer's checks leave them (an instruction that passed
  // them: col + elems <= the row's elements <= W (SHAPE), row + rows <= the buffer's rows
  // (UB_RANGE, ACC_RANGE); asserted below): col and elems below 2^KL, rows below 2^KR. The
  // command queue then holds only these bits of each field (docs/FPGA.md, Tang Nano 20K).
  localparam integer KL = $clog2(W + 1);  // W >= COLS
  localparam integer KR = $clog2((UB_ROWS > ACC_ROWS ? UB_ROWS : ACC_ROWS) + 1);
  logic        active_q, active_d;
  logic        done_q, done_d;
  logic        to_acc_q, to_acc_d;
  logic        widen_q, widen_d;            // mem=acc with E-byte device elements
  logic [47:0] next_addr_q, next_addr_d;   // device address of the next row to request
  logic [31:0] stride_q, stride_d;
  logic [23:0] first_row_q, first_row_d;
  logic [KL-1:0] col_q, col_d;
  logic [KL-1:0] elems_q, elems_d;
  logic [KR-1:0] jobs_left_q, jobs_left_d;   // rows not yet handed to the reader
  logic [KR-1:0] rows_done_q, rows_done_d;   // rows written to the buffer
  logic [KR-1:0] total_rows_q, total_rows_d;
  // Short names for the instruction's fields while it executes.
  logic        active, to_acc;
  logic [15:0] col, elems, rows_done;
  assign active = active_q;
  assign to_acc = to_acc_q;
  assign col = 16'(col_q);
  assign elems = 16'(elems_q);
  assign rows_done = 16'(rows_done_q);
  assign done = done_q;

  wire [15:0] elem_bytes = to_acc && !widen_q ? 16'd4 : 16'(E);

  assign cmd_ready = !active;
  wire take = cmd_valid && cmd_ready;

  // ---- Row reader --------------------------------------------------------------------------
  logic                   row_valid, row_ready, job_ready, reader_idle;
  logic [ROW_BYTES*8-1:0] row_data;
  wire                    job_valid = active && jobs_left_q != 0;

  // One job per row: as many rows in flight as words (a stream of one-word rows keeps every
  // credit busy).
  systole_row_reader #(.ROW_BYTES(ROW_BYTES), .CREDITS(LOAD_CREDITS), .JOB_DEPTH(LOAD_CREDITS)) u_reader (
      .clk, .rst,
      .job_valid, .job_ready,
      .job_addr(next_addr_q),
      .job_len(16'(32'(elems) * 32'(elem_bytes))),
      .job_dst(16'(32'(col) * 32'(elem_bytes))),
      .row_valid, .row_ready, .row_data,
      .mem_req_valid, .mem_req_ready, .mem_req_addr, .mem_rsp_valid, .mem_rsp_rdata,
      .stall_memory, .idle(reader_idle)
  );

  // ---- Writes: one finished row at a time -------------------------------------------------
  logic [W-1:0]    ub_lanes;
  logic [COLS-1:0] acc_lanes;
  // Lane i is written when col <= i < col + elems, compared in KL + 1 bits (every lane index is
  // below 2^KL): a col of 2^KL or more is past every lane, an elems of 2^KL or more reaches
  // past every lane, and otherwise the narrow sum is exact.
  /* verilator lint_off UNUSEDSIGNAL */  // i's bits above KL: i < W
  function automatic logic lane_written(integer i, logic [15:0] c, logic [15:0] n);
    lane_written = (c >> KL) == '0 && KL'(c) <= KL'(i) &&
                   ((n >> KL) != '0 || (KL+1)'(c) + (KL+1)'(n) > (KL+1)'(i));
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */
  always_comb begin
    for (int i = 0; i < W; i++) ub_lanes[i] = lane_written(i, col, elems);
    for (int i = 0; i < COLS; i++) acc_lanes[i] = lane_written(i, col, elems);
  end

  assign ub_wr_req    = row_valid && !to_acc;
  assign ub_wr_addr   = UB_AW'(32'(first_row_q) + 32'(rows_done));
  assign ub_wr_lanes  = ub_lanes;
  assign ub_wr_data   = row_data[UB_BYTES*8-1:0];
  assign acc_wr_req   = row_valid && to_acc;
  assign acc_wr_addr  = ACC_AW'(32'(first_row_q) + 32'(rows_done));
  assign acc_wr_lanes = acc_lanes;
  logic [COLS*32-1:0] acc_widened;
  always_comb begin
    for (int i = 0; i < COLS; i++) begin
      if (BF16 != 0) acc_widened[i*32 +: 32] = {row_data[i*16 +: 16], 16'h0000};
      else acc_widened[i*32 +: 32] = {{24{row_data[i*8+7]}}, row_data[i*8 +: 8]};
    end
  end
  assign acc_wr_data  = widen_q ? acc_widened : row_data[ACC_BYTES*8-1:0];
  assign row_ready    = to_acc ? acc_wr_gnt : ub_wr_gnt;
  wire   row_written  = row_valid && row_ready;

  wire [31:0] row_bytes = 32'(elems) * 32'(elem_bytes);
  assign bytes_to_ub  = row_written && !to_acc ? row_bytes : 32'd0;
  assign bytes_to_acc = row_written && to_acc ? row_bytes : 32'd0;

  always_comb begin
    active_d = active_q;
    done_d = 1'b0;
    to_acc_d = to_acc_q;
    widen_d = widen_q;
    next_addr_d = next_addr_q;
    stride_d = stride_q;
    first_row_d = first_row_q;
    col_d = col_q;
    elems_d = elems_q;
    jobs_left_d = jobs_left_q;
    rows_done_d = rows_done_q;
    total_rows_d = total_rows_q;
    if (take) begin
      active_d     = 1'b1;
      to_acc_d     = cmd_insn[LOAD_MEM_LSB];
      widen_d      = cmd_insn[LOAD_MEM_LSB] && cmd_insn[LOAD_WIDEN_LSB];
      next_addr_d  = cmd_insn[LOAD_DRAM_LSB +: LOAD_DRAM_WIDTH];
      stride_d     = cmd_insn[LOAD_STRIDE_LSB +: LOAD_STRIDE_WIDTH];
      first_row_d  = cmd_insn[LOAD_ROW_LSB +: LOAD_ROW_WIDTH];
      col_d        = cmd_insn[LOAD_COL_LSB +: KL];
      elems_d      = cmd_insn[LOAD_ELEMS_LSB +: KL];
      jobs_left_d  = cmd_insn[LOAD_ROWS_LSB +: KR];
      total_rows_d = cmd_insn[LOAD_ROWS_LSB +: KR];
      rows_done_d  = '0;
    end else if (active_q) begin
      if (job_valid && job_ready) begin
        jobs_left_d = jobs_left_q - KR'(1);
        next_addr_d = next_addr_q + 48'(stride_q);
      end
      if (row_written) begin
        rows_done_d = rows_done_q + KR'(1);
        if (rows_done_q + KR'(1) == total_rows_q) begin
          active_d = 1'b0;
          done_d = 1'b1;
        end
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      active_q <= 1'b0;
      done_q <= 1'b0;
      jobs_left_q <= '0;
      rows_done_q <= '0;
    end else begin
      active_q <= active_d;
      done_q <= done_d;
      jobs_left_q <= jobs_left_d;
      rows_done_q <= rows_done_d;
    end
  end

  // The instruction's fields: loaded when it is taken, meaningful only while active.
  always_ff @(posedge clk) begin
    if (!rst) begin
      to_acc_q <= to_acc_d;
      widen_q <= widen_d;
      next_addr_q <= next_addr_d;
      stride_q <= stride_d;
      first_row_q <= first_row_d;
      col_q <= col_d;
      elems_q <= elems_d;
      total_rows_q <= total_rows_d;
    end
  end

  // ---- Assertions --------------------------------------------------------------------------
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst && take) begin
      assert (cmd_insn[7:0] == OP_LOAD)
      else $error("systole_dma_load: offered opcode 0x%02x", cmd_insn[7:0]);
      // The checks' guarantees the narrow fields rely on (above).
      assert (cmd_insn[LOAD_COL_LSB +: LOAD_COL_WIDTH] + cmd_insn[LOAD_ELEMS_LSB +: LOAD_ELEMS_WIDTH]
              <= 17'(W) && cmd_insn[LOAD_ROWS_LSB +: LOAD_ROWS_WIDTH] >> KR == '0)
      else $error("systole_dma_load: col %0d + elems %0d past %0d lanes, or rows %0d past the buffers",
                  cmd_insn[LOAD_COL_LSB +: LOAD_COL_WIDTH], cmd_insn[LOAD_ELEMS_LSB +: LOAD_ELEMS_WIDTH],
                  W, cmd_insn[LOAD_ROWS_LSB +: LOAD_ROWS_WIDTH]);
    end
  end
`endif
  // reader_idle is for assertions and debugging only.
  wire unused_ok = &{1'b0, reader_idle};
endmodule
