// systole_systolic_array — ROWS x COLS processing elements, weight stationary.
//
//   in_row[t] ──skew t──► PE[t][0] ─► PE[t][1] ─► … ─► PE[t][C-1]       x moves right
//                            │           │                 │             psum moves down
//                           ...         ...               ...
//                            ▼           ▼                 ▼
//                         deskew C-1   deskew C-2  …    deskew 0  ──► out_row[j]
//
// PE[t][j] holds weight T[t][j]. Element t of an input row is delayed t cycles (skew) so that
// it reaches PE[t][j] exactly when the partial sum of the same row arrives from PE[t-1][j].
// Each column's sum starts from +0 at the top and adds the products of rows t = 0, 1, …, R-1
// in that order — the accumulation order of docs/NUMERICS.md. Column j's sum leaves the
// bottom j cycles after column 0's; the deskew delays column j by C-1-j cycles so that a whole
// output row comes out at once.
//
// Latency: a row presented on in_row in cycle S comes out on out_row in cycle S + R + C - 1.
//
// Row t of PEs is one systole_array_row, so that Verilator can build a 128x128 array
// hierarchically (the row Verilated once; see that module and cmake/Verilate.cmake).
//
// Weights: a tile row presented on wload_row with wload_en enters the top of every column and
// shifts down bank `wload_bank`; R consecutive shifts (tile rows R-1, R-2, …, 0) fill the bank.
// Column j receives each shift j cycles after column 0, the same skew as the input data, so a
// tile can be loaded while the rows of the previous tile in the same bank are still draining
// (see the timing rules in systole_mxu).
module systole_systolic_array #(
    parameter integer ROWS = 0,
    parameter integer COLS = 0,
    parameter integer BF16 = -1,
    localparam integer EW = (BF16 != 0) ? 16 : 8
) (
    input  logic               clk,
    // one input row (element t for array row t, elements >= k already zeroed) and its bank
    input  logic [ROWS*EW-1:0] in_row,
    input  logic               in_bank,
    // one tile row shifting into bank wload_bank (element j for column j)
    input  logic               wload_en,
    input  logic               wload_bank,
    input  logic [COLS*EW-1:0] wload_row,
    // column sums of the row presented R + C - 1 cycles ago (fp32 or int32 bits)
    output logic [COLS*32-1:0] out_row
);

  // ---- Parameters --------------------------------------------------------------------------
  // Configuration parameters come from the parent; the defaults fail these checks.
  if (ROWS < 1 || COLS < 1) begin : g_shape_check
    systole_param_error_array_ROWS_and_COLS_must_be_at_least_1 u_error ();
  end
  if (BF16 != 0 && BF16 != 1) begin : g_bf16_check
    systole_param_error_array_BF16_must_be_0_or_1 u_error ();
  end
  // Wires between the rows of PEs (systole_array_row): x/bank enter row t at its left edge;
  // the partial sums of row t (element j for column j) enter at index t and leave at t+1;
  // the weights likewise down the columns.
  logic [EW-1:0]      x_w    [ROWS];
  logic               bank_w [ROWS];
  // split_var: one variable per row boundary, so that a Verilation with the rows as separate
  // hier blocks does not see the chain psum_w[t] -> row t -> psum_w[t+1] as a combinational
  // loop through one array (UNOPTFLAT); a comment to every other tool.
  logic [COLS*32-1:0] psum_w [ROWS+1] /*verilator split_var*/;
  logic [COLS*EW-1:0] w_w    [ROWS+1] /*verilator split_var*/;
  logic [COLS-1:0]    wl_en;
  logic [COLS-1:0]    wl_bank;

  // ---- input skew: element t waits t cycles -------------------------------------------------
  for (genvar t = 0; t < ROWS; t++) begin : g_skew
    if (t == 0) begin : g_direct
      assign x_w[t] = in_row[0 +: EW];
      assign bank_w[t] = in_bank;
    end else begin : g_delay
      logic [EW-1:0] x_d[t];
      logic          bank_d[t];
      always_ff @(posedge clk) begin
        x_d[0] <= in_row[t*EW +: EW];
        bank_d[0] <= in_bank;
        for (int d = 1; d < t; d++) begin
          x_d[d] <= x_d[d-1];
          bank_d[d] <= bank_d[d-1];
        end
      end
      assign x_w[t] = x_d[t-1];
      assign bank_w[t] = bank_d[t-1];
    end
  end

  // ---- weight-load skew: column j shifts j cycles after column 0 ------------------------------
  for (genvar j = 0; j < COLS; j++) begin : g_wskew
    if (j == 0) begin : g_direct
      assign w_w[0][j*EW +: EW] = wload_row[0 +: EW];
      assign wl_en[j] = wload_en;
      assign wl_bank[j] = wload_bank;
    end else begin : g_delay
      logic [EW-1:0] w_d[j];
      logic          en_d[j];
      logic          bank_d[j];
      always_ff @(posedge clk) begin
        w_d[0] <= wload_row[j*EW +: EW];
        en_d[0] <= wload_en;
        bank_d[0] <= wload_bank;
        for (int d = 1; d < j; d++) begin
          w_d[d] <= w_d[d-1];
          en_d[d] <= en_d[d-1];
          bank_d[d] <= bank_d[d-1];
        end
      end
      assign w_w[0][j*EW +: EW] = w_d[j-1];
      assign wl_en[j] = en_d[j-1];
      assign wl_bank[j] = bank_d[j-1];
    end
  end

  // ---- the PE grid, one systole_array_row per array row ---------------------------------------
  assign psum_w[0] = '0;  // every column sum starts from +0
  // int8: a column's partial sums lie within ROWS * 2^14 of zero, so the PEs add in PSUM_BITS
  // (18 for 4 rows) and sign-extend; bf16 sums are fp32 bit patterns.
  localparam integer PSUM_NEED = $clog2(ROWS * 16384 + 1) + 1;
  localparam integer PSUM_BITS = (BF16 != 0 || PSUM_NEED > 32) ? 32 : PSUM_NEED;
  for (genvar t = 0; t < ROWS; t++) begin : g_row
    systole_array_row #(.COLS(COLS), .BF16(BF16), .PSUM_BITS(PSUM_BITS)) u_row (
        .clk,
        .x_in(x_w[t]),
        .bank_in(bank_w[t]),
        .psum_in(psum_w[t]),
        .psum_out(psum_w[t+1]),
        .wload_en(wl_en),
        .wload_bank(wl_bank),
        .w_in(w_w[t]),
        .w_out(w_w[t+1])
    );
  end

  // ---- output deskew: column j waits C-1-j cycles ---------------------------------------------
  for (genvar j = 0; j < COLS; j++) begin : g_deskew
    localparam integer DELAY = COLS - 1 - j;
    if (DELAY == 0) begin : g_direct
      assign out_row[j*32 +: 32] = psum_w[ROWS][j*32 +: 32];
    end else begin : g_delay
      logic [31:0] s_d[DELAY];
      always_ff @(posedge clk) begin
        s_d[0] <= psum_w[ROWS][j*32 +: 32];
        for (int d = 1; d < DELAY; d++) s_d[d] <= s_d[d-1];
      end
      assign out_row[j*32 +: 32] = s_d[DELAY-1];
    end
  end

  // The bottom row's weights go nowhere; the wire exists only to keep the chain regular.
  // verilator lint_off UNUSEDSIGNAL
  logic unused;
  assign unused = ^w_w[ROWS];
  // verilator lint_on UNUSEDSIGNAL
endmodule
