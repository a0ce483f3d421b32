// systole_pcie_top — a Systole device behind a PCIe endpoint: systole_core, the DMA engine
// (systole_host_dma) and the BAR decoding. The endpoint's hard block (or, in simulation,
// driver/sim/pcie_sim.cpp) turns BAR0 accesses into the register bus (bar0_*), BAR2 accesses into
// 32-byte word requests (bar2_*), and presents host memory as an AXI4 slave (m_*).
//
//   BAR0 0x000-0x7FF  the core's registers (docs/REGISTERS.md: 0x000-0x1FF; the rest reads 0)
//        0x800-0x83F  the DMA engine's descriptor registers (docs/HOST_LINKS.md)
//   BAR2              device memory from address 0, a window shared with the engine: both are
//                     requesters on the core's host port, round-robin (systole_mem_arbiter)
//
// irq is the core's interrupt, dma_irq the engine's completion (two MSI vectors).
module systole_pcie_top #(
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
    parameter integer BURST_BEATS = 8,
    parameter integer FIFO_WORDS = 32
) (
    input  logic         clk,
    input  logic         rst,
    // BAR0: 32-bit register accesses, read data the cycle after
    input  logic         bar0_valid,
    input  logic         bar0_write,
    input  logic [11:0]  bar0_addr,
    input  logic [31:0]  bar0_wdata,
    output logic         bar0_rvalid,
    output logic [31:0]  bar0_rdata,
    output logic         irq,
    output logic         dma_irq,
    // BAR2: device-memory window, 32-byte words with byte strobes, one response per request
    input  logic         bar2_req_valid,
    output logic         bar2_req_ready,
    input  logic         bar2_req_write,
    input  logic [47:0]  bar2_req_addr,
    input  logic [255:0] bar2_req_wdata,
    input  logic [31:0]  bar2_req_wstrb,
    output logic         bar2_rsp_valid,
    output logic [255:0] bar2_rsp_rdata,
    // AXI4 master to host memory (the engine's)
    output logic         m_arvalid,
    input  logic         m_arready,
    output logic [63:0]  m_araddr,
    output logic [7:0]   m_arlen,
    input  logic         m_rvalid,
    output logic         m_rready,
    input  logic [255:0] m_rdata,
    input  logic [1:0]   m_rresp,
    input  logic         m_rlast,
    output logic         m_awvalid,
    input  logic         m_awready,
    output logic [63:0]  m_awaddr,
    output logic [7:0]   m_awlen,
    output logic         m_wvalid,
    input  logic         m_wready,
    output logic [255:0] m_wdata,
    output logic [31:0]  m_wstrb,
    output logic         m_wlast,
    input  logic         m_bvalid,
    output logic         m_bready,
    input  logic [1:0]   m_bresp,
    // Device memory (the core's)
    output logic         mem_req_valid,
    input  logic         mem_req_ready,
    output logic         mem_req_write,
    output logic [47:0]  mem_req_addr,
    output logic [255:0] mem_req_wdata,
    output logic [31:0]  mem_req_wstrb,
    input  logic         mem_rsp_valid,
    input  logic [255:0] mem_rsp_rdata
);
  // ---- BAR0 decoding: one read in flight per cycle, answered by whichever block it went to ----
  wire         dma_sel = bar0_addr[11:6] == 6'b100000;
  logic        reg_rvalid, cfg_rvalid;
  logic [31:0] reg_rdata, cfg_rdata;
  assign bar0_rvalid = reg_rvalid || cfg_rvalid;
  assign bar0_rdata = cfg_rvalid ? cfg_rdata : reg_rdata;

  // ---- The core's host port, shared by the BAR2 window (0) and the engine (1) ------------------
  logic         host_req_valid, host_req_ready, host_req_write, host_rsp_valid;
  logic [47:0]  host_req_addr;
  logic [255:0] host_req_wdata, host_rsp_rdata;
  logic [31:0]  host_req_wstrb;
  logic         dev_req_valid, dev_req_ready, dev_req_write;
  logic [47:0]  dev_req_addr;
  logic [255:0] dev_req_wdata;
  logic [31:0]  dev_req_wstrb;
  logic [1:0]   rsp_valid;
  logic [255:0] rsp_rdata;
  assign bar2_rsp_valid = rsp_valid[0];
  assign bar2_rsp_rdata = rsp_rdata;

  systole_mem_arbiter #(.N(2), .OUTSTANDING(32)) u_host_arb (
      .clk, .rst,
      .req_valid({dev_req_valid, bar2_req_valid}), .req_ready({dev_req_ready, bar2_req_ready}),
      .req_write({dev_req_write, bar2_req_write}), .req_addr({dev_req_addr, bar2_req_addr}),
      .req_wdata({dev_req_wdata, bar2_req_wdata}), .req_wstrb({dev_req_wstrb, bar2_req_wstrb}),
      .rsp_valid, .rsp_rdata,
      .mem_req_valid(host_req_valid), .mem_req_ready(host_req_ready),
      .mem_req_write(host_req_write), .mem_req_addr(host_req_addr),
      .mem_req_wdata(host_req_wdata), .mem_req_wstrb(host_req_wstrb),
      .mem_rsp_valid(host_rsp_valid), .mem_rsp_rdata(host_rsp_rdata)
  );

  systole_host_dma #(
      .MEM_BYTES_LO(MEM_BYTES_LO), .MEM_BYTES_HI(MEM_BYTES_HI), .BURST_BEATS(BURST_BEATS),
      .FIFO_WORDS(FIFO_WORDS)
  ) u_dma (
      .clk, .rst,
      .cfg_valid(bar0_valid && dma_sel), .cfg_write(bar0_write), .cfg_addr(bar0_addr[5:0]),
      .cfg_wdata(bar0_wdata), .cfg_rvalid, .cfg_rdata, .irq(dma_irq),
      .m_arvalid, .m_arready, .m_araddr, .m_arlen, .m_rvalid, .m_rready, .m_rdata, .m_rresp,
      .m_rlast, .m_awvalid, .m_awready, .m_awaddr, .m_awlen, .m_wvalid, .m_wready, .m_wdata,
      .m_wstrb, .m_wlast, .m_bvalid, .m_bready, .m_bresp,
      .dev_req_valid, .dev_req_ready, .dev_req_write, .dev_req_addr, .dev_req_wdata,
      .dev_req_wstrb, .dev_rsp_valid(rsp_valid[1]), .dev_rsp_rdata(rsp_rdata)
  );

  systole_core #(
      .ROWS(ROWS), .COLS(COLS), .BF16(BF16), .UB_ROWS(UB_ROWS), .ACC_ROWS(ACC_ROWS),
      .WFIFO_TILES(WFIFO_TILES), .CMDQ_DEPTH(CMDQ_DEPTH), .TOKEN_CAP(TOKEN_CAP), .LOAD_CREDITS(LOAD_CREDITS),
      .MEM_BYTES_LO(MEM_BYTES_LO), .MEM_BYTES_HI(MEM_BYTES_HI), .MEM_CHANNELS(MEM_CHANNELS),
      .INTERLEAVE_LOG2(INTERLEAVE_LOG2), .CLOCK_MHZ(CLOCK_MHZ),
      .NAME0(NAME0), .NAME1(NAME1), .NAME2(NAME2), .NAME3(NAME3)
  ) u_core (
      .clk, .rst,
      .reg_valid(bar0_valid && !dma_sel), .reg_write(bar0_write), .reg_addr(bar0_addr),
      .reg_wdata(bar0_wdata), .reg_rvalid, .reg_rdata, .irq,
      .host_req_valid, .host_req_ready, .host_req_write, .host_req_addr, .host_req_wdata,
      .host_req_wstrb, .host_rsp_valid, .host_rsp_rdata,
      .mem_req_valid, .mem_req_ready, .mem_req_write, .mem_req_addr, .mem_req_wdata,
      .mem_req_wstrb, .mem_rsp_valid, .mem_rsp_rdata,
      // verilator lint_off PINCONNECTEMPTY
      .trace_accept(), .trace_done(), .trace_stall()  // observability: simulation only
      // verilator lint_on PINCONNECTEMPTY
  );
endmodule
