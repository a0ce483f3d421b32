// systole_soc — the Systole core with its HBM controller: systole_core's device-memory port
// served by memory/hbm/systole_hbm_ctrl, whose channels end in DRAM command buses (a DRAM model
// in simulation, a board's memory on an FPGA). Takes every parameter of systole_core plus the
// DRAM geometry; the DRAM timing arrives on inputs, as a board's timing registers would set it
// (docs/MEMORY.md).
module systole_soc #(
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
    parameter integer BG_BITS = 2,   // log2(dram.bank_groups)
    parameter integer BA_BITS = 2,   // log2(dram.banks_per_group)
    parameter integer COL_BITS = 5,  // log2(dram.row_bytes / 32)
    localparam integer ROW_BITS = (MEM_BYTES_HI != 0 ? 32 + $clog2(MEM_BYTES_HI)
                                                     : $clog2(MEM_BYTES_LO))
                                  - $clog2(MEM_CHANNELS) - 5 - BG_BITS - COL_BITS - BA_BITS
) (
    input  logic         clk,
    input  logic         rst,
    input  logic [15:0]  t_burst, t_rcd, t_rp, t_ras, t_wl, t_wr, t_rtp, t_rrd_s, t_rrd_l,
    input  logic [15:0]  t_faw, t_ccd_s, t_ccd_l, t_wtr, t_rtw, t_refi, t_rfc, starve_limit,
    // host register bus and host memory port, as systole_core
    input  logic         reg_valid,
    input  logic         reg_write,
    input  logic [11:0]  reg_addr,
    input  logic [31:0]  reg_wdata,
    output logic         reg_rvalid,
    output logic [31:0]  reg_rdata,
    output logic         irq,
    input  logic         host_req_valid,
    output logic         host_req_ready,
    input  logic         host_req_write,
    input  logic [47:0]  host_req_addr,
    input  logic [255:0] host_req_wdata,
    input  logic [31:0]  host_req_wstrb,
    output logic         host_rsp_valid,
    output logic [255:0] host_rsp_rdata,
    // a refused device-memory request (the core checks ranges, so this means an RTL bug)
    output logic         mem_error,
    output logic [47:0]  mem_error_addr,
    // DRAM command buses, channel c in slice c
    output logic [MEM_CHANNELS*3-1:0]        dram_cmd,
    output logic [MEM_CHANNELS*BG_BITS-1:0]  dram_bg,
    output logic [MEM_CHANNELS*BA_BITS-1:0]  dram_ba,
    output logic [MEM_CHANNELS*ROW_BITS-1:0] dram_row,
    output logic [MEM_CHANNELS*COL_BITS-1:0] dram_col,
    output logic [MEM_CHANNELS*256-1:0]      dram_wdata,
    output logic [MEM_CHANNELS*32-1:0]       dram_wstrb,
    input  logic [MEM_CHANNELS-1:0]          dram_rvalid,
    input  logic [MEM_CHANNELS*256-1:0]      dram_rdata,
    // observability, as systole_core
    output logic [4:0]   trace_accept,
    output logic [4:0]   trace_done,
    output logic [4:0]   trace_stall
);
  logic         mem_req_valid, mem_req_ready, mem_req_write, mem_rsp_valid;
  logic [47:0]  mem_req_addr;
  logic [255:0] mem_req_wdata, mem_rsp_rdata;
  logic [31:0]  mem_req_wstrb;
  logic         mem_rsp_error;

  systole_core #(
      .ROWS(ROWS), .COLS(COLS), .BF16(BF16), .UB_ROWS(UB_ROWS), .ACC_ROWS(ACC_ROWS),
      .WFIFO_TILES(WFIFO_TILES), .CMDQ_DEPTH(CMDQ_DEPTH), .TOKEN_CAP(TOKEN_CAP), .LOAD_CREDITS(LOAD_CREDITS),
      .MEM_BYTES_LO(MEM_BYTES_LO), .MEM_BYTES_HI(MEM_BYTES_HI), .MEM_CHANNELS(MEM_CHANNELS),
      .INTERLEAVE_LOG2(INTERLEAVE_LOG2), .CLOCK_MHZ(CLOCK_MHZ), .NAME0(NAME0), .NAME1(NAME1),
      .NAME2(NAME2), .NAME3(NAME3)
  ) u_core (
      .clk, .rst, .reg_valid, .reg_write, .reg_addr, .reg_wdata, .reg_rvalid, .reg_rdata, .irq,
      .host_req_valid, .host_req_ready, .host_req_write, .host_req_addr, .host_req_wdata,
      .host_req_wstrb, .host_rsp_valid, .host_rsp_rdata, .mem_req_valid, .mem_req_ready,
      .mem_req_write, .mem_req_addr, .mem_req_wdata, .mem_req_wstrb, .mem_rsp_valid,
      .mem_rsp_rdata, .trace_accept, .trace_done, .trace_stall);

  // The DRAM timing inputs, registered. They are set before reset and held (a board's timing
  // registers); registered, everything the controller derives from them depends on state only,
  // so a Verilated model evaluates it once per clock edge instead of at every evaluation of the
  // top's inputs (three a cycle): the small SoC simulates 1.27x as fast (rtl/README.md,
  // "Simulation speed of the SoC").
  // The controller's reset takes the registered values from the second reset edge on.
  logic [15:0] t_burst_q, t_rcd_q, t_rp_q, t_ras_q, t_wl_q, t_wr_q, t_rtp_q, t_rrd_s_q;
  logic [15:0] t_rrd_l_q, t_faw_q, t_ccd_s_q, t_ccd_l_q, t_wtr_q, t_rtw_q, t_refi_q, t_rfc_q;
  logic [15:0] starve_limit_q;
  always_ff @(posedge clk) begin
    {t_burst_q, t_rcd_q, t_rp_q, t_ras_q, t_wl_q, t_wr_q, t_rtp_q, t_rrd_s_q} <=
        {t_burst, t_rcd, t_rp, t_ras, t_wl, t_wr, t_rtp, t_rrd_s};
    {t_rrd_l_q, t_faw_q, t_ccd_s_q, t_ccd_l_q, t_wtr_q, t_rtw_q, t_refi_q, t_rfc_q} <=
        {t_rrd_l, t_faw, t_ccd_s, t_ccd_l, t_wtr, t_rtw, t_refi, t_rfc};
    starve_limit_q <= starve_limit;
  end

  systole_hbm_ctrl #(
      .MEM_CHANNELS(MEM_CHANNELS), .INTERLEAVE_LOG2(INTERLEAVE_LOG2), .MEM_BYTES_LO(MEM_BYTES_LO),
      .MEM_BYTES_HI(MEM_BYTES_HI), .BG_BITS(BG_BITS), .BA_BITS(BA_BITS), .COL_BITS(COL_BITS)
  ) u_hbm (
      .clk, .rst, .t_burst(t_burst_q), .t_rcd(t_rcd_q), .t_rp(t_rp_q), .t_ras(t_ras_q),
      .t_wl(t_wl_q), .t_wr(t_wr_q), .t_rtp(t_rtp_q), .t_rrd_s(t_rrd_s_q), .t_rrd_l(t_rrd_l_q),
      .t_faw(t_faw_q), .t_ccd_s(t_ccd_s_q), .t_ccd_l(t_ccd_l_q), .t_wtr(t_wtr_q),
      .t_rtw(t_rtw_q), .t_refi(t_refi_q), .t_rfc(t_rfc_q), .starve_limit(starve_limit_q),
      .mem_req_valid, .mem_req_ready, .mem_req_write, .mem_req_addr, .mem_req_wdata,
      .mem_req_wstrb, .mem_rsp_valid, .mem_rsp_rdata, .mem_rsp_error, .error(mem_error),
      .error_addr(mem_error_addr), .dram_cmd, .dram_bg, .dram_ba, .dram_row, .dram_col,
      .dram_wdata, .dram_wstrb, .dram_rvalid, .dram_rdata);

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      assert (!(mem_rsp_valid && mem_rsp_error))
      else $error("systole_soc: the controller refused a request of the core");
      assert ({t_burst, t_rcd, t_rp, t_ras, t_wl, t_wr, t_rtp, t_rrd_s, t_rrd_l, t_faw, t_ccd_s,
               t_ccd_l, t_wtr, t_rtw, t_refi, t_rfc, starve_limit} ==
              {t_burst_q, t_rcd_q, t_rp_q, t_ras_q, t_wl_q, t_wr_q, t_rtp_q, t_rrd_s_q, t_rrd_l_q,
               t_faw_q, t_ccd_s_q, t_ccd_l_q, t_wtr_q, t_rtw_q, t_refi_q, t_rfc_q, starve_limit_q})
      else $error("systole_soc: the DRAM timing inputs changed outside reset");
    end
  end
`endif
endmodule
