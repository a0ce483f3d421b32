// systole_bf16_mul — the product of two bf16 values as fp32, per docs/NUMERICS.md.
//
// Two 8-bit significands (hidden bit included) give a 16-bit product, which fp32's 24-bit
// significand holds exactly: there is never anything to round. The only ways the result
// differs from the exact product are the NUMERICS.md rules:
//   * FTZ inputs: an exponent field of 0 (zero or subnormal) is a zero of the same sign;
//   * NaN (an input NaN, or 0 x inf) is the canonical quiet NaN 0x7FC00000;
//   * overflow (exact product >= 2^128) is a signed infinity (RNE rounds it there);
//   * underflow (exact product < 2^-126) is a signed zero (FTZ of the result; a product of two
//     bf16 values below 2^-126 can never round up to 2^-126, so flushing the exact product is
//     the same as rounding then flushing).
// Combinational.
module systole_bf16_mul (
    input  logic [15:0] a,
    input  logic [15:0] b,
    output logic [31:0] y
);
  localparam logic [31:0] CANONICAL_NAN = 32'h7FC0_0000;

  logic       sign;
  logic [7:0] ea, eb;
  logic [6:0] fa, fb;
  logic       a_zero, b_zero, a_inf, b_inf, a_nan, b_nan;
  logic [15:0] mant;       // 1.7 x 1.7 = 2.14 fixed point, in [1, 4)
  logic [9:0]  exp_sum;    // ea + eb + carry, the result exponent plus the bias 127
  logic [22:0] frac;

  assign sign = a[15] ^ b[15];
  assign ea = a[14:7];
  assign eb = b[14:7];
  assign fa = a[6:0];
  assign fb = b[6:0];
  assign a_zero = ea == 8'd0;  // zero or subnormal (flushed)
  assign b_zero = eb == 8'd0;
  assign a_inf = ea == 8'hFF && fa == 7'd0;
  assign b_inf = eb == 8'hFF && fb == 7'd0;
  assign a_nan = ea == 8'hFF && fa != 7'd0;
  assign b_nan = eb == 8'hFF && fb != 7'd0;

  assign mant = {8'd0, 1'b1, fa} * {8'd0, 1'b1, fb};
  // Normalise: a product in [2, 4) moves the point one place and adds one to the exponent.
  assign exp_sum = {2'b00, ea} + {2'b00, eb} + {9'd0, mant[15]};
  assign frac = mant[15] ? {mant[14:0], 8'd0} : {mant[13:0], 9'd0};

  always_comb begin
    if (a_nan || b_nan || (a_inf && b_zero) || (a_zero && b_inf)) begin
      y = CANONICAL_NAN;
    end else if (a_inf || b_inf) begin
      y = {sign, 8'hFF, 23'd0};
    end else if (a_zero || b_zero) begin
      y = {sign, 31'd0};
    end else if (exp_sum >= 10'd382) begin      // biased result exponent >= 255: overflow
      y = {sign, 8'hFF, 23'd0};
    end else if (exp_sum <= 10'd127) begin      // biased result exponent <= 0: underflow
      y = {sign, 31'd0};
    end else begin
      y = {sign, 8'(exp_sum - 10'd127), frac};
    end
  end
endmodule
