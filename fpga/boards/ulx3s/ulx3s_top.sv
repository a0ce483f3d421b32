// ulx3s_top — Systole on the ULX3S (Lattice ECP5 LFE5U-85F-6BG381C): the device behind a
// UART on the FT231X (the board's US1 USB port), device memory in on-chip block RAM. The
// board's 32 MB SDRAM is not used yet: it needs an SDRAM controller on the memory port
// (docs/FPGA.md).
//
//   clk_25mhz ─► EHXPLLL (x4/5) ─► clk 20 MHz ──────────────────────────────────────────┐
//   FT231X ── ftdi_txd ─► systole_uart_top (UART ─ frame bridge ─ systole_core) ─ mem port ─► systole_hbm_bram_channel (DP16KD, 128 KiB)
//          ◄─ ftdi_rxd ──┘                                                   irq ─► led[1]
//   btn[1] (F1) ─► systole_board_reset ─► rst                               heartbeat ─► led[0]
//
// fpga/boards/ulx3s/README.md says what to plug where; configs/ulx3s.toml is the machine (its
// clock.mhz is what the PLL below makes: ecppll -i 25 -o 20). 20 MHz because the core closes
// timing at about 26 MHz on the ECP5-85F (docs/FPGA.md); the FT231X then runs at 2 Mbaud
// (10 clocks per bit: 3 Mbaud would be 6.67).
module ulx3s_top #(
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
    parameter integer BAUD = 2000000  // the host link's line rate
) (
    input  logic       clk_25mhz,   // 25 MHz oscillator
    input  logic       ftdi_txd,    // from the host (FT231X TXD)
    output logic       ftdi_rxd,    // to the host (FT231X RXD)
    // verilator lint_off UNUSEDSIGNAL
    input  logic [6:0] btn,         // btn[0] PWR (low when pressed), btn[1..6] high when pressed
    // verilator lint_on UNUSEDSIGNAL
    output logic [7:0] led,
    output logic       wifi_gpio0   // high: keeps the ESP32 from resetting the board
);
  if (ROWS == 0 || CLOCK_MHZ == 0 || MEM_BYTES_LO == 0) begin : g_check_params
    systole_param_error_board_top_needs_its_configuration_parameters u_error ();
  end
  if (CLOCK_MHZ != 20) begin : g_check_clock
    systole_param_error_ulx3s_top_makes_20_MHz u_error ();
  end
  if (MEM_BYTES_HI != 0 || MEM_BYTES_LO > 262144) begin : g_check_memory
    systole_param_error_ulx3s_device_memory_is_at_most_262144_bytes u_error ();
  end
  localparam integer MEM_AW = $clog2(MEM_BYTES_LO);

  logic clk, locked, rst;
  (* FREQUENCY_PIN_CLKI="25" *)
  (* FREQUENCY_PIN_CLKOP="20" *)
  (* ICP_CURRENT="12" *) (* LPF_RESISTOR="8" *) (* MFG_ENABLE_FILTEROPAMP="1" *)
  (* MFG_GMCREF_SEL="2" *)
  EHXPLLL #(
      .PLLRST_ENA("DISABLED"), .INTFB_WAKE("DISABLED"), .STDBY_ENABLE("DISABLED"),
      .DPHASE_SOURCE("DISABLED"), .OUTDIVIDER_MUXA("DIVA"), .OUTDIVIDER_MUXB("DIVB"),
      .OUTDIVIDER_MUXC("DIVC"), .OUTDIVIDER_MUXD("DIVD"),
      .CLKI_DIV(5), .CLKOP_ENABLE("ENABLED"), .CLKOP_DIV(30), .CLKOP_CPHASE(15),
      .CLKOP_FPHASE(0), .FEEDBK_PATH("CLKOP"), .CLKFB_DIV(4)
  ) u_pll (
      .RST(1'b0), .STDBY(1'b0), .CLKI(clk_25mhz), .CLKOP(clk), .CLKFB(clk),
      // verilator lint_off PINCONNECTEMPTY
      .CLKINTFB(), .PHASESEL0(1'b0), .PHASESEL1(1'b0), .PHASEDIR(1'b1), .PHASESTEP(1'b1),
      .PHASELOADREG(1'b1), .PLLWAKESYNC(1'b0), .ENCLKOP(1'b0), .LOCK(locked)
      // verilator lint_on PINCONNECTEMPTY
  );
  systole_board_reset u_reset (.clk, .locked, .button(btn[1]), .rst);

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
      .clk, .rst, .uart_rx(ftdi_txd), .uart_tx(ftdi_rxd), .irq,
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
  assign led = {6'd0, irq, beat_q[24]};
  assign wifi_gpio0 = 1'b1;
endmodule
