// systole_requant_sat — the requantization of systole_requant, (v × s + 2^(shift−1)) >>> shift
// in int64 (docs/NUMERICS.md: round half towards +inf), saturated to a BITS-bit signed result.
// Combinational; y is 0 while en is low.
//
// Why it exists: the int8 vector lane only ever clamps the int64 result to an int16 range and
// saturates it to int8 (docs/ISA.md), so every result beyond ±2^(BITS−1) with BITS >= 18 ends
// up the same int8 as its BITS-bit saturation (systole_vector_lane says why). Computing only
// those bits and an overflow test costs a fraction of the full 64-bit rounding add and
// arithmetic shift (on the GW2AR-18, 1 485 LUTs a lane for systole_requant: docs/FPGA.md):
//   * the rounding add becomes a carry-in: (p + 2^(k−1)) >> k = (p >> k) + p[k−1] for k > 0,
//     since p = q·2^k + r with 0 <= r < 2^k rounds up exactly when r >= 2^(k−1);
//   * the shift computes only q's low BITS bits (a shifter whose stages narrow towards the output);
//   * q fits BITS bits when p[63 : shift+BITS−1] are all copies of the sign p[63]: one
//     suffix-OR of p ^ sign, read at shift + BITS − 1;
//   * q + round overflows only at the top (q = 2^(BITS−1) − 1, round 1), and q below the range
//     stays below or at its floor after + round: both saturate as q does.
module systole_requant_sat #(
    parameter integer BITS = 18
) (
    input  logic [31:0]  v,
    input  logic [31:0]  s,
    input  logic [5:0]   shift,
    input  logic         en,     // compute (else y = 0)
    output logic [BITS-1:0] y
);
  if (BITS < 2 || BITS > 32) begin : g_bits_check
    systole_param_error_requant_sat_BITS_must_be_2_to_32 u_error ();
  end

  // above[i]: some bit at or above i differs from the sign (i = 0..63); q overflows BITS bits when
  // above[shift + BITS − 1] (positions beyond 63 never differ).
  // Written as six shift-and-OR steps, not a 63-step chain: Verilator evaluates this every
  // cycle in every int8 lane, and the chain cost 15 % of the int8 cores' simulation speed
  // (rtl_core_bench --speed-only, 2026-11-28); the steps are six 64-bit word operations. Yosys
  // maps both to nearly the same logic (GW2AR-18, this module alone: 352 LUTs against 325).
  function automatic logic [63:0] suffix_or(input logic [62:0] d);
    logic [63:0] x;
    x = {1'b0, d};
    x = x | (x >> 1);
    x = x | (x >> 2);
    x = x | (x >> 4);
    x = x | (x >> 8);
    x = x | (x >> 16);
    x = x | (x >> 32);
    suffix_or = x;
  endfunction
  localparam logic [31:0] TOP = BITS - 1;
  // Saturate: an overflowing q saturates by its sign; otherwise q + round can only pass the top.
  localparam logic [BITS-1:0] MAX = {1'b0, {(BITS - 1){1'b1}}};
  localparam logic [BITS-1:0] MIN = {1'b1, {(BITS - 1){1'b0}}};

  // The whole computation as one function, evaluated only while en is high (y = 0 otherwise):
  // the int8 vector lane uses the result only in the cycles it loads its step-2 register, and
  // an always-on requantizer is evaluated by the simulation in all 16 lanes every cycle
  // (rtl/README.md, "Simulation speed"); as locals, its intermediate values cost nothing then.
  function automatic logic [BITS-1:0] requant(logic [31:0] rv, logic [31:0] rs, logic [5:0] rsh);
    logic signed [63:0] product;
    logic [BITS+62:0] ext;
    logic [BITS+30:0] st5;
    logic [BITS+14:0] st4;
    logic [BITS+6:0]  st3;
    logic [BITS+2:0]  st2;
    logic [BITS:0]    st1;
    logic [BITS-1:0]  q_low;
    logic [64:0]      low_ext;
    logic             round;  // the rounding bit product[rsh − 1], 0 for rsh 0
    logic [127:0]     above_ext;
    logic             overflow;
    logic [BITS:0]    rounded;
    product = $signed({{32{rv[31]}}, rv}) * $signed({{32{rs[31]}}, rs});
    // The bits of q = product >>> rsh that the result needs: q[BITS-1:0]. A logarithmic shifter
    // whose stages keep only the bits later stages read (stage k shifts by 2^k when rsh[k]).
    ext = {{(BITS - 1){product[63]}}, product};
    st5 = rsh[5] ? ext[BITS+62:32] : ext[BITS+30:0];
    st4 = rsh[4] ? st5[BITS+30:16] : st5[BITS+14:0];
    st3 = rsh[3] ? st4[BITS+14:8] : st4[BITS+6:0];
    st2 = rsh[2] ? st3[BITS+6:4] : st3[BITS+2:0];
    st1 = rsh[1] ? st2[BITS+2:2] : st2[BITS:0];
    q_low = rsh[0] ? st1[BITS:1] : st1[BITS-1:0];
    low_ext = {product, 1'b0};
    round = low_ext[{1'b0, rsh}];
    above_ext = {64'd0, suffix_or(product[62:0] ^ {63{product[63]}})};
    overflow = above_ext[{1'b0, rsh} + TOP[6:0]];
    rounded = {q_low[BITS-1], q_low} + {{BITS{1'b0}}, round};
    if (overflow) requant = product[63] ? MIN : MAX;
    else if (rounded[BITS] != rounded[BITS-1]) requant = MAX;
    else requant = rounded[BITS-1:0];
  endfunction

  always_comb begin
    y = '0;
    if (en) y = requant(v, s, shift);
  end
endmodule
