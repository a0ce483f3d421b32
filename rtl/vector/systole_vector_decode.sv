// systole_vector_decode — what an ACTIVATE, VECTOR or POOL instruction asks of the vector unit:
// the lanes' configuration and the start of the read walk, decoded from the raw 32-byte
// instruction. Combinational: systole_vector_unit and systole_vector_reads load these values
// into their registers at the edge that accepts the instruction.
//
// Split from systole_vector_unit so that every field the unit reads from
// generated/systole_isa.svh, and the checks the sequencer has already made on them (the
// assertions at the end), sit in one place apart from the unit's state machines.
//
// Parameters (from systole_vector_unit; the defaults are rejected at elaboration):
//   BF16      the scale that means "no scaling" (a 0 scale field): 1.0f in bf16, 1 in int8.
//   UB_ROWS   bound of the unified-buffer row ranges the assertions check.
//   ACC_ROWS  bound of the accumulator row ranges the assertions check.
module systole_vector_decode #(
    parameter integer BF16 = -1,
    parameter integer UB_ROWS = 0,
    parameter integer ACC_ROWS = 0
) (
    // Clock, reset and accept_i only time the assertions.
    input  logic         clk,
    input  logic         rst,
    input  logic         accept_i,      // the unit takes insn_i at this edge
    // Only this unit's fields are read: the header's tokens and reserved bits are not.
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic [255:0] insn_i,
    /* verilator lint_on UNUSEDSIGNAL */
    output logic [1:0]   mode_o,        // 0 ACTIVATE, 1 VECTOR, 2 POOL (and REDUCE over=rows),
                                        // 3 REDUCE over=elems
    // Lane configuration (systole_vector_lane's ports); unused fields are 0, scale is 1.
    output logic [2:0]   vop_o,
    output logic [1:0]   func_o,
    output logic         bias_o,        // ACTIVATE: the bias row is read first and added
    output logic         pool_sum_o,
    output logic [31:0]  scale_o,
    output logic [5:0]   shift_o,
    output logic [7:0]   zp_o,
    output logic [15:0]  lo_o,
    output logic [15:0]  hi_o,
    output logic         bcast_o,       // VECTOR: row b is read for every output row
    output logic         bcol_o,        // VECTOR: element 0 of row b is every lane's operand
    output logic [3:0]   math_o,        // VECTOR: transcendental function (0 none; bf16 only)
    output logic [15:0]  elems_o,       // REDUCE: elements per row (over=elems: reduced)
    output logic         zero_en_o,     // REDUCE: lanes zero_from_o.. of the result are zero
    output logic [15:0]  zero_from_o,   // ... from elems (over=rows) or 1 (over=elems)
    // Start of the read walk (systole_vector_reads).
    output logic [31:0]  ra_o,          // ACT: acc row; VEC: row a; POOL: src (first window row)
    output logic [31:0]  rb_o,          // ACT: the bias row; VEC: row b; POOL: 0
    output logic [31:0]  wd_o,          // first destination row
    output logic [15:0]  last_i_o,      // ACT/VEC: rows - 1; POOL: out_w - 1
    output logic [15:0]  last_oy_o,     // POOL: out_h - 1 (else 0)
    output logic [15:0]  last_wx_o,     // POOL: win_w - 1; REDUCE over=rows: rows - 1 (else 0)
    output logic [7:0]   last_wy_o,     // POOL: win_h - 1 (else 0)
    output logic [31:0]  in_w_o,        // POOL: in_w (else 0)
    output logic [31:0]  step_w_o,      // POOL: stride_w (else 0)
    output logic [31:0]  step_h_o       // POOL: stride_h × in_w (else 0)
);

  // ---- Parameters --------------------------------------------------------------------------
  // Configuration parameters come from the parent; the defaults fail these checks.
  if (BF16 != 0 && BF16 != 1) begin : g_bf16_check
    systole_param_error_vector_decode_BF16_must_be_0_or_1 u_error ();
  end
  if (UB_ROWS < 2 || ACC_ROWS < 2) begin : g_buffer_check
    systole_param_error_vector_decode_UB_ROWS_and_ACC_ROWS_must_be_at_least_2 u_error ();
  end
  `include "systole_isa.svh"

  localparam logic [1:0] MODE_ACT = 2'd0, MODE_VEC = 2'd1, MODE_POOL = 2'd2, MODE_RED = 2'd3;
  localparam logic [31:0] F32_ONE = 32'h3F80_0000;

  // ---- Fields, zero-extended to 32 bits (widths pinned by g_isa_check) ----------------------
  logic [7:0]  opcode;
  logic [31:0] f_act_acc, f_act_ub, f_act_rows, f_act_bias_row, f_act_scale;
  logic [31:0] f_vec_a, f_vec_b, f_vec_dst, f_vec_rows;
  logic [31:0] f_pool_src, f_pool_dst, f_pool_in_w, f_pool_out_h, f_pool_out_w;
  logic [31:0] f_pool_win_h, f_pool_win_w, f_pool_stride_h, f_pool_stride_w, f_pool_scale;
  logic [31:0] f_red_src, f_red_dst, f_red_rows, f_red_scale;
  logic [15:0] f_red_elems;
  assign opcode          = insn_i[ISA_OPCODE_LSB +: ISA_OPCODE_WIDTH];
  assign f_act_acc       = {8'd0, insn_i[ACTIVATE_ACC_LSB +: 24]};
  assign f_act_ub        = {8'd0, insn_i[ACTIVATE_UB_LSB +: 24]};
  assign f_act_rows      = {16'd0, insn_i[ACTIVATE_ROWS_LSB +: 16]};
  assign f_act_bias_row  = {8'd0, insn_i[ACTIVATE_BIAS_ROW_LSB +: 24]};
  assign f_act_scale     = insn_i[ACTIVATE_SCALE_LSB +: 32];
  assign f_vec_a         = {8'd0, insn_i[VECTOR_A_LSB +: 24]};
  assign f_vec_b         = {8'd0, insn_i[VECTOR_B_LSB +: 24]};
  assign f_vec_dst       = {8'd0, insn_i[VECTOR_DST_LSB +: 24]};
  assign f_vec_rows      = {16'd0, insn_i[VECTOR_ROWS_LSB +: 16]};
  assign f_pool_src      = {8'd0, insn_i[POOL_SRC_LSB +: 24]};
  assign f_pool_dst      = {8'd0, insn_i[POOL_DST_LSB +: 24]};
  assign f_pool_in_w     = {16'd0, insn_i[POOL_IN_W_LSB +: 16]};
  assign f_pool_out_h    = {16'd0, insn_i[POOL_OUT_H_LSB +: 16]};
  assign f_pool_out_w    = {16'd0, insn_i[POOL_OUT_W_LSB +: 16]};
  assign f_pool_win_h    = {24'd0, insn_i[POOL_WIN_H_LSB +: 8]};
  assign f_pool_win_w    = {24'd0, insn_i[POOL_WIN_W_LSB +: 8]};
  assign f_pool_stride_h = {24'd0, insn_i[POOL_STRIDE_H_LSB +: 8]};
  assign f_pool_stride_w = {24'd0, insn_i[POOL_STRIDE_W_LSB +: 8]};
  assign f_pool_scale    = insn_i[POOL_SCALE_LSB +: 32];
  assign f_red_src       = {8'd0, insn_i[REDUCE_SRC_LSB +: 24]};
  assign f_red_dst       = {8'd0, insn_i[REDUCE_DST_LSB +: 24]};
  assign f_red_rows      = {16'd0, insn_i[REDUCE_ROWS_LSB +: 16]};
  assign f_red_elems     = insn_i[REDUCE_ELEMS_LSB +: 16];
  assign f_red_scale     = insn_i[REDUCE_SCALE_LSB +: 32];
  if (ACTIVATE_ACC_WIDTH != 24 || ACTIVATE_UB_WIDTH != 24 || ACTIVATE_ROWS_WIDTH != 16
      || ACTIVATE_BIAS_ROW_WIDTH != 24 || ACTIVATE_SCALE_WIDTH != 32 || ACTIVATE_FUNC_WIDTH != 3
      || ACTIVATE_SHIFT_WIDTH != 8 || ACTIVATE_ZP_WIDTH != 8 || ACTIVATE_LO_WIDTH != 16
      || ACTIVATE_HI_WIDTH != 16 || VECTOR_A_WIDTH != 24 || VECTOR_B_WIDTH != 24
      || VECTOR_DST_WIDTH != 24 || VECTOR_ROWS_WIDTH != 16 || VECTOR_OP_WIDTH != 4
      || VECTOR_FUNC_WIDTH != 3 || VECTOR_SHIFT_WIDTH != 8 || VECTOR_LO_WIDTH != 16
      || VECTOR_HI_WIDTH != 16 || VECTOR_MATH_WIDTH != 4 || POOL_SRC_WIDTH != 24 || POOL_DST_WIDTH != 24
      || POOL_IN_W_WIDTH != 16 || POOL_OUT_H_WIDTH != 16 || POOL_OUT_W_WIDTH != 16
      || REDUCE_SRC_WIDTH != 24 || REDUCE_DST_WIDTH != 24 || REDUCE_ROWS_WIDTH != 16
      || REDUCE_ELEMS_WIDTH != 16 || REDUCE_SCALE_WIDTH != 32 || REDUCE_SHIFT_WIDTH != 8
      || POOL_WIN_H_WIDTH != 8 || POOL_WIN_W_WIDTH != 8 || POOL_STRIDE_H_WIDTH != 8
      || POOL_STRIDE_W_WIDTH != 8 || POOL_SCALE_WIDTH != 32 || POOL_SHIFT_WIDTH != 8)
  begin : g_isa_check
    systole_param_error_vector_isa_field_widths_changed u_error ();
  end

  logic [31:0] one_scale;
  assign one_scale = (BF16 != 0) ? F32_ONE : 32'd1;

  // ---- Decode ------------------------------------------------------------------------------
  // The sequencer offers only ACTIVATE, VECTOR and POOL (asserted below); anything else
  // decodes as POOL.
  always_comb begin
    vop_o = 3'd0;
    func_o = 2'd0;
    bias_o = 1'b0;
    pool_sum_o = 1'b0;
    scale_o = one_scale;
    shift_o = 6'd0;
    zp_o = 8'd0;
    lo_o = 16'd0;
    hi_o = 16'd0;
    bcast_o = 1'b0;
    bcol_o = 1'b0;
    math_o = 4'd0;
    elems_o = 16'd0;
    zero_en_o = 1'b0;
    zero_from_o = 16'd0;
    rb_o = 32'd0;
    last_oy_o = 16'd0;
    last_wx_o = 16'd0;
    last_wy_o = 8'd0;
    in_w_o = 32'd0;
    step_w_o = 32'd0;
    step_h_o = 32'd0;
    case (opcode)
      OP_ACTIVATE: begin
        mode_o = MODE_ACT;
        bias_o = insn_i[ACTIVATE_BIAS_LSB];
        func_o = insn_i[ACTIVATE_FUNC_LSB +: 2];
        scale_o = (f_act_scale == 32'd0) ? one_scale : f_act_scale;
        shift_o = insn_i[ACTIVATE_SHIFT_LSB +: 6];
        zp_o = insn_i[ACTIVATE_ZP_LSB +: 8];
        lo_o = insn_i[ACTIVATE_LO_LSB +: 16];
        hi_o = insn_i[ACTIVATE_HI_LSB +: 16];
        ra_o = f_act_acc;
        rb_o = f_act_bias_row;
        wd_o = f_act_ub;
        last_i_o = f_act_rows[15:0] - 16'd1;
      end
      OP_VECTOR: begin
        mode_o = MODE_VEC;
        vop_o = insn_i[VECTOR_OP_LSB +: 3];
        func_o = insn_i[VECTOR_FUNC_LSB +: 2];
        shift_o = insn_i[VECTOR_SHIFT_LSB +: 6];
        lo_o = insn_i[VECTOR_LO_LSB +: 16];
        hi_o = insn_i[VECTOR_HI_LSB +: 16];
        bcast_o = insn_i[VECTOR_BCAST_LSB];
        bcol_o = insn_i[VECTOR_BCOL_LSB];
        math_o = insn_i[VECTOR_MATH_LSB +: 4];
        ra_o = f_vec_a;
        // op=pass reads no b: its group reads row a twice (the lane takes x), so b's field,
        // which the sequencer does not check, never reaches the port.
        rb_o = (insn_i[VECTOR_OP_LSB +: 4] == 4'(VECTOR_OP_PASS)) ? f_vec_a : f_vec_b;
        wd_o = f_vec_dst;
        last_i_o = f_vec_rows[15:0] - 16'd1;
      end
      OP_REDUCE: begin
        // Combining and scaling as POOL: sum from +0 (or max from the first), then the scale.
        pool_sum_o = insn_i[REDUCE_OP_LSB];
        scale_o = (f_red_scale == 32'd0) ? one_scale : f_red_scale;
        shift_o = insn_i[REDUCE_SHIFT_LSB +: 6];
        ra_o = f_red_src;
        wd_o = f_red_dst;
        elems_o = f_red_elems;
        zero_en_o = 1'b1;
        if (insn_i[REDUCE_OVER_LSB]) begin
          // over=rows: a POOL window of 1 x rows pixels, rows src .. src+rows-1 in order.
          mode_o = MODE_POOL;
          zero_from_o = f_red_elems;
          in_w_o = f_red_rows;
          step_w_o = 32'd1;
          last_i_o = 16'd0;
          last_wx_o = f_red_rows[15:0] - 16'd1;
        end else begin
          // over=elems: one read per row; systole_vector_rowreduce walks its elements.
          mode_o = MODE_RED;
          zero_from_o = 16'd1;
          last_i_o = f_red_rows[15:0] - 16'd1;
        end
      end
      default: begin  // OP_POOL
        mode_o = MODE_POOL;
        pool_sum_o = insn_i[POOL_OP_LSB];
        scale_o = (f_pool_scale == 32'd0) ? one_scale : f_pool_scale;
        shift_o = insn_i[POOL_SHIFT_LSB +: 6];
        ra_o = f_pool_src;
        wd_o = f_pool_dst;
        in_w_o = f_pool_in_w;
        step_w_o = f_pool_stride_w;
        step_h_o = f_pool_stride_h * f_pool_in_w;
        last_i_o = f_pool_out_w[15:0] - 16'd1;
        last_oy_o = f_pool_out_h[15:0] - 16'd1;
        last_wx_o = {8'd0, f_pool_win_w[7:0] - 8'd1};
        last_wy_o = f_pool_win_h[7:0] - 8'd1;
      end
    endcase
  end

  // ---- Assertions: the sequencer's checks hold ---------------------------------------------
`ifndef SYNTHESIS
  logic [31:0] a_rows, a_b_rows, a_last_src;
  always_comb begin
    a_rows = f_vec_rows;
    a_b_rows = (insn_i[VECTOR_OP_LSB +: 4] == 4'(VECTOR_OP_PASS)) ? 32'd0
             : (insn_i[VECTOR_BCAST_LSB] ? 32'd1 : a_rows);
    a_last_src = f_pool_src
        + ((f_pool_out_h - 32'd1) * f_pool_stride_h + f_pool_win_h - 32'd1) * f_pool_in_w
        + (f_pool_out_w - 32'd1) * f_pool_stride_w
        + f_pool_win_w - 32'd1;
  end
  always_ff @(posedge clk) begin
    if (!rst && accept_i) begin
      assert (opcode == OP_ACTIVATE || opcode == OP_VECTOR || opcode == OP_POOL
              || opcode == OP_REDUCE)
      else $error("systole_vector_unit: opcode 0x%02x is not ACTIVATE, VECTOR, POOL or REDUCE",
                  opcode);
      if (opcode == OP_ACTIVATE) begin
        assert (f_act_rows != 0
                && f_act_acc + f_act_rows <= ACC_ROWS
                && f_act_ub + f_act_rows <= UB_ROWS
                && (!insn_i[ACTIVATE_BIAS_LSB] || f_act_bias_row < ACC_ROWS))
        else $error("systole_vector_unit: activate rows out of range");
        assert ({24'd0, insn_i[ACTIVATE_SHIFT_LSB +: 8]} <= 62)
        else $error("systole_vector_unit: activate shift > 62");
      end
      if (opcode == OP_VECTOR) begin
        assert (a_rows != 0 && f_vec_a + a_rows <= UB_ROWS
                && (a_b_rows == 0 || f_vec_b + a_b_rows <= UB_ROWS)
                && f_vec_dst + a_rows <= UB_ROWS)
        else $error("systole_vector_unit: vector rows out of range");
        assert ({28'd0, insn_i[VECTOR_OP_LSB +: 4]} <= 5
                && {24'd0, insn_i[VECTOR_SHIFT_LSB +: 8]} <= 62
                && (BF16 != 0 || insn_i[VECTOR_MATH_LSB +: 4] == 4'd0))
        else $error("systole_vector_unit: vector op, shift or math out of range");
      end
      if (opcode == OP_REDUCE) begin
        assert (f_red_rows != 0 && f_red_elems != 0
                && f_red_src + f_red_rows <= UB_ROWS
                && f_red_dst + (insn_i[REDUCE_OVER_LSB] ? 32'd1 : f_red_rows) <= UB_ROWS)
        else $error("systole_vector_unit: reduce rows or elems out of range");
      end
      if (opcode == OP_POOL) begin
        assert (f_pool_in_w != 0 && f_pool_out_h != 0 && f_pool_out_w != 0
                && f_pool_win_h != 0 && f_pool_win_w != 0
                && f_pool_stride_h != 0 && f_pool_stride_w != 0
                && {24'd0, insn_i[POOL_SHIFT_LSB +: 8]} <= 62)
        else $error("systole_vector_unit: pool shape field out of range");
        assert (a_last_src < UB_ROWS
                && f_pool_dst + f_pool_out_h * f_pool_out_w <= UB_ROWS)
        else $error("systole_vector_unit: pool rows out of range");
      end
    end
  end
`endif
endmodule
