// systole_row_reader — gathers rows from device memory for LOAD and LOAD_WEIGHTS.
//
// A job is one row: `len` bytes starting at byte address `addr`, to be placed at byte `dst`
// of a ROW_BYTES-wide row. The reader requests the 32-byte words that cover the bytes (one per
// cycle while credits last), keeps the responses in order in a small FIFO, and assembles the
// row with a byte shifter; bytes outside [dst, dst+len) are zero. Jobs overlap: the requests of
// the next row go out while the words of this one come back, so a stream of rows runs at the
// memory's rate. Nothing waits a cycle between rows: the generator takes the next job in the
// cycle it issues the last word of the current one, and the assembler starts the next row in
// the cycle the finished one is taken — a stream of one-word rows moves one row per cycle.
//
//   jobs ──► request generator ──► mem_req            mem_rsp ──► response FIFO ──► assembler ──► rows
//     └──────────────────────────► job FIFO (for the assembler) ─────────────────────┘
//
// The memory port has no back-pressure on responses, so a request is issued only when the
// response FIFO has room for it (CREDITS words in flight or buffered). CREDITS must cover the
// memory's round trip (request to consumed response) to sustain one word per cycle: 16 covers
// the 8-cycle latency the simulations model with room for arbitration. Every row in flight
// holds a JOB_DEPTH entry until it is assembled, so JOB_DEPTH bounds the rows in flight: with
// one-word rows it must cover the round trip too (4 entries held LOAD to ~2.8 cycles per row).
module systole_row_reader #(
    parameter integer ROW_BYTES = 0,   // set by the unit (its row size); the default fails
    parameter integer CREDITS = 16,
    parameter integer JOB_DEPTH = 16
) (
    input  logic                   clk,
    input  logic                   rst,
    // jobs
    input  logic                   job_valid,
    output logic                   job_ready,
    input  logic [47:0]            job_addr,
    input  logic [15:0]            job_len,     // 1..ROW_BYTES
    input  logic [15:0]            job_dst,     // dst + len <= ROW_BYTES
    // assembled rows, in job order
    output logic                   row_valid,
    input  logic                   row_ready,
    output logic [ROW_BYTES*8-1:0] row_data,
    // device memory (read-only requester)
    output logic                   mem_req_valid,
    input  logic                   mem_req_ready,
    output logic [47:0]            mem_req_addr,
    input  logic                   mem_rsp_valid,
    input  logic [255:0]           mem_rsp_rdata,
    // a request was ready to go but memory refused it (PERF_STALL_MEMORY)
    output logic                   stall_memory,
    output logic                   idle
);
  localparam integer CW = $clog2(CREDITS + 1);
  localparam integer JW = $clog2(JOB_DEPTH);
  localparam integer RW = $clog2(CREDITS);

  if (ROW_BYTES < 1) begin : g_check_row
    systole_param_error_row_reader_ROW_BYTES_must_be_positive u_error ();
  end
  if (CREDITS < 2 || (CREDITS & (CREDITS - 1)) != 0) begin : g_check_credits
    systole_param_error_row_reader_CREDITS_must_be_a_power_of_two u_error ();
  end
  if (JOB_DEPTH < 2 || (JOB_DEPTH & (JOB_DEPTH - 1)) != 0) begin : g_check_jobs
    systole_param_error_row_reader_JOB_DEPTH_must_be_a_power_of_two u_error ();
  end

  // Word counts and byte positions are small: a job is at most ROW_BYTES bytes starting at any
  // byte of a word (the assertion below checks the contract), so it spans at most WMAX words,
  // and only the job's address within its first word, its length and its destination are needed
  // to place its bytes. Narrow fields keep the generator's and assembler's arithmetic short.
  localparam integer PB = (ROW_BYTES > 0) ? $clog2(ROW_BYTES + 1) : 1;  // 1 for the failing default
  localparam integer WMAX = (31 + ROW_BYTES - 1) / 32 + 1;    // words one job can span
  localparam integer LW = (WMAX > 1) ? $clog2(WMAX) : 1;      // a word index within a job
  localparam integer SW = $clog2(32 + ROW_BYTES) + 1;         // (addr mod 32) + len - 1

  // ---- Job FIFO: what the assembler needs to place each row's words ---------------------
  logic [4:0]    jq_off  [JOB_DEPTH];  // addr mod 32
  logic [PB-1:0] jq_len  [JOB_DEPTH];
  logic [PB-1:0] jq_dst  [JOB_DEPTH];
  logic [LW-1:0] jq_last [JOB_DEPTH];  // the job's last word index (words - 1)
  logic [4:0]    jq_rot  [JOB_DEPTH];  // (addr - dst) mod 32: its words' rotation (below)
  logic [JW:0] jq_head_q, jq_head_d, jq_tail_q, jq_tail_d;  // extra bit tells full from empty
  wire         jq_full  = (jq_tail_q - jq_head_q) == (JW + 1)'(JOB_DEPTH);
  wire         jq_empty = jq_tail_q == jq_head_q;

  // ---- Request generator -----------------------------------------------------------------
  // Works on one job at a time: words from the job's first word, gen_left more after it.
  logic        gen_active_q, gen_active_d;
  logic [42:0] gen_word_q, gen_word_d;      // current word address / 32
  logic [LW-1:0] gen_left_q, gen_left_d;    // words of the job after the current one
  logic [CW-1:0] credits_used_q, credits_used_d;  // words requested and not yet consumed by the assembler

  // The job's last word index: (addr mod 32 + len - 1) / 32, the same as the distance from
  // its first word address to the word address of its last byte.
  wire [SW-1:0] job_end_off = SW'(job_addr[4:0]) + SW'(job_len[PB-1:0]) - SW'(1);
  wire [LW-1:0] job_last = LW'(job_end_off >> 5);
  wire   gen_finishing;  // the current job's last word is requested this cycle
  assign job_ready = (!gen_active_q || gen_finishing) && !jq_full;
  wire job_take = job_valid && job_ready;

  assign mem_req_valid = gen_active_q && (credits_used_q != CW'(CREDITS));
  assign mem_req_addr  = {gen_word_q, 5'b0};
  wire   req_fire      = mem_req_valid && mem_req_ready;
  assign gen_finishing = req_fire && gen_left_q == '0;
  assign stall_memory  = mem_req_valid && !mem_req_ready;

  // ---- Response FIFO ---------------------------------------------------------------------
  // Byte p of a row comes from byte (p + addr - dst) mod 32 of each of its words (the
  // assembler's delta, below, modulo 32: the word index drops out), so a word is rotated by
  // its job's (addr - dst) mod 32 as it arrives, and only the QB bytes the assembler can place
  // are kept: the FIFO is QB bytes wide instead of 32 (in LUT RAM: 64 -> 8 RAM16SDP4 for the
  // 4-byte weight rows, 64 -> 32 for 16-byte rows). Responses come back in request order, so
  // the job a word belongs to is followed by a pointer (rsp_job) and a word count beside it.
  localparam integer QB = (ROW_BYTES < 32) ? ROW_BYTES : 32;
  logic [QB*8-1:0] rq_data [CREDITS];
  logic [RW:0]  rq_head_q, rq_head_d, rq_tail_q, rq_tail_d;
  wire          rq_empty = rq_head_q == rq_tail_q;
  logic [JW-1:0] rsp_job_q, rsp_job_d;    // the job of the next response
  logic [LW-1:0] rsp_word_q, rsp_word_d;  // ... and its word index there

  // ---- Assembler -------------------------------------------------------------------------
  logic [ROW_BYTES*8-1:0] row_buf_q;
  logic                   row_full_q, row_full_d;     // row_buf holds a finished row waiting for row_ready
  logic [LW-1:0]          asm_word_q, asm_word_d;     // index of the next word within the current job
  wire  [4:0]             a_off = jq_off[jq_head_q[JW-1:0]];
  wire  [PB-1:0]          a_len = jq_len[jq_head_q[JW-1:0]];
  wire  [PB-1:0]          a_dst = jq_dst[jq_head_q[JW-1:0]];
  wire                    a_last = asm_word_q == jq_last[jq_head_q[JW-1:0]];
  // A finished row leaves in the cycle row_ready takes it, so the next row's first word may be
  // placed in that same cycle (into an empty buffer).
  wire                    row_leaving = row_full_q && row_ready;
  wire                    consume = !rq_empty && !jq_empty && (!row_full_q || row_leaving);
  wire                    rsp_word_taken = consume;

  // Byte p of the row comes from byte b = p + delta of the current word, where
  // delta = (addr mod 32) - dst - 32*word: the word's first byte is data byte 32*w - (addr mod 32).
  // It is placed when dst <= p < dst + len and 0 <= b < 32, i.e. when lo <= p < hi with
  // lo = max(dst, -delta) and hi = min(dst + len, 32 - delta): two bounds computed once for the
  // word, clamped to 0..ROW_BYTES, then compared with each constant p. DW bits hold every
  // value signed without wrapping (|delta| < ROW_BYTES + 32 * WMAX). (Per byte, four 20- and
  // 32-bit comparisons cost 1 720 carry cells in the two readers on the GW2AR-18: docs/FPGA.md.)
  localparam integer DW = $clog2(ROW_BYTES + 32 * WMAX + 32) + 2;
  localparam logic [PB-1:0] ROW_BYTES_PB = ROW_BYTES[PB-1:0];
  logic signed [DW-1:0] delta, lo, hi, lo_dst, hi_dst;
  logic [PB-1:0]        lo_c, hi_c;
  always_comb begin
    delta = DW'(a_off) - DW'(a_dst) - DW'(32 * 32'(asm_word_q));
    lo_dst = DW'(a_dst);
    hi_dst = DW'(a_dst) + DW'(a_len);
    lo = (lo_dst > -delta) ? lo_dst : -delta;
    hi = (hi_dst < DW'(32) - delta) ? hi_dst : DW'(32) - delta;
    lo_c = (lo < 0) ? '0 : ((lo > DW'(ROW_BYTES)) ? ROW_BYTES_PB : lo[PB-1:0]);
    // No word is consumed: an empty interval. `placed` is only used when one is, so this
    // changes no result; it lets a simulator skip the byte selects below in the cycles that
    // place nothing (Verilator evaluates this block every cycle), for PB gates.
    hi_c = (!consume || hi < 0) ? '0 : ((hi > DW'(ROW_BYTES)) ? ROW_BYTES_PB : hi[PB-1:0]);
  end

  // A word rotated by r bytes (rot[p] = word[(p + r) mod 32]) in five shift stages, one per
  // bit of r, shared by all the kept bytes (a 32-to-1 byte mux per byte cost ~8 x 31
  // two-input muxes each); positions no later stage reads are dropped by synthesis.
  function automatic logic [255:0] rotate_word(logic [255:0] word, logic [4:0] by);
    logic [255:0] x, y;
    x = word;
    for (int k = 4; k >= 0; k--) begin
      for (int i = 0; i < 32; i++) begin
        y[i*8 +: 8] = by[k] ? x[((i + (1 << k)) % 32)*8 +: 8] : x[i*8 +: 8];
      end
      x = y;
    end
    rotate_word = x;
  endfunction
  // The FIFO keeps a word's first QB bytes, rotated as it is written (the storage block below):
  // evaluated only in the cycles a response arrives. As an always-evaluated signal of the
  // memory port's data, Verilator recomputed the rotation at every eval(), twice a cycle.
  function automatic logic [QB*8-1:0] rotate_kept(logic [255:0] word, logic [4:0] by);
    /* verilator lint_off UNUSEDSIGNAL */
    logic [255:0] r;
    /* verilator lint_on UNUSEDSIGNAL */
    r = rotate_word(word, by);
    rotate_kept = r[QB*8-1:0];
  endfunction
  wire  [QB*8-1:0] rot = rq_data[rq_head_q[RW-1:0]];

  // The row buffer with this word's bytes placed: computed only in the cycles that consume a
  // word (the storage block below), not copied through a next-state value every cycle.
  function automatic logic [ROW_BYTES*8-1:0] place_word(logic [ROW_BYTES*8-1:0] row,
                                                        logic [QB*8-1:0] word,
                                                        logic [PB-1:0] lo_p, logic [PB-1:0] hi_p);
    place_word = row;
    for (int p = 0; p < ROW_BYTES; p++) begin
      if (32'(p) >= 32'(lo_p) && 32'(p) < 32'(hi_p)) begin
        place_word[p*8 +: 8] = word[(p % QB)*8 +: 8];
      end
    end
  endfunction

  assign row_valid = row_full_q;
  assign row_data  = row_buf_q;
  assign idle = !gen_active_q && jq_empty && rq_empty && !row_full_q && credits_used_q == '0;

  always_comb begin
    gen_active_d = gen_active_q;
    gen_word_d = gen_word_q;
    gen_left_d = gen_left_q;
    credits_used_d = credits_used_q;
    jq_head_d = jq_head_q;
    jq_tail_d = jq_tail_q;
    rq_head_d = rq_head_q;
    rq_tail_d = rq_tail_q;
    row_full_d = row_full_q;
    asm_word_d = asm_word_q;
    if (job_take) begin
      gen_active_d = 1'b1;
      gen_word_d = job_addr[47:5];
      gen_left_d = job_last;
      jq_tail_d = jq_tail_q + 1'b1;
    end else if (req_fire) begin
      if (gen_left_q == '0) gen_active_d = 1'b0;
      gen_word_d = gen_word_q + 43'd1;
      gen_left_d = gen_left_q - 1'b1;
    end
    credits_used_d = credits_used_q + CW'(req_fire) - CW'(rsp_word_taken);
    rsp_job_d = rsp_job_q;
    rsp_word_d = rsp_word_q;
    if (mem_rsp_valid) begin
      rq_tail_d = rq_tail_q + 1'b1;
      if (rsp_word_q == jq_last[rsp_job_q]) begin
        rsp_job_d = rsp_job_q + 1'b1;
        rsp_word_d = '0;
      end else begin
        rsp_word_d = rsp_word_q + 1'b1;
      end
    end
    if (row_full_q && row_ready) begin
      row_full_d = 1'b0;
    end
    if (consume) begin
      rq_head_d = rq_head_q + 1'b1;
      if (a_last) begin
        row_full_d = 1'b1;
        asm_word_d = '0;
        jq_head_d = jq_head_q + 1'b1;
      end else begin
        asm_word_d = asm_word_q + 1'b1;
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      gen_active_q <= '0;
      gen_word_q <= '0;
      gen_left_q <= '0;
      credits_used_q <= '0;
      jq_head_q <= '0;
      jq_tail_q <= '0;
      rq_head_q <= '0;
      rq_tail_q <= '0;
      rsp_job_q <= '0;
      rsp_word_q <= '0;
      row_full_q <= '0;
      asm_word_q <= '0;
    end else begin
      gen_active_q <= gen_active_d;
      gen_word_q <= gen_word_d;
      gen_left_q <= gen_left_d;
      credits_used_q <= credits_used_d;
      jq_head_q <= jq_head_d;
      jq_tail_q <= jq_tail_d;
      rq_head_q <= rq_head_d;
      rq_tail_q <= rq_tail_d;
      rsp_job_q <= rsp_job_d;
      rsp_word_q <= rsp_word_d;
      row_full_q <= row_full_d;
      asm_word_q <= asm_word_d;
    end
  end

  // The row being assembled: a consumed word's bytes placed into it (into zeros when the
  // finished row leaves in the same cycle), cleared when a finished row leaves.
  always_ff @(posedge clk) begin
    if (rst) row_buf_q <= '0;
    else if (consume) row_buf_q <= place_word(row_full_q ? '0 : row_buf_q, rot, lo_c, hi_c);
    else if (row_leaving) row_buf_q <= '0;
  end

  // Storage: the job FIFO and the response FIFO (written, never reset).
  always_ff @(posedge clk) begin
    if (!rst && job_take) begin
      jq_off[jq_tail_q[JW-1:0]] <= job_addr[4:0];
      jq_len[jq_tail_q[JW-1:0]] <= job_len[PB-1:0];
      jq_dst[jq_tail_q[JW-1:0]] <= job_dst[PB-1:0];
      jq_last[jq_tail_q[JW-1:0]] <= job_last;
      jq_rot[jq_tail_q[JW-1:0]] <= job_addr[4:0] - job_dst[4:0];
    end
    if (!rst && mem_rsp_valid) begin
      rq_data[rq_tail_q[RW-1:0]] <= rotate_kept(mem_rsp_rdata, jq_rot[rsp_job_q]);
    end
  end

  // ---- Assertions --------------------------------------------------------------------------
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      assert (!(mem_rsp_valid && (rq_tail_q - rq_head_q) == (RW + 1)'(CREDITS)))
      else $error("systole_row_reader: response arrived with the response FIFO full");
      assert (!job_take || (job_len != 0 && 32'(job_dst) + 32'(job_len) <= ROW_BYTES))
      else $error("systole_row_reader: job of %0d bytes at row byte %0d does not fit %0d bytes",
                  job_len, job_dst, ROW_BYTES);
    end
  end
`endif
endmodule
