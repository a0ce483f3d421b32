// systole_fp32_to_bf16 — fp32 → bf16 per docs/NUMERICS.md, combinational: NaN → 0x7FC0;
// otherwise flush the input, round the low 16 bits to nearest, ties to even
// (bits + 0x7FFF + bit 16, keep the top half), flush the result. Overflow becomes ±inf.
module systole_fp32_to_bf16 (
    input  logic [31:0] a,
    output logic [15:0] y
);
  logic [31:0] flushed;
  // The low half of the rounded word is discarded by definition.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [31:0] rounded;
  /* verilator lint_on UNUSEDSIGNAL */
  assign flushed = (a[30:23] == 8'd0) ? {a[31], 31'd0} : a;
  assign rounded = flushed + 32'h0000_7FFF + {31'd0, flushed[16]};
  always_comb begin
    if (a[30:23] == 8'hFF && a[22:0] != 23'd0) y = 16'h7FC0;
    else if (rounded[30:23] == 8'd0) y = {rounded[31], 15'd0};
    else y = rounded[31:16];
  end
endmodule
