// systole_weight_fifo — TILES weight tiles of ROWS rows waiting to enter the array.
//
// The WEIGHT DMA pushes tiles row by row (row 0 first, exactly ROWS rows per tile). The
// storage is one systole_row_ram of TILES*ROWS rows of COLS elements (one write port, one
// synchronous read port: block RAM on an FPGA); tile i occupies rows [i*ROWS, (i+1)*ROWS).
//
// The MXU reads the head tile only when it is complete (tile_ready), one row per rd_en, in
// the order the array's shift chains need: row ROWS-1 first, row 0 last. rd_data shows the row
// requested in the previous cycle. The tile's space is freed after its last row is read, so
// the writer never overwrites a row that is still to be read.
//
// clear (launch_start) empties the FIFO.
module systole_weight_fifo #(
    parameter integer ROWS = 0,
    parameter integer COLS = 0,
    parameter integer BF16 = -1,
    parameter integer TILES = 0,
    localparam integer EW = (BF16 != 0) ? 16 : 8
) (
    input  logic               clk,
    input  logic               rst,
    input  logic               clear,
    // rows from the WEIGHT DMA
    input  logic               push_valid,
    output logic               push_ready,
    input  logic [COLS*EW-1:0] push_data,
    // the head tile, rows ROWS-1 down to 0
    output logic               tile_ready,
    input  logic               rd_en,
    output logic [COLS*EW-1:0] rd_data
);

  // ---- Parameters --------------------------------------------------------------------------
  // Configuration parameters come from the parent; the defaults fail these checks.
  if (ROWS < 1 || COLS < 1) begin : g_shape_check
    systole_param_error_weight_fifo_ROWS_and_COLS_must_be_at_least_1 u_error ();
  end
  if (BF16 != 0 && BF16 != 1) begin : g_bf16_check
    systole_param_error_weight_fifo_BF16_must_be_0_or_1 u_error ();
  end
  if (TILES < 1) begin : g_tiles_check
    systole_param_error_weight_fifo_TILES_must_be_at_least_1 u_error ();
  end
  localparam integer CAPACITY = TILES * ROWS;            // rows
  localparam integer DEPTH = CAPACITY < 2 ? 2 : CAPACITY;  // systole_row_ram needs >= 2
  localparam integer AW = $clog2(DEPTH);
  localparam integer TW = TILES < 2 ? 1 : $clog2(TILES);
  localparam integer RW = ROWS < 2 ? 1 : $clog2(ROWS);
  localparam integer CW = $clog2(CAPACITY + 1);

  logic [TW-1:0] wr_tile_q, wr_tile_d, rd_tile_q, rd_tile_d;  // tile slots
  logic [RW-1:0] wr_row_q, wr_row_d, rd_row_q, rd_row_d;      // row within the slot
  logic [CW-1:0] count_q, count_d;  // rows stored (the head tile's rows leave after its last read)
  logic          push, last_read;

  assign push_ready = count_q < CW'(CAPACITY);
  assign push = push_valid && push_ready;
  assign tile_ready = count_q >= CW'(ROWS);
  assign last_read = rd_en && rd_row_q == '0;

  always_comb begin
    wr_tile_d = wr_tile_q;
    wr_row_d = wr_row_q;
    rd_tile_d = rd_tile_q;
    rd_row_d = rd_row_q;
    if (push) begin
      if (wr_row_q == RW'(ROWS - 1)) begin
        wr_row_d = '0;
        wr_tile_d = wr_tile_q == TW'(TILES - 1) ? '0 : wr_tile_q + 1'b1;
      end else begin
        wr_row_d = wr_row_q + 1'b1;
      end
    end
    if (rd_en) begin
      if (last_read) begin
        rd_row_d = RW'(ROWS - 1);
        rd_tile_d = rd_tile_q == TW'(TILES - 1) ? '0 : rd_tile_q + 1'b1;
      end else begin
        rd_row_d = rd_row_q - 1'b1;
      end
    end
    count_d = count_q + CW'(push) - (last_read ? CW'(ROWS) : '0);
  end

  always_ff @(posedge clk) begin
    if (rst || clear) begin
      wr_tile_q <= '0;
      wr_row_q <= '0;
      rd_tile_q <= '0;
      rd_row_q <= RW'(ROWS - 1);
      count_q <= '0;
    end else begin
      wr_tile_q <= wr_tile_d;
      wr_row_q <= wr_row_d;
      rd_tile_q <= rd_tile_d;
      rd_row_q <= rd_row_d;
      count_q <= count_d;
    end
  end

  logic [AW-1:0] wr_addr, rd_addr;
  assign wr_addr = AW'(wr_tile_q) * AW'(ROWS) + AW'(wr_row_q);
  assign rd_addr = AW'(rd_tile_q) * AW'(ROWS) + AW'(rd_row_q);

  systole_row_ram #(.DEPTH(DEPTH), .LANES(COLS), .LANE_BITS(EW), .READ_PORTS(1)) u_ram (
      .clk,
      .wr_en(push),
      .wr_addr,
      .wr_lanes({COLS{1'b1}}),
      .wr_data(push_data),
      .rd_en(rd_en),
      .rd_addr,
      .rd_data
  );

  // ---- Assertions --------------------------------------------------------------------------
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst && !clear && rd_en) begin
      assert (tile_ready) else $error("systole_weight_fifo: read with no complete tile");
    end
  end
`endif
endmodule
