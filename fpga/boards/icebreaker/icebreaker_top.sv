// icebreaker_top — Systole on the iCEBreaker (Lattice iCE40UP5K-SG48): the device behind a
// UART on the FT2232H's second channel, device memory in the UP5K's SPRAM.
//
//   12 MHz ─► SB_PLL40_PAD (x3) ─► clk 36 MHz ──────────────────────────────────────────┐
//   FT2232H B ── RX ─► systole_uart_top (UART ─ frame bridge ─ systole_core) ─ mem port ─► systole_ice40_spram (4 x SB_SPRAM256KA, 128 KiB)
//             ◄─ TX ──┘                                                    irq ─► red LED
//   BTN_N (user button) ─► systole_board_reset ─► rst                      heartbeat ─► green LED
//
// fpga/boards/icebreaker/README.md says what to plug where; configs/icebreaker.toml is the
// machine (its clock.mhz is what the PLL below makes: icepll -i 12 -o 36).
module icebreaker_top #(
    // The core's parameters (rtl/README.md). The flow sets every one from the board's
    // configuration (rtl/generated/params/<config>.vc); the zero defaults make a top elaborated
    // without them fail at elaboration instead of silently building some other machine.
    parameter integer ROWS = 0,
    parameter integer COLS = 0,
    parameter integer BF16 = 0,
    parameter integer UB_ROWS = 0,
    parameter integer ACC_ROWS = 0,
    parameter integer WFIFO_TILES = 0,
    parameter integer CMDQ_DEPTH = 0,
    parameter integer TOKEN_CAP = 0,
    parameter integer LOAD_CREDITS = 0,
    parameter integer MEM_BYTES_LO = 0,
    parameter integer MEM_BYTES_HI = 0,
    parameter integer MEM_CHANNELS = 0,
    parameter integer INTERLEAVE_LOG2 = 0,
    parameter integer CLOCK_MHZ = 0,
    parameter integer NAME0 = 0,
    parameter integer NAME1 = 0,
    parameter integer NAME2 = 0,
    parameter integer NAME3 = 0,
    parameter integer BAUD = 3000000  // the host link's line rate
) (
    input  logic CLK,     // 12 MHz oscillator
    input  logic RX,      // from the host (FT2232H channel B TXD)
    output logic TX,      // to the host (FT2232H channel B RXD)
    input  logic BTN_N,   // user button, low when pressed: resets the device
    output logic LEDR_N,  // red: the device's interrupt line
    output logic LEDG_N   // green: heartbeat
);
  if (ROWS == 0 || CLOCK_MHZ == 0 || MEM_BYTES_LO == 0) begin : g_check_params
    systole_param_error_board_top_needs_its_configuration_parameters u_error ();
  end
  if (CLOCK_MHZ != 36) begin : g_check_clock
    systole_param_error_icebreaker_top_makes_36_MHz u_error ();
  end
  if (MEM_BYTES_HI != 0 || MEM_BYTES_LO > 131072) begin : g_check_memory
    systole_param_error_icebreaker_device_memory_is_at_most_131072_bytes u_error ();
  end
  localparam integer MEM_AW = $clog2(MEM_BYTES_LO);

  logic clk, locked, rst;
  SB_PLL40_PAD #(
      .FEEDBACK_PATH("SIMPLE"), .DIVR(4'b0000), .DIVF(7'b0101111), .DIVQ(3'b100),
      .FILTER_RANGE(3'b001)
  ) u_pll (
      .PACKAGEPIN(CLK), .PLLOUTGLOBAL(clk), .LOCK(locked), .RESETB(1'b1), .BYPASS(1'b0),
      // verilator lint_off PINCONNECTEMPTY
      .PLLOUTCORE(), .EXTFEEDBACK(1'b0), .DYNAMICDELAY(8'd0), .LATCHINPUTVALUE(1'b0),
      .SDI(1'b0), .SCLK(1'b0), .SDO()
      // verilator lint_on PINCONNECTEMPTY
  );
  systole_board_reset u_reset (.clk, .locked, .button(!BTN_N), .rst);

  logic         mem_req_valid, mem_req_ready, mem_req_write, mem_rsp_valid;
  // verilator lint_off UNUSEDSIGNAL
  logic [47:0]  mem_req_addr;  // the core refuses addresses past MEM_BYTES: high bits are 0
  // verilator lint_on UNUSEDSIGNAL
  logic [255:0] mem_req_wdata, mem_rsp_rdata;
  logic [31:0]  mem_req_wstrb;
  logic         irq;

  systole_uart_top #(
      .ROWS(ROWS), .COLS(COLS), .BF16(BF16), .UB_ROWS(UB_ROWS), .ACC_ROWS(ACC_ROWS),
      .WFIFO_TILES(WFIFO_TILES), .CMDQ_DEPTH(CMDQ_DEPTH), .TOKEN_CAP(TOKEN_CAP), .LOAD_CREDITS(LOAD_CREDITS),
      .MEM_BYTES_LO(MEM_BYTES_LO), .MEM_BYTES_HI(MEM_BYTES_HI), .MEM_CHANNELS(MEM_CHANNELS),
      .INTERLEAVE_LOG2(INTERLEAVE_LOG2), .CLOCK_MHZ(CLOCK_MHZ),
      .NAME0(NAME0), .NAME1(NAME1), .NAME2(NAME2), .NAME3(NAME3), .BAUD(BAUD)
  ) u_device (
      .clk, .rst, .uart_rx(RX), .uart_tx(TX), .irq,
      .mem_req_valid, .mem_req_ready, .mem_req_write, .mem_req_addr, .mem_req_wdata,
      .mem_req_wstrb, .mem_rsp_valid, .mem_rsp_rdata);

  systole_ice40_spram #(.ADDR_BITS(MEM_AW)) u_memory (
      .clk, .rst, .req_valid(mem_req_valid), .req_ready(mem_req_ready),
      .req_write(mem_req_write), .req_addr(mem_req_addr[MEM_AW-1:0]),
      .req_wdata(mem_req_wdata), .req_wstrb(mem_req_wstrb),
      .rsp_valid(mem_rsp_valid), .rsp_rdata(mem_rsp_rdata));

  // LEDs: a heartbeat (the clock runs and reset is over) and the device's interrupt.
  logic [24:0] beat_q;
  always_ff @(posedge clk) begin
    if (rst) beat_q <= '0;
    else beat_q <= beat_q + 1'b1;
  end
  assign LEDG_N = !beat_q[24];
  assign LEDR_N = !irq;
endmodule
