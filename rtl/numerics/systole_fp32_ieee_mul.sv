// systole_fp32_ieee_mul — y = a × b in IEEE-754 binary32, combinational, for ACCVEC
// (docs/NUMERICS.md, "ACCVEC"): subnormal inputs normalised first (systole_fp32_ieee_unpack),
// one rounding to nearest even on the final grid (systole_fp32_ieee_round), subnormal results
// kept. NaN rules are the host interpreter's (x86-64 SSE): a NaN a quieted, else a NaN b
// quieted; 0 × inf is the default NaN 0xFFC00000. Zeros and infinities carry a.sign ^ b.sign.
module systole_fp32_ieee_mul (
    input  logic [31:0] a,
    input  logic [31:0] b,
    output logic [31:0] y
);
  localparam logic [31:0] DEFAULT_NAN = 32'hFFC0_0000;
  localparam logic [31:0] QUIET = 32'h0040_0000;

  logic a_nan, b_nan, a_inf, b_inf, a_zero, b_zero, sign;
  assign a_nan = a[30:23] == 8'hFF && a[22:0] != 23'd0;
  assign b_nan = b[30:23] == 8'hFF && b[22:0] != 23'd0;
  assign a_inf = a[30:0] == 31'h7F80_0000;
  assign b_inf = b[30:0] == 31'h7F80_0000;
  assign a_zero = a[30:0] == 31'd0;
  assign b_zero = b[30:0] == 31'd0;
  assign sign = a[31] ^ b[31];

  logic [23:0] sa, sb;
  logic signed [11:0] ea, eb;
  systole_fp32_ieee_unpack u_ua (.x_i(a[30:0]), .sig_o(sa), .exp_o(ea));
  systole_fp32_ieee_unpack u_ub (.x_i(b[30:0]), .sig_o(sb), .exp_o(eb));

  logic [47:0] product;        // in [2^46, 2^48)
  logic [26:0] sig;
  logic signed [11:0] exp_n;
  logic [31:0] rounded;
  assign product = sa * sb;
  always_comb begin
    if (product[47]) begin
      sig = {product[47:22], |product[21:0]};
      exp_n = ea + eb - 12'sd126;
    end else begin
      sig = {product[46:21], |product[20:0]};
      exp_n = ea + eb - 12'sd127;
    end
  end
  systole_fp32_ieee_round u_round (.sign_i(sign), .exp_i(exp_n), .sig_i(sig), .y_o(rounded));

  always_comb begin
    if (a_nan) y = a | QUIET;
    else if (b_nan) y = b | QUIET;
    else if ((a_inf && b_zero) || (a_zero && b_inf)) y = DEFAULT_NAN;
    else if (a_inf || b_inf) y = {sign, 8'hFF, 23'd0};
    else if (a_zero || b_zero) y = {sign, 31'd0};
    else y = rounded;
  end
endmodule
