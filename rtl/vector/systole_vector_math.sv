// systole_vector_math — VECTOR's transcendental step (`math=`: exp, recip, rsqrt, tanh, sigmoid,
// gelu_tanh, gelu_erf, log) for the W lanes of a row at once, bit-exact against
// sim/model/transcendental.cpp (the algorithms of docs/NUMERICS.md).
//
// Micro-programmed: systole_vector_math_rom holds each function as a sequence of single fp32
// operations and exponent-field steps; one shared sequencer walks it, one word per cycle, and
// every lane executes the word on its own registers (R0..R7, K, S, RS and its input's sign),
// with one fp32 adder, one multiplier and one min/max unit per lane — the same units the rest
// of the vector unit is built from, one operation deep per cycle, so the clock is unchanged.
// A row takes the program's length in cycles (26 for exp, 73 for gelu_erf, 38 for log; see
// docs/ISA.md), which the vector unit waits for: transcendental rows trade throughput for an
// area of three fp32 units per lane instead of a pipeline of ~70.
//
// Handshake: start_i (one cycle; func_i and v_i valid) loads every lane's input; done_o pulses
// one cycle with y_o valid, the program's length plus one cycle later. busy_o is high from the
// cycle after start_i until done_o. NaN inputs, and the zeros and infinities that recip and
// rsqrt define directly, take their result from a check made at start.
//
// Parameters: the array's shape (ROWS, COLS) from systole_vector_unit; W = max(ROWS, COLS) lanes,
// the unified-buffer row width, derived here as everywhere else (docs/ARCHITECTURE.md).
module systole_vector_math #(
    parameter integer ROWS = 0,
    parameter integer COLS = 0,
    localparam integer W = (ROWS > COLS) ? ROWS : COLS
) (
    input  logic            clk,
    input  logic            rst,
    input  logic            start_i,
    input  logic [3:0]      func_i,   // VECTOR math (1 exp .. 8 log), held while busy
    input  logic [W*32-1:0] v_i,      // fp32 inputs (already flushed: results of fp32 ops)
    output logic            busy_o,
    output logic            done_o,
    output logic [W*32-1:0] y_o
);
  // ---- Parameters --------------------------------------------------------------------------
  if (ROWS < 1 || COLS < 1) begin : g_shape_check
    systole_param_error_vector_math_ROWS_and_COLS_must_be_at_least_1 u_error ();
  end
  localparam logic [3:0] FUNC_RECIP = 4'd2, FUNC_RSQRT = 4'd3, FUNC_LOG = 4'd8;
  localparam logic [31:0] CANONICAL_NAN = 32'h7FC0_0000, ROUND_MAGIC = 32'h4B40_0000;
  localparam logic [31:0] RSQRT_MAGIC = 32'h5F37_59DF;
  localparam logic [22:0] SQRT2_FRACTION = 23'h35_04F3;  // log's reduction: m < sqrt 2

  // ---- Sequencer: walks the ROM --------------------------------------------------------------
  logic [7:0] pc_q, pc_d, ret_q, ret_d, entry;
  logic       run_q, run_d, done_q, done_d;
  logic       op_add, op_sub, op_mul, op_min, op_max, op_pass, op_subk, op_mantr, op_rsqp;
  logic       op_seedrs, op_scale, op_selneg, op_selk0, op_orsign, op_sets, op_logr, op_kflt, we;
  logic [2:0] dst, a_reg, b_reg;
  logic       a_imm, a_immsel, a_abs, a_neg, b_imm, use_k, use_s, neg_s, or_rs;
  logic       ctl_call, ctl_ret, ctl_end;
  logic [31:0] imm, imm2;
  logic [7:0] target;

  systole_vector_math_rom u_rom (
      .func_i(func_i), .pc_i(pc_q), .entry_o(entry),
      .add_o(op_add), .sub_o(op_sub), .mul_o(op_mul), .min_o(op_min), .max_o(op_max),
      .pass_o(op_pass), .subk_o(op_subk), .mantr_o(op_mantr), .rsqp_o(op_rsqp),
      .seedrs_o(op_seedrs), .scale_o(op_scale), .selneg_o(op_selneg), .selk0_o(op_selk0),
      .orsign_o(op_orsign), .sets_o(op_sets), .logr_o(op_logr), .kflt_o(op_kflt), .we_o(we), .dst_o(dst),
      .a_reg_o(a_reg), .a_imm_o(a_imm), .a_immsel_o(a_immsel), .a_abs_o(a_abs),
      .a_neg_o(a_neg), .b_reg_o(b_reg), .b_imm_o(b_imm), .imm_o(imm), .imm2_o(imm2),
      .use_k_o(use_k), .use_s_o(use_s), .neg_s_o(neg_s), .or_rs_o(or_rs),
      .call_o(ctl_call), .ret_o(ctl_ret), .end_o(ctl_end), .target_o(target));

  always_comb begin
    pc_d = pc_q;
    ret_d = ret_q;
    run_d = run_q;
    done_d = 1'b0;
    if (start_i) begin
      pc_d = entry;
      run_d = 1'b1;
    end else if (run_q) begin
      if (ctl_end) begin
        run_d = 1'b0;
        done_d = 1'b1;
      end else if (ctl_call) begin
        pc_d = target;
        ret_d = pc_q + 8'd1;
      end else if (ctl_ret) begin
        pc_d = ret_q;
      end else begin
        pc_d = pc_q + 8'd1;
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      run_q <= 1'b0;
      done_q <= 1'b0;
    end else begin
      run_q <= run_d;
      done_q <= done_d;
    end
  end
  // Meaningful only while running: not reset.
  always_ff @(posedge clk) begin
    pc_q <= pc_d;
    ret_q <= ret_d;
  end

  assign busy_o = run_q || done_q;
  assign done_o = done_q;

  // ---- Lanes ---------------------------------------------------------------------------------
  for (genvar l = 0; l < W; l++) begin : g_lane
    logic [255:0] r_q, r_d;  // R0..R7: register i is bits [32i +: 32]
    logic signed [9:0] k_q, k_d, s_q, s_d;
    logic        rs_q, rs_d, neg_q, neg_d, spec_q, spec_d;
    logic [31:0] spec_val_q, spec_val_d;
    logic [31:0] v, a_raw, a, b, add_b, add_y, mul_y, mm_y, result;
    logic [31:0] scaled, mant, rsq_d, seed, log_m, k_float;
    logic signed [9:0] rsq_k, mantr_k, subk_k, log_k, shift;
    logic        log_high;
    logic signed [10:0] field;
    logic        v_nan, v_zero, v_inf;

    assign v = v_i[l*32 +: 32];

    // Operands.
    always_comb begin
      a_raw = a_imm ? ((a_immsel && neg_q) ? imm2 : imm) : r_q[a_reg*32 +: 32];
      a = a_raw;
      if (a_abs) a = {1'b0, a_raw[30:0]};
      else if (a_neg) a = {~a_raw[31], a_raw[30:0]};
      b = b_imm ? imm : r_q[b_reg*32 +: 32];
      add_b = (op_sub || op_subk) ? {~b[31], b[30:0]} : b;
    end
    systole_fp32_add u_add (.a(a), .b(add_b), .y(add_y));
    systole_fp32_mul u_mul (.a(a), .b(b), .y(mul_y));
    systole_fp32_minmax u_mm (.a(a), .b(b), .is_min(op_min), .y(mm_y));

    // Exponent-field operations.
    always_comb begin
      // recip: d = mant(A), K = 127 - e.
      mant = {1'b0, 8'd127, a[22:0]};
      mantr_k = 10'sd127 - $signed({2'b00, a[30:23]});
      // rsqrt: d in [1, 4) (exponent 127 for an odd field, 128 for an even one), K = -h.
      rsq_d = {1'b0, a[23] ? 8'd127 : 8'd128, a[22:0]};
      rsq_k = -(($signed({2'b00, a[30:23]}) - (a[23] ? 10'sd127 : 10'sd128)) >>> 1);
      seed = RSQRT_MAGIC - {1'b0, a[31:1]};
      // exp: K = bits(t + M) - bits(M), the integer of rint(t).
      subk_k = $signed(a[9:0] - ROUND_MAGIC[9:0]);
      // log: v = m * 2^K with m in [sqrt(1/2), sqrt 2); bits(M) + K, whose value less M is K.
      log_high = a[22:0] >= SQRT2_FRACTION;
      log_m = {1'b0, log_high ? 8'd126 : 8'd127, a[22:0]};
      log_k = $signed({2'b00, a[30:23]}) - (log_high ? 10'sd126 : 10'sd127);
      k_float = ROUND_MAGIC + {{22{k_q[9]}}, k_q};
      // SCALE: A * 2^shift on the exponent field; zero, infinity pass, NaN becomes canonical.
      shift = (use_k ? k_q : 10'sd0) + (use_s ? (neg_s ? -s_q : s_q) : 10'sd0);
      field = $signed({3'b000, a[30:23]}) + 11'(shift);
      if (a[30:23] == 8'hFF) scaled = (a[22:0] != 23'd0) ? CANONICAL_NAN : a;
      else if (a[30:0] == 31'd0) scaled = a;
      else if (field >= 11'sd255) scaled = {a[31], 8'hFF, 23'd0};
      else if (field <= 11'sd0) scaled = {a[31], 31'd0};
      else scaled = {a[31], field[7:0], a[22:0]};
      if (or_rs) scaled[31] = scaled[31] | rs_q;
    end

    always_comb begin
      result = a;  // PASS, and the words that write no register
      if (op_pass) result = a;
      else if (op_add || op_sub || op_subk) result = add_y;
      else if (op_mul) result = mul_y;
      else if (op_min || op_max) result = mm_y;
      else if (op_mantr) result = mant;
      else if (op_rsqp) result = rsq_d;
      else if (op_seedrs) result = seed;
      else if (op_scale) result = scaled;
      else if (op_selneg) result = neg_q ? a : b;
      else if (op_selk0) result = (k_q == 10'sd0) ? a : b;
      else if (op_orsign) result = {a[31] | neg_q, a[30:0]};
      else if (op_logr) result = log_m;
      else if (op_kflt) result = k_float;
    end

    // The function's direct results: NaN in, NaN out; recip, rsqrt and log of zeros,
    // infinities and (rsqrt, log) negative numbers.
    assign v_nan = v[30:23] == 8'hFF && v[22:0] != 23'd0;
    assign v_inf = v[30:23] == 8'hFF && v[22:0] == 23'd0;
    assign v_zero = v[30:23] == 8'h00;
    always_comb begin
      spec_d = spec_q;
      spec_val_d = spec_val_q;
      if (start_i) begin
        spec_d = 1'b1;
        spec_val_d = CANONICAL_NAN;
        if (v_nan) spec_val_d = CANONICAL_NAN;
        else if (func_i == FUNC_RECIP && v_zero) spec_val_d = {v[31], 8'hFF, 23'd0};
        else if (func_i == FUNC_RECIP && v_inf) spec_val_d = {v[31], 31'd0};
        else if (func_i == FUNC_RSQRT && v_zero) spec_val_d = {v[31], 8'hFF, 23'd0};
        else if (func_i == FUNC_RSQRT && v[31]) spec_val_d = CANONICAL_NAN;
        else if (func_i == FUNC_RSQRT && v_inf) spec_val_d = 32'd0;
        else if (func_i == FUNC_LOG && v_zero) spec_val_d = 32'hFF80_0000;  // log(+-0) = -inf
        else if (func_i == FUNC_LOG && v[31]) spec_val_d = CANONICAL_NAN;
        else if (func_i == FUNC_LOG && v_inf) spec_val_d = v;
        else spec_d = 1'b0;
      end
    end

    // Registers: loaded at start (R0 = R1 = v), then by the words.
    always_comb begin
      r_d = r_q;
      k_d = k_q;
      s_d = s_q;
      rs_d = rs_q;
      neg_d = neg_q;
      if (start_i) begin
        r_d[31:0] = v;
        r_d[63:32] = v;
        k_d = 10'sd0;
        s_d = 10'sd0;
        rs_d = 1'b0;
        neg_d = v[31];
      end else if (run_q) begin
        if (we) r_d[dst*32 +: 32] = result;
        if (op_subk) k_d = subk_k;
        if (op_mantr) begin
          k_d = mantr_k;
          rs_d = a[31];
        end
        if (op_rsqp) k_d = rsq_k;
        if (op_logr) k_d = log_k;
        if (op_sets) s_d = neg_q ? 10'($signed(imm[7:0])) : 10'sd0;
      end
    end

    // Meaningful only while a function runs: not reset.
    always_ff @(posedge clk) begin
      r_q <= r_d;
      k_q <= k_d;
      s_q <= s_d;
      rs_q <= rs_d;
      neg_q <= neg_d;
      spec_q <= spec_d;
      spec_val_q <= spec_val_d;
    end

    assign y_o[l*32 +: 32] = spec_q ? spec_val_q : r_q[63:32];
  end
endmodule
