// systole_fp32_min — y = min(a, b) per docs/NUMERICS.md (see systole_fp32_minmax).
module systole_fp32_min (
    input  logic [31:0] a,
    input  logic [31:0] b,
    output logic [31:0] y
);
  systole_fp32_minmax u_minmax (.a(a), .b(b), .is_min(1'b1), .y(y));
endmodule
