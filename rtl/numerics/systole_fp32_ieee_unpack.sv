// systole_fp32_ieee_unpack — a finite binary32 value as a normalised 24-bit significand (leading
// one at bit 23) and a signed biased exponent, so that a subnormal multiplies and divides like
// any other number: 0.f × 2^-126 becomes 1.f' × 2^(e − 127) with e = 1 − (leading zeros of f
// + 1). For zero (no leading one) sig_o is 0; callers handle zero, inf and NaN before using it.
module systole_fp32_ieee_unpack (
    input  logic [30:0]        x_i,   // the magnitude: the sign plays no part
    output logic [23:0]        sig_o,
    output logic signed [11:0] exp_o
);
  logic [22:0] w0, w1, w2, w3, w4, w5;
  logic        lz16, lz8, lz4, lz2, lz1;
  logic [4:0]  lz;  // leading zeros of the fraction (subnormals only)
  assign w0 = x_i[22:0];
  assign lz16 = w0[22:7] == 16'd0;
  assign w1 = lz16 ? w0 << 16 : w0;
  assign lz8 = w1[22:15] == 8'd0;
  assign w2 = lz8 ? w1 << 8 : w1;
  assign lz4 = w2[22:19] == 4'd0;
  assign w3 = lz4 ? w2 << 4 : w2;
  assign lz2 = w3[22:21] == 2'd0;
  assign w4 = lz2 ? w3 << 2 : w3;
  assign lz1 = !w4[22];
  assign w5 = lz1 ? w4 << 1 : w4;
  assign lz = {lz16, lz8, lz4, lz2, lz1};

  always_comb begin
    if (x_i[30:23] != 8'd0) begin
      sig_o = {1'b1, x_i[22:0]};
      exp_o = 12'($signed({4'd0, x_i[30:23]}));
    end else begin
      sig_o = {w5, 1'b0};                             // the leading one moved to bit 23
      exp_o = 12'sd0 - 12'($signed({7'd0, lz}));      // 1 - (lz + 1)
    end
  end
endmodule
