// systole_fp32_add — y = a + b in fp32 with the rules of docs/NUMERICS.md, combinational.
//
// Inputs are flushed (exponent 0 → zero of the same sign); the result is the IEEE-754
// round-to-nearest-even sum of the flushed inputs, then flushed (a sum of two normal numbers
// below 2^-126 is exact, so the flush here never follows a rounding). Any NaN result is the
// canonical 0x7FC00000 (NaN input, inf + -inf); overflow gives ±inf; (+0) + (−0) = +0 and
// x + (−x) = +0.
//
// Datapath: order the operands by magnitude, align the smaller one with a guard bit, a round
// bit and a sticky bit (enough for correct rounding of addition and subtraction), add or
// subtract, normalise (one right shift after a carry, a leading-zero shift after a
// cancellation — a cancellation of more than one bit only happens when the exponents differ by
// at most one, so those low bits are exact), round to nearest even, then check the exponent.
module systole_fp32_add (
    input  logic [31:0] a,
    input  logic [31:0] b,
    output logic [31:0] y
);
  localparam logic [31:0] CANONICAL_NAN = 32'h7FC0_0000;

  // Classification (after FTZ: a zero exponent field is a zero).
  logic a_zero, b_zero, a_inf, b_inf, a_nan, b_nan;
  assign a_zero = a[30:23] == 8'd0;
  assign b_zero = b[30:23] == 8'd0;
  assign a_inf  = a[30:23] == 8'hFF && a[22:0] == 23'd0;
  assign b_inf  = b[30:23] == 8'hFF && b[22:0] == 23'd0;
  assign a_nan  = a[30:23] == 8'hFF && a[22:0] != 23'd0;
  assign b_nan  = b[30:23] == 8'hFF && b[22:0] != 23'd0;

  // Both normal from here on: x is the operand of larger magnitude.
  logic        swap;
  logic [31:0] x, z;
  logic [7:0]  d;           // exponent difference, x.exp - z.exp
  logic [4:0]  dd;          // clamped to 27: beyond that z only sets the sticky bit
  logic [49:0] z_shifted;   // {1.fz, 26 zeros} >> dd
  logic [27:0] xm, zm;      // carry, 24 significand bits, guard, round, sticky
  logic        subtract;
  logic [27:0] sum;
  logic [4:0]  lz;          // leading zeros of sum[26:0] (sum != 0, no carry)
  logic        lz16, lz8, lz4, lz2, lz1;            // lz's bits, found from the top down
  logic [26:0] lz_w0, lz_w1, lz_w2, lz_w3, lz_w4;   // sum[26:0], shifted left step by step
  logic [25:0] lz_norm;     // the bits below the leading one after the last step
  logic [25:0] norm;        // normalised, below the leading one: fraction, guard, round, sticky
  logic signed [9:0] exp_n; // exponent of norm
  logic [23:0] rounded;     // fraction (below the leading one) + carry out of rounding
  logic        round_up;
  logic signed [9:0] exp_r;

  assign swap = b[30:0] > a[30:0];
  assign x = swap ? b : a;
  assign z = swap ? a : b;
  assign d = x[30:23] - z[30:23];
  assign dd = (d > 8'd27) ? 5'd27 : d[4:0];
  assign z_shifted = {1'b1, z[22:0], 26'd0} >> dd;
  assign xm = {1'b0, 1'b1, x[22:0], 3'b000};
  assign zm = {1'b0, z_shifted[49:24], |z_shifted[23:0]};
  assign subtract = x[31] ^ z[31];
  assign sum = subtract ? xm - zm : xm + zm;

  // Normalising after a cancellation: a logarithmic shifter that counts the leading zeros as it
  // goes (shift by 16 if the top 16 bits are zero, then by 8, 4, 2, 1), so the leading one of
  // sum[26:0] ends at bit 26, lz_norm holds the bits below it and lz the distance. The same
  // circuit as a priority encoder and a shifter, but it Verilates into five tests per PE and
  // cycle instead of 27 (rtl/README.md, "Simulation speed of the SoC"). lz and lz_norm only
  // matter when sum[26:0] != 0; for zero, lz is 31 and the zero result is chosen below.
  assign lz_w0 = sum[26:0];
  assign lz16 = lz_w0[26:11] == 16'd0;
  assign lz_w1 = lz16 ? lz_w0 << 16 : lz_w0;
  assign lz8 = lz_w1[26:19] == 8'd0;
  assign lz_w2 = lz8 ? lz_w1 << 8 : lz_w1;
  assign lz4 = lz_w2[26:23] == 4'd0;
  assign lz_w3 = lz4 ? lz_w2 << 4 : lz_w2;
  assign lz2 = lz_w3[26:25] == 2'd0;
  assign lz_w4 = lz2 ? lz_w3 << 2 : lz_w3;
  assign lz1 = !lz_w4[26];
  assign lz_norm = lz1 ? {lz_w4[24:0], 1'b0} : lz_w4[25:0];
  assign lz = {lz16, lz8, lz4, lz2, lz1};

  always_comb begin
    if (sum[27]) begin
      norm = {sum[26:2], sum[1] | sum[0]};
      exp_n = $signed({2'b00, x[30:23]}) + 10'sd1;
    end else begin
      norm = lz_norm;           // below the leading one, zeros shifted in
      exp_n = $signed({2'b00, x[30:23]}) - $signed({5'd0, lz});
    end
  end

  assign round_up = norm[2] & (norm[1] | norm[0] | norm[3]);
  assign rounded = {1'b0, norm[25:3]} + {23'd0, round_up};
  assign exp_r = rounded[23] ? exp_n + 10'sd1 : exp_n;

  always_comb begin
    if (a_nan || b_nan || (a_inf && b_inf && (a[31] != b[31]))) begin
      y = CANONICAL_NAN;
    end else if (a_inf) begin
      y = {a[31], 8'hFF, 23'd0};
    end else if (b_inf) begin
      y = {b[31], 8'hFF, 23'd0};
    end else if (a_zero && b_zero) begin
      y = {a[31] & b[31], 31'd0};
    end else if (a_zero) begin
      y = b;
    end else if (b_zero) begin
      y = a;
    end else if (sum == 28'd0) begin
      y = 32'd0;                                  // x + (−x) = +0
    end else if (exp_r <= 10'sd0) begin
      y = {x[31], 31'd0};                         // below 2^-126: flushed
    end else if (exp_r >= 10'sd255) begin
      y = {x[31], 8'hFF, 23'd0};                  // overflow
    end else begin
      // A carry out of rounding leaves the significand 1.000…: its fraction bits are zero.
      y = {x[31], exp_r[7:0], rounded[22:0]};
    end
  end
endmodule
