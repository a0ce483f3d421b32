// systole_vector_math_rom — the micro-programs of VECTOR's transcendental functions (`math=`):
// one word per step of the algorithms of docs/NUMERICS.md, in the order sim/model/
// transcendental.cpp performs them, so that the lanes of systole_vector_math compute the golden
// model's bits. systole_vector_math walks the words. Combinational; the words' encoding stays
// inside this file (the ports are decoded control lines). The words are one sequence per
// function, written out rather than generated: each line names its step of NUMERICS.md.
//
// A word names one operation on the lane's registers R0..R7 (R0 holds the input v, R1 the
// argument and result of the two subroutines and of the function):
//   op   ADD SUB MUL MIN MAX (fp32 of NUMERICS.md), PASS (A), SUBK (A - B and K = bits(A) -
//        bits(B): the integer of exp's rounding trick), MANTR (mant(A), K = 127 - exponent,
//        RS = sign: recip's reduction), RSQP (rsqrt's reduction: d in [1, 4), K = -h), SEEDRS
//        (0x5F3759DF - (bits(A) >> 1)), SCALE (A * 2^(K? + S?) on the exponent field, with
//        recip's sign), SELNEG (v < 0 ? A : B), SELK0 (K == 0 ? A : B), ORSIGN (A | sign of v),
//        SETS (S = v < 0 ? imm : 0: the GELUs' 2^64), LOGR (log's reduction: m = A's
//        significand with exponent field 126 when its fraction is at or above sqrt 2's, else
//        127; K = exponent - that field), KFLT (bits(1.5 * 2^23) + K: less 1.5 * 2^23, float(K)),
//        NOP
//   a    R0..R7, IMM, or IMMSEL (v < 0 ? imm2 : imm), then MOD (|A| or -A)
//   b    R0..R7 or IMM
//   ctl  NEXT, CALL target (one return address: subroutines call none), RET, END (R1 is the
//        result)
// The subroutines: SUB_EXP (R1 = e^R1 * 2^S, leaving m = e^r - 1 in R2 and K for tanh's expm1)
// and SUB_RECIP (R1 = 1/R1). Registers R2..R4 are theirs; R5..R7 keep the callers' values.
module systole_vector_math_rom (
    input  logic [3:0]  func_i,      // VECTOR math: 1 exp .. 8 log (0: none)
    input  logic [7:0]  pc_i,
    output logic [7:0]  entry_o,     // first word of func_i
    // The word at pc_i, decoded. One op line is high (none for NOP).
    output logic        add_o, sub_o, mul_o, min_o, max_o, pass_o, subk_o, mantr_o,
    output logic        rsqp_o, seedrs_o, scale_o, selneg_o, selk0_o, orsign_o, sets_o,
    output logic        logr_o, kflt_o,
    output logic        we_o,        // the op writes register dst_o
    output logic [2:0]  dst_o,
    output logic [2:0]  a_reg_o,     // operand A: register, or the immediate
    output logic        a_imm_o,
    output logic        a_immsel_o,  // ... imm2_o instead of imm_o when v < 0
    output logic        a_abs_o,     // then |A|
    output logic        a_neg_o,     // or -A
    output logic [2:0]  b_reg_o,     // operand B: register or imm_o
    output logic        b_imm_o,
    output logic [31:0] imm_o,
    output logic [31:0] imm2_o,
    output logic        use_k_o,     // SCALE: the shift includes K
    output logic        use_s_o,     // ... and S
    output logic        neg_s_o,     // ... as -S
    output logic        or_rs_o,     // ... and the result takes recip's sign RS
    output logic        call_o,      // next pc: target_o, returning to pc + 1
    output logic        ret_o,       // next pc: the return address
    output logic        end_o,       // R1 holds the result
    output logic [7:0]  target_o
);
  // ---- The word ----------------------------------------------------------------------------
  localparam logic [4:0] OP_NOP = 5'd0, OP_ADD = 5'd1, OP_SUB = 5'd2, OP_MUL = 5'd3,
      OP_MIN = 5'd4, OP_MAX = 5'd5, OP_PASS = 5'd6, OP_SUBK = 5'd7, OP_MANTR = 5'd8,
      OP_RSQP = 5'd9, OP_SEEDRS = 5'd10, OP_SCALE = 5'd11, OP_SELNEG = 5'd12, OP_SELK0 = 5'd13,
      OP_ORSIGN = 5'd14, OP_SETS = 5'd15, OP_LOGR = 5'd16, OP_KFLT = 5'd17;
  // Every register and operand is named, whether or not a program uses it yet.
  /* verilator lint_off UNUSEDPARAM */
  localparam logic [2:0] R0 = 3'd0, R1 = 3'd1, R2 = 3'd2, R3 = 3'd3, R4 = 3'd4, R5 = 3'd5,
      R6 = 3'd6, R7 = 3'd7;
  localparam logic [3:0] A_R0 = 4'd0, A_R1 = 4'd1, A_R2 = 4'd2, A_R3 = 4'd3, A_R4 = 4'd4,
      A_R5 = 4'd5, A_R6 = 4'd6, A_R7 = 4'd7, A_IMM = 4'd8, A_IMMSEL = 4'd9;
  localparam logic [3:0] B_R0 = 4'd0, B_R1 = 4'd1, B_R2 = 4'd2, B_R3 = 4'd3, B_R4 = 4'd4,
      B_R5 = 4'd5, B_R6 = 4'd6, B_R7 = 4'd7, B_IMM = 4'd8;
  /* verilator lint_on UNUSEDPARAM */
  localparam logic [1:0] MOD_NONE = 2'd0, MOD_ABS = 2'd1, MOD_NEG = 2'd2;
  localparam logic [3:0] F_USE_K = 4'd1, F_USE_S = 4'd2, F_NEG_S = 4'd4, F_OR_RS = 4'd8;
  localparam logic [1:0] CTL_NEXT = 2'd0, CTL_CALL = 2'd1, CTL_RET = 2'd2, CTL_END = 2'd3;

  // [4:0] op, [7:5] dst, [11:8] a, [13:12] a modifier, [17:14] b, [49:18] imm, [81:50] imm2,
  // [85:82] SCALE flags, [87:86] control, [95:88] target.
  function automatic logic [95:0] Word(logic [4:0] op, logic [2:0] dst, logic [3:0] a,
                                       logic [1:0] amod, logic [3:0] b, logic [31:0] imm,
                                       logic [31:0] imm2, logic [3:0] flags, logic [1:0] ctl,
                                       logic [7:0] target);
    Word = {target, ctl, flags, imm2, imm, b, amod, a, dst, op};
  endfunction
  always_comb begin
    case (func_i)
      4'd1: entry_o = 8'd40;   // exp
      4'd2: entry_o = 8'd42;   // recip
      4'd3: entry_o = 8'd44;   // rsqrt
      4'd4: entry_o = 8'd60;   // tanh
      4'd5: entry_o = 8'd69;   // sigmoid
      4'd6: entry_o = 8'd74;   // gelu_tanh
      4'd7: entry_o = 8'd86;   // gelu_erf
      4'd8: entry_o = 8'd119;  // log
      default: entry_o = 8'd0;
    endcase
  end

  logic [95:0] word;
  always_comb begin
    case (pc_i)
      // ---- SUB_EXP (entry 0)
      8'd0: word = Word(OP_MAX, R2, A_R1, MOD_NONE, B_IMM, 32'hC3160000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // c = max(v, -150)
      8'd1: word = Word(OP_MIN, R2, A_R2, MOD_NONE, B_IMM, 32'h43060000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // c = min(c, 134)
      8'd2: word = Word(OP_MUL, R3, A_R2, MOD_NONE, B_IMM, 32'h3FB8AA3B, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // t = c * log2(e)
      8'd3: word = Word(OP_ADD, R3, A_R3, MOD_NONE, B_IMM, 32'h4B400000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // t + 1.5*2^23
      8'd4: word = Word(OP_SUBK, R3, A_R3, MOD_NONE, B_IMM, 32'h4B400000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // kf = (t + M) - M; K = rint(t)
      8'd5: word = Word(OP_MUL, R4, A_R3, MOD_NONE, B_IMM, 32'h3F317200, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // kf * ln2_hi
      8'd6: word = Word(OP_SUB, R2, A_R2, MOD_NONE, B_R4, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // r = c - kf*ln2_hi
      8'd7: word = Word(OP_MUL, R4, A_R3, MOD_NONE, B_IMM, 32'h35BFBE8E, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // kf * ln2_lo
      8'd8: word = Word(OP_SUB, R2, A_R2, MOD_NONE, B_R4, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // r = r - kf*ln2_lo
      8'd9: word = Word(OP_MUL, R3, A_IMM, MOD_NONE, B_R2, 32'h39500D01, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // q = 1/7! * r
      8'd10: word = Word(OP_ADD, R3, A_R3, MOD_NONE, B_IMM, 32'h3AB60B61, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // q = q + 1/6!
      8'd11: word = Word(OP_MUL, R3, A_R3, MOD_NONE, B_R2, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // q = q * r
      8'd12: word = Word(OP_ADD, R3, A_R3, MOD_NONE, B_IMM, 32'h3C088889, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // q = q + 1/5!
      8'd13: word = Word(OP_MUL, R3, A_R3, MOD_NONE, B_R2, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // q = q * r
      8'd14: word = Word(OP_ADD, R3, A_R3, MOD_NONE, B_IMM, 32'h3D2AAAAB, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // q = q + 1/4!
      8'd15: word = Word(OP_MUL, R3, A_R3, MOD_NONE, B_R2, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // q = q * r
      8'd16: word = Word(OP_ADD, R3, A_R3, MOD_NONE, B_IMM, 32'h3E2AAAAB, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // q = q + 1/3!
      8'd17: word = Word(OP_MUL, R3, A_R3, MOD_NONE, B_R2, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // q = q * r
      8'd18: word = Word(OP_ADD, R3, A_R3, MOD_NONE, B_IMM, 32'h3F000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // q = q + 1/2!
      8'd19: word = Word(OP_MUL, R3, A_R3, MOD_NONE, B_R2, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // q = q * r
      8'd20: word = Word(OP_ADD, R3, A_R3, MOD_NONE, B_IMM, 32'h3F800000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // q = q + 1/1!
      8'd21: word = Word(OP_MUL, R2, A_R2, MOD_NONE, B_R3, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // m = r * q = e^r - 1
      8'd22: word = Word(OP_ADD, R1, A_IMM, MOD_NONE, B_R2, 32'h3F800000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // 1 + m
      8'd23: word = Word(OP_SCALE, R1, A_R1, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, F_USE_K | F_USE_S, CTL_RET, 8'd0);  // scale(1 + m, K + S)
      // ---- SUB_RECIP (entry 24)
      8'd24: word = Word(OP_MANTR, R2, A_R1, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // d = mant(x); K = 127 - e; RS = sign
      8'd25: word = Word(OP_MUL, R3, A_IMM, MOD_NONE, B_R2, 32'h3EF0F0F1, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // 8/17 * d
      8'd26: word = Word(OP_SUB, R3, A_IMM, MOD_NONE, B_R3, 32'h3FB4B4B5, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // y = 24/17 - 8/17 d
      8'd27: word = Word(OP_MUL, R4, A_R2, MOD_NONE, B_R3, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // d * y
      8'd28: word = Word(OP_SUB, R4, A_IMM, MOD_NONE, B_R4, 32'h3F800000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // err = 1 - d*y
      8'd29: word = Word(OP_MUL, R4, A_R3, MOD_NONE, B_R4, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // y * err
      8'd30: word = Word(OP_ADD, R3, A_R3, MOD_NONE, B_R4, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // y = y + y*err
      8'd31: word = Word(OP_MUL, R4, A_R2, MOD_NONE, B_R3, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // d * y
      8'd32: word = Word(OP_SUB, R4, A_IMM, MOD_NONE, B_R4, 32'h3F800000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // err = 1 - d*y
      8'd33: word = Word(OP_MUL, R4, A_R3, MOD_NONE, B_R4, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // y * err
      8'd34: word = Word(OP_ADD, R3, A_R3, MOD_NONE, B_R4, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // y = y + y*err
      8'd35: word = Word(OP_MUL, R4, A_R2, MOD_NONE, B_R3, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // d * y
      8'd36: word = Word(OP_SUB, R4, A_IMM, MOD_NONE, B_R4, 32'h3F800000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // err = 1 - d*y
      8'd37: word = Word(OP_MUL, R4, A_R3, MOD_NONE, B_R4, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // y * err
      8'd38: word = Word(OP_ADD, R3, A_R3, MOD_NONE, B_R4, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // y = y + y*err
      8'd39: word = Word(OP_SCALE, R1, A_R3, MOD_NONE, B_R3, 32'h00000000, 32'h00000000, F_USE_K | F_OR_RS, CTL_RET, 8'd0);  // sign | scale(y, 127 - e)
      // ---- EXP (entry 40)
      8'd40: word = Word(OP_NOP, R0, A_R1, MOD_NONE, B_IMM, 32'h00000000, 32'h00000000, 4'd0, CTL_CALL, 8'd0);  // 
      8'd41: word = Word(OP_NOP, R0, A_R1, MOD_NONE, B_IMM, 32'h00000000, 32'h00000000, 4'd0, CTL_END, 8'd0);  // 
      // ---- RECIP (entry 42)
      8'd42: word = Word(OP_NOP, R0, A_R1, MOD_NONE, B_IMM, 32'h00000000, 32'h00000000, 4'd0, CTL_CALL, 8'd24);  // 
      8'd43: word = Word(OP_NOP, R0, A_R1, MOD_NONE, B_IMM, 32'h00000000, 32'h00000000, 4'd0, CTL_END, 8'd0);  // 
      // ---- RSQRT (entry 44)
      8'd44: word = Word(OP_RSQP, R2, A_R1, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // d in [1,4); K = -h
      8'd45: word = Word(OP_MUL, R3, A_IMM, MOD_NONE, B_R2, 32'h3F000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // hd = d / 2
      8'd46: word = Word(OP_SEEDRS, R4, A_R2, MOD_NONE, B_R2, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // y = 0x5F3759DF - (bits(d) >> 1)
      8'd47: word = Word(OP_MUL, R1, A_R3, MOD_NONE, B_R4, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // hd * y
      8'd48: word = Word(OP_MUL, R1, A_R1, MOD_NONE, B_R4, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // hd * y * y
      8'd49: word = Word(OP_SUB, R1, A_IMM, MOD_NONE, B_R1, 32'h3FC00000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // 1.5 - h
      8'd50: word = Word(OP_MUL, R4, A_R4, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // y = y * (1.5 - h)
      8'd51: word = Word(OP_MUL, R1, A_R3, MOD_NONE, B_R4, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // hd * y
      8'd52: word = Word(OP_MUL, R1, A_R1, MOD_NONE, B_R4, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // hd * y * y
      8'd53: word = Word(OP_SUB, R1, A_IMM, MOD_NONE, B_R1, 32'h3FC00000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // 1.5 - h
      8'd54: word = Word(OP_MUL, R4, A_R4, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // y = y * (1.5 - h)
      8'd55: word = Word(OP_MUL, R1, A_R3, MOD_NONE, B_R4, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // hd * y
      8'd56: word = Word(OP_MUL, R1, A_R1, MOD_NONE, B_R4, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // hd * y * y
      8'd57: word = Word(OP_SUB, R1, A_IMM, MOD_NONE, B_R1, 32'h3FC00000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // 1.5 - h
      8'd58: word = Word(OP_MUL, R4, A_R4, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // y = y * (1.5 - h)
      8'd59: word = Word(OP_SCALE, R1, A_R4, MOD_NONE, B_R4, 32'h00000000, 32'h00000000, F_USE_K, CTL_END, 8'd0);  // scale(y, -h)
      // ---- TANH (entry 60)
      8'd60: word = Word(OP_MIN, R1, A_R0, MOD_ABS, B_IMM, 32'h41200000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // a = min(|v|, 10)
      8'd61: word = Word(OP_ADD, R1, A_R1, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // 2a
      8'd62: word = Word(OP_NOP, R0, A_R1, MOD_NONE, B_IMM, 32'h00000000, 32'h00000000, 4'd0, CTL_CALL, 8'd0);  // 
      8'd63: word = Word(OP_SUB, R1, A_R1, MOD_NONE, B_IMM, 32'h3F800000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // scale(1 + m, K) - 1
      8'd64: word = Word(OP_SELK0, R5, A_R2, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // em = K == 0 ? m : e - 1
      8'd65: word = Word(OP_ADD, R1, A_R5, MOD_NONE, B_IMM, 32'h40000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // em + 2
      8'd66: word = Word(OP_NOP, R0, A_R1, MOD_NONE, B_IMM, 32'h00000000, 32'h00000000, 4'd0, CTL_CALL, 8'd24);  // 
      8'd67: word = Word(OP_MUL, R1, A_R5, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // em / (em + 2)
      8'd68: word = Word(OP_ORSIGN, R1, A_R1, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, 4'd0, CTL_END, 8'd0);  // sign of v
      // ---- SIGMOID (entry 69)
      8'd69: word = Word(OP_PASS, R1, A_R0, MOD_NEG, B_R0, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // -v
      8'd70: word = Word(OP_NOP, R0, A_R1, MOD_NONE, B_IMM, 32'h00000000, 32'h00000000, 4'd0, CTL_CALL, 8'd0);  // 
      8'd71: word = Word(OP_ADD, R1, A_IMM, MOD_NONE, B_R1, 32'h3F800000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // 1 + e^-v
      8'd72: word = Word(OP_NOP, R0, A_R1, MOD_NONE, B_IMM, 32'h00000000, 32'h00000000, 4'd0, CTL_CALL, 8'd24);  // 
      8'd73: word = Word(OP_NOP, R0, A_R1, MOD_NONE, B_IMM, 32'h00000000, 32'h00000000, 4'd0, CTL_END, 8'd0);  // 
      // ---- GELU_TANH (entry 74)
      8'd74: word = Word(OP_MUL, R1, A_R0, MOD_NONE, B_R0, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // v * v
      8'd75: word = Word(OP_MUL, R1, A_IMM, MOD_NONE, B_R1, 32'h3D372713, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // 0.044715 v^2
      8'd76: word = Word(OP_ADD, R1, A_IMM, MOD_NONE, B_R1, 32'h3F800000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // 1 + 0.044715 v^2
      8'd77: word = Word(OP_MUL, R1, A_R0, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // v (1 + 0.044715 v^2)
      8'd78: word = Word(OP_MUL, R1, A_IMM, MOD_NONE, B_R1, 32'h3FCC422A, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // u
      8'd79: word = Word(OP_PASS, R1, A_R1, MOD_NEG, B_R1, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // -u
      8'd80: word = Word(OP_SETS, R0, A_R1, MOD_NONE, B_IMM, 32'h000000C0, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // S = v < 0 ? -64 : 0
      8'd81: word = Word(OP_NOP, R0, A_R1, MOD_NONE, B_IMM, 32'h00000000, 32'h00000000, 4'd0, CTL_CALL, 8'd0);  // 
      8'd82: word = Word(OP_ADD, R1, A_IMMSEL, MOD_NONE, B_R1, 32'h3F800000, 32'h1F800000, 4'd0, CTL_NEXT, 8'd0);  // (v < 0 ? 2^-64 : 1) + e^-u 2^S
      8'd83: word = Word(OP_NOP, R0, A_R1, MOD_NONE, B_IMM, 32'h00000000, 32'h00000000, 4'd0, CTL_CALL, 8'd24);  // 
      8'd84: word = Word(OP_MUL, R1, A_R0, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // v / den
      8'd85: word = Word(OP_SCALE, R1, A_R1, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, F_USE_S, CTL_END, 8'd0);  // scale(., S) = scale(., -s)
      // ---- GELU_ERF (entry 86)
      8'd86: word = Word(OP_MUL, R5, A_R0, MOD_ABS, B_IMM, 32'h3F3504F3, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // z = |v| / sqrt 2
      8'd87: word = Word(OP_MUL, R1, A_IMM, MOD_NONE, B_R5, 32'h3F000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // z / 2
      8'd88: word = Word(OP_ADD, R1, A_IMM, MOD_NONE, B_R1, 32'h3F800000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // 1 + z/2
      8'd89: word = Word(OP_NOP, R0, A_R1, MOD_NONE, B_IMM, 32'h00000000, 32'h00000000, 4'd0, CTL_CALL, 8'd24);  // 
      8'd90: word = Word(OP_PASS, R6, A_R1, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // t
      8'd91: word = Word(OP_MUL, R7, A_IMM, MOD_NONE, B_R6, 32'h3E146896, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // p = P9 * t
      8'd92: word = Word(OP_ADD, R7, A_R7, MOD_NONE, B_IMM, 32'hBF2E4AB1, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // p = p + P8
      8'd93: word = Word(OP_MUL, R7, A_R7, MOD_NONE, B_R6, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // p = p * t
      8'd94: word = Word(OP_ADD, R7, A_R7, MOD_NONE, B_IMM, 32'h3F940FDA, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // p = p + P7
      8'd95: word = Word(OP_MUL, R7, A_R7, MOD_NONE, B_R6, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // p = p * t
      8'd96: word = Word(OP_ADD, R7, A_R7, MOD_NONE, B_IMM, 32'hBF323D91, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // p = p + P6
      8'd97: word = Word(OP_MUL, R7, A_R7, MOD_NONE, B_R6, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // p = p * t
      8'd98: word = Word(OP_ADD, R7, A_R7, MOD_NONE, B_IMM, 32'hBDA46A11, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // p = p + P5
      8'd99: word = Word(OP_MUL, R7, A_R7, MOD_NONE, B_R6, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // p = p * t
      8'd100: word = Word(OP_ADD, R7, A_R7, MOD_NONE, B_IMM, 32'h3AA62524, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // p = p + P4
      8'd101: word = Word(OP_MUL, R7, A_R7, MOD_NONE, B_R6, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // p = p * t
      8'd102: word = Word(OP_ADD, R7, A_R7, MOD_NONE, B_IMM, 32'h3D0DBBAA, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // p = p + P3
      8'd103: word = Word(OP_MUL, R7, A_R7, MOD_NONE, B_R6, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // p = p * t
      8'd104: word = Word(OP_ADD, R7, A_R7, MOD_NONE, B_IMM, 32'h3EC5F5BB, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // p = p + P2
      8'd105: word = Word(OP_MUL, R7, A_R7, MOD_NONE, B_R6, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // p = p * t
      8'd106: word = Word(OP_ADD, R7, A_R7, MOD_NONE, B_IMM, 32'h3F7FA666, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // p = p + P1
      8'd107: word = Word(OP_MUL, R7, A_R7, MOD_NONE, B_R6, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // p = p * t
      8'd108: word = Word(OP_ADD, R7, A_R7, MOD_NONE, B_IMM, 32'hBFA1FA33, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // p = p + P0
      8'd109: word = Word(OP_MUL, R1, A_R5, MOD_NONE, B_R5, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // z^2
      8'd110: word = Word(OP_SUB, R1, A_R7, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // p - z^2
      8'd111: word = Word(OP_SETS, R0, A_R1, MOD_NONE, B_IMM, 32'h00000040, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // S = v < 0 ? 64 : 0
      8'd112: word = Word(OP_NOP, R0, A_R1, MOD_NONE, B_IMM, 32'h00000000, 32'h00000000, 4'd0, CTL_CALL, 8'd0);  // 
      8'd113: word = Word(OP_MUL, R1, A_R6, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // erfc 2^S = t e^(p - z^2) 2^S
      8'd114: word = Word(OP_MUL, R1, A_IMM, MOD_NONE, B_R1, 32'h3F000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // h = erfc / 2
      8'd115: word = Word(OP_SUB, R2, A_IMM, MOD_NONE, B_R1, 32'h3F800000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // 1 - h
      8'd116: word = Word(OP_SELNEG, R1, A_R1, MOD_NONE, B_R2, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // phi = v < 0 ? h : 1 - h
      8'd117: word = Word(OP_MUL, R1, A_R0, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // v * phi
      8'd118: word = Word(OP_SCALE, R1, A_R1, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, F_USE_S | F_NEG_S, CTL_END, 8'd0);  // scale(., -S)
      // ---- LOG (entry 119)
      8'd119: word = Word(OP_LOGR, R5, A_R0, MOD_NONE, B_R0, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // m = v / 2^k in [sqrt(1/2), sqrt 2); K = k
      8'd120: word = Word(OP_KFLT, R6, A_R0, MOD_NONE, B_R0, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // bits(1.5 * 2^23) + K
      8'd121: word = Word(OP_SUB, R6, A_R6, MOD_NONE, B_IMM, 32'h4B400000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // kf = float(k)
      8'd122: word = Word(OP_ADD, R1, A_R5, MOD_NONE, B_IMM, 32'h3F800000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // m + 1
      8'd123: word = Word(OP_NOP, R0, A_R1, MOD_NONE, B_IMM, 32'h00000000, 32'h00000000, 4'd0, CTL_CALL, 8'd24);  // 1 / (m + 1)
      8'd124: word = Word(OP_SUB, R7, A_R5, MOD_NONE, B_IMM, 32'h3F800000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // m - 1 (exact)
      8'd125: word = Word(OP_MUL, R7, A_R7, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // s = (m - 1) / (m + 1)
      8'd126: word = Word(OP_MUL, R1, A_R7, MOD_NONE, B_R7, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // w = s^2
      8'd127: word = Word(OP_MUL, R2, A_IMM, MOD_NONE, B_R1, 32'h3DE38E39, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // q = 1/9 * w
      8'd128: word = Word(OP_ADD, R2, A_R2, MOD_NONE, B_IMM, 32'h3E124925, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // q = q + 1/7
      8'd129: word = Word(OP_MUL, R2, A_R2, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // q = q * w
      8'd130: word = Word(OP_ADD, R2, A_R2, MOD_NONE, B_IMM, 32'h3E4CCCCD, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // q = q + 1/5
      8'd131: word = Word(OP_MUL, R2, A_R2, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // q = q * w
      8'd132: word = Word(OP_ADD, R2, A_R2, MOD_NONE, B_IMM, 32'h3EAAAAAB, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // q = q + 1/3
      8'd133: word = Word(OP_MUL, R2, A_R2, MOD_NONE, B_R1, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // q = q * w
      8'd134: word = Word(OP_ADD, R2, A_R2, MOD_NONE, B_IMM, 32'h3F800000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // q = q + 1
      8'd135: word = Word(OP_ADD, R3, A_R7, MOD_NONE, B_R7, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // 2s
      8'd136: word = Word(OP_MUL, R3, A_R3, MOD_NONE, B_R2, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // log m = 2s q
      8'd137: word = Word(OP_MUL, R4, A_R6, MOD_NONE, B_IMM, 32'h35BFBE8E, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // kf * ln2 low part
      8'd138: word = Word(OP_ADD, R3, A_R4, MOD_NONE, B_R3, 32'h00000000, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // kf * ln2 low + log m
      8'd139: word = Word(OP_MUL, R4, A_R6, MOD_NONE, B_IMM, 32'h3F317200, 32'h00000000, 4'd0, CTL_NEXT, 8'd0);  // kf * ln2 high part (exact)
      8'd140: word = Word(OP_ADD, R1, A_R4, MOD_NONE, B_R3, 32'h00000000, 32'h00000000, 4'd0, CTL_END, 8'd0);  // log v
      default: word = Word(OP_NOP, R0, A_R0, MOD_NONE, B_R0, 32'h0, 32'h0, 4'd0, CTL_END, 8'd0);
    endcase
  end

  // ---- Decoded ------------------------------------------------------------------------------
  logic [4:0] op;
  logic [3:0] a_sel, b_sel;
  logic [1:0] amod, ctl;
  logic [3:0] flags;
  assign op = word[4:0];
  assign dst_o = word[7:5];
  assign a_sel = word[11:8];
  assign amod = word[13:12];
  assign b_sel = word[17:14];
  assign imm_o = word[49:18];
  assign imm2_o = word[81:50];
  assign flags = word[85:82];
  assign ctl = word[87:86];
  assign target_o = word[95:88];

  assign add_o = op == OP_ADD;
  assign sub_o = op == OP_SUB;
  assign mul_o = op == OP_MUL;
  assign min_o = op == OP_MIN;
  assign max_o = op == OP_MAX;
  assign pass_o = op == OP_PASS;
  assign subk_o = op == OP_SUBK;
  assign mantr_o = op == OP_MANTR;
  assign rsqp_o = op == OP_RSQP;
  assign seedrs_o = op == OP_SEEDRS;
  assign scale_o = op == OP_SCALE;
  assign selneg_o = op == OP_SELNEG;
  assign selk0_o = op == OP_SELK0;
  assign orsign_o = op == OP_ORSIGN;
  assign sets_o = op == OP_SETS;
  assign logr_o = op == OP_LOGR;
  assign kflt_o = op == OP_KFLT;
  assign we_o = op != OP_NOP && op != OP_SETS;
  assign a_reg_o = a_sel[2:0];
  assign a_imm_o = a_sel == A_IMM || a_sel == A_IMMSEL;
  assign a_immsel_o = a_sel == A_IMMSEL;
  assign a_abs_o = amod == MOD_ABS;
  assign a_neg_o = amod == MOD_NEG;
  assign b_reg_o = b_sel[2:0];
  assign b_imm_o = b_sel == B_IMM;
  assign use_k_o = (flags & F_USE_K) != 4'd0;
  assign use_s_o = (flags & F_USE_S) != 4'd0;
  assign neg_s_o = (flags & F_NEG_S) != 4'd0;
  assign or_rs_o = (flags & F_OR_RS) != 4'd0;
  assign call_o = ctl == CTL_CALL;
  assign ret_o = ctl == CTL_RET;
  assign end_o = ctl == CTL_END;
endmodule
