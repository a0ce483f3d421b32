// systole_fp32_ieee_round — the last step of every IEEE-754 binary32 operation of ACCVEC
// (docs/NUMERICS.md, "ACCVEC"): a finite non-zero result, given as a normalised significand
// with guard bits and its exponent, rounded to nearest even with gradual underflow.
//
// The value is sig × 2^(exp − 127 − 26) with sig[26] = 1: sig[25:3] are the fraction, sig[2]
// the guard bit, sig[1] a round bit and sig[0] a sticky bit (the OR of everything below).
// exp is the biased exponent of the leading one and may be far outside 1..254 (a product or a
// quotient of extreme values). Below 1 the significand is shifted right onto the subnormal grid
// (the bits shifted out join the sticky bit), so rounding happens once, on the final grid.
// Rounding then adds one to the packed {exponent, fraction}: a carry out of the fraction
// increments the exponent, which turns the largest subnormal into the smallest normal and the
// largest finite value into infinity, both exactly as IEEE-754 requires.
module systole_fp32_ieee_round (
    input  logic               sign_i,
    input  logic signed [11:0] exp_i,
    input  logic [26:0]        sig_i,
    output logic [31:0]        y_o
);
  logic [4:0]  shift;       // 1 - exp, clamped: 27 or more leaves only the sticky bit
  logic [52:0] wide;        // {sig, 27 zeros} >> shift without its top bit (the leading one of
                            // a normal result, which exp_field stands for)
  logic [25:0] m;           // on the final grid: m[25:3] fraction, m[2] guard, m[1:0] sticky
  logic [7:0]  exp_field;
  logic        round_up;
  logic [30:0] packed_in, packed_out;

  always_comb begin
    if (exp_i >= 12'sd1) begin
      shift = 5'd0;
    end else if (exp_i <= -12'sd26) begin
      shift = 5'd27;
    end else begin
      shift = 5'(12'sd1 - exp_i);
    end
  end
  assign wide = 53'({sig_i, 27'd0} >> shift);
  assign m = {wide[52:28], wide[27] | (|wide[26:0])};
  assign exp_field = exp_i >= 12'sd1 ? exp_i[7:0] : 8'd0;
  assign round_up = m[2] & (m[1] | m[0] | m[3]);
  assign packed_in = {exp_field, m[25:3]};
  assign packed_out = packed_in + 31'(round_up);

  always_comb begin
    if (exp_i >= 12'sd255) y_o = {sign_i, 8'hFF, 23'd0};   // overflow before rounding
    else y_o = {sign_i, packed_out};                        // 0xFF after a carry is ±inf
  end
endmodule
