// systole_vector_lane — one element lane of the vector unit (ACTIVATE, VECTOR, POOL), the
// per-element arithmetic of docs/ISA.md in the order sim/model/vector_unit.cpp applies it.
//
// Three steps, two pipeline registers (the unit never stalls the pipeline: it only reads rows
// whose results have a free output slot):
//   step 1 (the cycle the row data arrives):
//     ACTIVATE  v = bias ? v + bias[j] : v              (fp32 add / wrapping int32 add)
//     VECTOR    x op y, or x and y for mul             (add, sub = add of −y, max, min)
//     POOL      running = first ? (sum ? 0 + x : x) : (sum ? running + x : max(running, x))
//   step 2: the multiply — ACTIVATE scale, VECTOR mul, POOL sum scale (fp32 multiply / int64
//     requantization (v·S + 2^(s−1)) >>> s); the others pass through. A VECTOR with `math`
//     sends this value to systole_vector_math and takes its result back (math_load_i) into
//     the step-2 register, as many cycles later as the function's program takes.
//   (REDUCE over=elems: the row's max or sum arrives from systole_vector_rowreduce into the
//   step-1 register, mode 3.)
//   step 3: the function (relu, relu6, clamp), then bf16 rounding / zero point and int8
//     saturation. POOL has no function; only ACTIVATE has a zero point (the unit passes
//     func = none and zp = 0 for the others).
// BF16 = 1 builds the fp32 datapath from rtl/numerics/, BF16 = 0 the integer one.
module systole_vector_lane #(
    parameter integer BF16 = -1,
    localparam integer EW = (BF16 != 0) ? 16 : 8
) (
    input  logic          clk,
    // Per-instruction configuration, stable while the instruction runs.
    input  logic [1:0]    mode,       // 0 ACTIVATE, 1 VECTOR, 2 POOL, 3 REDUCE over=elems
    input  logic [2:0]    vop,        // VECTOR op (0 add, 1 sub, 2 mul, 3 max, 4 min)
    input  logic [1:0]    func,       // 0 none, 1 relu, 2 relu6, 3 clamp
    input  logic          bias_en,    // ACTIVATE: add the bias row
    input  logic          pool_sum,   // POOL: sum (else max)
    input  logic [31:0]   scale,      // ACTIVATE / POOL scale, 0 already replaced by 1
    input  logic [5:0]    shift,      // int8 right shift of the multiply
    input  logic [7:0]    zp,         // int8 ACTIVATE zero point (0 otherwise)
    input  logic [15:0]   lo,         // clamp bounds: bf16 bits or int16
    input  logic [15:0]   hi,
    // Row data of the cycle (valid when one of the strobes below is high).
    input  logic [31:0]   acc_in,     // this lane's accumulator element
    input  logic [EW-1:0] ub_in,      // this lane's unified-buffer element
    input  logic          bias_load,  // acc_in is the bias element
    input  logic          x_load,     // ub_in is VECTOR operand x (the row of a)
    input  logic          run_update, // ub_in is a POOL window element that is not the last
    input  logic          pool_first, // ... and it is the first of its window
    // The pipeline registers' loads that matter: step1_en when step 1 holds a row's result
    // (or REDUCE's value), step2_en when step 2 does (or the math result returns). y is only
    // read two cycles after step1_en; the int8 datapath loads and computes only on these, so
    // a simulator skips it in the cycles the unit idles (the fp32 one loads every cycle).
    input  logic          step1_en,
    input  logic          step2_en,
    // VECTOR math (bf16 only): step 2's result goes to systole_vector_math as math_in_o, and
    // its result comes back into the step-2 register when math_load_i is high.
    output logic [31:0]   math_in_o,
    input  logic          math_load_i,
    input  logic [31:0]   math_y_i,
    // REDUCE over=elems: systole_vector_rowreduce's value enters step 1's register (red_load_i),
    // to be scaled (sum) and converted like a POOL result.
    input  logic          red_load_i,
    input  logic [31:0]   red_v_i,
    // The pipeline registers load every cycle: the result of the element that completes a row
    // in cycle t (ACTIVATE row, VECTOR y, last POOL window element) is on y in cycle t + 2.
    output logic [EW-1:0] y
);

  // ---- Parameters --------------------------------------------------------------------------
  // Configuration parameters come from the parent; the defaults fail these checks.
  if (BF16 != 0 && BF16 != 1) begin : g_bf16_check
    systole_param_error_vector_lane_BF16_must_be_0_or_1 u_error ();
  end
  localparam logic [1:0] MODE_ACT = 2'd0, MODE_VEC = 2'd1;
  localparam logic [2:0] VOP_SUB = 3'd1, VOP_MUL = 3'd2, VOP_MIN = 3'd4, VOP_PASS = 3'd5;
  localparam logic [1:0] FUNC_NONE = 2'd0, FUNC_RELU = 2'd1, FUNC_RELU6 = 2'd2;

  if (BF16 != 0) begin : g_fp
    logic [15:0] x_q, x_d;
    logic [31:0] bias_q, bias_d, run_q, run_d;
    logic [31:0] ub_w, x_w, lo_w, hi_w;
    logic [31:0] add_a, add_b, add_y, mm_a, mm_b, mm_y, pool_v, s1_v, s1_m;
    logic        s1_mul, mm_min;
    logic [31:0] p1_v_q, p1_v_d, p1_m_q, p1_m_d, p2_v_q, p2_v_d, mul_y;
    logic        p1_mul_q, p1_mul_d;
    logic [31:0] f_max_b, f_max_y, f_min_b, f_min_y, f_v;

    systole_bf16_to_fp32 u_widen_ub (.a(ub_in), .y(ub_w));
    systole_bf16_to_fp32 u_widen_x (.a(x_q), .y(x_w));
    systole_bf16_to_fp32 u_widen_lo (.a(lo), .y(lo_w));
    systole_bf16_to_fp32 u_widen_hi (.a(hi), .y(hi_w));

    // Step 1.
    always_comb begin
      if (mode == MODE_ACT) begin
        add_a = acc_in;
        add_b = bias_q;
      end else if (mode == MODE_VEC) begin
        add_a = x_w;
        add_b = (vop == VOP_SUB) ? {~ub_w[31], ub_w[30:0]} : ub_w;
      end else begin
        add_a = pool_first ? 32'd0 : run_q;
        add_b = ub_w;
      end
      mm_a = (mode == MODE_VEC) ? x_w : run_q;
      mm_b = ub_w;
      mm_min = (mode == MODE_VEC) && (vop == VOP_MIN);
    end
    systole_fp32_add u_add (.a(add_a), .b(add_b), .y(add_y));
    systole_fp32_minmax u_mm (.a(mm_a), .b(mm_b), .is_min(mm_min), .y(mm_y));

    assign pool_v = pool_sum ? add_y : (pool_first ? ub_w : mm_y);
    always_comb begin
      if (mode == MODE_ACT) begin
        s1_v = bias_en ? add_y : acc_in;
        s1_m = scale;
        s1_mul = 1'b1;
      end else if (mode == MODE_VEC) begin
        if (vop == VOP_MUL || vop == VOP_PASS) s1_v = x_w;
        else if (vop >= 3'd3) s1_v = mm_y;
        else s1_v = add_y;
        s1_m = ub_w;
        s1_mul = vop == VOP_MUL;
      end else begin
        s1_v = pool_v;
        s1_m = scale;
        s1_mul = pool_sum;
      end
    end

    // Operand registers load on their strobes; the two pipeline stages load every cycle.
    assign bias_d   = bias_load ? acc_in : bias_q;
    assign x_d      = x_load ? ub_in : x_q;
    assign run_d    = run_update ? pool_v : run_q;
    assign p1_v_d   = red_load_i ? red_v_i : s1_v;
    assign p1_m_d   = red_load_i ? scale : s1_m;
    assign p1_mul_d = red_load_i ? pool_sum : s1_mul;
    assign math_in_o = p1_mul_q ? mul_y : p1_v_q;
    assign p2_v_d   = math_load_i ? math_y_i : math_in_o;
    always_ff @(posedge clk) begin
      bias_q <= bias_d;
      x_q <= x_d;
      run_q <= run_d;
      p1_v_q <= p1_v_d;
      p1_m_q <= p1_m_d;
      p1_mul_q <= p1_mul_d;
      p2_v_q <= p2_v_d;
    end

    // Step 2.
    systole_fp32_mul u_mul (.a(p1_v_q), .b(p1_m_q), .y(mul_y));

    // Step 3: relu = max(v, +0); relu6 = min(max(v, +0), 6); clamp = min(max(v, L), H).
    assign f_max_b = (func == 2'd3) ? lo_w : 32'd0;
    assign f_min_b = (func == FUNC_RELU6) ? 32'h40C0_0000 : hi_w;
    systole_fp32_minmax u_fmax (.a(p2_v_q), .b(f_max_b), .is_min(1'b0), .y(f_max_y));
    systole_fp32_minmax u_fmin (.a(f_max_y), .b(f_min_b), .is_min(1'b1), .y(f_min_y));
    assign f_v = (func == FUNC_NONE) ? p2_v_q : ((func == FUNC_RELU) ? f_max_y : f_min_y);
    systole_fp32_to_bf16 u_round (.a(f_v), .y(y));

    // The integer-only configuration inputs; this datapath's registers load every cycle.
    logic unused_int;
    assign unused_int = ^{shift, zp, step1_en, step2_en};
  end else begin : g_int
    logic [7:0] x_q;
    logic [31:0] bias_q;
    // The POOL running value: a sum of at most 255 x 255 window elements (REDUCE over=rows: at
    // most 65 535 rows) of magnitude <= 128, below 2^23, or one element: RW = 24 bits hold it
    // exactly, and the value, sign-extended, is the same 32-bit one (asserted below).
    localparam integer RW = 24;
    logic signed [RW-1:0] run_q;
    logic signed [31:0] p1_v_q, p1_m_q;
    logic        p1_mul_q;
    // Steps 2 and 3 hold the int64 value of the model saturated to PW bits: step 3 clamps it
    // to int16 bounds (or [0, 6], or none), adds an int8 zero point and saturates to int8, and
    // every value beyond ±2^(PW−1) gives the same int8 as its saturation (the clamp's tests
    // compare against bounds inside the range; the sum stays beyond [−128, 127]). PW = 18
    // leaves 2^17 − 2^15 − 128 of margin; the full 64 bits cost ~1 000 LUTs a lane (docs/FPGA.md).
    localparam integer PW = 18;
    logic [PW-1:0] req_y;
    logic signed [PW-1:0] p2_v_q, f_v, f_lo, f_hi;
    logic signed [PW:0] z_v;

    function automatic logic signed [31:0] widen(logic [7:0] b);
      widen = $signed({{24{b[7]}}, b});
    endfunction

    // Step 1, as functions of the registers and this cycle's row data, evaluated only when
    // their result is loaded: into step 2 (step1_en) or into the POOL running value
    // (run_update). (Plain always-evaluated logic costs a simulator every cycle in every lane.)
    function automatic logic signed [RW-1:0] pool_value(logic signed [RW-1:0] run,
                                                        logic signed [RW-1:0] u, logic first,
                                                        logic sum);
      if (sum) pool_value = (first ? RW'(0) : run) + u;
      else if (first || u > run) pool_value = u;
      else pool_value = run;
    endfunction
    // {value, multiplier, multiply} of step 1.
    function automatic logic [64:0] step1(logic [1:0] m, logic [2:0] op, logic bias_add,
                                          logic [31:0] acc, logic [31:0] bias,
                                          logic signed [31:0] x, logic signed [31:0] u,
                                          logic signed [31:0] pool, logic [31:0] sc, logic sum);
      logic signed [31:0] v;
      if (m == MODE_ACT) begin
        v = bias_add ? $signed(acc + bias) : $signed(acc);
        step1 = {v, sc, 1'b1};
      end else if (m == MODE_VEC) begin
        case (op)
          3'd0: v = x + u;
          3'd1: v = x - u;
          3'd3: v = (x > u) ? x : u;
          3'd4: v = (x < u) ? x : u;
          default: v = x;  // mul: x × y in step 2
        endcase
        step1 = {v, u, op == VOP_MUL};
      end else begin
        step1 = {pool, sc, sum};
      end
    endfunction

    // The unscaled value saturated to PW bits: it fits when v[31 : PW−1] are all its sign.
    function automatic logic signed [PW-1:0] sat_pw(logic signed [31:0] v);
      if (v[31:PW-1] == {(33 - PW){v[31]}}) sat_pw = v[PW-1:0];
      else sat_pw = v[31] ? {1'b1, {(PW - 1){1'b0}}} : {1'b0, {(PW - 1){1'b1}}};
    endfunction
    // Operand registers load on their strobes, the pipeline stages on their enables.
    always_ff @(posedge clk) begin
      if (bias_load) bias_q <= acc_in;
      if (x_load) x_q <= ub_in;
      if (run_update) run_q <= pool_value(run_q, RW'(widen(ub_in)), pool_first, pool_sum);
      if (step1_en) begin
        if (red_load_i) {p1_v_q, p1_m_q, p1_mul_q} <= {red_v_i, scale, pool_sum};
        else begin
          {p1_v_q, p1_m_q, p1_mul_q} <= step1(mode, vop, bias_en, acc_in, bias_q, widen(x_q),
                                              widen(ub_in),
                                              32'(pool_value(run_q, RW'(widen(ub_in)),
                                                             pool_first, pool_sum)),
                                              scale, pool_sum);
        end
      end
      if (step2_en) p2_v_q <= p1_mul_q ? $signed(req_y) : sat_pw(p1_v_q);
    end

    // Step 2.
    systole_requant_sat #(.BITS(PW)) u_requant (
        .v(p1_v_q), .s(p1_m_q), .shift(shift), .en(step2_en && p1_mul_q), .y(req_y));

    // Step 3: min(max(v, L), H) as the model writes it; then + zp and saturation.
    assign f_lo = (func == 2'd3) ? $signed({{(PW - 16){lo[15]}}, lo}) : '0;
    assign f_hi = (func == 2'd3) ? $signed({{(PW - 16){hi[15]}}, hi}) : PW'(6);
    always_comb begin
      if (func == FUNC_NONE) f_v = p2_v_q;
      else if (func == FUNC_RELU) f_v = (p2_v_q < 0) ? '0 : p2_v_q;
      else if (p2_v_q < f_lo) f_v = (f_lo > f_hi) ? f_hi : f_lo;
      else f_v = (p2_v_q > f_hi) ? f_hi : p2_v_q;
    end
    assign z_v = {f_v[PW-1], f_v} + {{(PW - 7){zp[7]}}, zp};
    always_comb begin
      if (z_v < -(PW + 1)'(128)) y = 8'h80;
      else if (z_v > (PW + 1)'(127)) y = 8'h7F;
      else y = z_v[7:0];
    end

`ifndef SYNTHESIS
    // The running value fits RW bits: a sum that would not is one the 32-bit value held.
    always_ff @(posedge clk) begin
      if (run_update && pool_sum) begin
        assert ((pool_first ? 33'sd0 : 33'(run_q)) + 33'(widen(ub_in)) ==
                33'(pool_value(run_q, RW'(widen(ub_in)), pool_first, pool_sum)))
        else $error("systole_vector_lane: a POOL sum beyond %0d bits", RW);
      end
    end
`endif

    // int8 configurations have no math (the sequencer faults it).
    assign math_in_o = 32'd0;
    logic unused_math;
    assign unused_math = ^{math_load_i, math_y_i};
  end
endmodule
