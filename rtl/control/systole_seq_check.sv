// systole_seq_check — the sequencer's instruction checks: every fault an instruction can raise
// before dispatch, in the golden model's order (sim/model/sequencer.cpp, docs/ISA.md), so that a
// faulting program stops at the same instruction with the same error as on the model.
//
// Three steps, each one dispatch state (systole_sequencer drives decode_i and operands_i):
//   decode_i    decoding — ILLEGAL_OPCODE, RESERVED_BITS, ILLEGAL_FIELD (field ranges and token
//               masks naming the instruction's own unit; SYNC/INTERRUPT/HALT take no tokens),
//               all from the generated decode functions of systole_isa.svh — and the products
//               the operand checks need (registered: they are the long paths)
//   operands_i  the operand checks against the configuration (MISALIGNED, SHAPE, UB_RANGE,
//               ACC_RANGE, DRAM_RANGE), in docs/ISA.md order per opcode; err_o holds the first
//               error of decoding or operands from here on
//   (issue)     combinational, while dispatch waits: the weight-FIFO checks (WFIFO_UNDERFLOW,
//               NO_WEIGHTS, WFIFO_OVERFLOW) and the token checks (TOKEN_UNDERFLOW, then
//               TOKEN_OVERFLOW) against program-order counters: "earlier pushes minus earlier
//               pops" of the weight FIFO and "earlier signals minus earlier waits" per unit pair,
//               which dispatch_i advances and launch_i clears, exactly as the model does
//
// Parameters (configuration parameters, set by the parent; the defaults fail the checks):
//   ROWS, COLS, BF16, UB_ROWS, ACC_ROWS  the array and buffer shapes the operands must fit
//   WFIFO_TILES                          weight FIFO depth (WFIFO_OVERFLOW)
//   TOKEN_CAP                            tokens a unit pair holds (TOKEN_OVERFLOW)
//   MEM_BYTES_LO/HI                      device-memory size (DRAM_RANGE)
module systole_seq_check #(
    parameter integer ROWS = 0,
    parameter integer COLS = 0,
    parameter integer BF16 = -1,
    parameter integer UB_ROWS = 0,
    parameter integer ACC_ROWS = 0,
    parameter integer WFIFO_TILES = 0,
    parameter integer TOKEN_CAP = 0,
    parameter integer MEM_BYTES_LO = 0,
    parameter integer MEM_BYTES_HI = -1
) (
    input  logic         clk,
    input  logic         rst,
    input  logic         soft_reset,
    input  logic         launch_i,    // a launch starts: program-order counters return to zero
    input  logic [255:0] insn_i,      // the instruction being checked (held until dispatched)
    input  logic         decode_i,    // step 1: register decoding and the operand products
    input  logic         operands_i,  // step 2: register the operand checks
    input  logic         dispatch_i,  // the instruction is dispatched: advance the counters
    output logic         unit_op_o,   // it runs in a unit (not SYNC/INTERRUPT/HALT)
    output logic [2:0]   unit_o,      // ... this one (0 for the sequencer's own)
    output logic [7:0]   err_o,       // ERR_NONE, or the first error (valid after operands_i)
    output logic [31:0]  macs_o       // MATMUL: rows * k * COLS (valid after decode_i)
);
  `include "systole_isa.svh"
  `include "systole_regs.svh"

  // ---- Parameters --------------------------------------------------------------------------
  if (ROWS < 1 || ROWS > 65535) begin : g_rows_check
    systole_param_error_ROWS_must_be_1_to_65535 u_error ();
  end
  if (COLS < 1 || COLS > 65535) begin : g_cols_check
    systole_param_error_COLS_must_be_1_to_65535 u_error ();
  end
  if (ROWS * COLS > 65536) begin : g_macs_check
    systole_param_error_ROWS_times_COLS_must_be_at_most_65536 u_error ();
  end
  if (BF16 != 0 && BF16 != 1) begin : g_bf16_check
    systole_param_error_BF16_must_be_0_or_1 u_error ();
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
  if (MEM_BYTES_HI < 0 || MEM_BYTES_HI > 65535) begin : g_mem_hi_check
    systole_param_error_MEM_BYTES_HI_must_be_0_to_65535 u_error ();
  end
  if (ISA_UNITS != 5) begin : g_units_check
    systole_param_error_token_masks_are_5_bits_but_ISA_UNITS_differs u_error ();
  end

  localparam integer NU = ISA_UNITS;
  localparam integer W = (ROWS > COLS) ? ROWS : COLS;  // unified-buffer row elements
  localparam logic [31:0] MEM_LO32 = MEM_BYTES_LO;
  localparam logic [31:0] MEM_HI32 = MEM_BYTES_HI;
  localparam logic [63:0] MEM_BYTES = (64'(MEM_HI32) << 32) | 64'(MEM_LO32);
  localparam logic [63:0] ROWS64 = 64'(ROWS);
  localparam logic [63:0] COLS64 = 64'(COLS);
  localparam logic [63:0] W64 = 64'(W);
  // The program-order token counters never pass TOKEN_CAP (TOKEN_OVERFLOW) nor go below 0
  // (TOKEN_UNDERFLOW): TW bits (8 for a capacity of 255).
  localparam integer TW = $clog2(TOKEN_CAP + 1);
  localparam logic [TW-1:0] CAPW = TW'(TOKEN_CAP);

  // Range checks in the width of their bound: "x + y > C" with C < 2^K is "x or y is 2^K or
  // more (then the sum exceeds C by itself), or their low K bits sum to more than C", which
  // needs a (K + 1)-bit sum instead of one as wide as the fields (up to 50 bits). Every
  // operand is a zero-extended field or product that the 64-bit sum never wraps, so both
  // forms agree on every instruction (docs/FPGA.md: the checks' area).
  localparam integer KU = $clog2(UB_ROWS + 1);    // UB_ROWS < 2^KU
  localparam integer KA = $clog2(ACC_ROWS + 1);
  localparam integer KW = $clog2(W + 1);          // W >= ROWS, COLS
  localparam integer KM = $clog2(MEM_BYTES + 64'd1);
  function automatic logic ub_over(logic [63:0] x, logic [63:0] y);  // x + y > UB_ROWS
    ub_over = (x >> KU) != '0 || (y >> KU) != '0 || (KU+1)'(x) + (KU+1)'(y) > (KU+1)'(UB_ROWS);
  endfunction
  function automatic logic ub_reached(logic [63:0] x, logic [63:0] y, logic [63:0] z);  // x + y + z >= UB_ROWS
    ub_reached = (x >> KU) != '0 || (y >> KU) != '0 || (z >> KU) != '0 ||
                 (KU+2)'(x) + (KU+2)'(y) + (KU+2)'(z) >= (KU+2)'(UB_ROWS);
  endfunction
  function automatic logic acc_over(logic [63:0] x, logic [63:0] y);  // x + y > ACC_ROWS
    acc_over = (x >> KA) != '0 || (y >> KA) != '0 || (KA+1)'(x) + (KA+1)'(y) > (KA+1)'(ACC_ROWS);
  endfunction
  /* verilator lint_off UNUSEDSIGNAL */  // c's bits above KW: c <= W
  function automatic logic w_over(logic [63:0] x, logic [63:0] y, logic [63:0] c);  // x + y > c
    w_over = (x >> KW) != '0 || (y >> KW) != '0 || (KW+1)'(x) + (KW+1)'(y) > (KW+1)'(c);
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */
  localparam logic [7:0] WFIFO8 = 8'(WFIFO_TILES);

  // ---- State -------------------------------------------------------------------------------
  logic [7:0]      dec_err_q, dec_err_d;     // step 1 results
  logic [KM:0]     span_q, span_d;         // the span's low KM bits summed (see span_c)
  logic            span_big_q, span_big_d;  // ... or it is 2^KM or more: beyond any memory
  logic [24:0]     pool_y_q, pool_y_d, pool_x_q, pool_x_d;
  // MATMUL's rows * k, in the bits a dispatched MATMUL needs (rows <= min(UB_ROWS, ACC_ROWS),
  // k <= ROWS: its range checks passed; macs_o is read only at its dispatch, asserted below).
  localparam integer MK_ROWS = (UB_ROWS < ACC_ROWS) ? UB_ROWS : ACC_ROWS;
  localparam logic [63:0] MK_MAX = 64'(MK_ROWS) * 64'(ROWS);
  localparam integer KMK = ($clog2(MK_MAX + 64'd1) < 32) ? $clog2(MK_MAX + 64'd1) : 32;
  logic [31:0]     pool_n_q, pool_n_d;
  logic [KMK-1:0]  mk_q, mk_d;
  logic [7:0]      chk_err_q, chk_err_d;     // step 2 result
  logic [NU*NU*TW-1:0] po_tok_q, po_tok_d;   // [(p*NU + c)*TW +: TW]: signals minus waits, p -> c
  logic [7:0]      wf_cnt_q, wf_cnt_d;       // earlier LOAD_WEIGHTS minus earlier pops
  logic            stationary_q, stationary_d;  // an earlier MATMUL popped a tile

  // ---- Decode ------------------------------------------------------------------------------
  logic [7:0]    op;
  logic [NU-1:0] ci_wait, ci_sig;
  logic [2:0]    op_unit_num;
  assign op = insn_i[ISA_OPCODE_LSB +: ISA_OPCODE_WIDTH];
  assign ci_wait = insn_i[ISA_WAIT_LSB +: NU];
  assign ci_sig = insn_i[ISA_SIGNAL_LSB +: NU];
  assign op_unit_num = isa_opcode_unit(op);
  assign unit_op_o = op_unit_num < 3'(NU);
  assign unit_o = unit_op_o ? op_unit_num : 3'd0;

  // Fields (zero-extended to 64 bits where they enter arithmetic). LOAD and STORE share one
  // layout (LOAD_* positions).
  logic        dma_acc, dma_acc_elems;  // mem=acc; and 4-byte elements in device memory
  logic [63:0] dma_dram, dma_stride, dma_row, dma_col, dma_rows, dma_elems;
  logic [63:0] lw_dram, lw_rows, lw_cols;
  logic        mm_pop;
  logic [63:0] mm_ub, mm_acc, mm_rows, mm_k;
  logic        act_bias;
  logic [63:0] act_acc, act_ub, act_rows, act_bias_row;
  logic        vec_bcast, vec_pass, vec_math;
  logic [63:0] vec_a, vec_b, vec_dst, vec_rows;
  logic        av_scalar, av_bcast, av_bcol, av_sqrt;
  logic [63:0] av_a, av_b, av_dst, av_rows;
  logic        red_over_rows;
  logic [63:0] red_src, red_dst, red_rows, red_elems;
  logic [63:0] pool_src, pool_dst;
  assign dma_acc = insn_i[LOAD_MEM_LSB];
  // A widening LOAD reads elements of the array's own type into the accumulators.
  assign dma_acc_elems = dma_acc && !(op == OP_LOAD && insn_i[LOAD_WIDEN_LSB]);
  assign dma_dram = 64'(insn_i[LOAD_DRAM_LSB +: LOAD_DRAM_WIDTH]);
  assign dma_stride = 64'(insn_i[LOAD_STRIDE_LSB +: LOAD_STRIDE_WIDTH]);
  assign dma_row = 64'(insn_i[LOAD_ROW_LSB +: LOAD_ROW_WIDTH]);
  assign dma_col = 64'(insn_i[LOAD_COL_LSB +: LOAD_COL_WIDTH]);
  assign dma_rows = 64'(insn_i[LOAD_ROWS_LSB +: LOAD_ROWS_WIDTH]);
  assign dma_elems = 64'(insn_i[LOAD_ELEMS_LSB +: LOAD_ELEMS_WIDTH]);
  assign lw_dram = 64'(insn_i[LOAD_WEIGHTS_DRAM_LSB +: LOAD_WEIGHTS_DRAM_WIDTH]);
  assign lw_rows = 64'(insn_i[LOAD_WEIGHTS_ROWS_LSB +: LOAD_WEIGHTS_ROWS_WIDTH]);
  assign lw_cols = 64'(insn_i[LOAD_WEIGHTS_COLS_LSB +: LOAD_WEIGHTS_COLS_WIDTH]);
  assign mm_pop = insn_i[MATMUL_POP_LSB];
  assign mm_ub = 64'(insn_i[MATMUL_UB_LSB +: MATMUL_UB_WIDTH]);
  assign mm_acc = 64'(insn_i[MATMUL_ACC_LSB +: MATMUL_ACC_WIDTH]);
  assign mm_rows = 64'(insn_i[MATMUL_ROWS_LSB +: MATMUL_ROWS_WIDTH]);
  assign mm_k = 64'(insn_i[MATMUL_K_LSB +: MATMUL_K_WIDTH]);
  assign act_bias = insn_i[ACTIVATE_BIAS_LSB];
  assign act_acc = 64'(insn_i[ACTIVATE_ACC_LSB +: ACTIVATE_ACC_WIDTH]);
  assign act_ub = 64'(insn_i[ACTIVATE_UB_LSB +: ACTIVATE_UB_WIDTH]);
  assign act_rows = 64'(insn_i[ACTIVATE_ROWS_LSB +: ACTIVATE_ROWS_WIDTH]);
  assign act_bias_row = 64'(insn_i[ACTIVATE_BIAS_ROW_LSB +: ACTIVATE_BIAS_ROW_WIDTH]);
  assign vec_bcast = insn_i[VECTOR_BCAST_LSB];
  assign vec_pass = insn_i[VECTOR_OP_LSB +: VECTOR_OP_WIDTH] == VECTOR_OP_WIDTH'(VECTOR_OP_PASS);
  assign vec_math = insn_i[VECTOR_MATH_LSB +: VECTOR_MATH_WIDTH] != '0;
  assign av_scalar = insn_i[ACCVEC_SCALAR_LSB];
  assign av_bcast = insn_i[ACCVEC_BCAST_LSB];
  assign av_bcol = insn_i[ACCVEC_BCOL_LSB];
  assign av_sqrt = insn_i[ACCVEC_OP_LSB +: ACCVEC_OP_WIDTH] == ACCVEC_OP_WIDTH'(ACCVEC_OP_SQRT);
  assign av_a = 64'(insn_i[ACCVEC_A_LSB +: ACCVEC_A_WIDTH]);
  assign av_b = 64'(insn_i[ACCVEC_B_LSB +: ACCVEC_B_WIDTH]);
  assign av_dst = 64'(insn_i[ACCVEC_DST_LSB +: ACCVEC_DST_WIDTH]);
  assign av_rows = 64'(insn_i[ACCVEC_ROWS_LSB +: ACCVEC_ROWS_WIDTH]);
  assign red_over_rows = insn_i[REDUCE_OVER_LSB];
  assign red_src = 64'(insn_i[REDUCE_SRC_LSB +: REDUCE_SRC_WIDTH]);
  assign red_dst = 64'(insn_i[REDUCE_DST_LSB +: REDUCE_DST_WIDTH]);
  assign red_rows = 64'(insn_i[REDUCE_ROWS_LSB +: REDUCE_ROWS_WIDTH]);
  assign red_elems = 64'(insn_i[REDUCE_ELEMS_LSB +: REDUCE_ELEMS_WIDTH]);
  assign vec_a = 64'(insn_i[VECTOR_A_LSB +: VECTOR_A_WIDTH]);
  assign vec_b = 64'(insn_i[VECTOR_B_LSB +: VECTOR_B_WIDTH]);
  assign vec_dst = 64'(insn_i[VECTOR_DST_LSB +: VECTOR_DST_WIDTH]);
  assign vec_rows = 64'(insn_i[VECTOR_ROWS_LSB +: VECTOR_ROWS_WIDTH]);
  assign pool_src = 64'(insn_i[POOL_SRC_LSB +: POOL_SRC_WIDTH]);
  assign pool_dst = 64'(insn_i[POOL_DST_LSB +: POOL_DST_WIDTH]);

  // Step 1: decoding.
  logic [7:0] dec_err;
  always_comb begin
    logic mask_err;
    // Token masks: sequencer instructions take none; no unit names itself.
    mask_err = unit_op_o ? (ci_wait[unit_o] || ci_sig[unit_o]) : (ci_wait != '0 || ci_sig != '0);
    if (!isa_opcode_defined(op)) dec_err = ERR_ILLEGAL_OPCODE;
    else if ((insn_i & ~isa_used_bits(op)) != '0) dec_err = ERR_RESERVED_BITS;
    else if (mask_err || isa_field_illegal(insn_i)) dec_err = ERR_ILLEGAL_FIELD;
    else dec_err = ERR_NONE;
  end

  // One multiplier for the checks' products: an instruction needs at most one in step 1 — the
  // span of a LOAD, STORE or LOAD_WEIGHTS, rows × k of a MATMUL, the output pixels of a POOL —
  // and a POOL one more in step 2 (its highest source row), when step 1's are registered. The
  // steps never overlap (assertion below), so step 2 selects the operands. Sharing it instead
  // of one multiplier per product keeps the checks' area down (docs/FPGA.md).
  logic [24:0] mul_a;
  logic [31:0] mul_b;
  logic [56:0] mul_p;
  always_comb begin
    if (operands_i) begin
      mul_a = pool_y_q;
      mul_b = 32'(insn_i[POOL_IN_W_LSB +: POOL_IN_W_WIDTH]);
    end else begin
      case (op)
        // (n - 1) * stride; n >= 1 once decoding passed (else its error wins)
        OP_LOAD_WEIGHTS: begin
          mul_a = 25'(insn_i[LOAD_WEIGHTS_ROWS_LSB +: LOAD_WEIGHTS_ROWS_WIDTH]) - 25'd1;
          mul_b = 32'(insn_i[LOAD_WEIGHTS_STRIDE_LSB +: LOAD_WEIGHTS_STRIDE_WIDTH]);
        end
        OP_MATMUL: begin
          mul_a = 25'(insn_i[MATMUL_ROWS_LSB +: MATMUL_ROWS_WIDTH]);
          mul_b = 32'(insn_i[MATMUL_K_LSB +: MATMUL_K_WIDTH]);
        end
        OP_POOL: begin
          mul_a = 25'(insn_i[POOL_OUT_H_LSB +: POOL_OUT_H_WIDTH]);
          mul_b = 32'(insn_i[POOL_OUT_W_LSB +: POOL_OUT_W_WIDTH]);
        end
        default: begin  // LOAD, STORE
          mul_a = 25'(insn_i[LOAD_ROWS_LSB +: LOAD_ROWS_WIDTH]) - 25'd1;
          mul_b = 32'(insn_i[LOAD_STRIDE_LSB +: LOAD_STRIDE_WIDTH]);
        end
      endcase
    end
  end
  assign mul_p = 57'(mul_a) * 57'(mul_b);

  // Step 1: the products of the operand checks.
  // LOAD/STORE/LOAD_WEIGHTS: bytes from the first to past the last, (n - 1) * stride + elems *
  // element bytes, kept as the DRAM_RANGE check needs it: whether a term is 2^KM or more, and
  // else the sum of the two (KM + 1 bits).
  logic [49:0] span_terms;      // the second term
  logic [KM:0] span_c;
  logic        span_big_c;
  logic [24:0] pool_y_c, pool_x_c;
  logic [31:0] pool_n_c;
  logic [KMK-1:0] mk_c;
  always_comb begin
    // (n - 1) * stride + elems * element bytes
    if (op == OP_LOAD_WEIGHTS) begin
      span_terms = 50'(insn_i[LOAD_WEIGHTS_COLS_LSB +: LOAD_WEIGHTS_COLS_WIDTH]) <<
                   (BF16 != 0 ? 1 : 0);
    end else begin
      span_terms = 50'(insn_i[LOAD_ELEMS_LSB +: LOAD_ELEMS_WIDTH]) <<
                   (dma_acc_elems ? 2 : (BF16 != 0 ? 1 : 0));
    end
    span_big_c = (50'(mul_p) >> KM) != '0 || (span_terms >> KM) != '0;
    span_c = (KM+1)'(mul_p) + (KM+1)'(span_terms);
    // Highest window row and column of the last output pixel.
    pool_y_c = (25'(insn_i[POOL_OUT_H_LSB +: POOL_OUT_H_WIDTH]) - 25'd1) *
               25'(insn_i[POOL_STRIDE_H_LSB +: POOL_STRIDE_H_WIDTH]) +
               25'(insn_i[POOL_WIN_H_LSB +: POOL_WIN_H_WIDTH]) - 25'd1;
    pool_x_c = (25'(insn_i[POOL_OUT_W_LSB +: POOL_OUT_W_WIDTH]) - 25'd1) *
               25'(insn_i[POOL_STRIDE_W_LSB +: POOL_STRIDE_W_WIDTH]) +
               25'(insn_i[POOL_WIN_W_LSB +: POOL_WIN_W_WIDTH]) - 25'd1;
    pool_n_c = 32'(mul_p);  // POOL: out_h * out_w
    mk_c = KMK'(mul_p);     // MATMUL: rows * k
  end

  // dram + span > MEM_BYTES, as ub_over with the span's two parts (MEM_BYTES < 2^KM).
  function automatic logic mem_over(logic [63:0] dram);
    mem_over = (dram >> KM) != '0 || span_big_q ||
               (KM+2)'(dram) + (KM+2)'(span_q) > (KM+2)'(MEM_BYTES);
  endfunction

  // Step 2: operand checks, in docs/ISA.md order.
  logic [40:0] pool_yw;         // highest source row minus src, minus the column part
  logic [7:0]  opd_err;
  assign pool_yw = 41'(mul_p);  // pool_y_q * in_w: the multiplier's step-2 operands
  always_comb begin
    logic [63:0] width, elem;
    opd_err = ERR_NONE;
    width = dma_acc ? COLS64 : W64;
    elem = dma_acc_elems ? 64'd4 : (BF16 != 0 ? 64'd2 : 64'd1);
    case (op)
      OP_LOAD, OP_STORE: begin
        if ((dma_dram & (elem - 64'd1)) != '0 || (dma_stride & (elem - 64'd1)) != '0)
          opd_err = ERR_MISALIGNED;
        else if (w_over(dma_col, dma_elems, width)) opd_err = ERR_SHAPE;
        else if (dma_acc ? acc_over(dma_row, dma_rows) : ub_over(dma_row, dma_rows))
          opd_err = dma_acc ? ERR_ACC_RANGE : ERR_UB_RANGE;
        else if (mem_over(dma_dram)) opd_err = ERR_DRAM_RANGE;
      end
      OP_LOAD_WEIGHTS: begin
        if (BF16 != 0 && (lw_dram[0] || insn_i[LOAD_WEIGHTS_STRIDE_LSB])) opd_err = ERR_MISALIGNED;
        else if (w_over(lw_rows, 64'd0, ROWS64) || w_over(lw_cols, 64'd0, COLS64)) opd_err = ERR_SHAPE;
        else if (mem_over(lw_dram)) opd_err = ERR_DRAM_RANGE;
      end
      OP_MATMUL: begin
        if (w_over(mm_k, 64'd0, ROWS64)) opd_err = ERR_SHAPE;
        else if (ub_over(mm_ub, mm_rows)) opd_err = ERR_UB_RANGE;
        else if (acc_over(mm_acc, mm_rows)) opd_err = ERR_ACC_RANGE;
      end
      OP_ACTIVATE: begin
        if (acc_over(act_acc, act_rows)) opd_err = ERR_ACC_RANGE;
        else if (act_bias && acc_over(act_bias_row, 64'd1)) opd_err = ERR_ACC_RANGE;
        else if (ub_over(act_ub, act_rows)) opd_err = ERR_UB_RANGE;
      end
      OP_VECTOR: begin
        if (BF16 == 0 && vec_math) opd_err = ERR_ILLEGAL_FIELD;  // math is bf16-only
        else if (ub_over(vec_a, vec_rows) ||
            (!vec_pass && ub_over(vec_b, vec_bcast ? 64'd1 : vec_rows)) ||
            ub_over(vec_dst, vec_rows)) opd_err = ERR_UB_RANGE;
      end
      OP_ACCVEC: begin
        // fp32 accumulators only; b is a row or the immediate, not both.
        if (BF16 == 0 || (av_scalar && (av_bcast || av_bcol))) opd_err = ERR_ILLEGAL_FIELD;
        else if (acc_over(av_a, av_rows) ||
                 (!av_scalar && !av_sqrt && acc_over(av_b, av_bcast ? 64'd1 : av_rows)) ||
                 acc_over(av_dst, av_rows)) opd_err = ERR_ACC_RANGE;
      end
      OP_REDUCE: begin
        if (w_over(red_elems, 64'd0, W64)) opd_err = ERR_SHAPE;
        else if (ub_over(red_src, red_rows)) opd_err = ERR_UB_RANGE;
        else if (ub_over(red_dst, red_over_rows ? 64'd1 : red_rows)) opd_err = ERR_UB_RANGE;
      end
      OP_POOL: begin
        if (ub_reached(pool_src, 64'(pool_yw), 64'(pool_x_q)) ||
            ub_over(pool_dst, 64'(pool_n_q))) opd_err = ERR_UB_RANGE;
      end
      default: opd_err = ERR_NONE;
    endcase
  end

  // Issue: weight FIFO, then tokens, against the program-order counters.
  logic [7:0] flow_err;
  always_comb begin
    flow_err = ERR_NONE;
    if (op == OP_MATMUL && mm_pop && wf_cnt_q == 8'd0) flow_err = ERR_WFIFO_UNDERFLOW;
    else if (op == OP_MATMUL && !mm_pop && !stationary_q) flow_err = ERR_NO_WEIGHTS;
    else if (op == OP_LOAD_WEIGHTS && wf_cnt_q >= WFIFO8) flow_err = ERR_WFIFO_OVERFLOW;
    else if (unit_op_o) begin
      for (int p = NU - 1; p >= 0; p--) begin
        if (ci_wait[p] && po_tok_q[(p * NU + 32'(unit_o)) * TW +: TW] == '0)
          flow_err = ERR_TOKEN_UNDERFLOW;
      end
      if (flow_err == ERR_NONE) begin
        for (int c = NU - 1; c >= 0; c--) begin
          if (ci_sig[c] && po_tok_q[(32'(unit_o) * NU + c) * TW +: TW] >= CAPW)
            flow_err = ERR_TOKEN_OVERFLOW;
        end
      end
    end
  end

  assign err_o = chk_err_q != ERR_NONE ? chk_err_q : flow_err;
  assign macs_o = 32'(64'(mk_q) * COLS64);

  // ---- Next state --------------------------------------------------------------------------
  always_comb begin
    dec_err_d = dec_err_q;
    span_d = span_q;
    span_big_d = span_big_q;
    pool_y_d = pool_y_q;
    pool_x_d = pool_x_q;
    pool_n_d = pool_n_q;
    mk_d = mk_q;
    chk_err_d = chk_err_q;
    po_tok_d = po_tok_q;
    wf_cnt_d = wf_cnt_q;
    stationary_d = stationary_q;
    if (decode_i) begin
      dec_err_d = dec_err;
      span_d = span_c;
      span_big_d = span_big_c;
      pool_y_d = pool_y_c;
      pool_x_d = pool_x_c;
      pool_n_d = pool_n_c;
      mk_d = mk_c;
    end
    if (operands_i) chk_err_d = dec_err_q != ERR_NONE ? dec_err_q : opd_err;
    if (launch_i) begin
      po_tok_d = '0;
      wf_cnt_d = '0;
      stationary_d = 1'b0;
    end else if (dispatch_i) begin
      if (op == OP_LOAD_WEIGHTS) wf_cnt_d = wf_cnt_q + 8'd1;
      if (op == OP_MATMUL && mm_pop) begin
        wf_cnt_d = wf_cnt_q - 8'd1;
        stationary_d = 1'b1;
      end
      for (int p = 0; p < NU; p++) begin
        if (ci_wait[p]) begin
          po_tok_d[(p * NU + 32'(unit_o)) * TW +: TW] =
              po_tok_q[(p * NU + 32'(unit_o)) * TW +: TW] - TW'(1);
        end
        if (ci_sig[p]) begin
          po_tok_d[(32'(unit_o) * NU + p) * TW +: TW] =
              po_tok_q[(32'(unit_o) * NU + p) * TW +: TW] + TW'(1);
        end
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst || soft_reset) begin
      dec_err_q <= ERR_NONE;
      span_q <= '0;
      span_big_q <= 1'b0;
      pool_y_q <= '0;
      pool_x_q <= '0;
      pool_n_q <= '0;
      mk_q <= '0;
      chk_err_q <= ERR_NONE;
      po_tok_q <= '0;
      wf_cnt_q <= '0;
      stationary_q <= 1'b0;
    end else begin
      dec_err_q <= dec_err_d;
      span_q <= span_d;
      span_big_q <= span_big_d;
      pool_y_q <= pool_y_d;
      pool_x_q <= pool_x_d;
      pool_n_q <= pool_n_d;
      mk_q <= mk_d;
      chk_err_q <= chk_err_d;
      po_tok_q <= po_tok_d;
      wf_cnt_q <= wf_cnt_d;
      stationary_q <= stationary_d;
    end
  end

  // ---- Assertions --------------------------------------------------------------------------
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!(rst || soft_reset)) begin
      assert (!(dispatch_i && (!unit_op_o || err_o != ERR_NONE)))
        else $error("sequencer check: dispatch of an instruction that is not a clean unit one");
      assert (!(decode_i && operands_i))
        else $error("sequencer check: decode and operand steps in one cycle");
      assert (!(dispatch_i && op == OP_MATMUL) || 64'(mk_q) ==
              64'(insn_i[MATMUL_ROWS_LSB +: MATMUL_ROWS_WIDTH]) * 64'(insn_i[MATMUL_K_LSB +: MATMUL_K_WIDTH]))
        else $error("sequencer check: a dispatched MATMUL's rows * k does not fit %0d bits", KMK);
    end
  end
`endif

  // verilator lint_off UNUSEDSIGNAL
  logic unused;
  assign unused = ^{dma_row[63:24], mul_p[56:50]};
  // verilator lint_on UNUSEDSIGNAL
endmodule
