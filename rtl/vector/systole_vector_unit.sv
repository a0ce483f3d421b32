// systole_vector_unit — the VECTOR unit: ACTIVATE (accumulator rows → unified-buffer rows),
// VECTOR (elementwise on unified-buffer rows) and POOL (windows of unified-buffer rows), with
// the semantics of docs/ISA.md and the arithmetic of docs/NUMERICS.md, bit-exact against
// sim/model/vector_unit.cpp.
//
// Structure:
//   * a read sequencer walks the instruction's reads in program order, one per cycle when
//     granted: ACTIVATE reads the bias row once, then one accumulator row per output row;
//     VECTOR reads row a then row b per output row; POOL reads the window's rows in row-major
//     window order per output pixel. The reads of one output row form a "group".
//   * W lanes (systole_vector_lane) compute each element: step 1 when the data arrives, then
//     two pipeline registers; the pipeline never stalls.
//   * DEPTH output slots, allocated in order when a group's last read is granted and freed
//     when its row write is granted. A group starts only while a slot is free, so the pipeline
//     always has somewhere to put its result; with DEPTH = 5 ACTIVATE sustains one row per
//     cycle (a slot lives four cycles from read grant to write grant).
//   * Ordering: rows are read completely before they are written, in order. A unified-buffer
//     read waits while any allocated slot is still to write the same row, so a read never
//     overtakes an earlier write (dst may overlap a, b or src, even shifted by one row).
//   * done pulses the cycle after the grant of the instruction's last row write. The next
//     instruction is accepted once the unit is idle.
module systole_vector_unit #(
    parameter integer ROWS = 0,
    parameter integer COLS = 0,
    parameter integer BF16 = -1,
    parameter integer UB_ROWS = 0,
    parameter integer ACC_ROWS = 0,
    localparam integer W = (ROWS > COLS) ? ROWS : COLS,
    localparam integer EW = (BF16 != 0) ? 16 : 8,
    localparam integer UB_AW = $clog2(UB_ROWS),
    localparam integer ACC_AW = $clog2(ACC_ROWS)
) (
    input  logic                  clk,
    input  logic                  rst,
    // Nothing in this unit lives across instructions, so a launch has nothing to clear.
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic                  launch_start,
    /* verilator lint_on UNUSEDSIGNAL */
    input  logic                  cmd_valid,
    output logic                  cmd_ready,
    // Only this unit's fields are read: the header's tokens and reserved bits are not.
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic [255:0]          cmd_insn,
    /* verilator lint_on UNUSEDSIGNAL */
    output logic                  done,
    // UB read port (shared, req/gnt; data the cycle after gnt)
    output logic                  ub_rd_req,
    output logic [UB_AW-1:0]      ub_rd_addr,
    input  logic                  ub_rd_gnt,
    input  logic [W*EW-1:0]       ub_rd_data,
    // UB write port (shared, req/gnt; written at the granting edge; always whole rows)
    output logic                  ub_wr_req,
    output logic [UB_AW-1:0]      ub_wr_addr,
    output logic [W*EW-1:0]       ub_wr_data,
    input  logic                  ub_wr_gnt,
    // ACC read port (shared, req/gnt)
    output logic                  acc_rd_req,
    output logic [ACC_AW-1:0]     acc_rd_addr,
    input  logic                  acc_rd_gnt,
    input  logic [COLS*32-1:0]    acc_rd_data
);
  `include "systole_isa.svh"

  // ---- parameter checks ------------------------------------------------------------------
  if (ROWS < 1) begin : g_rows_check
    systole_param_error_vector_ROWS_must_be_at_least_1 u_error ();
  end
  if (COLS < 1) begin : g_cols_check
    systole_param_error_vector_COLS_must_be_at_least_1 u_error ();
  end
  if (BF16 != 0 && BF16 != 1) begin : g_bf16_check
    systole_param_error_vector_BF16_must_be_0_or_1 u_error ();
  end
  if (UB_ROWS < 2) begin : g_ub_check
    systole_param_error_vector_UB_ROWS_must_be_at_least_2 u_error ();
  end
  if (ACC_ROWS < 2) begin : g_acc_check
    systole_param_error_vector_ACC_ROWS_must_be_at_least_2 u_error ();
  end

  localparam integer DEPTH = 5;  // output slots
  localparam integer SW = 3;     // slot index / count bits
  localparam logic [1:0] MODE_ACT = 2'd0, MODE_VEC = 2'd1, MODE_POOL = 2'd2;
  localparam logic [31:0] F32_ONE = 32'h3F80_0000;

  // ---- instruction state -------------------------------------------------------------------
  logic        busy;       // an instruction is in progress
  logic        issuing;    // ... and reads remain to be issued
  logic [1:0]  mode;
  // Lane configuration.
  logic [2:0]  cfg_vop;
  logic [1:0]  cfg_func;
  logic        cfg_bias;
  logic        cfg_pool_sum;
  logic [31:0] cfg_scale;
  logic [5:0]  cfg_shift;
  logic [7:0]  cfg_zp;
  logic [15:0] cfg_lo, cfg_hi;
  logic        cfg_bcast;
  // Read sequencing. Addresses are kept at full field width and checked against the buffer
  // size by the assertions; the ports take the low bits.
  logic [31:0] ra;         // ACT: acc row i; VEC: a + i; POOL: the current window row
  logic [31:0] rb;         // ACT: the bias row; VEC: the row of b for row i
  logic [31:0] wd;         // destination row of the current group
  logic        bias_phase; // ACT: the bias row is still to be read
  logic        second;     // VEC: row b is next
  logic [15:0] count_i;    // ACT/VEC: output row; POOL: output x
  logic [15:0] last_i;     // ACT/VEC: rows - 1; POOL: out_w - 1
  logic [15:0] oy, last_oy;
  logic [7:0]  wx, wy, last_wx, last_wy;
  logic [31:0] line_row, pix_row, oy_row;  // POOL: window line start, window, output row
  logic [31:0] in_w, step_w, step_h;       // POOL: in_w, stride_w, stride_h × in_w

  // ---- output slots ------------------------------------------------------------------------
  logic [UB_AW-1:0] slot_addr [DEPTH];
  logic [W*EW-1:0]  slot_data [DEPTH];
  logic [DEPTH-1:0] slot_used;   // allocated: the row write is still to happen
  logic [DEPTH-1:0] slot_full;   // ... and its result is in slot_data
  logic [SW-1:0]    alloc_ptr, fill_ptr, head_ptr;
  logic [SW-1:0]    slot_count;

  function automatic logic [SW-1:0] next_slot(input logic [SW-1:0] p);
    next_slot = (p == SW'(DEPTH - 1)) ? '0 : p + 1'b1;
  endfunction

  // ---- the read of this cycle --------------------------------------------------------------
  logic [31:0] rd_addr;
  logic        rd_first, rd_last;  // first / last read of its group
  logic        rd_bias;            // the ACT bias row (no group)
  logic        hazard, credit_ok, rd_want, rd_fire;

  always_comb begin
    rd_bias = 1'b0;
    rd_first = 1'b1;
    rd_last = 1'b1;
    rd_addr = ra;
    case (mode)
      MODE_ACT: begin
        rd_bias = bias_phase;
        rd_addr = bias_phase ? rb : ra;
      end
      MODE_VEC: begin
        rd_first = !second;
        rd_last = second;
        rd_addr = second ? rb : ra;
      end
      default: begin
        rd_first = (wx == 8'd0) && (wy == 8'd0);
        rd_last = (wx == last_wx) && (wy == last_wy);
      end
    endcase
  end

  always_comb begin
    hazard = 1'b0;
    for (int k = 0; k < DEPTH; k++) begin
      if (slot_used[k] && slot_addr[k] == rd_addr[UB_AW-1:0]) hazard = 1'b1;
    end
  end
  assign credit_ok = slot_count < SW'(DEPTH);
  assign rd_want = busy && issuing && (rd_bias || credit_ok) && (mode == MODE_ACT || !hazard);

  assign acc_rd_req  = rd_want && mode == MODE_ACT;
  assign acc_rd_addr = rd_addr[ACC_AW-1:0];
  assign ub_rd_req   = rd_want && mode != MODE_ACT;
  assign ub_rd_addr  = rd_addr[UB_AW-1:0];
  assign rd_fire     = (acc_rd_req && acc_rd_gnt) || (ub_rd_req && ub_rd_gnt);

  // ---- data arrival: what the read granted last cycle carries ------------------------------
  logic d_valid, d_bias, d_first, d_last;
  logic d_x;        // VEC operand a
  logic v1, v2;     // pipeline stage holds a result

  always_ff @(posedge clk) begin
    d_valid <= rd_fire;
    d_bias  <= rd_bias;
    d_first <= rd_first;
    d_last  <= rd_last;
    d_x     <= mode == MODE_VEC && !second;
    if (rst) begin
      d_valid <= 1'b0;
      v1 <= 1'b0;
      v2 <= 1'b0;
    end else begin
      v1 <= d_valid && !d_bias && d_last;
      v2 <= v1;
    end
  end

  // ---- lanes -------------------------------------------------------------------------------
  logic [W*EW-1:0] lane_y;
  logic [W*EW-1:0] result;
  for (genvar j = 0; j < W; j++) begin : g_lane
    logic [31:0] acc_in;
    if (j < COLS) begin : g_acc
      assign acc_in = acc_rd_data[j*32 +: 32];
    end else begin : g_no_acc
      assign acc_in = 32'd0;
    end
    systole_vector_lane #(.BF16(BF16)) u_lane (
        .clk(clk),
        .mode(mode), .vop(cfg_vop), .func(cfg_func), .bias_en(cfg_bias),
        .pool_sum(cfg_pool_sum), .scale(cfg_scale), .shift(cfg_shift), .zp(cfg_zp),
        .lo(cfg_lo), .hi(cfg_hi),
        .acc_in(acc_in), .ub_in(ub_rd_data[j*EW +: EW]),
        .bias_load(d_valid && d_bias),
        .x_load(d_valid && d_x),
        .run_update(d_valid && mode == MODE_POOL && !d_last),
        .pool_first(d_first),
        .y(lane_y[j*EW +: EW]));
    // ACTIVATE writes zeros to elements C <= j < W.
    if (j < COLS) begin : g_out
      assign result[j*EW +: EW] = lane_y[j*EW +: EW];
    end else begin : g_out_zero
      assign result[j*EW +: EW] = (mode == MODE_ACT) ? '0 : lane_y[j*EW +: EW];
    end
  end

  // ---- writes ------------------------------------------------------------------------------
  logic wr_fire;
  assign ub_wr_req  = slot_used[head_ptr] && slot_full[head_ptr];
  assign ub_wr_addr = slot_addr[head_ptr];
  assign ub_wr_data = slot_data[head_ptr];
  assign wr_fire    = ub_wr_req && ub_wr_gnt;

  logic alloc;
  logic [SW-1:0] slot_count_n;
  assign alloc = rd_fire && !rd_bias && rd_last;
  assign slot_count_n = slot_count + SW'(alloc) - SW'(wr_fire);

  always_ff @(posedge clk) begin
    if (alloc) slot_addr[alloc_ptr] <= wd[UB_AW-1:0];
    if (v2) slot_data[fill_ptr] <= result;
    if (rst) begin
      slot_used <= '0;
      slot_full <= '0;
      alloc_ptr <= '0;
      fill_ptr <= '0;
      head_ptr <= '0;
      slot_count <= '0;
    end else begin
      if (alloc) alloc_ptr <= next_slot(alloc_ptr);
      if (v2) fill_ptr <= next_slot(fill_ptr);
      if (wr_fire) head_ptr <= next_slot(head_ptr);
      // v2 fills a slot other than the head being freed unless the head's own result arrives
      // now, which cannot be: a slot's result is written before its write is requested.
      for (int k = 0; k < DEPTH; k++) begin
        if (v2 && fill_ptr == SW'(k)) slot_full[k] <= 1'b1;
        else if (wr_fire && head_ptr == SW'(k)) slot_full[k] <= 1'b0;
        // Likewise a slot is never allocated while it is being written (it is still used).
        if (alloc && alloc_ptr == SW'(k)) slot_used[k] <= 1'b1;
        else if (wr_fire && head_ptr == SW'(k)) slot_used[k] <= 1'b0;
      end
      slot_count <= slot_count_n;
    end
  end

  // ---- instruction acceptance and read sequencing ------------------------------------------
  logic accept;
  logic [7:0] opcode;
  assign cmd_ready = !busy;
  assign accept = cmd_valid && cmd_ready;
  assign opcode = cmd_insn[ISA_OPCODE_LSB +: ISA_OPCODE_WIDTH];

  // Fields, zero-extended to 32 bits (widths pinned by g_isa_check below).
  logic [31:0] f_act_acc, f_act_ub, f_act_rows, f_act_bias_row, f_act_scale;
  logic [31:0] f_vec_a, f_vec_b, f_vec_dst, f_vec_rows;
  logic [31:0] f_pool_src, f_pool_dst, f_pool_in_w, f_pool_out_h, f_pool_out_w;
  logic [31:0] f_pool_win_h, f_pool_win_w, f_pool_stride_h, f_pool_stride_w, f_pool_scale;
  assign f_act_acc       = {8'd0, cmd_insn[ACTIVATE_ACC_LSB +: 24]};
  assign f_act_ub        = {8'd0, cmd_insn[ACTIVATE_UB_LSB +: 24]};
  assign f_act_rows      = {16'd0, cmd_insn[ACTIVATE_ROWS_LSB +: 16]};
  assign f_act_bias_row  = {8'd0, cmd_insn[ACTIVATE_BIAS_ROW_LSB +: 24]};
  assign f_act_scale     = cmd_insn[ACTIVATE_SCALE_LSB +: 32];
  assign f_vec_a         = {8'd0, cmd_insn[VECTOR_A_LSB +: 24]};
  assign f_vec_b         = {8'd0, cmd_insn[VECTOR_B_LSB +: 24]};
  assign f_vec_dst       = {8'd0, cmd_insn[VECTOR_DST_LSB +: 24]};
  assign f_vec_rows      = {16'd0, cmd_insn[VECTOR_ROWS_LSB +: 16]};
  assign f_pool_src      = {8'd0, cmd_insn[POOL_SRC_LSB +: 24]};
  assign f_pool_dst      = {8'd0, cmd_insn[POOL_DST_LSB +: 24]};
  assign f_pool_in_w     = {16'd0, cmd_insn[POOL_IN_W_LSB +: 16]};
  assign f_pool_out_h    = {16'd0, cmd_insn[POOL_OUT_H_LSB +: 16]};
  assign f_pool_out_w    = {16'd0, cmd_insn[POOL_OUT_W_LSB +: 16]};
  assign f_pool_win_h    = {24'd0, cmd_insn[POOL_WIN_H_LSB +: 8]};
  assign f_pool_win_w    = {24'd0, cmd_insn[POOL_WIN_W_LSB +: 8]};
  assign f_pool_stride_h = {24'd0, cmd_insn[POOL_STRIDE_H_LSB +: 8]};
  assign f_pool_stride_w = {24'd0, cmd_insn[POOL_STRIDE_W_LSB +: 8]};
  assign f_pool_scale    = cmd_insn[POOL_SCALE_LSB +: 32];
  if (ACTIVATE_ACC_WIDTH != 24 || ACTIVATE_UB_WIDTH != 24 || ACTIVATE_ROWS_WIDTH != 16
      || ACTIVATE_BIAS_ROW_WIDTH != 24 || ACTIVATE_SCALE_WIDTH != 32 || ACTIVATE_FUNC_WIDTH != 3
      || ACTIVATE_SHIFT_WIDTH != 8 || ACTIVATE_ZP_WIDTH != 8 || ACTIVATE_LO_WIDTH != 16
      || ACTIVATE_HI_WIDTH != 16 || VECTOR_A_WIDTH != 24 || VECTOR_B_WIDTH != 24
      || VECTOR_DST_WIDTH != 24 || VECTOR_ROWS_WIDTH != 16 || VECTOR_OP_WIDTH != 4
      || VECTOR_FUNC_WIDTH != 3 || VECTOR_SHIFT_WIDTH != 8 || VECTOR_LO_WIDTH != 16
      || VECTOR_HI_WIDTH != 16 || POOL_SRC_WIDTH != 24 || POOL_DST_WIDTH != 24
      || POOL_IN_W_WIDTH != 16 || POOL_OUT_H_WIDTH != 16 || POOL_OUT_W_WIDTH != 16
      || POOL_WIN_H_WIDTH != 8 || POOL_WIN_W_WIDTH != 8 || POOL_STRIDE_H_WIDTH != 8
      || POOL_STRIDE_W_WIDTH != 8 || POOL_SCALE_WIDTH != 32 || POOL_SHIFT_WIDTH != 8)
  begin : g_isa_check
    systole_param_error_vector_isa_field_widths_changed u_error ();
  end

  logic [31:0] one_scale;
  assign one_scale = (BF16 != 0) ? F32_ONE : 32'd1;

  logic done_now;
  assign done_now = busy && !issuing && slot_count_n == '0;

  always_ff @(posedge clk) begin
    if (rst) begin
      busy <= 1'b0;
      issuing <= 1'b0;
      done <= 1'b0;
    end else begin
      done <= done_now;
      if (done_now) busy <= 1'b0;
      if (accept) begin
        busy <= 1'b1;
        issuing <= 1'b1;
      end else if (rd_fire && rd_last && !rd_bias) begin
        // The last read of the instruction?
        case (mode)
          MODE_ACT, MODE_VEC: if (count_i == last_i) issuing <= 1'b0;
          default: if (count_i == last_i && oy == last_oy) issuing <= 1'b0;
        endcase
      end
    end
  end

  always_ff @(posedge clk) begin
    if (accept) begin
      cfg_vop <= 3'd0;
      cfg_func <= 2'd0;
      cfg_bias <= 1'b0;
      cfg_pool_sum <= 1'b0;
      cfg_scale <= one_scale;
      cfg_shift <= 6'd0;
      cfg_zp <= 8'd0;
      cfg_lo <= 16'd0;
      cfg_hi <= 16'd0;
      cfg_bcast <= 1'b0;
      bias_phase <= 1'b0;
      second <= 1'b0;
      count_i <= 16'd0;
      oy <= 16'd0;
      wx <= 8'd0;
      wy <= 8'd0;
      last_oy <= 16'd0;
      last_wx <= 8'd0;
      last_wy <= 8'd0;
      in_w <= 32'd0;
      step_w <= 32'd0;
      step_h <= 32'd0;
      rb <= 32'd0;
      case (opcode)
        OP_ACTIVATE: begin
          mode <= MODE_ACT;
          cfg_bias <= cmd_insn[ACTIVATE_BIAS_LSB];
          cfg_func <= cmd_insn[ACTIVATE_FUNC_LSB +: 2];
          cfg_scale <= (f_act_scale == 32'd0) ? one_scale : f_act_scale;
          cfg_shift <= cmd_insn[ACTIVATE_SHIFT_LSB +: 6];
          cfg_zp <= cmd_insn[ACTIVATE_ZP_LSB +: 8];
          cfg_lo <= cmd_insn[ACTIVATE_LO_LSB +: 16];
          cfg_hi <= cmd_insn[ACTIVATE_HI_LSB +: 16];
          bias_phase <= cmd_insn[ACTIVATE_BIAS_LSB];
          ra <= f_act_acc;
          rb <= f_act_bias_row;
          wd <= f_act_ub;
          last_i <= f_act_rows[15:0] - 16'd1;
        end
        OP_VECTOR: begin
          mode <= MODE_VEC;
          cfg_vop <= cmd_insn[VECTOR_OP_LSB +: 3];
          cfg_func <= cmd_insn[VECTOR_FUNC_LSB +: 2];
          cfg_shift <= cmd_insn[VECTOR_SHIFT_LSB +: 6];
          cfg_lo <= cmd_insn[VECTOR_LO_LSB +: 16];
          cfg_hi <= cmd_insn[VECTOR_HI_LSB +: 16];
          cfg_bcast <= cmd_insn[VECTOR_BCAST_LSB];
          ra <= f_vec_a;
          rb <= f_vec_b;
          wd <= f_vec_dst;
          last_i <= f_vec_rows[15:0] - 16'd1;
        end
        default: begin  // OP_POOL
          mode <= MODE_POOL;
          cfg_pool_sum <= cmd_insn[POOL_OP_LSB];
          cfg_scale <= (f_pool_scale == 32'd0) ? one_scale : f_pool_scale;
          cfg_shift <= cmd_insn[POOL_SHIFT_LSB +: 6];
          ra <= f_pool_src;
          line_row <= f_pool_src;
          pix_row <= f_pool_src;
          oy_row <= f_pool_src;
          wd <= f_pool_dst;
          in_w <= f_pool_in_w;
          step_w <= f_pool_stride_w;
          step_h <= f_pool_stride_h
                    * f_pool_in_w;
          last_i <= f_pool_out_w[15:0] - 16'd1;
          last_oy <= f_pool_out_h[15:0] - 16'd1;
          last_wx <= f_pool_win_w[7:0] - 8'd1;
          last_wy <= f_pool_win_h[7:0] - 8'd1;
        end
      endcase
    end else if (rd_fire) begin
      case (mode)
        MODE_ACT: begin
          if (bias_phase) begin
            bias_phase <= 1'b0;
          end else begin
            ra <= ra + 32'd1;
            wd <= wd + 32'd1;
            count_i <= count_i + 16'd1;
          end
        end
        MODE_VEC: begin
          if (!second) begin
            second <= 1'b1;
          end else begin
            second <= 1'b0;
            ra <= ra + 32'd1;
            if (!cfg_bcast) rb <= rb + 32'd1;
            wd <= wd + 32'd1;
            count_i <= count_i + 16'd1;
          end
        end
        default: begin
          if (wx != last_wx) begin
            wx <= wx + 8'd1;
            ra <= ra + 32'd1;
          end else if (wy != last_wy) begin
            wx <= 8'd0;
            wy <= wy + 8'd1;
            line_row <= line_row + in_w;
            ra <= line_row + in_w;
          end else begin
            // The window is complete: on to the next output pixel.
            wx <= 8'd0;
            wy <= 8'd0;
            wd <= wd + 32'd1;
            if (count_i != last_i) begin
              count_i <= count_i + 16'd1;
              pix_row <= pix_row + step_w;
              line_row <= pix_row + step_w;
              ra <= pix_row + step_w;
            end else begin
              count_i <= 16'd0;
              oy <= oy + 16'd1;
              oy_row <= oy_row + step_h;
              pix_row <= oy_row + step_h;
              line_row <= oy_row + step_h;
              ra <= oy_row + step_h;
            end
          end
        end
      endcase
    end
  end

`ifndef SYNTHESIS
  // ---- assertions: the sequencer's checks hold, and the unit keeps its own invariants ------
  logic [31:0] a_rows, a_b_rows, a_last_src;
  always_comb begin
    a_rows = f_vec_rows;
    a_b_rows = cmd_insn[VECTOR_BCAST_LSB] ? 32'd1 : a_rows;
    a_last_src = f_pool_src
        + ((f_pool_out_h - 32'd1) * f_pool_stride_h
           + f_pool_win_h - 32'd1) * f_pool_in_w
        + (f_pool_out_w - 32'd1) * f_pool_stride_w
        + f_pool_win_w - 32'd1;
  end
  always_ff @(posedge clk) begin
    if (!rst && accept) begin
      assert (opcode == OP_ACTIVATE || opcode == OP_VECTOR || opcode == OP_POOL)
      else $error("systole_vector_unit: opcode 0x%02x is not ACTIVATE, VECTOR or POOL", opcode);
      if (opcode == OP_ACTIVATE) begin
        assert (f_act_rows != 0
                && f_act_acc
                   + f_act_rows <= ACC_ROWS
                && f_act_ub
                   + f_act_rows <= UB_ROWS
                && (!cmd_insn[ACTIVATE_BIAS_LSB]
                    || f_act_bias_row < ACC_ROWS))
        else $error("systole_vector_unit: activate rows out of range");
        assert ({24'd0, cmd_insn[ACTIVATE_SHIFT_LSB +: 8]} <= 62)
        else $error("systole_vector_unit: activate shift > 62");
      end
      if (opcode == OP_VECTOR) begin
        assert (a_rows != 0 && f_vec_a + a_rows <= UB_ROWS
                && f_vec_b + a_b_rows <= UB_ROWS
                && f_vec_dst + a_rows <= UB_ROWS)
        else $error("systole_vector_unit: vector rows out of range");
        assert ({28'd0, cmd_insn[VECTOR_OP_LSB +: 4]} <= 4
                && {24'd0, cmd_insn[VECTOR_SHIFT_LSB +: 8]} <= 62)
        else $error("systole_vector_unit: vector op or shift out of range");
      end
      if (opcode == OP_POOL) begin
        assert (f_pool_in_w != 0
                && f_pool_out_h != 0
                && f_pool_out_w != 0
                && f_pool_win_h != 0
                && f_pool_win_w != 0
                && f_pool_stride_h != 0
                && f_pool_stride_w != 0
                && {24'd0, cmd_insn[POOL_SHIFT_LSB +: 8]} <= 62)
        else $error("systole_vector_unit: pool shape field out of range");
        assert (a_last_src < UB_ROWS
                && f_pool_dst
                   + f_pool_out_h * f_pool_out_w
                   <= UB_ROWS)
        else $error("systole_vector_unit: pool rows out of range");
      end
    end
    if (!rst && acc_rd_req) begin
      assert (rd_addr < ACC_ROWS) else $error("systole_vector_unit: acc read row %0d", rd_addr);
    end
    if (!rst && ub_rd_req) begin
      assert (rd_addr < UB_ROWS) else $error("systole_vector_unit: ub read row %0d", rd_addr);
    end
    if (!rst && alloc) begin
      assert (wd < UB_ROWS) else $error("systole_vector_unit: ub write row %0d", wd);
    end
    if (!rst && v2) begin
      assert (!slot_full[fill_ptr]) else $error("systole_vector_unit: result into a full slot");
    end
    if (!rst) begin
      assert (slot_count <= SW'(DEPTH)) else $error("systole_vector_unit: slot count");
    end
  end
`endif
endmodule
