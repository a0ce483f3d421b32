// systole_uart — the serial line as the byte stream systole_usb_bridge takes: an 8N1 receiver
// (two-flop synchronizer, mid-bit sampling, framing errors dropped) feeding a byte FIFO, and a
// transmitter. The stream ports are the bridge's FT245-style FIFO ports (valid/ready), so a
// board with a USB-serial chip reaches the same bridge as one with a USB FIFO chip.
// A dropped byte (framing error or overflow) leaves the bridge a frame with a byte missing: it
// answers BAD_CHECKSUM, or MALFORMED when the frame stops arriving, and the host's link reports
// that; the pulses here are for a board's LEDs or counters and for the simulation's checks.
// Parameters: CLKS_PER_BIT, the bit period (see systole_uart_rx); RX_FIFO_DEPTH, the bytes that
// may arrive while the bridge is busy (see systole_uart_fifo).
module systole_uart #(
    parameter integer CLKS_PER_BIT = 0,   // set by the parent; the defaults fail the checks
    parameter integer RX_FIFO_DEPTH = 0
) (
    input  logic       clk,
    input  logic       rst,
    input  logic       uart_rx_i,
    output logic       uart_tx_o,
    // received bytes, to the bridge's rx port
    output logic       rx_valid_o,
    input  logic       rx_ready_i,
    output logic [7:0] rx_data_o,
    // bytes to send, from the bridge's tx port
    input  logic       tx_valid_i,
    output logic       tx_ready_o,
    input  logic [7:0] tx_data_i,
    output logic       frame_error_o,  // one-cycle pulses: a byte dropped for a low stop bit,
    output logic       overflow_o      // or because the FIFO was full
);
  logic       byte_valid;
  logic [7:0] byte_data;

  systole_uart_rx #(.CLKS_PER_BIT(CLKS_PER_BIT)) u_rx (
      .clk(clk), .rst(rst), .uart_rx_i(uart_rx_i),
      .valid_o(byte_valid), .data_o(byte_data), .frame_error_o(frame_error_o));

  systole_uart_fifo #(.DEPTH(RX_FIFO_DEPTH)) u_rx_fifo (
      .clk(clk), .rst(rst), .push_i(byte_valid), .data_i(byte_data), .overflow_o(overflow_o),
      .valid_o(rx_valid_o), .ready_i(rx_ready_i), .data_o(rx_data_o));

  systole_uart_tx #(.CLKS_PER_BIT(CLKS_PER_BIT)) u_tx (
      .clk(clk), .rst(rst), .valid_i(tx_valid_i), .ready_o(tx_ready_o), .data_i(tx_data_i),
      .uart_tx_o(uart_tx_o));
endmodule
