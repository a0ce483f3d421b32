// systole_ice40_spram — device memory in the iCE40UP5K's four SB_SPRAM256KA blocks (16 K x 16
// bits each, 128 KiB together), behind the core's device-memory port (rtl/systole_core.sv):
// one request at a time, every request answered in order (reads with data, writes with an
// acknowledgement), responses never refused.
//
// The four SPRAMs side by side are one 64-bit-wide memory of 16 K words, so one 256-bit row is
// four consecutive 64-bit beats: a request takes 4 cycles to issue and its response leaves 2
// cycles after the last beat (6 cycles per request, no overlap: the UART, not this, limits a
// board's host link, and the core's tiny rows use a fraction of each 256-bit word anyway).
// Byte strobes become the SPRAMs' nibble write masks. SPRAM contents are undefined after
// power-up, unlike the golden model's zeroed memory: the host writes what a program reads.
module systole_ice40_spram #(
    parameter integer ADDR_BITS = 17  // byte address bits: 2^17 = 128 KiB, all four SPRAMs
) (
    input  logic                 clk,
    input  logic                 rst,
    input  logic                 req_valid,
    output logic                 req_ready,
    input  logic                 req_write,
    // verilator lint_off UNUSEDSIGNAL
    input  logic [ADDR_BITS-1:0] req_addr,  // [4:0]: within the row, always 0
    // verilator lint_on UNUSEDSIGNAL
    input  logic [255:0]         req_wdata,
    input  logic [31:0]          req_wstrb,
    output logic                 rsp_valid,
    output logic [255:0]         rsp_rdata
);
  if (ADDR_BITS < 6 || ADDR_BITS > 17) begin : g_check
    systole_param_error_ice40_spram_ADDR_BITS_must_be_6_to_17 u_error ();
  end

  localparam integer WORD_BITS = ADDR_BITS - 5;  // 256-bit rows

  // busy_q: a request is being served; beat_q: the beat issued this cycle (0..3 while issuing);
  // issue_q: beats still being issued; cap_q: the beat whose data appears on DATAOUT now.
  logic                 busy_q, issue_q, cap_valid_q, rsp_valid_q;
  logic [1:0]           beat_q, cap_beat_q;
  logic                 write_q;
  logic [WORD_BITS-1:0] word_q;
  logic [255:0]         wdata_q, rdata_q;
  logic [31:0]          wstrb_q;
  logic [63:0]          dout;

  assign req_ready = !rst && !busy_q;
  assign rsp_valid = rsp_valid_q;
  assign rsp_rdata = rdata_q;

  wire [13:0] spram_addr = 14'({word_q, beat_q});
  wire [63:0] beat_wdata = wdata_q[64*beat_q +: 64];
  wire [7:0]  beat_wstrb = wstrb_q[8*beat_q +: 8];

  for (genvar s = 0; s < 4; s++) begin : g_spram
    SB_SPRAM256KA u_spram (
        .ADDRESS(spram_addr), .DATAIN(beat_wdata[16*s +: 16]),
        .MASKWREN({{2{beat_wstrb[2*s+1]}}, {2{beat_wstrb[2*s]}}}),
        .WREN(issue_q && write_q), .CHIPSELECT(issue_q), .CLOCK(clk),
        .STANDBY(1'b0), .SLEEP(1'b0), .POWEROFF(1'b1), .DATAOUT(dout[16*s +: 16]));
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      busy_q <= 1'b0;
      issue_q <= 1'b0;
      cap_valid_q <= 1'b0;
      rsp_valid_q <= 1'b0;
      beat_q <= '0;
    end else begin
      rsp_valid_q <= 1'b0;
      // the beat issued last cycle has its data on DATAOUT now
      cap_valid_q <= issue_q;
      cap_beat_q <= beat_q;
      if (cap_valid_q) begin
        rdata_q[64*cap_beat_q +: 64] <= dout;
        if (cap_beat_q == 2'd3) begin
          rsp_valid_q <= 1'b1;
          busy_q <= 1'b0;
        end
      end
      if (req_valid && req_ready) begin
        busy_q <= 1'b1;
        issue_q <= 1'b1;
        beat_q <= 2'd0;
        write_q <= req_write;
        word_q <= req_addr[ADDR_BITS-1:5];
        wdata_q <= req_wdata;
        wstrb_q <= req_wstrb;
      end else if (issue_q) begin
        beat_q <= beat_q + 2'd1;
        if (beat_q == 2'd3) issue_q <= 1'b0;
      end
    end
  end
endmodule
