// systole_vector_unit — the VECTOR unit: ACTIVATE (accumulator rows → unified-buffer rows),
// VECTOR (elementwise on unified-buffer rows) and POOL (windows of unified-buffer rows), with
// the semantics of docs/ISA.md and the arithmetic of docs/NUMERICS.md, bit-exact against
// sim/model/vector_unit.cpp.
//
// Structure (one file each, this one wires them and accepts instructions):
//   * systole_vector_decode: the instruction's fields → the lanes' configuration (held here
//     while the instruction runs) and the start of its read walk.
//   * systole_vector_reads: the read walk, in program order, one read per cycle when granted:
//     ACTIVATE reads the bias row once, then one accumulator row per output row; VECTOR reads
//     row a then row b per output row; POOL reads the window's rows in row-major window order
//     per output pixel. The reads of one output row form a "group".
//   * W lanes (systole_vector_lane) compute each element: step 1 when the data arrives, then
//     two pipeline registers; the pipeline never stalls.
//   * REDUCE: over=rows is a POOL window of 1 x rows; over=elems reads one row per group and
//     systole_vector_rowreduce combines its elements, one per cycle, into lane step 1 (the
//     reads wait for it). Lanes from elems (over=rows) or 1 (over=elems) on are written zero.
//   * VECTOR with `math` (bf16 configurations): systole_vector_math takes the row from the
//     lanes' step 2, runs the function's micro-program and hands the row back into step 2's
//     register; no read is issued while it runs, so such a row takes the program's length.
//   * systole_vector_slots: DEPTH output slots, allocated in order when a group's last read is
//     granted and freed when its row write is granted. A group starts only while a slot is
//     free, so the pipeline always has somewhere to put its result.
//   * Ordering: rows are read completely before they are written, in order. A unified-buffer
//     read waits while any allocated slot is still to write the same row, so a read never
//     overtakes an earlier write (dst may overlap a, b or src, even shifted by one row).
//   * done pulses the cycle after the grant of the instruction's last row write. The next
//     instruction is accepted once the unit is idle.
//
// Parameters: the configuration's shape (ROWS, COLS: W = max(ROWS, COLS) lanes, COLS of them
// with an accumulator column), number format (BF16) and buffer sizes (UB_ROWS, ACC_ROWS: the
// row-port widths), all from systole_core; the defaults are rejected at elaboration.
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
    input  logic [255:0]          cmd_insn,
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
    input  logic [COLS*32-1:0]    acc_rd_data,
    // ACC write port (ACCVEC only; shared, req/gnt; written at the granting edge; whole rows)
    output logic                  acc_wr_req,
    output logic [ACC_AW-1:0]     acc_wr_addr,
    output logic [COLS*32-1:0]    acc_wr_data,
    input  logic                  acc_wr_gnt
);
  `include "systole_isa.svh"

  // ---- Parameters --------------------------------------------------------------------------
  // Configuration parameters come from the parent; the defaults fail these checks.
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

  localparam logic [1:0] MODE_ACT = 2'd0, MODE_VEC = 2'd1, MODE_POOL = 2'd2, MODE_RED = 2'd3;

  // ---- Instruction acceptance and completion -----------------------------------------------
  logic busy_q, busy_d;        // an instruction is in progress
  logic issuing_q, issuing_d;  // ... and reads remain to be issued
  logic done_q, done_d;
  logic accept;
  logic rd_final;              // the instruction's last read is granted
  logic slots_empty_d;         // no output slot is allocated after this edge

  // ACCVEC runs in its own engine (systole_vector_accvec, bf16 configurations), one
  // instruction at a time like the rest: the unit is ready when both are idle.
  logic is_accvec, av_start, av_busy, av_done;
  assign is_accvec = cmd_insn[ISA_OPCODE_LSB +: ISA_OPCODE_WIDTH] == OP_ACCVEC;
  assign cmd_ready = !busy_q && !av_busy;
  assign accept = cmd_valid && cmd_ready && !is_accvec;
  assign av_start = cmd_valid && cmd_ready && is_accvec;
  assign done = done_q || av_done;

  always_comb begin
    done_d = busy_q && !issuing_q && slots_empty_d;
    busy_d = busy_q;
    issuing_d = issuing_q;
    if (done_d) busy_d = 1'b0;
    if (accept) begin
      busy_d = 1'b1;
      issuing_d = 1'b1;
    end else if (rd_final) begin
      issuing_d = 1'b0;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      busy_q <= 1'b0;
      issuing_q <= 1'b0;
      done_q <= 1'b0;
    end else begin
      busy_q <= busy_d;
      issuing_q <= issuing_d;
      done_q <= done_d;
    end
  end

  // ---- The instruction's configuration: decoded, held while it runs ------------------------
  logic [1:0]  dec_mode;
  logic [2:0]  dec_vop;
  logic [1:0]  dec_func;
  logic        dec_bias, dec_pool_sum, dec_bcast, dec_bcol;
  logic [3:0]  dec_math;
  logic [15:0] dec_elems, dec_zero_from;
  logic        dec_zero_en;
  logic [31:0] dec_scale;
  logic [5:0]  dec_shift;
  logic [7:0]  dec_zp;
  logic [15:0] dec_lo, dec_hi;
  logic [31:0] dec_ra, dec_rb, dec_wd, dec_in_w, dec_step_w, dec_step_h;
  logic [15:0] dec_last_i, dec_last_oy, dec_last_wx;
  logic [7:0]  dec_last_wy;

  systole_vector_decode #(.BF16(BF16), .UB_ROWS(UB_ROWS), .ACC_ROWS(ACC_ROWS)) u_decode (
      .clk, .rst, .accept_i(accept), .insn_i(cmd_insn),
      .mode_o(dec_mode), .vop_o(dec_vop), .func_o(dec_func), .bias_o(dec_bias),
      .pool_sum_o(dec_pool_sum), .scale_o(dec_scale), .shift_o(dec_shift), .zp_o(dec_zp),
      .lo_o(dec_lo), .hi_o(dec_hi), .bcast_o(dec_bcast), .bcol_o(dec_bcol), .math_o(dec_math),
      .elems_o(dec_elems), .zero_en_o(dec_zero_en), .zero_from_o(dec_zero_from),
      .ra_o(dec_ra), .rb_o(dec_rb), .wd_o(dec_wd), .last_i_o(dec_last_i),
      .last_oy_o(dec_last_oy), .last_wx_o(dec_last_wx), .last_wy_o(dec_last_wy),
      .in_w_o(dec_in_w), .step_w_o(dec_step_w), .step_h_o(dec_step_h));

  logic [1:0]  mode_q, mode_d;
  logic [2:0]  vop_q, vop_d;
  logic [1:0]  func_q, func_d;
  logic        bias_q, bias_d;
  logic        pool_sum_q, pool_sum_d;
  logic        bcast_q, bcast_d;
  logic        bcol_q, bcol_d;
  logic [3:0]  math_q, math_d;
  logic [15:0] elems_q, elems_d, zero_from_q, zero_from_d;
  logic        zero_en_q, zero_en_d;
  logic [31:0] scale_q, scale_d;
  logic [5:0]  shift_q, shift_d;
  logic [7:0]  zp_q, zp_d;
  logic [15:0] lo_q, lo_d, hi_q, hi_d;

  assign mode_d     = accept ? dec_mode : mode_q;
  assign vop_d      = accept ? dec_vop : vop_q;
  assign func_d     = accept ? dec_func : func_q;
  assign bias_d     = accept ? dec_bias : bias_q;
  assign pool_sum_d = accept ? dec_pool_sum : pool_sum_q;
  assign bcast_d    = accept ? dec_bcast : bcast_q;
  assign bcol_d     = accept ? dec_bcol : bcol_q;
  assign math_d     = accept ? dec_math : math_q;
  assign elems_d    = accept ? dec_elems : elems_q;
  assign zero_en_d  = accept ? dec_zero_en : zero_en_q;
  assign zero_from_d = accept ? dec_zero_from : zero_from_q;
  assign scale_d    = accept ? dec_scale : scale_q;
  assign shift_d    = accept ? dec_shift : shift_q;
  assign zp_d       = accept ? dec_zp : zp_q;
  assign lo_d       = accept ? dec_lo : lo_q;
  assign hi_d       = accept ? dec_hi : hi_q;

  // Loaded when the instruction is accepted, meaningful only while it runs: not reset.
  always_ff @(posedge clk) begin
    if (!rst) begin
      mode_q <= mode_d;
      vop_q <= vop_d;
      func_q <= func_d;
      bias_q <= bias_d;
      pool_sum_q <= pool_sum_d;
      bcast_q <= bcast_d;
      bcol_q <= bcol_d;
      math_q <= math_d;
      elems_q <= elems_d;
      zero_en_q <= zero_en_d;
      zero_from_q <= zero_from_d;
      scale_q <= scale_d;
      shift_q <= shift_d;
      zp_q <= zp_d;
      lo_q <= lo_d;
      hi_q <= hi_d;
    end
  end

  // ---- Reads -------------------------------------------------------------------------------
  // The ACC read port: the read walk's, or ACCVEC's (never both: one instruction at a time).
  logic              rw_acc_rd_req, av_acc_rd_req;
  logic [ACC_AW-1:0] rw_acc_rd_addr, av_acc_rd_addr;
  assign acc_rd_req = rw_acc_rd_req || av_acc_rd_req;
  assign acc_rd_addr = av_acc_rd_req ? av_acc_rd_addr : rw_acc_rd_addr;
  logic             rd_fire, rd_bias, rd_first, rd_last;
  logic [UB_AW-1:0] rd_addr, alloc_addr;
  logic             alloc, credit, hazard;
  // A VECTOR with math: from its group's last read until the function's result is back, no
  // further read is issued (the function takes one row at a time).
  logic             math_en, math_busy_q, math_busy_d, math_done;
  assign math_en = mode_q == MODE_VEC && math_q != 4'd0;
  assign math_busy_d = (math_busy_q && !math_done) || (alloc && math_en);
  always_ff @(posedge clk) begin
    if (rst) math_busy_q <= 1'b0;
    else math_busy_q <= math_busy_d;
  end
  // Likewise REDUCE over=elems, from a row's read until its reduction is done.
  logic             red_en, red_busy_q, red_busy_d, red_done;
  logic [31:0]      red_y;
  assign red_en = mode_q == MODE_RED;
  assign red_busy_d = (red_busy_q && !red_done) || (alloc && red_en);
  always_ff @(posedge clk) begin
    if (rst) red_busy_q <= 1'b0;
    else red_busy_q <= red_busy_d;
  end

  systole_vector_reads #(.UB_ROWS(UB_ROWS), .ACC_ROWS(ACC_ROWS)) u_reads (
      .clk, .rst, .start_i(accept), .active_i(busy_q && issuing_q),
      .mode_i(mode_q), .bcast_i(bcast_q), .bias_i(dec_bias),
      .ra_i(dec_ra), .rb_i(dec_rb), .wd_i(dec_wd), .last_i_i(dec_last_i),
      .last_oy_i(dec_last_oy), .last_wx_i(dec_last_wx), .last_wy_i(dec_last_wy),
      .in_w_i(dec_in_w), .step_w_i(dec_step_w), .step_h_i(dec_step_h),
      .credit_i(credit), .hazard_i(hazard || math_busy_q || red_busy_q), .rd_addr_o(rd_addr),
      .alloc_o(alloc), .alloc_addr_o(alloc_addr),
      .rd_fire_o(rd_fire), .rd_bias_o(rd_bias), .rd_first_o(rd_first), .rd_last_o(rd_last),
      .rd_final_o(rd_final),
      .acc_rd_req(rw_acc_rd_req), .acc_rd_addr(rw_acc_rd_addr),
      .acc_rd_gnt(acc_rd_gnt && rw_acc_rd_req), .ub_rd_req, .ub_rd_addr, .ub_rd_gnt);

  // ---- Data arrival: what the read granted last cycle carries ------------------------------
  logic d_valid_q, d_valid_d;
  logic d_bias_q, d_bias_d, d_first_q, d_first_d, d_last_q, d_last_d;
  logic d_x_q, d_x_d;  // VEC operand a
  logic v1_q, v1_d, v2_q, v2_d;  // pipeline stage holds a result

  assign d_valid_d = rd_fire;
  assign d_bias_d  = rd_bias;
  assign d_first_d = rd_first;
  assign d_last_d  = rd_last;
  assign d_x_d     = mode_q == MODE_VEC && rd_first;
  assign v1_d      = red_en ? red_done : d_valid_q && !d_bias_q && d_last_q;
  assign v2_d      = math_en ? math_done : v1_q;

  always_ff @(posedge clk) begin
    if (rst) begin
      d_valid_q <= 1'b0;
      v1_q <= 1'b0;
      v2_q <= 1'b0;
    end else begin
      d_valid_q <= d_valid_d;
      v1_q <= v1_d;
      v2_q <= v2_d;
    end
  end

  // The read's marks: pipeline copies, qualified by d_valid_q, not reset.
  always_ff @(posedge clk) begin
    d_bias_q <= d_bias_d;
    d_first_q <= d_first_d;
    d_last_q <= d_last_d;
    d_x_q <= d_x_d;
  end

  // ---- Lanes -------------------------------------------------------------------------------
  logic [W*EW-1:0] lane_y;
  logic [W*EW-1:0] result;
  logic [W*32-1:0] math_in, math_y;
  for (genvar j = 0; j < W; j++) begin : g_lane
    logic [31:0] acc_in;
    if (j < COLS) begin : g_acc
      assign acc_in = acc_rd_data[j*32 +: 32];
    end else begin : g_no_acc
      assign acc_in = 32'd0;
    end
    systole_vector_lane #(.BF16(BF16)) u_lane (
        .clk(clk),
        .mode(mode_q), .vop(vop_q), .func(func_q), .bias_en(bias_q),
        .pool_sum(pool_sum_q), .scale(scale_q), .shift(shift_q), .zp(zp_q),
        .lo(lo_q), .hi(hi_q),
        // bcol: the b read gives every lane element 0 of its row.
        .acc_in(acc_in),
        .ub_in((bcol_q && mode_q == MODE_VEC && !d_x_q) ? ub_rd_data[0 +: EW]
                                                         : ub_rd_data[j*EW +: EW]),
        .bias_load(d_valid_q && d_bias_q),
        .x_load(d_valid_q && d_x_q),
        .run_update(d_valid_q && mode_q == MODE_POOL && !d_last_q),
        .pool_first(d_first_q),
        .step1_en(v1_d), .step2_en(v1_q || math_done),
        .math_in_o(math_in[j*32 +: 32]), .math_load_i(math_done),
        .math_y_i(math_y[j*32 +: 32]),
        .red_load_i(red_done), .red_v_i(red_y),
        .y(lane_y[j*EW +: EW]));
    // ACTIVATE writes zeros to elements C <= j < W; REDUCE to elements zero_from and up.
    logic zero;
    assign zero = (zero_en_q && 32'(j) >= 32'(zero_from_q)) || (j >= COLS && mode_q == MODE_ACT);
    assign result[j*EW +: EW] = zero ? '0 : lane_y[j*EW +: EW];
  end

  // ---- REDUCE over=elems: one row's elements in order ---------------------------------------
  logic unused_red_busy;
  systole_vector_rowreduce #(.ROWS(ROWS), .COLS(COLS), .BF16(BF16)) u_rowreduce (
      .clk, .rst, .start_i(d_valid_q && red_en), .row_i(ub_rd_data), .elems_i(elems_q),
      .max_i(!pool_sum_q), .busy_o(unused_red_busy), .done_o(red_done), .y_o(red_y));

  // ---- Transcendental functions (bf16 configurations) -------------------------------------
  // Started when a math row's operands are in step 2 (v1_q); its result re-enters step 2.
  if (BF16 != 0) begin : g_math
    logic unused_busy;
    systole_vector_math #(.ROWS(ROWS), .COLS(COLS)) u_math (
        .clk, .rst, .start_i(v1_q && math_en), .func_i(math_q), .v_i(math_in),
        .busy_o(unused_busy), .done_o(math_done), .y_o(math_y));
  end else begin : g_no_math
    // The sequencer faults math in int8 configurations; nothing here ever starts.
    assign math_done = 1'b0;
    assign math_y = '0;
    logic unused_math;
    assign unused_math = ^math_in;
  end

  // ---- ACCVEC (bf16 configurations: fp32 accumulators) ------------------------------------
  if (BF16 != 0) begin : g_accvec
    systole_vector_accvec #(.COLS(COLS), .ACC_ROWS(ACC_ROWS)) u_accvec (
        .clk, .rst, .start_i(av_start), .insn_i(cmd_insn), .busy_o(av_busy), .done_o(av_done),
        .acc_rd_req(av_acc_rd_req), .acc_rd_addr(av_acc_rd_addr),
        .acc_rd_gnt(acc_rd_gnt && av_acc_rd_req), .acc_rd_data,
        .acc_wr_req, .acc_wr_addr, .acc_wr_data, .acc_wr_gnt);
  end else begin : g_no_accvec
    // The sequencer faults ACCVEC in int8 configurations; nothing here ever starts.
    assign av_busy = 1'b0;
    assign av_done = 1'b0;
    assign av_acc_rd_req = 1'b0;
    assign av_acc_rd_addr = '0;
    assign acc_wr_req = 1'b0;
    assign acc_wr_addr = '0;
    assign acc_wr_data = '0;
    logic unused_accvec;
    assign unused_accvec = av_start ^ acc_wr_gnt;
  end

  // ---- Output slots and row writes ---------------------------------------------------------
  systole_vector_slots #(.ROWS(ROWS), .COLS(COLS), .BF16(BF16), .UB_ROWS(UB_ROWS)) u_slots (
      .clk, .rst, .alloc_i(alloc), .alloc_addr_i(alloc_addr),
      .fill_i(v2_q), .fill_data_i(result), .rd_addr_i(rd_addr),
      .hazard_o(hazard), .credit_o(credit), .empty_d_o(slots_empty_d),
      .ub_wr_req, .ub_wr_addr, .ub_wr_data, .ub_wr_gnt);
endmodule
