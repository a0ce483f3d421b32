// Test top for systole_vector_unit: the unit between a unified-buffer and an accumulator row
// RAM (rtl/memory/systole_row_ram.sv) behind trivial arbiters whose grants the test withholds
// at random (gnt = req && *_allow), plus backdoor ports through which the test fills both RAMs
// and reads both back while the unit is idle, and a monitor of every row write.
module vector_tb #(
    parameter integer ROWS = 4,
    parameter integer COLS = 4,
    parameter integer BF16 = 0,
    parameter integer UB_ROWS = 1024,
    parameter integer ACC_ROWS = 64,
    localparam integer W = (ROWS > COLS) ? ROWS : COLS,
    localparam integer EW = (BF16 != 0) ? 16 : 8,
    localparam integer UB_AW = $clog2(UB_ROWS),
    localparam integer ACC_AW = $clog2(ACC_ROWS)
) (
    input  logic                 clk,
    input  logic                 rst,
    input  logic                 launch_start,
    input  logic                 cmd_valid,
    output logic                 cmd_ready,
    input  logic [255:0]         cmd_insn,
    output logic                 done,
    // Grant throttling: a port is granted only in cycles where its allow bit is high.
    input  logic                 ub_rd_allow,
    input  logic                 ub_wr_allow,
    input  logic                 acc_rd_allow,
    input  logic                 acc_wr_allow,   // ACCVEC's row writes
    // Monitor: the unit's port transfers of this cycle (valid before the edge).
    output logic                 mon_ub_wr,
    output logic [UB_AW-1:0]     mon_ub_wr_addr,
    output logic [W*EW-1:0]      mon_ub_wr_data,
    output logic                 mon_ub_rd,
    output logic                 mon_acc_rd,
    output logic                 mon_acc_wr,
    // Backdoor (only while the unit is idle).
    input  logic                 bd_ub_wr_en,
    input  logic                 bd_ub_rd_en,
    input  logic [UB_AW-1:0]     bd_ub_addr,
    input  logic [W*EW-1:0]      bd_ub_wr_data,
    output logic [W*EW-1:0]      bd_ub_rd_data,
    input  logic                 bd_acc_wr_en,
    input  logic [ACC_AW-1:0]    bd_acc_addr,
    input  logic [COLS*32-1:0]   bd_acc_wr_data,
    input  logic                 bd_acc_rd_en,
    output logic [COLS*32-1:0]   bd_acc_rd_data
);
  logic ub_rd_req, ub_rd_gnt, ub_wr_req, ub_wr_gnt, acc_rd_req, acc_rd_gnt;
  logic [UB_AW-1:0] ub_rd_addr, ub_wr_addr;
  logic [ACC_AW-1:0] acc_rd_addr;
  logic [W*EW-1:0] ub_wr_data, ub_rd_data;
  logic [COLS*32-1:0] acc_rd_data, acc_wr_data;
  logic acc_wr_req, acc_wr_gnt;
  logic [ACC_AW-1:0] acc_wr_addr;

  systole_vector_unit #(
      .ROWS(ROWS), .COLS(COLS), .BF16(BF16), .UB_ROWS(UB_ROWS), .ACC_ROWS(ACC_ROWS)
  ) u_dut (
      .clk(clk), .rst(rst), .launch_start(launch_start),
      .cmd_valid(cmd_valid), .cmd_ready(cmd_ready), .cmd_insn(cmd_insn), .done(done),
      .ub_rd_req(ub_rd_req), .ub_rd_addr(ub_rd_addr), .ub_rd_gnt(ub_rd_gnt),
      .ub_rd_data(ub_rd_data),
      .ub_wr_req(ub_wr_req), .ub_wr_addr(ub_wr_addr), .ub_wr_data(ub_wr_data),
      .ub_wr_gnt(ub_wr_gnt),
      .acc_rd_req(acc_rd_req), .acc_rd_addr(acc_rd_addr), .acc_rd_gnt(acc_rd_gnt),
      .acc_rd_data(acc_rd_data),
      .acc_wr_req(acc_wr_req), .acc_wr_addr(acc_wr_addr), .acc_wr_data(acc_wr_data),
      .acc_wr_gnt(acc_wr_gnt));

  assign acc_wr_gnt = acc_wr_req && acc_wr_allow;
  assign mon_acc_wr = acc_wr_gnt;
  assign ub_rd_gnt = ub_rd_req && ub_rd_allow;
  assign ub_wr_gnt = ub_wr_req && ub_wr_allow;
  assign acc_rd_gnt = acc_rd_req && acc_rd_allow;
  assign mon_ub_wr = ub_wr_gnt;
  assign mon_ub_wr_addr = ub_wr_addr;
  assign mon_ub_wr_data = ub_wr_data;
  assign mon_ub_rd = ub_rd_gnt;
  assign mon_acc_rd = acc_rd_gnt;

  logic [2*W*EW-1:0] ub_q;
  systole_row_ram #(.DEPTH(UB_ROWS), .LANES(W), .LANE_BITS(EW), .READ_PORTS(2)) u_ub (
      .clk(clk),
      .wr_en(ub_wr_gnt || bd_ub_wr_en),
      .wr_addr(ub_wr_gnt ? ub_wr_addr : bd_ub_addr),
      .wr_lanes({W{1'b1}}),
      .wr_data(ub_wr_gnt ? ub_wr_data : bd_ub_wr_data),
      .rd_en({bd_ub_rd_en, ub_rd_gnt}),
      .rd_addr({bd_ub_addr, ub_rd_addr}),
      .rd_data(ub_q));
  assign ub_rd_data = ub_q[0 +: W*EW];
  assign bd_ub_rd_data = ub_q[W*EW +: W*EW];

  logic [2*COLS*32-1:0] acc_q;
  systole_row_ram #(.DEPTH(ACC_ROWS), .LANES(COLS), .LANE_BITS(32), .READ_PORTS(2)) u_acc (
      .clk(clk),
      .wr_en(acc_wr_gnt || bd_acc_wr_en),
      .wr_addr(acc_wr_gnt ? acc_wr_addr : bd_acc_addr),
      .wr_lanes({COLS{1'b1}}),
      .wr_data(acc_wr_gnt ? acc_wr_data : bd_acc_wr_data),
      .rd_en({bd_acc_rd_en, acc_rd_gnt}),
      .rd_addr({bd_acc_addr, acc_rd_addr}),
      .rd_data(acc_q));
  assign acc_rd_data = acc_q[0 +: COLS*32];
  assign bd_acc_rd_data = acc_q[COLS*32 +: COLS*32];

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      assert (!(ub_wr_gnt && bd_ub_wr_en)) else $error("vector_tb: backdoor write while the unit writes");
      assert (!(acc_wr_gnt && bd_acc_wr_en)) else $error("vector_tb: backdoor ACC write while the unit writes");
    end
  end
`endif
endmodule
