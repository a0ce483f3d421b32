// systole_uart_top — a Systole device behind a serial line: the board's USB-serial chip
// (FT2232H, FT231X, BL616, ...) carries the frames of docs/PROTOCOL.md over 8N1 at BAUD, and
// systole_uart turns them into the byte stream of systole_usb_bridge, in front of
// systole_core. The same frames, bridge and core as systole_usb_top; only the pins differ.
// docs/SERIAL.md describes the whole path and its simulation (the pty board).
//
//   uart_rx ─► systole_uart (sync, 8N1 rx, RX FIFO) ─► systole_usb_bridge ─► systole_core ─► mem_*
//   uart_tx ◄─ systole_uart (8N1 tx)                ◄──────────┘
//
// Parameters are systole_usb_top's (the core's configuration and the bridge's payload limit)
// plus BAUD, the line's bits per second. The bit period is CLOCK_MHZ / BAUD rounded to whole
// cycles; a BAUD the clock cannot make within 2 % is rejected at elaboration (the receiver's
// mid-bit sampling tolerates about 4 % in all, and the host's chip needs the rest).
module systole_uart_top #(
    parameter integer ROWS = 4,
    parameter integer COLS = 4,
    parameter integer BF16 = 0,
    parameter integer UB_ROWS = 1024,
    parameter integer ACC_ROWS = 64,
    parameter integer WFIFO_TILES = 2,
    parameter integer CMDQ_DEPTH = 2,
    parameter integer TOKEN_CAP = 255,
    parameter integer LOAD_CREDITS = 16,
    parameter integer MEM_BYTES_LO = 1048576,
    parameter integer MEM_BYTES_HI = 0,
    parameter integer MEM_CHANNELS = 2,
    parameter integer INTERLEAVE_LOG2 = 8,
    parameter integer CLOCK_MHZ = 48,
    parameter integer NAME0 = 2037279092,  // "tiny"
    parameter integer NAME1 = 0,
    parameter integer NAME2 = 0,
    parameter integer NAME3 = 0,
    parameter integer MAX_PAYLOAD = 4096,
    parameter integer BAUD /*verilator public*/ = 3000000  // 16 cycles per bit at 48 MHz
) (
    input  logic         clk,
    input  logic         rst,
    input  logic         uart_rx,   // from the host (the chip's TXD), idle high
    output logic         uart_tx,   // to the host (the chip's RXD)
    output logic         irq,
    output logic         mem_req_valid,
    input  logic         mem_req_ready,
    output logic         mem_req_write,
    output logic [47:0]  mem_req_addr,
    output logic [255:0] mem_req_wdata,
    output logic [31:0]  mem_req_wstrb,
    input  logic         mem_rsp_valid,
    input  logic [255:0] mem_rsp_rdata
);
  localparam integer CLOCK_HZ = CLOCK_MHZ * 1000000;
  // Public (a comment to the other tools): the simulated board (driver/sim/uart_board.hpp) paces
  // its host line with exactly the bit period the RTL was elaborated with.
  localparam integer CLKS_PER_BIT /*verilator public*/ = BAUD > 0 ? (CLOCK_HZ + BAUD / 2) / BAUD : 0;
  localparam integer BAUD_ERROR = CLKS_PER_BIT * BAUD > CLOCK_HZ ? CLKS_PER_BIT * BAUD - CLOCK_HZ
                                                                 : CLOCK_HZ - CLKS_PER_BIT * BAUD;
  // The bridge takes a byte per cycle between replies; while it replies, bytes wait here. The
  // link sends one request at a time, so only a host that does not wait fills it.
  localparam integer RX_FIFO_DEPTH = 16;

  if (BAUD < 1 || CLKS_PER_BIT < 4) begin : g_baud_range_check
    systole_param_error_uart_top_BAUD_must_be_between_1_and_a_quarter_of_the_clock u_error ();
  end
  if (BAUD_ERROR > CLOCK_HZ / 50) begin : g_baud_error_check
    systole_param_error_uart_top_BAUD_not_within_2_percent_of_the_clock_over_a_whole_number u_error ();
  end

  logic       rx_valid, rx_ready, tx_valid, tx_ready;
  logic [7:0] rx_data, tx_data;

  systole_uart #(.CLKS_PER_BIT(CLKS_PER_BIT), .RX_FIFO_DEPTH(RX_FIFO_DEPTH)) u_uart (
      .clk(clk), .rst(rst), .uart_rx_i(uart_rx), .uart_tx_o(uart_tx),
      .rx_valid_o(rx_valid), .rx_ready_i(rx_ready), .rx_data_o(rx_data),
      .tx_valid_i(tx_valid), .tx_ready_o(tx_ready), .tx_data_i(tx_data),
      // verilator lint_off PINCONNECTEMPTY
      .frame_error_o(), .overflow_o());  // dropped bytes show as the bridge's error replies
      // verilator lint_on PINCONNECTEMPTY

  systole_usb_top #(
      .ROWS(ROWS), .COLS(COLS), .BF16(BF16), .UB_ROWS(UB_ROWS), .ACC_ROWS(ACC_ROWS),
      .WFIFO_TILES(WFIFO_TILES), .CMDQ_DEPTH(CMDQ_DEPTH), .TOKEN_CAP(TOKEN_CAP), .LOAD_CREDITS(LOAD_CREDITS),
      .MEM_BYTES_LO(MEM_BYTES_LO), .MEM_BYTES_HI(MEM_BYTES_HI), .MEM_CHANNELS(MEM_CHANNELS),
      .INTERLEAVE_LOG2(INTERLEAVE_LOG2), .CLOCK_MHZ(CLOCK_MHZ),
      .NAME0(NAME0), .NAME1(NAME1), .NAME2(NAME2), .NAME3(NAME3), .MAX_PAYLOAD(MAX_PAYLOAD)
  ) u_device (
      .clk(clk), .rst(rst),
      .rx_valid(rx_valid), .rx_ready(rx_ready), .rx_data(rx_data),
      .tx_valid(tx_valid), .tx_ready(tx_ready), .tx_data(tx_data),
      .irq(irq),
      .mem_req_valid(mem_req_valid), .mem_req_ready(mem_req_ready),
      .mem_req_write(mem_req_write), .mem_req_addr(mem_req_addr),
      .mem_req_wdata(mem_req_wdata), .mem_req_wstrb(mem_req_wstrb),
      .mem_rsp_valid(mem_rsp_valid), .mem_rsp_rdata(mem_rsp_rdata));
endmodule
