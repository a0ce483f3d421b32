// systole_fp32_ieee_divsqrt — y = a / b or y = sqrt(a) in IEEE-754 binary32, one result bit
// per cycle, for ACCVEC (docs/NUMERICS.md, "ACCVEC").
//
// start_i loads the operands; the result is valid ITERATIONS (27) cycles later and stays until
// the next start (the caller counts the cycles: every lane of a row runs in lockstep).
//   * a / b: the normalised significands (systole_fp32_ieee_unpack) are divided by restoring
//     division, q = floor(sig_a · 2^26 / sig_b) in [2^25, 2^27), one quotient bit per cycle;
//     the remainder's being non-zero is the sticky bit.
//   * sqrt(a): the digit-by-digit (restoring) square root of sig_a · 2^29 (2^30 when the
//     unbiased exponent is odd, which makes it even), two radicand bits per cycle, root in
//     [2^26, 2^27); a non-zero remainder is the sticky bit.
// Either way systole_fp32_ieee_round rounds once. Special cases are decided at start_i from the
// operands, with the host interpreter's (x86-64 SSE) NaN rules: a NaN a quieted, else (a / b)
// a NaN b quieted; 0 / 0, inf / inf and the square root of a negative number are the default
// NaN 0xFFC00000; x / 0 is ±inf, sqrt(−0) = −0.
module systole_fp32_ieee_divsqrt (
    input  logic        clk,
    input  logic        start_i,
    input  logic        sqrt_i,
    input  logic [31:0] a_i,
    input  logic [31:0] b_i,
    output logic [31:0] y_o
);
  localparam logic [31:0] DEFAULT_NAN = 32'hFFC0_0000;
  localparam logic [31:0] QUIET = 32'h0040_0000;

  logic a_nan, b_nan, a_inf, b_inf, a_zero, b_zero, sign;
  assign a_nan = a_i[30:23] == 8'hFF && a_i[22:0] != 23'd0;
  assign b_nan = b_i[30:23] == 8'hFF && b_i[22:0] != 23'd0;
  assign a_inf = a_i[30:0] == 31'h7F80_0000;
  assign b_inf = b_i[30:0] == 31'h7F80_0000;
  assign a_zero = a_i[30:0] == 31'd0;
  assign b_zero = b_i[30:0] == 31'd0;
  assign sign = a_i[31] ^ b_i[31];

  logic [23:0] sa, sb;
  logic signed [11:0] ea, eb;
  systole_fp32_ieee_unpack u_ua (.x_i(a_i[30:0]), .sig_o(sa), .exp_o(ea));
  systole_fp32_ieee_unpack u_ub (.x_i(b_i[30:0]), .sig_o(sb), .exp_o(eb));

  // A result decided at start (special operands), or the iteration's.
  logic        special_d, special_q;
  logic [31:0] special_y_d, special_y_q;
  always_comb begin
    special_d = 1'b1;
    special_y_d = 32'd0;
    if (sqrt_i) begin
      if (a_nan) special_y_d = a_i | QUIET;
      else if (a_zero) special_y_d = a_i;                      // ±0
      else if (a_i[31]) special_y_d = DEFAULT_NAN;             // negative, -inf included
      else if (a_inf) special_y_d = a_i;
      else special_d = 1'b0;
    end else begin
      if (a_nan) special_y_d = a_i | QUIET;
      else if (b_nan) special_y_d = b_i | QUIET;
      else if ((a_zero && b_zero) || (a_inf && b_inf)) special_y_d = DEFAULT_NAN;
      else if (a_inf || b_zero) special_y_d = {sign, 8'hFF, 23'd0};
      else if (a_zero || b_inf) special_y_d = {sign, 31'd0};
      else special_d = 1'b0;
    end
  end

  // The iteration. Division: rem < 2·sig_b < 2^25 before each step. Square root: rem and the
  // trial value are below 2^29; rad holds the radicand bits not yet brought down.
  logic        sqrt_q;
  logic        sign_q;
  logic signed [11:0] exp_q, exp_d;
  logic [28:0] rem_q, rem_d;
  logic [26:0] q_q, q_d;
  logic [53:0] rad_q, rad_d;
  logic [23:0] div_q, div_d;
  logic        odd;
  logic signed [11:0] unbiased, even;
  assign unbiased = ea - 12'sd127;
  assign odd = unbiased[0];
  assign even = unbiased - $signed({11'd0, odd});

  always_comb begin
    logic [28:0] trial, next;
    trial = '0;
    next = '0;
    rem_d = rem_q;
    q_d = q_q;
    rad_d = rad_q;
    div_d = div_q;
    exp_d = exp_q;
    if (start_i) begin
      q_d = '0;
      div_d = sb;
      if (sqrt_i) begin
        rem_d = '0;
        rad_d = odd ? {sa, 30'd0} : {1'b0, sa, 29'd0};
        // (unbiased − odd) / 2 + 127: the root of 2^(even) · m is 2^(even/2) · sqrt(m)
        exp_d = (even >>> 1) + 12'sd127;
      end else begin
        rem_d = 29'(sa);
        rad_d = '0;
        exp_d = ea - eb + 12'sd127;  // q ≥ 2^26 when sig_a ≥ sig_b; adjusted at the end
      end
    end else if (sqrt_q) begin
      next = {rem_q[26:0], rad_q[53:52]};
      trial = {q_q[26:0], 2'b01};
      if (next >= trial) begin
        rem_d = next - trial;
        q_d = {q_q[25:0], 1'b1};
      end else begin
        rem_d = next;
        q_d = {q_q[25:0], 1'b0};
      end
      rad_d = {rad_q[51:0], 2'b00};
    end else begin
      if (rem_q >= 29'(div_q)) begin
        rem_d = (rem_q - 29'(div_q)) << 1;
        q_d = {q_q[25:0], 1'b1};
      end else begin
        rem_d = rem_q << 1;
        q_d = {q_q[25:0], 1'b0};
      end
    end
  end

  always_ff @(posedge clk) begin
    rem_q <= rem_d;
    q_q <= q_d;
    rad_q <= rad_d;
    div_q <= div_d;
    exp_q <= exp_d;
    if (start_i) begin
      sqrt_q <= sqrt_i;
      sign_q <= sign;
      special_q <= special_d;
      special_y_q <= special_y_d;
    end
  end

  // After 27 steps: the root has its leading one at bit 26; the quotient at bit 26 or 25.
  logic [26:0] sig;
  logic signed [11:0] exp_n;
  logic [31:0] rounded;
  always_comb begin
    if (sqrt_q || q_q[26]) begin
      sig = {q_q[26:1], q_q[0] | (rem_q != '0)};
      exp_n = exp_q;
    end else begin
      sig = {q_q[25:0], rem_q != '0};
      exp_n = exp_q - 12'sd1;
    end
  end
  systole_fp32_ieee_round u_round (.sign_i(sqrt_q ? 1'b0 : sign_q), .exp_i(exp_n), .sig_i(sig),
                                   .y_o(rounded));
  assign y_o = special_q ? special_y_q : rounded;
endmodule
