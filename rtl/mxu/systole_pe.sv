// systole_pe — one processing element of the weight-stationary array.
//
//                 w_in (weight shift chain)   psum_in
//                        │                       │
//        x_in, bank_in ─►┤  w[0], w[1]  ──► x × w[bank] + psum_in ├─► x_out, bank_out (registered)
//                        │                       │
//                 w_out                      psum_out (registered)
//
// Two weight registers (double buffering, as in TPUv1): while the input rows use one bank, the
// next tile shifts into the other one. The bank is chosen per input element by `bank_in`, a
// bit that travels through the array with the data, so the switch from one tile to the next
// happens exactly on the boundary between two input rows, in every PE at its own time.
//
// Weights shift down a column: when `wload_en` is high, bank `wload_bank` takes `w_in` (the
// register above, or the tile row entering at the top) and `w_out` shows that bank to the PE
// below. After R shifts the R rows of a tile stand in the R PEs of each column.
//
// int8: psum_out = psum_in + x * w, int32 wrapping (the product of two int8 is exact).
// bf16: psum_out = fp32_add(psum_in, bf16_mul(x, w)), both per docs/NUMERICS.md.
//
// Datapath only: no register here needs a reset (which rows are valid is tracked by the
// control in systole_mxu, and a tile is always loaded before it is used).
module systole_pe #(
    parameter integer BF16 = -1,
    // int8: the bits a partial sum can need in this array (systole_systolic_array); 32 keeps
    // the full adder
    parameter integer PSUM_BITS = 32,
    localparam integer EW = (BF16 != 0) ? 16 : 8
) (
    input  logic          clk,
    // input element moving right, with the weight bank it multiplies
    input  logic [EW-1:0] x_in,
    input  logic          bank_in,
    output logic [EW-1:0] x_out,
    output logic          bank_out,
    // partial sum moving down the column
    input  logic [31:0]   psum_in,
    output logic [31:0]   psum_out,
    // weight shift chain (down the column) into bank `wload_bank`
    input  logic          wload_en,
    input  logic          wload_bank,
    input  logic [EW-1:0] w_in,
    output logic [EW-1:0] w_out
);

  // ---- Parameters --------------------------------------------------------------------------
  // Configuration parameters come from the parent; the defaults fail these checks.
  if (BF16 != 0 && BF16 != 1) begin : g_bf16_check
    systole_param_error_pe_BF16_must_be_0_or_1 u_error ();
  end
  logic [EW-1:0] w0, w1;  // the two weight banks
  logic [EW-1:0] w;       // the bank this input element multiplies
  logic [31:0]   sum;

  assign w = bank_in ? w1 : w0;
  assign w_out = wload_bank ? w1 : w0;

  if (BF16 != 0) begin : g_bf16
    logic [31:0] product;
    systole_bf16_mul u_mul (.a(x_in), .b(w), .y(product));
    systole_fp32_add u_add (.a(psum_in), .b(product), .y(sum));
  end else begin : g_int8
    logic signed [15:0] product;
    assign product = $signed(x_in) * $signed(w);
    // A partial sum is the sum of at most ROWS int8 products (|p| <= 2^14), which
    // PSUM_BITS holds signed without wrapping: adding in PSUM_BITS and sign-extending gives
    // the 32-bit sum (psum_in's upper bits are copies of its sign bit), in a narrower adder.
    logic signed [PSUM_BITS-1:0] nsum;
    assign nsum = PSUM_BITS'(psum_in) + PSUM_BITS'(product);
    assign sum = 32'(nsum);  // sign-extended
    if (PSUM_BITS < 32) begin : g_narrow
      logic unused_psum_hi;
      assign unused_psum_hi = ^psum_in[31:PSUM_BITS];
    end
  end

  always_ff @(posedge clk) begin
    if (wload_en) begin
      if (wload_bank) w1 <= w_in;
      else w0 <= w_in;
    end
    x_out <= x_in;
    bank_out <= bank_in;
    psum_out <= sum;
  end
endmodule
