// ulx3s_top — Systole on the ULX3S (Lattice ECP5 LFE5U-85F-6BG381C): the device behind a
// UART on the FT231X (the board's US1 USB port), device memory in the board's 32 MB SDR SDRAM
// through fpga/rtl/systole_sdram_ctrl.sv (docs/FPGA.md, "The ULX3S SDRAM controller").
//
//   clk_25mhz ─► EHXPLLL (x4/5) ─► clk 20 MHz ─────────────────────────────────────────────┐
//   FT231X ── ftdi_txd ─► systole_uart_top (UART ─ frame bridge ─ systole_core) ─ mem port ─► systole_sdram_ctrl ─► sdram_* (32 MB)
//          ◄─ ftdi_rxd ──┘                                                   irq ─► led[1]   clk inverted (ODDRX1F) ─► sdram_clk
//   btn[1] (F1) ─► systole_board_reset ─► rst     heartbeat ─► led[0]   SDRAM ready (init_done) ─► led[2]
//
// fpga/boards/ulx3s/README.md says what to plug where; configs/ulx3s.toml is the machine (its
// clock.mhz is what the PLL below makes: ecppll -i 25 -o 20). 20 MHz because the core closes
// timing at about 26 MHz on the ECP5-85F (docs/FPGA.md); the FT231X then runs at 2 Mbaud
// (10 clocks per bit: 3 Mbaud would be 6.67).
//
// The SDRAM's clock is the controller's, inverted: the chip samples each command and write
// beat half a cycle (25 ns) after the controller's registers change, and the controller
// samples read data CAS latency + 1 rising edges after the command left its register, half a
// cycle after the chip's clock edge put it on DQ (the chip's access time is at most 6 ns at
// CL 2) — the same edge count the controller's Verilator tests check against the chip model.
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
    output logic       wifi_gpio0,  // high: keeps the ESP32 from resetting the board
    // the 32 MB SDR SDRAM (names as in the board's ulx3s_v20.lpf)
    output logic        sdram_clk,
    output logic        sdram_cke,
    output logic        sdram_csn,
    output logic        sdram_wen,
    output logic        sdram_rasn,
    output logic        sdram_casn,
    output logic [12:0] sdram_a,
    output logic [1:0]  sdram_ba,
    output logic [1:0]  sdram_dqm,
    inout  wire  [15:0] sdram_d
);
  if (ROWS == 0 || CLOCK_MHZ == 0 || MEM_BYTES_LO == 0) begin : g_check_params
    systole_param_error_board_top_needs_its_configuration_parameters u_error ();
  end
  if (CLOCK_MHZ != 20) begin : g_check_clock
    systole_param_error_ulx3s_top_makes_20_MHz u_error ();
  end
  if (MEM_BYTES_HI != 0 || MEM_BYTES_LO != 33554432) begin : g_check_memory
    systole_param_error_ulx3s_device_memory_is_the_32_MB_SDRAM u_error ();
  end
  localparam integer MEM_AW = $clog2(MEM_BYTES_LO);  // 25: 9 column + 2 bank + 13 row + 1

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

  // Device memory: the SDRAM (AS4C16M16SA-7 class: 4 banks x 8192 rows x 512 columns; CL 2 at
  // 20 MHz). The controller's DQ is out / output-enable / in; the tristate buffer is here.
  logic [15:0] dq_o;
  logic        dq_oe, sdram_ready;
  systole_sdram_ctrl #(.CLOCK_MHZ(CLOCK_MHZ), .CAS_LATENCY(2), .COL_BITS(9), .ROW_BITS(13)) u_memory (
      .clk, .rst, .init_done(sdram_ready),
      .req_valid(mem_req_valid), .req_ready(mem_req_ready), .req_write(mem_req_write),
      .req_addr(mem_req_addr[MEM_AW-1:0]), .req_wdata(mem_req_wdata), .req_wstrb(mem_req_wstrb),
      .rsp_valid(mem_rsp_valid), .rsp_rdata(mem_rsp_rdata),
      .sdram_cke, .sdram_cs_n(sdram_csn), .sdram_ras_n(sdram_rasn), .sdram_cas_n(sdram_casn),
      .sdram_we_n(sdram_wen), .sdram_ba, .sdram_a, .sdram_dqm, .sdram_dq_o(dq_o),
      .sdram_dq_oe(dq_oe), .sdram_dq_i(sdram_d));
  assign sdram_d = dq_oe ? dq_o : 16'bz;
  // The chip's clock: clk inverted, from an output DDR register (low while clk is high).
  ODDRX1F u_sdram_clk (.D0(1'b0), .D1(1'b1), .SCLK(clk), .RST(1'b0), .Q(sdram_clk));

  // LEDs: a heartbeat (the clock runs and reset is over), the device's interrupt, and the
  // SDRAM's power-up sequence done.
  logic [24:0] beat_q;
  always_ff @(posedge clk) begin
    if (rst) beat_q <= '0;
    else beat_q <= beat_q + 1'b1;
  end
  assign led = {5'd0, sdram_ready, irq, beat_q[24]};
  assign wifi_gpio0 = 1'b1;
endmodule
