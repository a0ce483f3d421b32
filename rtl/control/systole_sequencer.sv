// systole_sequencer — fetch, decode, check, dispatch, dependency tokens and precise faults.
//
// One launch at a time (from systole_regs): instructions are fetched from device memory through
// the requester port (one 32-byte word per instruction, up to FETCH_DEPTH requests or buffered
// words ahead), then each one goes through
//
//   S_NEXT   the program-counter checks, in the golden model's order: CMD_PC not a multiple of
//            32 (MISALIGNED, at launch), index == CMD_COUNT (PROGRAM_OVERRUN), the fetch
//            outside device memory (DRAM_RANGE); then the fetched word is taken
//   S_CHECK  decoding (ILLEGAL_OPCODE, RESERVED_BITS, ILLEGAL_FIELD incl. token masks) and the
//            products the operand checks need
//   S_CHECK2 the operand checks against the configuration, in docs/ISA.md order per opcode
//   S_ISSUE  the weight-FIFO checks (WFIFO_UNDERFLOW, NO_WEIGHTS, WFIFO_OVERFLOW) and the
//            program-order token checks (TOKEN_UNDERFLOW, then TOKEN_OVERFLOW), against
//            counters that hold "earlier pushes minus earlier pops" and "earlier signals minus
//            earlier waits" exactly as sim/model/sequencer.cpp does; then the dispatch
//
// Unit instructions (LOAD, WEIGHT, MXU, VECTOR, STORE) are pushed into a per-unit queue of
// UNIT_QDEPTH entries (a full queue stalls dispatch: perf STALL_DISPATCH). A queue head first
// takes its wait tokens from the runtime token counters (one per ordered unit pair; waiting:
// perf STALL_TOKEN), then is offered to the unit (cmd_valid/cmd_insn, accepted with cmd_ready,
// rtl/README.md "Unit command interface"). When the unit pulses `done`, the instruction's
// signal tokens are sent; a signal whose counter is at TOKEN_CAP waits (the signals of one
// instruction are sent together, and a unit's signals in its program order). The unit may run
// ahead meanwhile: up to UNIT_INFLIGHT accepted instructions whose signals are not sent yet.
// SYNC waits until every unit queue is empty and every accepted instruction has sent its
// signals; INTERRUPT pulses irq_user with its code at dispatch and continues; HALT waits like
// SYNC and ends the launch with error 0.
//
// A fault stops dispatch; the faulting instruction and everything after it do nothing. When
// every dispatched instruction has completed, launch_end pulses with the error code and the
// faulting instruction's address. `launch_abort` (CTRL.ABORT) stops dispatch the same way and ends the
// launch with ABORTED at the address of the first undispatched instruction; it is ignored when
// idle or when the launch already stops (fault or HALT reached).
//
// Launch interface (systole_regs drives it):
//   launch_valid/launch_ready/launch_pc/launch_count  a launch handshake; launch_ready is high
//                        only when idle (and no fetch response of an earlier launch is due)
//   launch_abort         one-cycle pulse, CTRL.ABORT
//   soft_reset           one-cycle pulse, CTRL.SOFT_RESET: everything returns to reset except
//                        the count of fetch responses still due, which are then dropped
//   busy                 a launch is executing (from handshake until launch_end)
//   launch_end           one-cycle pulse after the launch ended (busy already low), with
//                        end_error (0 = HALT) and end_fault_pc
//   irq_user, irq_code   one-cycle pulse per INTERRUPT, at its dispatch
//   launch_start         one-cycle pulse to the units after the handshake, before the first
//                        instruction is offered
//
// Performance events (registered, one cycle late): perf_cycles (1 while busy), perf_insns
// (instructions retired this cycle: a unit instruction when its signals are sent, SYNC,
// INTERRUPT and HALT when they execute), perf_macs (rows*k*COLS of a MATMUL at dispatch),
// perf_stall_token (queue heads waiting for a token), perf_stall_dispatch (dispatch waiting for
// a full unit queue).
//
// Programs that overwrite their own instructions ahead of the dispatch point are undefined
// (the fetch runs ahead and no STORE is ordered before a fetch).
module systole_sequencer #(
    parameter integer ROWS = 4,
    parameter integer COLS = 4,
    parameter integer BF16 = 0,
    parameter integer UB_ROWS = 1024,
    parameter integer ACC_ROWS = 64,
    parameter integer WFIFO_TILES = 2,
    parameter integer TOKEN_CAP = 255,
    parameter integer MEM_BYTES_LO = 1048576,
    parameter integer MEM_BYTES_HI = 0,
    parameter integer UNIT_QDEPTH = 4,
    parameter integer UNIT_INFLIGHT = 4,
    parameter integer FETCH_DEPTH = 4
) (
    input  logic              clk,
    input  logic              rst,
    input  logic              soft_reset,
    // Launches (systole_regs)
    input  logic              launch_valid,
    output logic              launch_ready,
    input  logic [63:0]       launch_pc,
    input  logic [31:0]       launch_count,
    input  logic              launch_abort,
    output logic              busy,
    output logic              launch_end,
    output logic [7:0]        end_error,
    output logic [63:0]       end_fault_pc,
    output logic              irq_user,
    output logic [15:0]       irq_code,
    // Instruction fetch: device-memory requester port (reads only)
    output logic              mem_req_valid,
    input  logic              mem_req_ready,
    output logic              mem_req_write,
    output logic [47:0]       mem_req_addr,
    output logic [255:0]      mem_req_wdata,
    output logic [31:0]       mem_req_wstrb,
    input  logic              mem_rsp_valid,
    input  logic [255:0]      mem_rsp_rdata,
    // Units, index = unit number (0 LOAD, 1 WEIGHT, 2 MXU, 3 VECTOR, 4 STORE)
    output logic              launch_start,
    output logic [4:0]        cmd_valid,
    input  logic [4:0]        cmd_ready,
    output logic [5*256-1:0]  cmd_insn,
    input  logic [4:0]        done,
    // Performance events
    output logic              perf_cycles,
    output logic [2:0]        perf_insns,
    output logic [31:0]       perf_macs,
    output logic [2:0]        perf_stall_token,
    output logic              perf_stall_dispatch
);
  `include "systole_isa.svh"
  `include "systole_regs.svh"

  // ---- Parameters ------------------------------------------------------------------------
  if (ROWS < 1 || ROWS > 65535) begin : g_rows_check
    systole_param_error_ROWS_must_be_1_to_65535 u_error ();
  end
  if (COLS < 1 || COLS > 65535) begin : g_cols_check
    systole_param_error_COLS_must_be_1_to_65535 u_error ();
  end
  if (ROWS * COLS > 65536) begin : g_macs_check
    systole_param_error_ROWS_times_COLS_must_be_at_most_65536 u_error ();
  end
  if (TOKEN_CAP < 1 || TOKEN_CAP > 255) begin : g_cap_check
    systole_param_error_TOKEN_CAP_must_be_1_to_255 u_error ();
  end
  if (WFIFO_TILES < 1 || WFIFO_TILES > 255) begin : g_wfifo_check
    systole_param_error_WFIFO_TILES_must_be_1_to_255 u_error ();
  end
  if (UB_ROWS < 1 || ACC_ROWS < 1) begin : g_buf_check
    systole_param_error_UB_ROWS_and_ACC_ROWS_must_be_at_least_1 u_error ();
  end
  if (UNIT_QDEPTH < 2 || UNIT_INFLIGHT < 1 || FETCH_DEPTH < 1) begin : g_depth_check
    systole_param_error_UNIT_QDEPTH_2_UNIT_INFLIGHT_1_FETCH_DEPTH_1_at_least u_error ();
  end

  localparam integer NU = 5;                       // units
  localparam integer W = (ROWS > COLS) ? ROWS : COLS;
  localparam logic [31:0] MEM_LO32 = MEM_BYTES_LO;
  localparam logic [31:0] MEM_HI32 = MEM_BYTES_HI;
  localparam logic [63:0] MEM_BYTES = (64'(MEM_HI32) << 32) | 64'(MEM_LO32);
  localparam logic [63:0] MEM_LAST_PC = MEM_BYTES - 64'd32;  // last pc a fetch may read
  localparam logic [63:0] UB_ROWS64 = 64'(UB_ROWS);
  localparam logic [63:0] ACC_ROWS64 = 64'(ACC_ROWS);
  localparam logic [63:0] ROWS64 = 64'(ROWS);
  localparam logic [63:0] COLS64 = 64'(COLS);
  localparam logic [63:0] W64 = 64'(W);
  localparam logic [7:0] CAP8 = 8'(TOKEN_CAP);
  localparam logic [7:0] WFIFO8 = 8'(WFIFO_TILES);
  localparam integer QAW = $clog2(UNIT_QDEPTH);
  localparam integer QCW = $clog2(UNIT_QDEPTH + 1);
  localparam integer IAW = (UNIT_INFLIGHT > 1) ? $clog2(UNIT_INFLIGHT) : 1;
  localparam integer ICW = $clog2(UNIT_INFLIGHT + 1);
  localparam integer FAW = (FETCH_DEPTH > 1) ? $clog2(FETCH_DEPTH) : 1;
  localparam integer FCW = $clog2(FETCH_DEPTH + 1);

  // Bits of an opcode's fields (the header, bits 17:0, is always used).
  function automatic logic [255:0] fm(input integer lsb, input integer width);
    fm = '0;
    for (int i = 0; i < 256; i++) begin
      if (i >= lsb && i < lsb + width) fm[i] = 1'b1;
    end
  endfunction
  localparam logic [255:0] USED_HDR = fm(0, 18);
  localparam logic [255:0] USED_DMA = USED_HDR | fm(LOAD_MEM_LSB, LOAD_MEM_WIDTH) |
      fm(LOAD_DRAM_LSB, LOAD_DRAM_WIDTH) | fm(LOAD_STRIDE_LSB, LOAD_STRIDE_WIDTH) |
      fm(LOAD_ROW_LSB, LOAD_ROW_WIDTH) | fm(LOAD_COL_LSB, LOAD_COL_WIDTH) |
      fm(LOAD_ROWS_LSB, LOAD_ROWS_WIDTH) | fm(LOAD_ELEMS_LSB, LOAD_ELEMS_WIDTH);
  localparam logic [255:0] USED_LW = USED_HDR | fm(LOAD_WEIGHTS_DRAM_LSB, LOAD_WEIGHTS_DRAM_WIDTH) |
      fm(LOAD_WEIGHTS_STRIDE_LSB, LOAD_WEIGHTS_STRIDE_WIDTH) |
      fm(LOAD_WEIGHTS_ROWS_LSB, LOAD_WEIGHTS_ROWS_WIDTH) |
      fm(LOAD_WEIGHTS_COLS_LSB, LOAD_WEIGHTS_COLS_WIDTH);
  localparam logic [255:0] USED_MM = USED_HDR | fm(MATMUL_POP_LSB, MATMUL_POP_WIDTH) |
      fm(MATMUL_ACCUMULATE_LSB, MATMUL_ACCUMULATE_WIDTH) | fm(MATMUL_UB_LSB, MATMUL_UB_WIDTH) |
      fm(MATMUL_ACC_LSB, MATMUL_ACC_WIDTH) | fm(MATMUL_ROWS_LSB, MATMUL_ROWS_WIDTH) |
      fm(MATMUL_K_LSB, MATMUL_K_WIDTH);
  localparam logic [255:0] USED_ACT = USED_HDR | fm(ACTIVATE_BIAS_LSB, ACTIVATE_BIAS_WIDTH) |
      fm(ACTIVATE_FUNC_LSB, ACTIVATE_FUNC_WIDTH) | fm(ACTIVATE_ACC_LSB, ACTIVATE_ACC_WIDTH) |
      fm(ACTIVATE_UB_LSB, ACTIVATE_UB_WIDTH) | fm(ACTIVATE_ROWS_LSB, ACTIVATE_ROWS_WIDTH) |
      fm(ACTIVATE_BIAS_ROW_LSB, ACTIVATE_BIAS_ROW_WIDTH) |
      fm(ACTIVATE_SCALE_LSB, ACTIVATE_SCALE_WIDTH) | fm(ACTIVATE_SHIFT_LSB, ACTIVATE_SHIFT_WIDTH) |
      fm(ACTIVATE_ZP_LSB, ACTIVATE_ZP_WIDTH) | fm(ACTIVATE_LO_LSB, ACTIVATE_LO_WIDTH) |
      fm(ACTIVATE_HI_LSB, ACTIVATE_HI_WIDTH);
  localparam logic [255:0] USED_VEC = USED_HDR | fm(VECTOR_OP_LSB, VECTOR_OP_WIDTH) |
      fm(VECTOR_FUNC_LSB, VECTOR_FUNC_WIDTH) | fm(VECTOR_BCAST_LSB, VECTOR_BCAST_WIDTH) |
      fm(VECTOR_A_LSB, VECTOR_A_WIDTH) | fm(VECTOR_B_LSB, VECTOR_B_WIDTH) |
      fm(VECTOR_DST_LSB, VECTOR_DST_WIDTH) | fm(VECTOR_ROWS_LSB, VECTOR_ROWS_WIDTH) |
      fm(VECTOR_SHIFT_LSB, VECTOR_SHIFT_WIDTH) | fm(VECTOR_LO_LSB, VECTOR_LO_WIDTH) |
      fm(VECTOR_HI_LSB, VECTOR_HI_WIDTH);
  localparam logic [255:0] USED_POOL = USED_HDR | fm(POOL_OP_LSB, POOL_OP_WIDTH) |
      fm(POOL_SRC_LSB, POOL_SRC_WIDTH) | fm(POOL_DST_LSB, POOL_DST_WIDTH) |
      fm(POOL_IN_W_LSB, POOL_IN_W_WIDTH) | fm(POOL_OUT_H_LSB, POOL_OUT_H_WIDTH) |
      fm(POOL_OUT_W_LSB, POOL_OUT_W_WIDTH) | fm(POOL_WIN_H_LSB, POOL_WIN_H_WIDTH) |
      fm(POOL_WIN_W_LSB, POOL_WIN_W_WIDTH) | fm(POOL_STRIDE_H_LSB, POOL_STRIDE_H_WIDTH) |
      fm(POOL_STRIDE_W_LSB, POOL_STRIDE_W_WIDTH) | fm(POOL_SCALE_LSB, POOL_SCALE_WIDTH) |
      fm(POOL_SHIFT_LSB, POOL_SHIFT_WIDTH);
  localparam logic [255:0] USED_INT = USED_HDR | fm(INTERRUPT_CODE_LSB, INTERRUPT_CODE_WIDTH);

  // ---- State -------------------------------------------------------------------------------
  localparam logic [2:0] S_IDLE = 3'd0, S_NEXT = 3'd1, S_CHECK = 3'd2, S_CHECK2 = 3'd3,
                         S_ISSUE = 3'd4, S_DRAIN = 3'd5;
  logic [2:0]   state;
  logic         srst;
  assign srst = rst | soft_reset;

  logic [63:0]  cur_pc;        // address of the next instruction to dispatch
  logic [31:0]  cur_idx;       // its index in the launch
  logic [31:0]  count_r;       // CMD_COUNT of the launch
  logic [255:0] ci;            // the instruction being checked
  logic         abort_req;
  logic [7:0]   stop_error;    // S_DRAIN: how the launch ends
  logic [63:0]  stop_pc;

  // Program-order state for the checks.
  logic [7:0]   po_tok [NU*NU];  // [p*NU + c]: earlier signals minus earlier waits, p -> c
  logic [7:0]   wf_cnt;          // earlier LOAD_WEIGHTS minus earlier pops
  logic         stationary;      // an earlier MATMUL popped a tile in this launch

  // Runtime token counters.
  logic [7:0]   rt_tok [NU*NU];

  // ---- Fetch -------------------------------------------------------------------------------
  logic         fetch_on;
  logic [63:0]  fetch_addr;
  logic [31:0]  fetch_left;          // instructions of the launch not yet requested
  logic [FCW-1:0] f_inflight;        // requests without response (dropped when !fetch_on)
  logic [FCW-1:0] f_level;           // words waiting in the buffer
  logic [255:0] f_buf [FETCH_DEPTH];
  logic [FAW-1:0] f_wr, f_rd;
  logic         f_issue, f_pop, f_push;

  assign mem_req_valid = fetch_on && fetch_left != 0 && fetch_addr <= MEM_LAST_PC &&
                         ({1'b0, f_inflight} + {1'b0, f_level} < (FCW + 1)'(FETCH_DEPTH));
  assign mem_req_write = 1'b0;
  assign mem_req_addr = fetch_addr[47:0];
  assign mem_req_wdata = '0;
  assign mem_req_wstrb = '0;
  assign f_issue = mem_req_valid && mem_req_ready;
  assign f_push = mem_rsp_valid && fetch_on;

  always_ff @(posedge clk) begin
    if (rst) begin
      f_inflight <= '0;
    end else begin
      f_inflight <= f_inflight + FCW'(f_issue) - FCW'(mem_rsp_valid);
    end
  end

  always_ff @(posedge clk) begin
    if (f_push) f_buf[f_wr] <= mem_rsp_rdata;
  end

  // ---- Unit queues -------------------------------------------------------------------------
  logic [QCW-1:0] q_cnt [NU];
  logic [NU-1:0]  q_push;           // from dispatch
  logic [NU-1:0]  q_full;
  logic [NU-1:0]  q_taken;          // the head's wait tokens are taken
  logic [NU-1:0]  q_take;           // take them this cycle
  logic [NU-1:0]  q_stall;          // head waits for a token
  logic [NU-1:0]  q_accept;
  logic [NU-1:0]  sig_send;         // a unit sends its oldest done instruction's signals
  logic [4:0]     sig_mask [NU];    // ... which are these
  logic [4:0]     head_wait [NU];
  logic [NU-1:0]  unit_idle;
  logic           units_idle;

  for (genvar u = 0; u < NU; u++) begin : g_unit
    logic [255:0]   q_mem [UNIT_QDEPTH];
    logic [QAW-1:0] q_wr, q_rd;
    logic [255:0]   head;
    logic [NU-1:0]  avail;
    logic [4:0]     if_mem [UNIT_INFLIGHT];
    logic [IAW-1:0] if_wr, if_rd;
    logic [ICW-1:0] if_cnt;         // accepted, signals not sent
    logic [ICW-1:0] done_cnt;       // of these, done
    logic [4:0]     if_head;
    logic           sig_ok;

    assign head = q_mem[q_rd];
    assign head_wait[u] = head[ISA_WAIT_LSB +: 5];
    assign q_full[u] = q_cnt[u] == QCW'(UNIT_QDEPTH);
    for (genvar p = 0; p < NU; p++) begin : g_avail
      assign avail[p] = rt_tok[p * NU + u] != 8'd0;
    end
    assign q_stall[u] = q_cnt[u] != '0 && !q_taken[u] && head_wait[u] != 5'd0 &&
                        (head_wait[u] & ~avail) != 5'd0;
    assign q_take[u] = q_cnt[u] != '0 && !q_taken[u] && head_wait[u] != 5'd0 &&
                       (head_wait[u] & ~avail) == 5'd0;
    assign cmd_valid[u] = q_cnt[u] != '0 && (q_taken[u] || head_wait[u] == 5'd0) &&
                          if_cnt != ICW'(UNIT_INFLIGHT);
    assign cmd_insn[u * 256 +: 256] = head;
    assign q_accept[u] = cmd_valid[u] && cmd_ready[u];

    always_ff @(posedge clk) begin
      if (q_push[u]) q_mem[q_wr] <= ci;
    end

    always_ff @(posedge clk) begin
      if (srst) begin
        q_wr <= '0;
        q_rd <= '0;
        q_cnt[u] <= '0;
        q_taken[u] <= 1'b0;
      end else begin
        if (q_push[u]) q_wr <= (q_wr == QAW'(UNIT_QDEPTH - 1)) ? '0 : q_wr + 1'b1;
        if (q_accept[u]) q_rd <= (q_rd == QAW'(UNIT_QDEPTH - 1)) ? '0 : q_rd + 1'b1;
        q_cnt[u] <= q_cnt[u] + QCW'(q_push[u]) - QCW'(q_accept[u]);
        if (q_accept[u]) q_taken[u] <= 1'b0;
        else if (q_take[u]) q_taken[u] <= 1'b1;
      end
    end

    // Accepted instructions wait here for `done`, then send their signals.
    assign if_head = if_mem[if_rd];
    always_comb begin
      sig_ok = 1'b1;
      for (int c = 0; c < NU; c++) begin
        if (if_head[c] && rt_tok[u * NU + c] >= CAP8) sig_ok = 1'b0;
      end
    end
    assign sig_send[u] = done_cnt != '0 && sig_ok;
    assign sig_mask[u] = if_head;
    assign unit_idle[u] = q_cnt[u] == '0 && if_cnt == '0;

    always_ff @(posedge clk) begin
      if (q_accept[u]) if_mem[if_wr] <= head[ISA_SIGNAL_LSB +: 5];
    end

    always_ff @(posedge clk) begin
      if (srst) begin
        if_wr <= '0;
        if_rd <= '0;
        if_cnt <= '0;
        done_cnt <= '0;
      end else begin
        if (q_accept[u]) if_wr <= (if_wr == IAW'(UNIT_INFLIGHT - 1)) ? '0 : if_wr + 1'b1;
        if (sig_send[u]) if_rd <= (if_rd == IAW'(UNIT_INFLIGHT - 1)) ? '0 : if_rd + 1'b1;
        if_cnt <= if_cnt + ICW'(q_accept[u]) - ICW'(sig_send[u]);
        done_cnt <= done_cnt + ICW'(done[u]) - ICW'(sig_send[u]);
      end
    end

`ifndef SYNTHESIS
    always_ff @(posedge clk) begin
      if (!srst) begin
        assert (!(done[u] && done_cnt == if_cnt))
          else $error("sequencer: unit %0d pulsed done with no accepted instruction pending", u);
        assert (!(q_push[u] && q_full[u]))
          else $error("sequencer: push into the full queue of unit %0d", u);
      end
    end
`endif
  end
  assign units_idle = &unit_idle;

  // Runtime token counters: p -> c rises when p sends a signal to c, falls when c's queue head
  // takes it; zero at the start of every launch (a launch may end with tokens nobody took).
  logic launch_go;
  assign launch_go = state == S_IDLE && launch_valid && launch_ready;
  for (genvar p = 0; p < NU; p++) begin : g_tok_p
    for (genvar c = 0; c < NU; c++) begin : g_tok_c
      if (p == c) begin : g_diag
        always_ff @(posedge clk) rt_tok[p * NU + c] <= 8'd0;
      end else begin : g_pair
        logic inc, dec;
        assign inc = sig_send[p] && sig_mask[p][c];
        assign dec = q_take[c] && head_wait[c][p];
        always_ff @(posedge clk) begin
          if (srst || launch_go) rt_tok[p * NU + c] <= 8'd0;
          else rt_tok[p * NU + c] <= rt_tok[p * NU + c] + 8'(inc) - 8'(dec);
        end
`ifndef SYNTHESIS
        always_ff @(posedge clk) begin
          if (!srst) begin
            assert (!(inc && !dec && rt_tok[p * NU + c] >= CAP8))
              else $error("sequencer: token counter %0d->%0d overflows", p, c);
          end
        end
`endif
      end
    end
  end

  // ---- Decode of the instruction being checked ----------------------------------------------
  logic [7:0] op;
  logic [4:0] ci_wait, ci_sig;
  logic       op_unit;          // runs in a unit (not SYNC/INTERRUPT/HALT)
  logic [2:0] self;             // its unit
  assign op = ci[7:0];
  assign ci_wait = ci[ISA_WAIT_LSB +: 5];
  assign ci_sig = ci[ISA_SIGNAL_LSB +: 5];
  always_comb begin
    op_unit = 1'b1;
    self = 3'd0;
    case (op)
      OP_LOAD: self = 3'(UNIT_LOAD);
      OP_STORE: self = 3'(UNIT_STORE);
      OP_LOAD_WEIGHTS: self = 3'(UNIT_WEIGHT);
      OP_MATMUL: self = 3'(UNIT_MXU);
      OP_ACTIVATE, OP_VECTOR, OP_POOL: self = 3'(UNIT_VECTOR);
      default: op_unit = 1'b0;
    endcase
  end

  // Fields (zero-extended to 64 bits where they enter arithmetic).
  logic        dma_acc;
  logic [63:0] dma_dram, dma_stride, dma_row, dma_col, dma_rows, dma_elems;
  logic [63:0] lw_dram, lw_rows, lw_cols;
  logic        mm_pop;
  logic [63:0] mm_ub, mm_acc, mm_rows, mm_k;
  logic        act_bias;
  logic [63:0] act_acc, act_ub, act_rows, act_bias_row;
  logic        vec_bcast;
  logic [63:0] vec_a, vec_b, vec_dst, vec_rows;
  logic [63:0] pool_src, pool_dst;
  assign dma_acc = ci[LOAD_MEM_LSB];
  assign dma_dram = 64'(ci[LOAD_DRAM_LSB +: LOAD_DRAM_WIDTH]);
  assign dma_stride = 64'(ci[LOAD_STRIDE_LSB +: LOAD_STRIDE_WIDTH]);
  assign dma_row = 64'(ci[LOAD_ROW_LSB +: LOAD_ROW_WIDTH]);
  assign dma_col = 64'(ci[LOAD_COL_LSB +: LOAD_COL_WIDTH]);
  assign dma_rows = 64'(ci[LOAD_ROWS_LSB +: LOAD_ROWS_WIDTH]);
  assign dma_elems = 64'(ci[LOAD_ELEMS_LSB +: LOAD_ELEMS_WIDTH]);
  assign lw_dram = 64'(ci[LOAD_WEIGHTS_DRAM_LSB +: LOAD_WEIGHTS_DRAM_WIDTH]);
  assign lw_rows = 64'(ci[LOAD_WEIGHTS_ROWS_LSB +: LOAD_WEIGHTS_ROWS_WIDTH]);
  assign lw_cols = 64'(ci[LOAD_WEIGHTS_COLS_LSB +: LOAD_WEIGHTS_COLS_WIDTH]);
  assign mm_pop = ci[MATMUL_POP_LSB];
  assign mm_ub = 64'(ci[MATMUL_UB_LSB +: MATMUL_UB_WIDTH]);
  assign mm_acc = 64'(ci[MATMUL_ACC_LSB +: MATMUL_ACC_WIDTH]);
  assign mm_rows = 64'(ci[MATMUL_ROWS_LSB +: MATMUL_ROWS_WIDTH]);
  assign mm_k = 64'(ci[MATMUL_K_LSB +: MATMUL_K_WIDTH]);
  assign act_bias = ci[ACTIVATE_BIAS_LSB];
  assign act_acc = 64'(ci[ACTIVATE_ACC_LSB +: ACTIVATE_ACC_WIDTH]);
  assign act_ub = 64'(ci[ACTIVATE_UB_LSB +: ACTIVATE_UB_WIDTH]);
  assign act_rows = 64'(ci[ACTIVATE_ROWS_LSB +: ACTIVATE_ROWS_WIDTH]);
  assign act_bias_row = 64'(ci[ACTIVATE_BIAS_ROW_LSB +: ACTIVATE_BIAS_ROW_WIDTH]);
  assign vec_bcast = ci[VECTOR_BCAST_LSB];
  assign vec_a = 64'(ci[VECTOR_A_LSB +: VECTOR_A_WIDTH]);
  assign vec_b = 64'(ci[VECTOR_B_LSB +: VECTOR_B_WIDTH]);
  assign vec_dst = 64'(ci[VECTOR_DST_LSB +: VECTOR_DST_WIDTH]);
  assign vec_rows = 64'(ci[VECTOR_ROWS_LSB +: VECTOR_ROWS_WIDTH]);
  assign pool_src = 64'(ci[POOL_SRC_LSB +: POOL_SRC_WIDTH]);
  assign pool_dst = 64'(ci[POOL_DST_LSB +: POOL_DST_WIDTH]);

  // S_CHECK: decoding, and the products of the operand checks.
  logic [7:0]  dec_err;
  logic [49:0] span_c;          // LOAD/STORE/LOAD_WEIGHTS: bytes from the first to past the last
  logic [24:0] pool_y_c, pool_x_c;
  logic [31:0] pool_n_c, mk_c;
  always_comb begin
    logic [255:0] used;
    logic         field_err;
    logic         mask_err;
    used = USED_HDR;
    field_err = 1'b0;
    case (op)
      OP_LOAD, OP_STORE: begin
        used = USED_DMA;
        field_err = ci[LOAD_ROWS_LSB +: LOAD_ROWS_WIDTH] == '0 ||
                    ci[LOAD_ELEMS_LSB +: LOAD_ELEMS_WIDTH] == '0;
      end
      OP_LOAD_WEIGHTS: begin
        used = USED_LW;
        field_err = ci[LOAD_WEIGHTS_ROWS_LSB +: LOAD_WEIGHTS_ROWS_WIDTH] == '0 ||
                    ci[LOAD_WEIGHTS_COLS_LSB +: LOAD_WEIGHTS_COLS_WIDTH] == '0;
      end
      OP_MATMUL: begin
        used = USED_MM;
        field_err = ci[MATMUL_ROWS_LSB +: MATMUL_ROWS_WIDTH] == '0 ||
                    ci[MATMUL_K_LSB +: MATMUL_K_WIDTH] == '0;
      end
      OP_ACTIVATE: begin
        used = USED_ACT;
        field_err = ci[ACTIVATE_FUNC_LSB +: ACTIVATE_FUNC_WIDTH] > 3'(ACTIVATE_FUNC_CLAMP) ||
                    ci[ACTIVATE_ROWS_LSB +: ACTIVATE_ROWS_WIDTH] == '0 ||
                    ci[ACTIVATE_SHIFT_LSB +: ACTIVATE_SHIFT_WIDTH] > 8'd62;
      end
      OP_VECTOR: begin
        used = USED_VEC;
        field_err = ci[VECTOR_OP_LSB +: VECTOR_OP_WIDTH] > 4'(VECTOR_OP_MIN) ||
                    ci[VECTOR_FUNC_LSB +: VECTOR_FUNC_WIDTH] > 3'(VECTOR_FUNC_CLAMP) ||
                    ci[VECTOR_ROWS_LSB +: VECTOR_ROWS_WIDTH] == '0 ||
                    ci[VECTOR_SHIFT_LSB +: VECTOR_SHIFT_WIDTH] > 8'd62;
      end
      OP_POOL: begin
        used = USED_POOL;
        field_err = ci[POOL_IN_W_LSB +: POOL_IN_W_WIDTH] == '0 ||
                    ci[POOL_OUT_H_LSB +: POOL_OUT_H_WIDTH] == '0 ||
                    ci[POOL_OUT_W_LSB +: POOL_OUT_W_WIDTH] == '0 ||
                    ci[POOL_WIN_H_LSB +: POOL_WIN_H_WIDTH] == '0 ||
                    ci[POOL_WIN_W_LSB +: POOL_WIN_W_WIDTH] == '0 ||
                    ci[POOL_STRIDE_H_LSB +: POOL_STRIDE_H_WIDTH] == '0 ||
                    ci[POOL_STRIDE_W_LSB +: POOL_STRIDE_W_WIDTH] == '0 ||
                    ci[POOL_SHIFT_LSB +: POOL_SHIFT_WIDTH] > 8'd62;
      end
      OP_INTERRUPT: used = USED_INT;
      default: used = USED_HDR;
    endcase
    // Token masks: sequencer instructions take none; no unit names itself.
    mask_err = op_unit ? (ci_wait[self] || ci_sig[self]) : (ci_wait != 5'd0 || ci_sig != 5'd0);
    if (op < OP_LOAD || op > OP_HALT) dec_err = ERR_ILLEGAL_OPCODE;
    else if ((ci & ~used) != '0) dec_err = ERR_RESERVED_BITS;
    else if (mask_err || field_err) dec_err = ERR_ILLEGAL_FIELD;
    else dec_err = ERR_NONE;
  end

  always_comb begin
    // (n - 1) * stride + elems * element bytes; n >= 1 once decoding passed.
    if (op == OP_LOAD_WEIGHTS) begin
      span_c = (50'(ci[LOAD_WEIGHTS_ROWS_LSB +: LOAD_WEIGHTS_ROWS_WIDTH]) - 50'd1) *
               50'(ci[LOAD_WEIGHTS_STRIDE_LSB +: LOAD_WEIGHTS_STRIDE_WIDTH]) +
               (50'(ci[LOAD_WEIGHTS_COLS_LSB +: LOAD_WEIGHTS_COLS_WIDTH]) << (BF16 != 0 ? 1 : 0));
    end else begin
      span_c = (50'(ci[LOAD_ROWS_LSB +: LOAD_ROWS_WIDTH]) - 50'd1) *
               50'(ci[LOAD_STRIDE_LSB +: LOAD_STRIDE_WIDTH]) +
               (50'(ci[LOAD_ELEMS_LSB +: LOAD_ELEMS_WIDTH]) << (dma_acc ? 2 : (BF16 != 0 ? 1 : 0)));
    end
    // Highest window row and column of the last output pixel.
    pool_y_c = (25'(ci[POOL_OUT_H_LSB +: POOL_OUT_H_WIDTH]) - 25'd1) *
               25'(ci[POOL_STRIDE_H_LSB +: POOL_STRIDE_H_WIDTH]) +
               25'(ci[POOL_WIN_H_LSB +: POOL_WIN_H_WIDTH]) - 25'd1;
    pool_x_c = (25'(ci[POOL_OUT_W_LSB +: POOL_OUT_W_WIDTH]) - 25'd1) *
               25'(ci[POOL_STRIDE_W_LSB +: POOL_STRIDE_W_WIDTH]) +
               25'(ci[POOL_WIN_W_LSB +: POOL_WIN_W_WIDTH]) - 25'd1;
    pool_n_c = 32'(ci[POOL_OUT_H_LSB +: POOL_OUT_H_WIDTH]) *
               32'(ci[POOL_OUT_W_LSB +: POOL_OUT_W_WIDTH]);
    mk_c = 32'(ci[MATMUL_ROWS_LSB +: MATMUL_ROWS_WIDTH]) * 32'(ci[MATMUL_K_LSB +: MATMUL_K_WIDTH]);
  end

  logic [7:0]  dec_err_r;
  logic [49:0] span_r;
  logic [24:0] pool_y_r, pool_x_r;
  logic [31:0] pool_n_r, mk_r;
  logic [7:0]  chk_err_r;       // decoding or operands (S_ISSUE)
  logic [40:0] pool_yw;         // highest source row minus src, minus the column part
  assign pool_yw = 41'(pool_y_r) * 41'(ci[POOL_IN_W_LSB +: POOL_IN_W_WIDTH]);

  // S_CHECK2: operand checks, in docs/ISA.md order.
  logic [7:0] opd_err;
  always_comb begin
    logic [63:0] width, buf_rows, elem;
    opd_err = ERR_NONE;
    width = dma_acc ? COLS64 : W64;
    buf_rows = dma_acc ? ACC_ROWS64 : UB_ROWS64;
    elem = dma_acc ? 64'd4 : (BF16 != 0 ? 64'd2 : 64'd1);
    case (op)
      OP_LOAD, OP_STORE: begin
        if ((dma_dram & (elem - 64'd1)) != '0 || (dma_stride & (elem - 64'd1)) != '0)
          opd_err = ERR_MISALIGNED;
        else if (dma_col + dma_elems > width) opd_err = ERR_SHAPE;
        else if (dma_row + dma_rows > buf_rows) opd_err = dma_acc ? ERR_ACC_RANGE : ERR_UB_RANGE;
        else if (dma_dram + 64'(span_r) > MEM_BYTES) opd_err = ERR_DRAM_RANGE;
      end
      OP_LOAD_WEIGHTS: begin
        if (BF16 != 0 && (lw_dram[0] || ci[LOAD_WEIGHTS_STRIDE_LSB])) opd_err = ERR_MISALIGNED;
        else if (lw_rows > ROWS64 || lw_cols > COLS64) opd_err = ERR_SHAPE;
        else if (lw_dram + 64'(span_r) > MEM_BYTES) opd_err = ERR_DRAM_RANGE;
      end
      OP_MATMUL: begin
        if (mm_k > ROWS64) opd_err = ERR_SHAPE;
        else if (mm_ub + mm_rows > UB_ROWS64) opd_err = ERR_UB_RANGE;
        else if (mm_acc + mm_rows > ACC_ROWS64) opd_err = ERR_ACC_RANGE;
      end
      OP_ACTIVATE: begin
        if (act_acc + act_rows > ACC_ROWS64) opd_err = ERR_ACC_RANGE;
        else if (act_bias && act_bias_row + 64'd1 > ACC_ROWS64) opd_err = ERR_ACC_RANGE;
        else if (act_ub + act_rows > UB_ROWS64) opd_err = ERR_UB_RANGE;
      end
      OP_VECTOR: begin
        if (vec_a + vec_rows > UB_ROWS64 ||
            vec_b + (vec_bcast ? 64'd1 : vec_rows) > UB_ROWS64 ||
            vec_dst + vec_rows > UB_ROWS64) opd_err = ERR_UB_RANGE;
      end
      OP_POOL: begin
        if (pool_src + 64'(pool_yw) + 64'(pool_x_r) >= UB_ROWS64 ||
            pool_dst + 64'(pool_n_r) > UB_ROWS64) opd_err = ERR_UB_RANGE;
      end
      default: opd_err = ERR_NONE;
    endcase
  end

  // S_ISSUE: weight FIFO, then tokens, against the program-order counters.
  logic [7:0] flow_err;
  always_comb begin
    flow_err = ERR_NONE;
    if (op == OP_MATMUL && mm_pop && wf_cnt == 8'd0) flow_err = ERR_WFIFO_UNDERFLOW;
    else if (op == OP_MATMUL && !mm_pop && !stationary) flow_err = ERR_NO_WEIGHTS;
    else if (op == OP_LOAD_WEIGHTS && wf_cnt >= WFIFO8) flow_err = ERR_WFIFO_OVERFLOW;
    else if (op_unit) begin
      for (int p = NU - 1; p >= 0; p--) begin
        if (ci_wait[p] && po_tok[p * NU + 32'(self)] == 8'd0) flow_err = ERR_TOKEN_UNDERFLOW;
      end
      if (flow_err == ERR_NONE) begin
        for (int c = NU - 1; c >= 0; c--) begin
          if (ci_sig[c] && po_tok[32'(self) * NU + c] >= CAP8) flow_err = ERR_TOKEN_OVERFLOW;
        end
      end
    end
  end

  // ---- Dispatch FSM ------------------------------------------------------------------------
  logic issue_ok;          // S_ISSUE, no fault, no abort
  logic dispatch;          // a unit instruction enters its queue
  logic seq_retire;        // SYNC / INTERRUPT / HALT executes
  logic stall_dispatch;
  assign issue_ok = state == S_ISSUE && !abort_req && chk_err_r == ERR_NONE &&
                    flow_err == ERR_NONE;
  assign stall_dispatch = issue_ok && op_unit && q_full[self];
  assign dispatch = issue_ok && op_unit && !q_full[self];
  assign seq_retire = issue_ok && !op_unit &&
                      (op == OP_INTERRUPT || units_idle);
  always_comb begin
    q_push = '0;
    if (dispatch) q_push[self] = 1'b1;
  end
  assign f_pop = state == S_NEXT && !abort_req && cur_idx != count_r &&
                 cur_pc <= MEM_LAST_PC && f_level != '0;
  assign launch_ready = state == S_IDLE && !launch_end && f_inflight == '0;
  assign busy = state != S_IDLE;

  always_ff @(posedge clk) begin
    if (srst) begin
      state <= S_IDLE;
      abort_req <= 1'b0;
      launch_start <= 1'b0;
      launch_end <= 1'b0;
      end_error <= ERR_NONE;
      end_fault_pc <= '0;
      irq_user <= 1'b0;
      irq_code <= '0;
      fetch_on <= 1'b0;
      fetch_left <= '0;
      fetch_addr <= '0;
      f_level <= '0;
      f_wr <= '0;
      f_rd <= '0;
      cur_pc <= '0;
      cur_idx <= '0;
      count_r <= '0;
      ci <= '0;
      stop_error <= ERR_NONE;
      stop_pc <= '0;
      wf_cnt <= '0;
      stationary <= 1'b0;
      dec_err_r <= ERR_NONE;
      chk_err_r <= ERR_NONE;
      span_r <= '0;
      pool_y_r <= '0;
      pool_x_r <= '0;
      pool_n_r <= '0;
      mk_r <= '0;
      for (int i = 0; i < NU * NU; i++) po_tok[i] <= 8'd0;
    end else begin
      launch_start <= 1'b0;
      launch_end <= 1'b0;
      irq_user <= 1'b0;
      if (launch_abort && state != S_IDLE && state != S_DRAIN) abort_req <= 1'b1;

      // Fetch buffer.
      if (f_issue) begin
        fetch_addr <= fetch_addr + 64'd32;
        fetch_left <= fetch_left - 32'd1;
      end
      if (f_push) f_wr <= (f_wr == FAW'(FETCH_DEPTH - 1)) ? '0 : f_wr + 1'b1;
      if (f_pop) f_rd <= (f_rd == FAW'(FETCH_DEPTH - 1)) ? '0 : f_rd + 1'b1;
      f_level <= f_level + FCW'(f_push) - FCW'(f_pop);

      case (state)
        S_IDLE: begin
          abort_req <= 1'b0;
          if (launch_valid && launch_ready) begin
            launch_start <= 1'b1;
            cur_pc <= launch_pc;
            cur_idx <= '0;
            count_r <= launch_count;
            wf_cnt <= '0;
            stationary <= 1'b0;
            for (int i = 0; i < NU * NU; i++) po_tok[i] <= 8'd0;
            f_level <= '0;
            f_wr <= '0;
            f_rd <= '0;
            fetch_addr <= launch_pc;
            fetch_left <= launch_count;
            if (launch_pc[4:0] != 5'd0) begin
              stop_error <= ERR_MISALIGNED;
              stop_pc <= launch_pc;
              state <= S_DRAIN;
            end else begin
              fetch_on <= 1'b1;
              state <= S_NEXT;
            end
          end
        end
        S_NEXT: begin
          if (abort_req) begin
            stop_error <= ERR_ABORTED;
            stop_pc <= cur_pc;
            fetch_on <= 1'b0;
            state <= S_DRAIN;
          end else if (cur_idx == count_r) begin
            stop_error <= ERR_PROGRAM_OVERRUN;
            stop_pc <= cur_pc;
            fetch_on <= 1'b0;
            state <= S_DRAIN;
          end else if (cur_pc > MEM_LAST_PC) begin
            stop_error <= ERR_DRAM_RANGE;
            stop_pc <= cur_pc;
            fetch_on <= 1'b0;
            state <= S_DRAIN;
          end else if (f_pop) begin
            ci <= f_buf[f_rd];
            state <= S_CHECK;
          end
        end
        S_CHECK: begin
          dec_err_r <= dec_err;
          span_r <= span_c;
          pool_y_r <= pool_y_c;
          pool_x_r <= pool_x_c;
          pool_n_r <= pool_n_c;
          mk_r <= mk_c;
          state <= S_CHECK2;
        end
        S_CHECK2: begin
          chk_err_r <= dec_err_r != ERR_NONE ? dec_err_r : opd_err;
          state <= S_ISSUE;
        end
        S_ISSUE: begin
          if (abort_req) begin
            stop_error <= ERR_ABORTED;
            stop_pc <= cur_pc;
            fetch_on <= 1'b0;
            state <= S_DRAIN;
          end else if (chk_err_r != ERR_NONE || flow_err != ERR_NONE) begin
            stop_error <= chk_err_r != ERR_NONE ? chk_err_r : flow_err;
            stop_pc <= cur_pc;
            fetch_on <= 1'b0;
            state <= S_DRAIN;
          end else if (dispatch || seq_retire) begin
            cur_pc <= cur_pc + 64'd32;
            cur_idx <= cur_idx + 32'd1;
            if (dispatch) begin
              if (op == OP_LOAD_WEIGHTS) wf_cnt <= wf_cnt + 8'd1;
              if (op == OP_MATMUL && mm_pop) begin
                wf_cnt <= wf_cnt - 8'd1;
                stationary <= 1'b1;
              end
              for (int p = 0; p < NU; p++) begin
                if (ci_wait[p]) po_tok[p * NU + 32'(self)] <= po_tok[p * NU + 32'(self)] - 8'd1;
                if (ci_sig[p]) po_tok[32'(self) * NU + p] <= po_tok[32'(self) * NU + p] + 8'd1;
              end
            end
            if (op == OP_INTERRUPT) begin
              irq_user <= 1'b1;
              irq_code <= ci[INTERRUPT_CODE_LSB +: INTERRUPT_CODE_WIDTH];
            end
            if (op == OP_HALT) begin
              stop_error <= ERR_NONE;
              stop_pc <= cur_pc;
              fetch_on <= 1'b0;
              state <= S_DRAIN;
            end else begin
              state <= S_NEXT;
            end
          end
        end
        S_DRAIN: begin
          fetch_on <= 1'b0;
          if (units_idle) begin
            launch_end <= 1'b1;
            end_error <= stop_error;
            end_fault_pc <= stop_error == ERR_NONE ? 64'd0 : stop_pc;
            state <= S_IDLE;
          end
        end
        default: state <= S_IDLE;
      endcase
    end
  end

  // ---- Performance events ----------------------------------------------------------------
  logic [2:0] retire_now, stall_tok_now;
  always_comb begin
    retire_now = 3'(seq_retire);
    stall_tok_now = 3'd0;
    for (int u = 0; u < NU; u++) begin
      retire_now = retire_now + 3'(sig_send[u]);
      stall_tok_now = stall_tok_now + 3'(q_stall[u]);
    end
  end
  always_ff @(posedge clk) begin
    if (srst) begin
      perf_cycles <= 1'b0;
      perf_insns <= '0;
      perf_macs <= '0;
      perf_stall_token <= '0;
      perf_stall_dispatch <= 1'b0;
    end else begin
      perf_cycles <= busy;
      perf_insns <= retire_now;
      perf_macs <= (dispatch && op == OP_MATMUL) ? 32'(64'(mk_r) * COLS64) : 32'd0;
      perf_stall_token <= stall_tok_now;
      perf_stall_dispatch <= stall_dispatch;
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      assert (!(mem_rsp_valid && f_inflight == '0))
        else $error("sequencer: fetch response without a request");
      assert (!(f_push && f_level == FCW'(FETCH_DEPTH)))
        else $error("sequencer: fetch buffer overflow");
    end
  end
`endif

  // verilator lint_off UNUSEDSIGNAL
  logic unused;
  assign unused = ^{dma_row[63:24]};
  // verilator lint_on UNUSEDSIGNAL
endmodule
