// hbm_tb — the HBM controller behind the core's device-memory arbiter, so that several
// requesters share it exactly as fetch, the DMA engines and the host do in systole_core.
module hbm_tb #(
    parameter integer N = 3,
    parameter integer MEM_CHANNELS = 2,
    parameter integer INTERLEAVE_LOG2 = 8,
    parameter integer MEM_BYTES_LO = 1048576,
    parameter integer MEM_BYTES_HI = 0,
    parameter integer BG_BITS = 2,
    parameter integer BA_BITS = 2,
    parameter integer COL_BITS = 5,
    parameter integer QUEUE_DEPTH = 16,
    parameter integer ROB_DEPTH = 64,
    parameter integer BACKEND = 0,
    localparam integer ROW_BITS = (MEM_BYTES_HI != 0 ? 32 + $clog2(MEM_BYTES_HI)
                                                     : $clog2(MEM_BYTES_LO))
                                  - $clog2(MEM_CHANNELS) - 5 - BG_BITS - COL_BITS - BA_BITS
) (
    input  logic clk,
    input  logic rst,
    input  logic [15:0] t_burst, t_rcd, t_rp, t_ras, t_wl, t_wr, t_rtp, t_rrd_s, t_rrd_l,
    input  logic [15:0] t_faw, t_ccd_s, t_ccd_l, t_wtr, t_rtw, t_refi, t_rfc, starve_limit,
    input  logic [N-1:0]     req_valid,
    output logic [N-1:0]     req_ready,
    input  logic [N-1:0]     req_write,
    input  logic [N*48-1:0]  req_addr,
    input  logic [N*256-1:0] req_wdata,
    input  logic [N*32-1:0]  req_wstrb,
    output logic [N-1:0]     rsp_valid,
    output logic [255:0]     rsp_rdata,
    output logic             rsp_error,
    output logic             error,
    output logic [47:0]      error_addr,
    output logic [MEM_CHANNELS*3-1:0]        dram_cmd,
    output logic [MEM_CHANNELS*BG_BITS-1:0]  dram_bg,
    output logic [MEM_CHANNELS*BA_BITS-1:0]  dram_ba,
    output logic [MEM_CHANNELS*ROW_BITS-1:0] dram_row,
    output logic [MEM_CHANNELS*COL_BITS-1:0] dram_col,
    output logic [MEM_CHANNELS*256-1:0]      dram_wdata,
    output logic [MEM_CHANNELS*32-1:0]       dram_wstrb,
    input  logic [MEM_CHANNELS-1:0]          dram_rvalid,
    input  logic [MEM_CHANNELS*256-1:0]      dram_rdata
);
  logic mem_req_valid, mem_req_ready, mem_req_write, mem_rsp_valid;
  logic [47:0] mem_req_addr;
  logic [255:0] mem_req_wdata, mem_rsp_rdata;
  logic [31:0] mem_req_wstrb;

  systole_mem_arbiter #(.N(N), .OUTSTANDING(ROB_DEPTH)) u_arbiter (
      .clk, .rst, .req_valid, .req_ready, .req_write, .req_addr, .req_wdata, .req_wstrb,
      .rsp_valid, .rsp_rdata, .mem_req_valid, .mem_req_ready, .mem_req_write, .mem_req_addr,
      .mem_req_wdata, .mem_req_wstrb, .mem_rsp_valid, .mem_rsp_rdata);

  systole_hbm_ctrl #(
      .MEM_CHANNELS(MEM_CHANNELS), .INTERLEAVE_LOG2(INTERLEAVE_LOG2), .MEM_BYTES_LO(MEM_BYTES_LO),
      .MEM_BYTES_HI(MEM_BYTES_HI), .BG_BITS(BG_BITS), .BA_BITS(BA_BITS), .COL_BITS(COL_BITS),
      .QUEUE_DEPTH(QUEUE_DEPTH), .ROB_DEPTH(ROB_DEPTH), .BACKEND(BACKEND)
  ) u_ctrl (
      .clk, .rst, .t_burst, .t_rcd, .t_rp, .t_ras, .t_wl, .t_wr, .t_rtp, .t_rrd_s, .t_rrd_l,
      .t_faw, .t_ccd_s, .t_ccd_l, .t_wtr, .t_rtw, .t_refi, .t_rfc, .starve_limit,
      .mem_req_valid, .mem_req_ready, .mem_req_write, .mem_req_addr, .mem_req_wdata,
      .mem_req_wstrb, .mem_rsp_valid, .mem_rsp_rdata, .mem_rsp_error(rsp_error), .error,
      .error_addr, .dram_cmd, .dram_bg, .dram_ba, .dram_row, .dram_col, .dram_wdata,
      .dram_wstrb, .dram_rvalid, .dram_rdata);
endmodule
