// systole_fp32_mul — y = a × b in fp32 with the rules of docs/NUMERICS.md, combinational.
//
// Inputs are flushed; the result is the IEEE-754 round-to-nearest-even product of the flushed
// inputs, then flushed when its magnitude is below 2^-126 ("round then flush", exactly what
// the golden model's host arithmetic does: IEEE rounds a tiny product on the subnormal grid,
// and the one subnormal-range product that rounds up to 2^-126 survives the flush). Any NaN
// result is 0x7FC00000 (NaN input, 0 × inf); overflow gives ±inf; a zero result has the sign
// a.sign ^ b.sign.
module systole_fp32_mul (
    input  logic [31:0] a,
    input  logic [31:0] b,
    output logic [31:0] y
);
  localparam logic [31:0] CANONICAL_NAN = 32'h7FC0_0000;

  logic a_zero, b_zero, a_inf, b_inf, a_nan, b_nan, sign;
  assign a_zero = a[30:23] == 8'd0;
  assign b_zero = b[30:23] == 8'd0;
  assign a_inf  = a[30:23] == 8'hFF && a[22:0] == 23'd0;
  assign b_inf  = b[30:23] == 8'hFF && b[22:0] == 23'd0;
  assign a_nan  = a[30:23] == 8'hFF && a[22:0] != 23'd0;
  assign b_nan  = b[30:23] == 8'hFF && b[22:0] != 23'd0;
  assign sign   = a[31] ^ b[31];

  logic [47:0] product;       // 1.fa × 1.fb, in [2^46, 2^48)
  logic [22:0] frac;          // fraction bits below the leading one
  logic        guard, sticky, round_up;
  logic [23:0] rounded;       // fraction + carry out of rounding
  logic signed [10:0] exp_n;  // biased exponent of the normalised product
  logic signed [10:0] exp_r;

  assign product = {1'b1, a[22:0]} * {1'b1, b[22:0]};
  always_comb begin
    if (product[47]) begin
      frac   = product[46:24];
      guard  = product[23];
      sticky = |product[22:0];
      exp_n  = $signed({3'b000, a[30:23]}) + $signed({3'b000, b[30:23]}) - 11'sd126;
    end else begin
      frac   = product[45:23];
      guard  = product[22];
      sticky = |product[21:0];
      exp_n  = $signed({3'b000, a[30:23]}) + $signed({3'b000, b[30:23]}) - 11'sd127;
    end
  end
  assign round_up = guard & (sticky | frac[0]);
  assign rounded = {1'b0, frac} + {23'd0, round_up};
  assign exp_r = rounded[23] ? exp_n + 11'sd1 : exp_n;

  always_comb begin
    if (a_nan || b_nan || (a_inf && b_zero) || (a_zero && b_inf)) begin
      y = CANONICAL_NAN;
    end else if (a_inf || b_inf) begin
      y = {sign, 8'hFF, 23'd0};
    end else if (a_zero || b_zero) begin
      y = {sign, 31'd0};
    end else if (exp_n == 11'sd0) begin
      // 1.f × 2^-127: on the subnormal grid (spacing 2^-149) it rounds up to 2^-126 exactly
      // when f >= 1 - 2^-23 (a tie rounds to the even 2^-126); anything else is flushed.
      y = (frac == 23'h7FFFFF) ? {sign, 8'h01, 23'd0} : {sign, 31'd0};
    end else if (exp_n < 11'sd0) begin
      y = {sign, 31'd0};
    end else if (exp_r >= 11'sd255) begin
      y = {sign, 8'hFF, 23'd0};
    end else begin
      y = {sign, exp_r[7:0], rounded[22:0]};
    end
  end
endmodule
