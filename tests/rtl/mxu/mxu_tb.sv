// mxu_tb — systole_mxu with the unified buffer and the accumulators it reads and writes, for
// the Verilator tests in mxu_test.cpp.
//
// The MXU owns UB read port A and ACC read port A and the ACC write port, as in the core. The
// test gets its own ports, used only while the MXU is idle: a UB row write, an ACC row write
// (multiplexed behind the MXU's, which has priority) and an ACC read port (the ACC RAM's second
// copy). Command, weight-row and event ports are the MXU's, passed through; ub_rd_en and
// acc_wr_en/addr are also visible for latency measurements.
module mxu_tb #(
    parameter integer ROWS = 4,
    parameter integer COLS = 4,
    parameter integer BF16 = 0,
    parameter integer UB_ROWS = 1024,
    parameter integer ACC_ROWS = 64,
    parameter integer WFIFO_TILES = 2,
    localparam integer EW = (BF16 != 0) ? 16 : 8,
    localparam integer W = (ROWS > COLS) ? ROWS : COLS,
    localparam integer UB_AW = $clog2(UB_ROWS),
    localparam integer ACC_AW = $clog2(ACC_ROWS)
) (
    input  logic                clk,
    input  logic                rst,
    input  logic                launch_start,
    input  logic                cmd_valid,
    output logic                cmd_ready,
    input  logic [255:0]        cmd_insn,
    output logic                done,
    input  logic                wrow_valid,
    output logic                wrow_ready,
    input  logic [COLS*EW-1:0]  wrow_data,
    output logic                busy_event,
    output logic                stall_wfifo,
    // observation
    output logic                ub_rd_en,
    output logic                acc_wr_en,
    output logic [ACC_AW-1:0]   acc_wr_addr,
    // test access (MXU idle)
    input  logic                tb_ub_wr_en,
    input  logic [UB_AW-1:0]    tb_ub_wr_addr,
    input  logic [W*EW-1:0]     tb_ub_wr_data,
    input  logic                tb_acc_wr_en,
    input  logic [ACC_AW-1:0]   tb_acc_wr_addr,
    input  logic [COLS*32-1:0]  tb_acc_wr_data,
    input  logic                tb_acc_rd_en,
    input  logic [ACC_AW-1:0]   tb_acc_rd_addr,
    output logic [COLS*32-1:0]  tb_acc_rd_data
);
  logic [UB_AW-1:0]   ub_rd_addr;
  logic [W*EW-1:0]    ub_rd_data;
  logic               acc_rd_en;
  logic [ACC_AW-1:0]  acc_rd_addr;
  logic [COLS*32-1:0] acc_rd_data;
  logic [COLS*32-1:0] acc_wr_data;

  systole_mxu #(
      .ROWS(ROWS), .COLS(COLS), .BF16(BF16), .UB_ROWS(UB_ROWS), .ACC_ROWS(ACC_ROWS),
      .WFIFO_TILES(WFIFO_TILES)
  ) u_mxu (
      .clk, .rst, .launch_start,
      .cmd_valid, .cmd_ready, .cmd_insn, .done,
      .wrow_valid, .wrow_ready, .wrow_data,
      .ub_rd_en, .ub_rd_addr, .ub_rd_data,
      .acc_rd_en, .acc_rd_addr, .acc_rd_data,
      .acc_wr_en, .acc_wr_addr, .acc_wr_data,
      .busy_event, .stall_wfifo
  );

  systole_row_ram #(.DEPTH(UB_ROWS), .LANES(W), .LANE_BITS(EW), .READ_PORTS(1)) u_ub (
      .clk,
      .wr_en(tb_ub_wr_en),
      .wr_addr(tb_ub_wr_addr),
      .wr_lanes({W{1'b1}}),
      .wr_data(tb_ub_wr_data),
      .rd_en(ub_rd_en),
      .rd_addr(ub_rd_addr),
      .rd_data(ub_rd_data)
  );

  logic [COLS*64-1:0] acc_rd_both;
  systole_row_ram #(.DEPTH(ACC_ROWS), .LANES(COLS), .LANE_BITS(32), .READ_PORTS(2)) u_acc (
      .clk,
      .wr_en(acc_wr_en || tb_acc_wr_en),
      .wr_addr(acc_wr_en ? acc_wr_addr : tb_acc_wr_addr),
      .wr_lanes({COLS{1'b1}}),
      .wr_data(acc_wr_en ? acc_wr_data : tb_acc_wr_data),
      .rd_en({tb_acc_rd_en, acc_rd_en}),
      .rd_addr({tb_acc_rd_addr, acc_rd_addr}),
      .rd_data(acc_rd_both)
  );
  assign acc_rd_data = acc_rd_both[0 +: COLS*32];
  assign tb_acc_rd_data = acc_rd_both[COLS*32 +: COLS*32];
endmodule
