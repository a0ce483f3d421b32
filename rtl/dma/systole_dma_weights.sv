// systole_dma_weights — the WEIGHT unit: one R×C weight tile from device memory into the
// MXU's weight FIFO per LOAD_WEIGHTS.
//
// `load_weights dram=A, stride=S, rows=k, cols=n` (docs/ISA.md) pushes ROWS rows: row t < k holds
// the n elements at A + t*S followed by zeros, rows t >= k are zero. The k memory rows stream
// through systole_row_reader; the zero rows need no memory traffic.
//
// Tiles overlap: the unit takes the next LOAD_WEIGHTS as soon as the current one has handed all
// its rows to the reader (one cycle later), so the next tile's requests go out while this tile's
// words are still coming back and a tile no longer pays the whole memory round trip. Each
// accepted instruction waits in a small in-order queue (QUEUE entries) until its ROWS rows are
// pushed; `done` pulses in acceptance order. How far ahead the unit runs is bounded by the queue,
// by the reader's CREDITS (words in flight or buffered) and, as before, by the weight FIFO's
// back-pressure (wrow_ready). The default CREDITS holds QUEUE tiles' words, so that the queue,
// not the credits, sets the overlap (rtl/README.md, "WEIGHT unit").
module systole_dma_weights #(
    parameter integer ROWS = 0,
    parameter integer COLS = 0,
    parameter integer BF16 = -1,
    localparam integer EW = BF16 != 0 ? 16 : 8,
    parameter integer QUEUE = 2,
    // QUEUE tiles of word-aligned rows, rounded up to a power of two; at least the reader's 16
    parameter integer CREDITS = QUEUE * (1 << $clog2(ROWS * ((COLS * EW / 8 + 31) / 32))) < 16
                                ? 16
                                : QUEUE * (1 << $clog2(ROWS * ((COLS * EW / 8 + 31) / 32)))
) (
    input  logic                 clk,
    input  logic                 rst,
    input  logic                 cmd_valid,
    output logic                 cmd_ready,
    /* verilator lint_off UNUSEDSIGNAL */  // the header's tokens are the sequencer's business
    input  logic [255:0]         cmd_insn,
    /* verilator lint_on UNUSEDSIGNAL */
    output logic                 done,
    // weight rows to the MXU's FIFO, row 0 first
    output logic                 wrow_valid,
    input  logic                 wrow_ready,
    output logic [COLS*EW-1:0]   wrow_data,
    // device memory
    output logic                 mem_req_valid,
    input  logic                 mem_req_ready,
    output logic [47:0]          mem_req_addr,
    input  logic                 mem_rsp_valid,
    input  logic [255:0]         mem_rsp_rdata,
    // performance events
    output logic [31:0]          bytes_weights,
    output logic                 stall_memory
);

  // ---- Parameters --------------------------------------------------------------------------
  // Configuration parameters come from the parent; the defaults fail these checks.
  if (ROWS < 1 || COLS < 1) begin : g_shape_check
    systole_param_error_dma_weights_ROWS_and_COLS_must_be_at_least_1 u_error ();
  end
  if (BF16 != 0 && BF16 != 1) begin : g_bf16_check
    systole_param_error_dma_weights_BF16_must_be_0_or_1 u_error ();
  end
  `include "systole_isa.svh"

  localparam integer E = EW / 8;
  localparam integer ROW_BYTES = COLS * E;
  localparam integer QW = $clog2(QUEUE);

  if (QUEUE < 2 || (QUEUE & (QUEUE - 1)) != 0) begin : g_check_queue
    systole_param_error_dma_weights_QUEUE_must_be_a_power_of_two_at_least_2 u_error ();
  end

  // k and n in the widths the sequencer's SHAPE check leaves them (k <= ROWS, n <= COLS;
  // asserted below): the command queue then holds only these bits (docs/FPGA.md, Tang Nano 20K).
  localparam integer KK = $clog2(ROWS + 1);
  localparam integer KN = $clog2(COLS + 1);

  // ---- Issue side: the newest instruction's rows go to the reader as jobs ----------------
  logic [47:0] next_addr_q, next_addr_d;
  logic [31:0] stride_q, stride_d;
  logic [KN-1:0] issue_cols_q, issue_cols_d;   // n of the instruction being issued
  logic [KK-1:0] jobs_left_q, jobs_left_d;     // its memory rows not yet handed to the reader

  // ---- Per-instruction queue: k and n of every accepted instruction not yet done ----------
  logic [KK-1:0] q_rows_q [QUEUE];   // storage: k, rows read from memory
  logic [KN-1:0] q_cols_q [QUEUE];   // storage: n
  logic [QW:0] q_head_q, q_head_d, q_tail_q, q_tail_d;  // extra bit tells full from empty
  wire         q_empty = q_head_q == q_tail_q;
  wire         q_full  = (q_tail_q - q_head_q) == (QW + 1)'(QUEUE);
  wire  [15:0] head_rows = 16'(q_rows_q[q_head_q[QW-1:0]]);
  wire  [15:0] head_cols = 16'(q_cols_q[q_head_q[QW-1:0]]);
  logic [15:0] pushed_q, pushed_d;  // rows of the oldest instruction pushed so far (0..ROWS)
  logic        done_q, done_d;
  assign done = done_q;

  // Not in the cycle the last job goes out: that would make cmd_ready depend on the memory
  // port's ready. One idle cycle per tile is small next to a tile's ROWS cycles of requests.
  assign cmd_ready = jobs_left_q == 0 && !q_full;
  wire take = cmd_valid && cmd_ready;

  logic                   row_valid, row_ready, job_ready, reader_idle;
  logic [ROW_BYTES*8-1:0] row_data;
  wire                    job_valid = jobs_left_q != 0;

  systole_row_reader #(.ROW_BYTES(ROW_BYTES), .CREDITS(CREDITS), .JOB_DEPTH(CREDITS)) u_reader (
      .clk, .rst,
      .job_valid, .job_ready,
      .job_addr(next_addr_q),
      .job_len(16'(32'(issue_cols_q) * E)),
      .job_dst(16'd0),
      .row_valid, .row_ready, .row_data,
      .mem_req_valid, .mem_req_ready, .mem_req_addr, .mem_rsp_valid, .mem_rsp_rdata,
      .stall_memory, .idle(reader_idle)
  );

  // Rows below the oldest instruction's k come from memory, the rest are zero. The reader's
  // rows arrive in job order, i.e. in instruction order, so the oldest's rows come first.
  wire from_memory = pushed_q < head_rows;
  assign wrow_valid = !q_empty && (from_memory ? row_valid : 1'b1);
  assign wrow_data  = from_memory ? row_data : '0;
  assign row_ready  = !q_empty && from_memory && wrow_ready;
  wire   push       = wrow_valid && wrow_ready;
  wire   last_push  = push && pushed_q + 16'd1 == 16'(ROWS);
  assign bytes_weights = push && from_memory ? 32'(head_cols) * E : 32'd0;

  always_comb begin
    next_addr_d = next_addr_q;
    stride_d = stride_q;
    issue_cols_d = issue_cols_q;
    jobs_left_d = jobs_left_q;
    q_head_d = q_head_q;
    q_tail_d = q_tail_q;
    pushed_d = pushed_q;
    done_d = 1'b0;
    if (take) begin
      next_addr_d  = cmd_insn[LOAD_WEIGHTS_DRAM_LSB +: LOAD_WEIGHTS_DRAM_WIDTH];
      stride_d     = cmd_insn[LOAD_WEIGHTS_STRIDE_LSB +: LOAD_WEIGHTS_STRIDE_WIDTH];
      issue_cols_d = cmd_insn[LOAD_WEIGHTS_COLS_LSB +: KN];
      jobs_left_d  = cmd_insn[LOAD_WEIGHTS_ROWS_LSB +: KK];
      q_tail_d     = q_tail_q + 1'b1;
    end else if (job_valid && job_ready) begin
      jobs_left_d = jobs_left_q - KK'(1);
      next_addr_d = next_addr_q + 48'(stride_q);
    end
    if (push) pushed_d = last_push ? 16'd0 : pushed_q + 16'd1;
    if (last_push) begin
      q_head_d = q_head_q + 1'b1;
      done_d = 1'b1;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      jobs_left_q <= '0;
      pushed_q <= '0;
      q_head_q <= '0;
      q_tail_q <= '0;
      done_q <= 1'b0;
    end else begin
      jobs_left_q <= jobs_left_d;
      pushed_q <= pushed_d;
      q_head_q <= q_head_d;
      q_tail_q <= q_tail_d;
      done_q <= done_d;
    end
  end

  // The instruction being issued: meaningful only while jobs are left, so not reset.
  always_ff @(posedge clk) begin
    if (!rst) begin
      next_addr_q <= next_addr_d;
      stride_q <= stride_d;
      issue_cols_q <= issue_cols_d;
    end
  end

  always_ff @(posedge clk) begin
    if (take) begin
      q_rows_q[q_tail_q[QW-1:0]] <= cmd_insn[LOAD_WEIGHTS_ROWS_LSB +: KK];
      q_cols_q[q_tail_q[QW-1:0]] <= cmd_insn[LOAD_WEIGHTS_COLS_LSB +: KN];
    end
  end

  // ---- Assertions --------------------------------------------------------------------------
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst && take) begin
      assert (cmd_insn[7:0] == OP_LOAD_WEIGHTS)
      else $error("systole_dma_weights: offered opcode 0x%02x", cmd_insn[7:0]);
      // The checks' guarantees the narrow fields rely on (above).
      assert (32'(cmd_insn[LOAD_WEIGHTS_ROWS_LSB +: LOAD_WEIGHTS_ROWS_WIDTH]) <= ROWS &&
              32'(cmd_insn[LOAD_WEIGHTS_COLS_LSB +: LOAD_WEIGHTS_COLS_WIDTH]) <= COLS)
      else $error("systole_dma_weights: k %0d or n %0d past the %0dx%0d array",
                  cmd_insn[LOAD_WEIGHTS_ROWS_LSB +: LOAD_WEIGHTS_ROWS_WIDTH],
                  cmd_insn[LOAD_WEIGHTS_COLS_LSB +: LOAD_WEIGHTS_COLS_WIDTH], ROWS, COLS);
    end
  end
`endif
  wire unused_ok = &{1'b0, reader_idle};
endmodule
