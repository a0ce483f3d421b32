// systole_bf16_to_fp32 — bf16 → fp32 per docs/NUMERICS.md: the 16 bits become the top half of
// the word, then flush to zero (exponent 0 → zero of the same sign). Combinational.
module systole_bf16_to_fp32 (
    input  logic [15:0] a,
    output logic [31:0] y
);
  assign y = (a[14:7] == 8'd0) ? {a[15], 31'd0} : {a, 16'd0};
endmodule
