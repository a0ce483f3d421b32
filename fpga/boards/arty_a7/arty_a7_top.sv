// arty_a7_top — Systole on the Digilent Arty A7-35T (Xilinx Artix-7 XC7A35TICSG324-1L): the
// device behind a UART on the board's FT2232H (channel B of the micro-USB port), device memory
// in the Artix-7's block RAM. The board's 256 MB DDR3 is not used: driving it takes Xilinx's
// Memory Interface Generator (MIG) IP, a vendor core the open flow cannot build or read.
//
//   CLK100MHZ ─► MMCME2_BASE (x9/30) ─► BUFG ─► clk 30 MHz ─────────────────────────────────┐
//   FT2232H B ── uart_txd_in ─► systole_uart_top (UART ─ frame bridge ─ systole_core) ─ mem port ─► systole_hbm_bram_channel (RAMB36, 128 KiB)
//             ◄─ uart_rxd_out ──┘                                                irq ─► LD5 (led[1])
//   ck_rst (RESET button) ─► systole_board_reset ◄─ MMCM locked ─► LD6 (led[2])  heartbeat ─► LD4 (led[0])
//
// fpga/boards/arty_a7/README.md says what to plug where; configs/arty_a7.toml is the machine
// (its clock.mhz is what the MMCM below makes: 100 MHz x 9 = 900 MHz VCO, / 30 = 30 MHz).
module arty_a7_top #(
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
    parameter integer BAUD = 3000000  // the host link's line rate: 10 clocks of 30 MHz a bit
) (
    input  logic       CLK100MHZ,     // 100 MHz oscillator
    input  logic       uart_txd_in,   // from the host (the FT2232H's TXD)
    output logic       uart_rxd_out,  // to the host (the FT2232H's RXD)
    input  logic       ck_rst,        // the red RESET button, low when pressed: resets the device
    output logic [3:0] led            // LD4..LD7, high = on
);
  if (ROWS == 0 || CLOCK_MHZ == 0 || MEM_BYTES_LO == 0) begin : g_check_params
    systole_param_error_board_top_needs_its_configuration_parameters u_error ();
  end
  if (CLOCK_MHZ != 30) begin : g_check_clock
    systole_param_error_arty_a7_top_makes_30_MHz u_error ();
  end
  // 128 KiB is 32 of the XC7A35T's 50 RAMB36 (a 256-bit row is four 64-bit-wide RAMB36 with
  // byte write enables, 512 rows deep); the core's buffers and the frame buffer need the rest.
  if (MEM_BYTES_HI != 0 || MEM_BYTES_LO > 131072) begin : g_check_memory
    systole_param_error_arty_a7_device_memory_is_at_most_131072_bytes u_error ();
  end
  localparam integer MEM_AW = $clog2(MEM_BYTES_LO);

  // The clock: the MMCM's VCO at 900 MHz (within the -1 grade's 600-1200 MHz), CLKOUT0 / 30.
  // Its feedback runs straight from CLKFBOUT to CLKFBIN: no phase relation to the pins is needed.
  logic clk_mmcm, clk_fb, clk, locked, rst;
  MMCME2_BASE #(
      .CLKIN1_PERIOD(10.0), .DIVCLK_DIVIDE(1), .CLKFBOUT_MULT_F(9.0), .CLKOUT0_DIVIDE_F(30.0)
  ) u_mmcm (
      .CLKIN1(CLK100MHZ), .CLKFBIN(clk_fb), .CLKFBOUT(clk_fb), .CLKOUT0(clk_mmcm),
      .LOCKED(locked), .RST(1'b0), .PWRDWN(1'b0),
      // verilator lint_off PINCONNECTEMPTY
      .CLKFBOUTB(), .CLKOUT0B(), .CLKOUT1(), .CLKOUT1B(), .CLKOUT2(), .CLKOUT2B(), .CLKOUT3(),
      .CLKOUT3B(), .CLKOUT4(), .CLKOUT5(), .CLKOUT6()
      // verilator lint_on PINCONNECTEMPTY
  );
  BUFG u_clk_buf (.I(clk_mmcm), .O(clk));
  systole_board_reset u_reset (.clk, .locked, .button(!ck_rst), .rst);

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
      .clk, .rst, .uart_rx(uart_txd_in), .uart_tx(uart_rxd_out), .irq,
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

  // LEDs: a heartbeat (the clock runs and reset is over), the device's interrupt, the MMCM's lock.
  logic [24:0] beat_q;
  always_ff @(posedge clk) begin
    if (rst) beat_q <= '0;
    else beat_q <= beat_q + 1'b1;
  end
  assign led = {1'b0, locked, irq, beat_q[24]};
endmodule
