// systole_hbm_bram_channel — a memory channel made of on-chip RAM, behind the same AXI4-style
// request/response port as systole_hbm_channel: what an FPGA board without DRAM (or a
// simulation that wants no DRAM timing) puts behind systole_hbm_ctrl (BACKEND = 1).
//
// One request per cycle; every response (read data, or a write's acknowledgement) one cycle
// later, in order. The port's rsp_ready must stay high (systole_hbm_ctrl ties it high: its
// reorder buffer has a slot for every request it lets in).
module systole_hbm_bram_channel #(
    parameter integer ADDR_BITS = 10,  // local byte address bits: 2^ADDR_BITS bytes
    parameter integer ID_BITS = 6
) (
    input  logic                 clk,
    input  logic                 rst,
    input  logic                 req_valid,
    output logic                 req_ready,
    input  logic                 req_write,
    input  logic [ADDR_BITS-1:0] req_addr,
    input  logic [255:0]         req_wdata,
    input  logic [31:0]          req_wstrb,
    input  logic [ID_BITS-1:0]   req_id,
    output logic                 rsp_valid,
    input  logic                 rsp_ready,
    output logic [ID_BITS-1:0]   rsp_id,
    output logic [255:0]         rsp_rdata
);
  localparam integer WORDS = 1 << (ADDR_BITS - 5);

  logic [255:0] ram [WORDS];
  logic         valid_q;
  logic [ID_BITS-1:0] id_q;
  logic [255:0] rdata_q;
  wire [ADDR_BITS-6:0] word = req_addr[ADDR_BITS-1:5];
  wire fire = req_valid && req_ready;

  assign req_ready = !rst;
  assign rsp_valid = valid_q;
  assign rsp_id = id_q;
  assign rsp_rdata = rdata_q;

  // Block RAM is not reset. Simulation starts it zeroed, as device memory is in the golden
  // model; synthesis leaves it to the FPGA (its RAMs power up zeroed). Not an initial loop in
  // synthesis: Yosys unrolls it at read time, for every file list that includes this one.
`ifndef SYNTHESIS
  initial begin
    for (int i = 0; i < WORDS; i++) ram[i] = '0;
  end
`endif
  always_ff @(posedge clk) begin
    if (fire) begin
      rdata_q <= ram[word];
      id_q <= req_id;
      if (req_write) begin
        for (int b = 0; b < 32; b++) begin
          if (req_wstrb[b]) ram[word][8*b +: 8] <= req_wdata[8*b +: 8];
        end
      end
    end
  end
  always_ff @(posedge clk) begin
    if (rst) valid_q <= 1'b0;
    else valid_q <= fire;
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      assert (!(valid_q && !rsp_ready)) else $error("systole_hbm_bram_channel: rsp_ready low");
      assert (!(req_valid && req_addr[4:0] != 5'd0))
      else $error("systole_hbm_bram_channel: address 0x%0h is not a multiple of 32", req_addr);
    end
  end
`endif
endmodule
