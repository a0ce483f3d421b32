// systole_usb_top — a Systole device behind a USB byte stream: systole_usb_bridge in front of
// systole_core. The FT245-style FIFO pins (rx_*/tx_*) go to the board's USB FIFO chip (or a
// UART); the device-memory port goes to DRAM, or to a C++ memory in simulation (the usb+sim
// link, sim/host/). Parameters are the core's (rtl/README.md) plus the bridge's payload limit.
module systole_usb_top #(
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
    parameter integer MAX_PAYLOAD = 4096
) (
    input  logic         clk,
    input  logic         rst,
    input  logic         rx_valid,
    output logic         rx_ready,
    input  logic [7:0]   rx_data,
    output logic         tx_valid,
    input  logic         tx_ready,
    output logic [7:0]   tx_data,
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
  logic         reg_valid, reg_write, reg_rvalid;
  logic [11:0]  reg_addr;
  logic [31:0]  reg_wdata, reg_rdata;
  logic         host_req_valid, host_req_ready, host_req_write, host_rsp_valid;
  logic [47:0]  host_req_addr;
  logic [255:0] host_req_wdata, host_rsp_rdata;
  logic [31:0]  host_req_wstrb;

  systole_usb_bridge #(
      .MAX_PAYLOAD(MAX_PAYLOAD), .RX_TIMEOUT(CLOCK_MHZ * 100000), .CYCLES_PER_MS(CLOCK_MHZ * 1000),
      .MEM_BYTES_LO(MEM_BYTES_LO), .MEM_BYTES_HI(MEM_BYTES_HI)
  ) u_bridge (
      .clk(clk), .rst(rst), .rx_valid(rx_valid), .rx_ready(rx_ready), .rx_data(rx_data),
      .tx_valid(tx_valid), .tx_ready(tx_ready), .tx_data(tx_data),
      .reg_valid(reg_valid), .reg_write(reg_write), .reg_addr(reg_addr), .reg_wdata(reg_wdata),
      .reg_rvalid(reg_rvalid), .reg_rdata(reg_rdata), .irq(irq),
      .host_req_valid(host_req_valid), .host_req_ready(host_req_ready),
      .host_req_write(host_req_write), .host_req_addr(host_req_addr),
      .host_req_wdata(host_req_wdata), .host_req_wstrb(host_req_wstrb),
      .host_rsp_valid(host_rsp_valid), .host_rsp_rdata(host_rsp_rdata));

  systole_core #(
      .ROWS(ROWS), .COLS(COLS), .BF16(BF16), .UB_ROWS(UB_ROWS), .ACC_ROWS(ACC_ROWS),
      .WFIFO_TILES(WFIFO_TILES), .CMDQ_DEPTH(CMDQ_DEPTH), .TOKEN_CAP(TOKEN_CAP), .LOAD_CREDITS(LOAD_CREDITS),
      .MEM_BYTES_LO(MEM_BYTES_LO), .MEM_BYTES_HI(MEM_BYTES_HI), .MEM_CHANNELS(MEM_CHANNELS),
      .INTERLEAVE_LOG2(INTERLEAVE_LOG2), .CLOCK_MHZ(CLOCK_MHZ),
      .NAME0(NAME0), .NAME1(NAME1), .NAME2(NAME2), .NAME3(NAME3)
  ) u_core (
      .clk(clk), .rst(rst),
      .reg_valid(reg_valid), .reg_write(reg_write), .reg_addr(reg_addr), .reg_wdata(reg_wdata),
      .reg_rvalid(reg_rvalid), .reg_rdata(reg_rdata), .irq(irq),
      .host_req_valid(host_req_valid), .host_req_ready(host_req_ready),
      .host_req_write(host_req_write), .host_req_addr(host_req_addr),
      .host_req_wdata(host_req_wdata), .host_req_wstrb(host_req_wstrb),
      .host_rsp_valid(host_rsp_valid), .host_rsp_rdata(host_rsp_rdata),
      .mem_req_valid(mem_req_valid), .mem_req_ready(mem_req_ready),
      .mem_req_write(mem_req_write), .mem_req_addr(mem_req_addr),
      .mem_req_wdata(mem_req_wdata), .mem_req_wstrb(mem_req_wstrb),
      .mem_rsp_valid(mem_rsp_valid), .mem_rsp_rdata(mem_rsp_rdata),
      // verilator lint_off PINCONNECTEMPTY
      .trace_accept(), .trace_done(), .trace_stall());  // observability: simulation only
      // verilator lint_on PINCONNECTEMPTY
endmodule
