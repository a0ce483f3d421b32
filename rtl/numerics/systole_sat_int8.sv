// systole_sat_int8 — saturate an int64 to int8 ([−128, 127]), docs/NUMERICS.md. Combinational.
module systole_sat_int8 (
    input  logic [63:0] v,
    output logic [7:0]  y
);
  logic signed [63:0] sv;
  assign sv = $signed(v);
  always_comb begin
    if (sv < -64'sd128) y = 8'h80;
    else if (sv > 64'sd127) y = 8'h7F;
    else y = v[7:0];
  end
endmodule
