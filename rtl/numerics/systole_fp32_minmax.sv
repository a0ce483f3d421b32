// systole_fp32_minmax — y = min(a, b) when is_min, else max(a, b), per docs/NUMERICS.md,
// combinational: inputs are flushed; NaN in either → 0x7FC00000; of two zeros, max is +0
// if either is +0 and min is −0 if either is −0; otherwise the larger (smaller) flushed input.
module systole_fp32_minmax (
    input  logic [31:0] a,
    input  logic [31:0] b,
    input  logic        is_min,
    output logic [31:0] y
);
  logic [31:0] fa, fb;          // flushed
  logic a_nan, b_nan;
  logic [31:0] ka, kb;          // keys that order as unsigned integers like the values
  logic a_less;

  assign fa = (a[30:23] == 8'd0) ? {a[31], 31'd0} : a;
  assign fb = (b[30:23] == 8'd0) ? {b[31], 31'd0} : b;
  assign a_nan = a[30:23] == 8'hFF && a[22:0] != 23'd0;
  assign b_nan = b[30:23] == 8'hFF && b[22:0] != 23'd0;
  assign ka = fa[31] ? ~fa : {1'b1, fa[30:0]};
  assign kb = fb[31] ? ~fb : {1'b1, fb[30:0]};
  assign a_less = ka < kb;

  always_comb begin
    if (a_nan || b_nan) begin
      y = 32'h7FC0_0000;
    end else if (fa[30:0] == 31'd0 && fb[30:0] == 31'd0) begin
      y = {is_min ? (fa[31] | fb[31]) : (fa[31] & fb[31]), 31'd0};
    end else begin
      y = (is_min == a_less) ? fa : fb;
    end
  end
endmodule
