// systole_requant — y = (v × s + (shift > 0 ? 2^(shift−1) : 0)) >>> shift in int64, the
// requantization of docs/NUMERICS.md (round half towards +inf). v and s are int32, so
// |v × s| <= 2^62 and neither the product nor the rounding term overflows; shift is 0..62
// (63 behaves as the formula says too). Combinational.
module systole_requant (
    input  logic [31:0] v,
    input  logic [31:0] s,
    input  logic [5:0]  shift,
    output logic [63:0] y
);
  logic signed [63:0] product, rounding, total;
  assign product  = $signed({{32{v[31]}}, v}) * $signed({{32{s[31]}}, s});
  assign rounding = (shift == 6'd0) ? 64'sd0 : $signed(64'd1 << (shift - 6'd1));
  assign total    = product + rounding;
  assign y        = total >>> shift;
endmodule
