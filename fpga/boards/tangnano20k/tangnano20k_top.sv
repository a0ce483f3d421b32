// tangnano20k_top — Systole on the Tang Nano 20K (Gowin GW2AR-LV18QN88C8/I7): the device
// behind a UART on the BL616 (the board's USB-C port), device memory in on-chip block SRAM.
// The 27 MHz oscillator clocks the design directly (no PLL): 3 Mbaud is 9 clocks per bit.
//
//   clk (27 MHz) ─────────────────────────────────────────────────────────────────────────┐
//   BL616 ── uart_rx ─► systole_uart_top (UART ─ frame bridge ─ systole_core) ─ mem port ─► systole_hbm_bram_channel (BSRAM, 32 KiB)
//         ◄─ uart_tx ──┘                                                    irq ─► led[1]
//   S1 button ─► systole_board_reset ─► rst                                 heartbeat ─► led[0]
//
// fpga/boards/tangnano20k/README.md says what to plug where; configs/tangnano20k.toml is the
// machine.
module tangnano20k_top #(
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
    input  logic       clk,      // 27 MHz oscillator
    input  logic       uart_rx,  // from the host (BL616)
    output logic       uart_tx,  // to the host (BL616)
    input  logic       s1,       // button S1, high when pressed: resets the device
    output logic [5:0] led_n     // LEDs, low = on
);
  if (ROWS == 0 || CLOCK_MHZ == 0 || MEM_BYTES_LO == 0) begin : g_check_params
    systole_param_error_board_top_needs_its_configuration_parameters u_error ();
  end
  if (CLOCK_MHZ != 27) begin : g_check_clock
    systole_param_error_tangnano20k_top_makes_27_MHz u_error ();
  end
  if (MEM_BYTES_HI != 0 || MEM_BYTES_LO > 65536) begin : g_check_memory
    systole_param_error_tangnano20k_device_memory_is_at_most_65536_bytes u_error ();
  end
  localparam integer MEM_AW = $clog2(MEM_BYTES_LO);

  logic rst;
  systole_board_reset u_reset (.clk, .locked(1'b1), .button(s1), .rst);

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
      .clk, .rst, .uart_rx(uart_rx), .uart_tx(uart_tx), .irq,
      .mem_req_valid, .mem_req_ready, .mem_req_write, .mem_req_addr, .mem_req_wdata,
      .mem_req_wstrb, .mem_rsp_valid, .mem_rsp_rdata);

  // Device memory: on-chip block RAM (the HBM controller's RAM channel, rtl/memory/hbm/),
  // answering every request one cycle later.
  systole_hbm_bram_channel #(.ADDR_BITS(MEM_AW), .ID_BITS(1)) u_memory (
      .clk, .rst, .req_valid(mem_req_valid), .req_ready(mem_req_ready),
      .req_write(mem_req_write), .req_addr(mem_req_addr[MEM_AW-1:0]),
      .req_wdata(mem_req_wdata), .req_wstrb(mem_req_wstrb), .req_id(1'b0),
      .rsp_valid(mem_rsp_valid), .rsp_ready(1'b1),
      // verilator lint_off PINCONNECTEMPTY
      .rsp_id(), .rsp_rdata(mem_rsp_rdata));
      // verilator lint_on PINCONNECTEMPTY

  // LEDs: a heartbeat (the clock runs and reset is over) and the device's interrupt.
  logic [24:0] beat_q;
  always_ff @(posedge clk) begin
    if (rst) beat_q <= '0;
    else beat_q <= beat_q + 1'b1;
  end
  assign led_n = ~{4'd0, irq, beat_q[24]};
endmodule
