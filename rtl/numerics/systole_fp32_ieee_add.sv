// systole_fp32_ieee_add — y = a + b (or a − b) in IEEE-754 binary32, combinational, for ACCVEC
// (docs/NUMERICS.md, "ACCVEC"): round to nearest even with subnormal inputs and results kept,
// unlike systole_fp32_add (the bf16 path's, which flushes). NaN rules are the host
// interpreter's (x86-64 SSE): a NaN a is returned quieted, else a NaN b quieted (its own sign,
// also for a − b); inf − inf is the default NaN 0xFFC00000. (+0) + (−0) = +0, (−0) + (−0) = −0,
// and x − x = +0.
//
// Datapath as in systole_fp32_add, with subnormals as significands 0.f at exponent 1: order
// by magnitude, align the smaller with guard, round and sticky bits, add or subtract, move the
// leading one to bit 26 (one right shift after a carry; a left shift after a cancellation,
// which may leave the exponent below 1 — the value is then exact and the rounder shifts it
// back onto the subnormal grid), and round once in systole_fp32_ieee_round.
module systole_fp32_ieee_add (
    input  logic [31:0] a,
    input  logic [31:0] b,
    input  logic        sub,
    output logic [31:0] y
);
  localparam logic [31:0] DEFAULT_NAN = 32'hFFC0_0000;
  localparam logic [31:0] QUIET = 32'h0040_0000;

  logic [31:0] bs;          // b with the sign of the addend (flipped for a − b)
  logic a_nan, b_nan, a_inf, b_inf, a_zero, b_zero;
  assign bs = {b[31] ^ sub, b[30:0]};
  assign a_nan = a[30:23] == 8'hFF && a[22:0] != 23'd0;
  assign b_nan = b[30:23] == 8'hFF && b[22:0] != 23'd0;
  assign a_inf = a[30:0] == 31'h7F80_0000;
  assign b_inf = b[30:0] == 31'h7F80_0000;
  assign a_zero = a[30:0] == 31'd0;
  assign b_zero = b[30:0] == 31'd0;

  logic        swap;
  logic [31:0] x, z;
  logic [7:0]  ex, ez;      // exponents, a subnormal's taken as 1
  logic [7:0]  d;
  logic [4:0]  dd;
  logic [49:0] z_shifted;
  logic [27:0] xm, zm, sum;
  logic        subtract;
  logic [26:0] lz_w0, lz_w1, lz_w2, lz_w3, lz_w4, lz_w5;
  logic        lz16, lz8, lz4, lz2, lz1;
  logic [4:0]  lz;
  logic [26:0] sig;
  logic signed [11:0] exp_n;
  logic [31:0] rounded;

  assign swap = bs[30:0] > a[30:0];
  assign x = swap ? bs : a;
  assign z = swap ? a : bs;
  assign ex = x[30:23] == 8'd0 ? 8'd1 : x[30:23];
  assign ez = z[30:23] == 8'd0 ? 8'd1 : z[30:23];
  assign d = ex - ez;
  assign dd = (d > 8'd27) ? 5'd27 : d[4:0];
  assign z_shifted = {z[30:23] != 8'd0, z[22:0], 26'd0} >> dd;
  assign xm = {1'b0, x[30:23] != 8'd0, x[22:0], 3'b000};
  assign zm = {1'b0, z_shifted[49:24], |z_shifted[23:0]};
  assign subtract = x[31] ^ z[31];
  assign sum = subtract ? xm - zm : xm + zm;

  // Leading zeros of sum[26:0] by a logarithmic shifter (16, 8, 4, 2, 1), as systole_fp32_add.
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
  assign lz_w5 = lz1 ? lz_w4 << 1 : lz_w4;
  assign lz = {lz16, lz8, lz4, lz2, lz1};

  always_comb begin
    if (sum[27]) begin
      sig = {sum[27:2], sum[1] | sum[0]};
      exp_n = 12'($signed({4'd0, ex})) + 12'sd1;
    end else begin
      sig = lz_w5;
      exp_n = 12'($signed({4'd0, ex})) - 12'($signed({7'd0, lz}));
    end
  end

  systole_fp32_ieee_round u_round (.sign_i(x[31]), .exp_i(exp_n), .sig_i(sig), .y_o(rounded));

  always_comb begin
    if (a_nan) y = a | QUIET;
    else if (b_nan) y = b | QUIET;
    else if (a_inf && b_inf && (a[31] != bs[31])) y = DEFAULT_NAN;
    else if (a_inf) y = a;
    else if (b_inf) y = bs;
    else if (a_zero && b_zero) y = {a[31] & bs[31], 31'd0};
    else if (sum == 28'd0) y = 32'd0;                  // x + (−x) = +0
    else y = rounded;
  end
endmodule
