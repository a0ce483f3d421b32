// systole_vector_rowreduce — REDUCE over=elems: the max or sum of elements 0 .. elems-1 of one
// unified-buffer row, combined one element per cycle in element order (docs/ISA.md, REDUCE),
// bit-exact against sim/model/reduce.cpp. The vector unit's lanes then scale and convert the
// value (step 2 and 3, as for POOL).
//
// One fp32 adder and one min/max unit (bf16) or a 32-bit adder and comparator (int8), so a row
// takes elems cycles: a fixed order on a short datapath rather than a tree of W − 1 adders
// whose order would differ from the model's.
//
// Handshake: start_i (one cycle) loads row_i; elems_i and max_i are held while busy. done_o
// pulses one cycle with y_o valid (fp32 bits, or the int32 sum / max), elems_i cycles after
// start_i.
//
// Parameters: the array's shape (ROWS, COLS: W = max(ROWS, COLS) lanes) and BF16 the element
// type, from systole_vector_unit.
module systole_vector_rowreduce #(
    parameter integer ROWS = 0,
    parameter integer COLS = 0,
    parameter integer BF16 = -1,
    localparam integer W = (ROWS > COLS) ? ROWS : COLS,
    localparam integer EW = (BF16 != 0) ? 16 : 8
) (
    input  logic            clk,
    input  logic            rst,
    input  logic            start_i,
    input  logic [W*EW-1:0] row_i,
    input  logic [15:0]     elems_i,  // 1 .. W (the sequencer faults more)
    input  logic            max_i,    // max (else sum)
    output logic            busy_o,
    output logic            done_o,
    output logic [31:0]     y_o
);
  if (ROWS < 1 || COLS < 1) begin : g_shape_check
    systole_param_error_vector_rowreduce_ROWS_and_COLS_must_be_at_least_1 u_error ();
  end
  if (BF16 != 0 && BF16 != 1) begin : g_bf16_check
    systole_param_error_vector_rowreduce_BF16_must_be_0_or_1 u_error ();
  end

  logic [W*EW-1:0] row_q, row_d;
  logic [15:0]     j_q, j_d;
  logic [31:0]     acc_q, acc_d, combined;
  logic            run_q, run_d, done_q, done_d;
  logic [EW-1:0]   element;

  assign element = row_q[j_q * EW +: EW];

  if (BF16 != 0) begin : g_fp
    logic [31:0] x, sum_y, max_y;
    systole_bf16_to_fp32 u_widen (.a(element), .y(x));
    // A sum starts from +0 (the first element is added to +0); a max starts from the element.
    systole_fp32_add u_add (.a((j_q == 16'd0) ? 32'd0 : acc_q), .b(x), .y(sum_y));
    systole_fp32_minmax u_max (.a(acc_q), .b(x), .is_min(1'b0), .y(max_y));
    assign combined = !max_i ? sum_y : ((j_q == 16'd0) ? x : max_y);
  end else begin : g_int
    logic signed [31:0] x;
    assign x = {{24{element[7]}}, element};
    always_comb begin
      if (!max_i) combined = ((j_q == 16'd0) ? 32'd0 : acc_q) + x;
      else if (j_q == 16'd0 || x > $signed(acc_q)) combined = x;
      else combined = acc_q;
    end
  end

  always_comb begin
    row_d = row_q;
    j_d = j_q;
    acc_d = acc_q;
    run_d = run_q;
    done_d = 1'b0;
    if (start_i) begin
      row_d = row_i;
      j_d = 16'd0;
      run_d = 1'b1;
    end else if (run_q) begin
      acc_d = combined;
      j_d = j_q + 16'd1;
      if (j_q + 16'd1 == elems_i) begin
        run_d = 1'b0;
        done_d = 1'b1;
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      run_q <= 1'b0;
      done_q <= 1'b0;
    end else begin
      run_q <= run_d;
      done_q <= done_d;
    end
  end
  // Meaningful only while a row runs: not reset.
  always_ff @(posedge clk) begin
    row_q <= row_d;
    j_q <= j_d;
    acc_q <= acc_d;
  end

  assign busy_o = run_q || done_q;
  assign done_o = done_q;
  assign y_o = acc_q;
endmodule
