// systole_array_row — one row of the systolic array: COLS processing elements side by side.
//
//   x_in ─► PE[0] ─► PE[1] ─► … ─► PE[COLS-1]      (x and its bank move right, registered)
//             │        │               │
//   psum_in[j] enters PE[j] from the row above; psum_out[j] leaves it for the row below.
//   w_in[j] / w_out[j]: column j's weight shift chain through this row's PE.
//
// This is exactly the inner loop of systole_systolic_array's PE grid, cut out as a module so
// that a 128x128 array can be Verilated hierarchically: every row has the same parameters, so
// with `verilator --hierarchical` the row is Verilated once and instantiated ROWS times,
// instead of 16 384 PEs flattened into one model (which does not fit in the memory of the
// development machine). The metacomment below is a plain comment to every other tool, and
// ignored by a Verilation without --hierarchical. Nothing reaches into a row from outside
// (hierarchical references into a hier block are not allowed).
module systole_array_row #(
    parameter integer COLS = 0,
    parameter integer BF16 = -1,
    parameter integer PSUM_BITS = 32,  // systole_pe's (the same in every row)
    localparam integer EW = (BF16 != 0) ? 16 : 8
) (
    input  logic               clk,
    // the row's input element (already skewed) and the weight bank it multiplies
    input  logic [EW-1:0]      x_in,
    input  logic               bank_in,
    // partial sums from the row above (element j for column j) and to the row below
    input  logic [COLS*32-1:0] psum_in,
    output logic [COLS*32-1:0] psum_out,
    // each column's weight shift chain, with its own (skewed) enable and bank
    input  logic [COLS-1:0]    wload_en,
    input  logic [COLS-1:0]    wload_bank,
    input  logic [COLS*EW-1:0] w_in,
    output logic [COLS*EW-1:0] w_out
);

  // ---- Parameters --------------------------------------------------------------------------
  // Configuration parameters come from the parent; the defaults fail these checks.
  if (COLS < 1) begin : g_cols_check
    systole_param_error_array_row_COLS_must_be_at_least_1 u_error ();
  end
  if (BF16 != 0 && BF16 != 1) begin : g_bf16_check
    systole_param_error_array_row_BF16_must_be_0_or_1 u_error ();
  end
  /*verilator hier_block*/

  // x/bank of PE[j] enter at index j and leave at j+1.
  logic [EW-1:0] x_w   [COLS+1];
  logic          bank_w[COLS+1];
  assign x_w[0] = x_in;
  assign bank_w[0] = bank_in;

  for (genvar j = 0; j < COLS; j++) begin : g_col
    systole_pe #(.BF16(BF16), .PSUM_BITS(PSUM_BITS)) u_pe (
        .clk,
        .x_in(x_w[j]),
        .bank_in(bank_w[j]),
        .x_out(x_w[j+1]),
        .bank_out(bank_w[j+1]),
        .psum_in(psum_in[j*32 +: 32]),
        .psum_out(psum_out[j*32 +: 32]),
        .wload_en(wload_en[j]),
        .wload_bank(wload_bank[j]),
        .w_in(w_in[j*EW +: EW]),
        .w_out(w_out[j*EW +: EW])
    );
  end

  // The last PE passes its input on to nobody.
  // verilator lint_off UNUSEDSIGNAL
  logic unused;
  assign unused = (^x_w[COLS]) ^ bank_w[COLS];
  // verilator lint_on UNUSEDSIGNAL
endmodule
