// systole_row_ram — the storage behind the unified buffer and the accumulators.
//
// DEPTH rows of LANES lanes of LANE_BITS bits. One write port with a per-lane enable (LOAD
// writes part of a row), READ_PORTS read ports. Each read port is its own copy of the array
// sharing the write port, so every copy is a simple dual-port RAM (one write, one read) that
// FPGA tools map onto block RAM; two readers cost two copies, never a stall. (Simulation keeps
// one array for all read ports, which reads the same: see below.)
//
// Reads are synchronous: rd_data holds the row addressed at the previous rising edge with
// rd_en high, and keeps it while rd_en is low. Contents start as zero, as docs/ISA.md says
// after reset (an FPGA bitstream initialises block RAM the same way).
//
// A read of the row being written in the same cycle (a collision) returns undefined data: no
// user may depend on it (the MXU reads an ACC row at the edge that writes it, and forwards the
// written value instead). Simulation returns the old contents inverted, so that a user that
// did depend on it fails its tests; synthesis is told so (no_rw_check), so it builds no logic
// to order the two ports: block RAMs whose ports have no defined collision behaviour (Gowin's
// SDP/DP BSRAM) needed a delayed write and a forwarding mux per bit to return the old contents,
// about 1 100 LUT4s and 900 flip-flops on the Tang Nano 20K (docs/FPGA.md).
module systole_row_ram #(
    parameter integer DEPTH = 0,
    parameter integer LANES = 0,
    parameter integer LANE_BITS = 0,
    parameter integer READ_PORTS = 0,
    localparam integer AW = $clog2(DEPTH)
) (
    input  logic                                   clk,
    input  logic                                   wr_en,
    input  logic [AW-1:0]                          wr_addr,
    input  logic [LANES-1:0]                       wr_lanes,
    input  logic [LANES*LANE_BITS-1:0]             wr_data,
    input  logic [READ_PORTS-1:0]                  rd_en,
    input  logic [READ_PORTS*AW-1:0]               rd_addr,
    output logic [READ_PORTS*LANES*LANE_BITS-1:0]  rd_data
);
  localparam integer W = LANES * LANE_BITS;

  // Parameter checks at elaboration: an illegal value instantiates a module that does not
  // exist, whose name says what is wrong, in every tool.
  if (DEPTH < 2) begin : g_depth_check
    systole_param_error_row_ram_DEPTH_must_be_at_least_2 u_error ();
  end
  if (LANES < 1 || LANE_BITS < 1 || READ_PORTS < 1) begin : g_shape_check
    systole_param_error_row_ram_LANES_LANE_BITS_READ_PORTS_must_be_at_least_1 u_error ();
  end

`ifdef SYNTHESIS
  for (genvar p = 0; p < READ_PORTS; p++) begin : g_copy
    (* no_rw_check *) logic [W-1:0] rows [DEPTH];
    logic [W-1:0] q;

    initial begin
      for (int r = 0; r < DEPTH; r++) rows[r] = '0;
    end

    always_ff @(posedge clk) begin
      if (wr_en) begin
        for (int l = 0; l < LANES; l++) begin
          if (wr_lanes[l]) rows[wr_addr][l*LANE_BITS +: LANE_BITS] <= wr_data[l*LANE_BITS +: LANE_BITS];
        end
      end
      if (rd_en[p]) q <= rows[rd_addr[p*AW +: AW]];
    end

    assign rd_data[p*W +: W] = q;
  end
`else
  // Simulation: the same contents in one array that every read port reads (the copies above
  // always hold the same rows), written as one whole row under a lane mask. Verilator defers
  // every write of an array element to the end of the cycle, and set and tested a deferral
  // flag per lane and per copy every cycle (2 x 16 for the accumulators and the unified
  // buffer each): one flag for the row instead (rtl/README.md, "Logic that simulates well").
  // The mask is built inside the write, so that it costs nothing in the cycles without one.
  logic [W-1:0] rows [DEPTH];

  function automatic logic [W-1:0] merged(input logic [W-1:0] old_row, input logic [W-1:0] data,
                                          input logic [LANES-1:0] lanes);
    logic [W-1:0] mask;
    for (int l = 0; l < LANES; l++) mask[l*LANE_BITS +: LANE_BITS] = {LANE_BITS{lanes[l]}};
    return (old_row & ~mask) | (data & mask);
  endfunction

  initial begin
    for (int r = 0; r < DEPTH; r++) rows[r] = '0;
  end

  always_ff @(posedge clk) begin
    if (wr_en) rows[wr_addr] <= merged(rows[wr_addr], wr_data, wr_lanes);
  end

  for (genvar p = 0; p < READ_PORTS; p++) begin : g_copy
    logic [W-1:0] q;

    always_ff @(posedge clk) begin
      if (rd_en[p]) begin
        if (wr_en && rd_addr[p*AW +: AW] == wr_addr) q <= ~rows[rd_addr[p*AW +: AW]];  // undefined
        else q <= rows[rd_addr[p*AW +: AW]];
      end
    end

    assign rd_data[p*W +: W] = q;

    always_ff @(posedge clk) begin
      if (rd_en[p]) begin
        assert (32'(rd_addr[p*AW +: AW]) < DEPTH)
        else $error("systole_row_ram: read port %0d: row %0d is outside %0d rows", p,
                    rd_addr[p*AW +: AW], DEPTH);
      end
    end
  end
`endif

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (wr_en) begin
      assert (32'(wr_addr) < DEPTH)
      else $error("systole_row_ram: write: row %0d is outside %0d rows", wr_addr, DEPTH);
    end
  end
`endif
endmodule
