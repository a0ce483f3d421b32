// systole_core — one Systole device: control, the five units, the on-chip buffers and the
// device-memory arbiter, wired as in rtl/README.md.
//
//   host reg bus ─► control (registers + sequencer) ─► cmd[0..4] ─► LOAD  WEIGHT  MXU  VECTOR  STORE
//   host mem port ─┐          │ fetch                               │      │       │     │       │
//                  └──► memory arbiter ◄──────────────────────────── LOAD, WEIGHT, STORE, fetch, host
//                          │                                         UB (row RAM, 2 read copies)
//                          ▼                                         ACC (row RAM, 2 read copies)
//                    device-memory port (a C++ memory in simulation; the HBM controller later)
//
// On-chip ports (docs: rtl/README.md):
//   UB   read A: MXU only             read B: VECTOR | STORE (round robin)
//        write : VECTOR | LOAD (round robin)
//   ACC  read A: MXU only (accumulate) read B: VECTOR | STORE (round robin)
//        write : MXU first, LOAD when the MXU is not writing, VECTOR (ACCVEC) when neither is
//
// Host memory port: the same requester protocol as the units. For host reads, mem_req_wstrb
// marks the bytes the host asked for: PERF_BYTES_HOST counts strobes of every host request.
module systole_core #(
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
    parameter integer NAME3 = 0
) (
    input  logic         clk,
    input  logic         rst,
    // host register bus
    input  logic         reg_valid,
    input  logic         reg_write,
    input  logic [11:0]  reg_addr,
    input  logic [31:0]  reg_wdata,
    output logic         reg_rvalid,
    output logic [31:0]  reg_rdata,
    output logic         irq,
    // host access to device memory
    input  logic         host_req_valid,
    output logic         host_req_ready,
    input  logic         host_req_write,
    input  logic [47:0]  host_req_addr,
    input  logic [255:0] host_req_wdata,
    input  logic [31:0]  host_req_wstrb,
    output logic         host_rsp_valid,
    output logic [255:0] host_rsp_rdata,
    // device memory
    output logic         mem_req_valid,
    input  logic         mem_req_ready,
    output logic         mem_req_write,
    output logic [47:0]  mem_req_addr,
    output logic [255:0] mem_req_wdata,
    output logic [31:0]  mem_req_wstrb,
    input  logic         mem_rsp_valid,
    input  logic [255:0] mem_rsp_rdata,
    // Observability, per unit in UNIT_* order (`systole run --trace`, docs/TRACE.md). Nothing
    // inside depends on them; a board top leaves them open and synthesis removes them.
    output logic [4:0]   trace_accept,  // the unit takes an instruction at this edge
    output logic [4:0]   trace_done,    // the unit finishes its oldest accepted instruction
    output logic [4:0]   trace_stall    // the unit waits this cycle: a DMA unit on device
                                        // memory, the MXU on its weight tile (perf lanes)
);
  localparam integer EW = BF16 != 0 ? 16 : 8;
  localparam integer W = ROWS > COLS ? ROWS : COLS;
  localparam integer UB_AW = $clog2(UB_ROWS);
  localparam integer ACC_AW = $clog2(ACC_ROWS);
  localparam integer UB_BITS = W * EW;
  localparam integer ACC_BITS = COLS * 32;

  // Unit numbers (UNIT_*) and performance lanes (PERF_LANE_*) are generated from arch/.
  `include "systole_isa.svh"
  `include "systole_regs.svh"
  // Requesters of the device-memory arbiter (the arbiter's port order; this module's choice).
  localparam integer REQ_FETCH = 0, REQ_LOAD = 1, REQ_WEIGHT = 2, REQ_STORE = 3, REQ_HOST = 4;

  // ---- Control ----------------------------------------------------------------------------
  logic             unit_reset, launch_start;
  logic [4:0]       cmd_valid, cmd_ready, done;
  logic [5*256-1:0] cmd_insn;
  logic [14*32-1:0] perf_unit_inc;
  wire              urst = rst || unit_reset;

  // Memory requesters, flattened for the arbiter.
  logic [4:0]       rq_valid, rq_ready, rq_write, rsp_valid;
  logic [5*48-1:0]  rq_addr;
  logic [5*256-1:0] rq_wdata;
  logic [5*32-1:0]  rq_wstrb;
  logic [255:0]     rsp_rdata;

  systole_control #(
      .ROWS(ROWS), .COLS(COLS), .BF16(BF16), .UB_ROWS(UB_ROWS), .ACC_ROWS(ACC_ROWS),
      .WFIFO_TILES(WFIFO_TILES), .CMDQ_DEPTH(CMDQ_DEPTH), .TOKEN_CAP(TOKEN_CAP), .LOAD_CREDITS(LOAD_CREDITS),
      .MEM_BYTES_LO(MEM_BYTES_LO), .MEM_BYTES_HI(MEM_BYTES_HI), .MEM_CHANNELS(MEM_CHANNELS),
      .INTERLEAVE_LOG2(INTERLEAVE_LOG2), .CLOCK_MHZ(CLOCK_MHZ),
      .NAME0(NAME0), .NAME1(NAME1), .NAME2(NAME2), .NAME3(NAME3)
  ) u_control (
      .clk, .rst,
      .reg_valid, .reg_write, .reg_addr, .reg_wdata, .reg_rvalid, .reg_rdata, .irq,
      .mem_req_valid(rq_valid[REQ_FETCH]), .mem_req_ready(rq_ready[REQ_FETCH]),
      .mem_req_write(rq_write[REQ_FETCH]), .mem_req_addr(rq_addr[REQ_FETCH*48 +: 48]),
      .mem_req_wdata(rq_wdata[REQ_FETCH*256 +: 256]), .mem_req_wstrb(rq_wstrb[REQ_FETCH*32 +: 32]),
      .mem_rsp_valid(rsp_valid[REQ_FETCH]), .mem_rsp_rdata(rsp_rdata),
      .unit_reset, .launch_start, .cmd_valid, .cmd_ready, .cmd_insn, .done, .perf_unit_inc
  );

  // ---- Unified buffer -------------------------------------------------------------------------
  logic               mxu_ub_rd_en;
  logic [UB_AW-1:0]   mxu_ub_rd_addr;
  logic               vec_ub_rd_req, st_ub_rd_req, vec_ub_wr_req, ld_ub_wr_req;
  logic [UB_AW-1:0]   vec_ub_rd_addr, st_ub_rd_addr, vec_ub_wr_addr, ld_ub_wr_addr;
  logic [UB_BITS-1:0] vec_ub_wr_data, ld_ub_wr_data;
  logic [W-1:0]       ld_ub_wr_lanes;
  logic [1:0]         ub_rd_gnt, ub_wr_gnt;  // [0] VECTOR, [1] STORE / LOAD
  logic [2*UB_BITS-1:0] ub_q;

  systole_rr_arbiter #(.N(2)) u_ub_rd_arb (
      .clk, .rst, .enable(1'b1), .req({st_ub_rd_req, vec_ub_rd_req}), .gnt(ub_rd_gnt), .advance(1'b1)
  );
  systole_rr_arbiter #(.N(2)) u_ub_wr_arb (
      .clk, .rst, .enable(1'b1), .req({ld_ub_wr_req, vec_ub_wr_req}), .gnt(ub_wr_gnt), .advance(1'b1)
  );
  systole_row_ram #(.DEPTH(UB_ROWS), .LANES(W), .LANE_BITS(EW), .READ_PORTS(2)) u_ub (
      .clk,
      .wr_en(!rst && |ub_wr_gnt),  // nothing is written while reset settles the units
      .wr_addr(ub_wr_gnt[0] ? vec_ub_wr_addr : ld_ub_wr_addr),
      .wr_lanes(ub_wr_gnt[0] ? {W{1'b1}} : ld_ub_wr_lanes),
      .wr_data(ub_wr_gnt[0] ? vec_ub_wr_data : ld_ub_wr_data),
      .rd_en({|ub_rd_gnt, mxu_ub_rd_en}),
      .rd_addr({ub_rd_gnt[0] ? vec_ub_rd_addr : st_ub_rd_addr, mxu_ub_rd_addr}),
      .rd_data(ub_q)
  );

  // ---- Accumulators ---------------------------------------------------------------------------
  logic                mxu_acc_rd_en, mxu_acc_wr_en;
  logic [ACC_AW-1:0]   mxu_acc_rd_addr, mxu_acc_wr_addr;
  logic [ACC_BITS-1:0] mxu_acc_wr_data;
  logic                vec_acc_rd_req, st_acc_rd_req, ld_acc_wr_req;
  logic [ACC_AW-1:0]   vec_acc_rd_addr, st_acc_rd_addr, ld_acc_wr_addr;
  logic [ACC_BITS-1:0] ld_acc_wr_data;
  logic [COLS-1:0]     ld_acc_wr_lanes;
  logic [1:0]          acc_rd_gnt;  // [0] VECTOR, [1] STORE
  logic [2*ACC_BITS-1:0] acc_q;
  logic                vec_acc_wr_req;
  logic [ACC_AW-1:0]   vec_acc_wr_addr;
  logic [ACC_BITS-1:0] vec_acc_wr_data;
  wire                 ld_acc_wr_gnt = ld_acc_wr_req && !mxu_acc_wr_en;
  // ACCVEC's row writes take the port last, so the MXU's and LOAD's timing never changes.
  wire                 vec_acc_wr_gnt = vec_acc_wr_req && !mxu_acc_wr_en && !ld_acc_wr_req;

  systole_rr_arbiter #(.N(2)) u_acc_rd_arb (
      .clk, .rst, .enable(1'b1), .req({st_acc_rd_req, vec_acc_rd_req}), .gnt(acc_rd_gnt), .advance(1'b1)
  );
  systole_row_ram #(.DEPTH(ACC_ROWS), .LANES(COLS), .LANE_BITS(32), .READ_PORTS(2)) u_acc (
      .clk,
      .wr_en(!rst && (mxu_acc_wr_en || ld_acc_wr_gnt || vec_acc_wr_gnt)),
      .wr_addr(mxu_acc_wr_en ? mxu_acc_wr_addr : ld_acc_wr_gnt ? ld_acc_wr_addr : vec_acc_wr_addr),
      .wr_lanes(mxu_acc_wr_en || vec_acc_wr_gnt ? {COLS{1'b1}} : ld_acc_wr_lanes),
      .wr_data(mxu_acc_wr_en ? mxu_acc_wr_data : ld_acc_wr_gnt ? ld_acc_wr_data : vec_acc_wr_data),
      .rd_en({|acc_rd_gnt, mxu_acc_rd_en}),
      .rd_addr({acc_rd_gnt[0] ? vec_acc_rd_addr : st_acc_rd_addr, mxu_acc_rd_addr}),
      .rd_data(acc_q)
  );

  // ---- Units -----------------------------------------------------------------------------------
  logic [31:0] b_to_ub, b_to_acc, b_weights, b_from_ub, b_from_acc;
  logic        stall_load, stall_weight, stall_store, mxu_busy, mxu_stall_wfifo;
  logic                 wrow_valid, wrow_ready;
  logic [COLS*EW-1:0]   wrow_data;

  systole_dma_load #(.ROWS(ROWS), .COLS(COLS), .BF16(BF16), .UB_ROWS(UB_ROWS), .ACC_ROWS(ACC_ROWS),
                     .LOAD_CREDITS(LOAD_CREDITS)) u_load (
      .clk, .rst(urst),
      .cmd_valid(cmd_valid[UNIT_LOAD]), .cmd_ready(cmd_ready[UNIT_LOAD]),
      .cmd_insn(cmd_insn[UNIT_LOAD*256 +: 256]), .done(done[UNIT_LOAD]),
      .ub_wr_req(ld_ub_wr_req), .ub_wr_addr(ld_ub_wr_addr), .ub_wr_lanes(ld_ub_wr_lanes),
      .ub_wr_data(ld_ub_wr_data), .ub_wr_gnt(ub_wr_gnt[1]),
      .acc_wr_req(ld_acc_wr_req), .acc_wr_addr(ld_acc_wr_addr), .acc_wr_lanes(ld_acc_wr_lanes),
      .acc_wr_data(ld_acc_wr_data), .acc_wr_gnt(ld_acc_wr_gnt),
      .mem_req_valid(rq_valid[REQ_LOAD]), .mem_req_ready(rq_ready[REQ_LOAD]),
      .mem_req_addr(rq_addr[REQ_LOAD*48 +: 48]),
      .mem_rsp_valid(rsp_valid[REQ_LOAD]), .mem_rsp_rdata(rsp_rdata),
      .bytes_to_ub(b_to_ub), .bytes_to_acc(b_to_acc), .stall_memory(stall_load)
  );
  assign rq_write[REQ_LOAD] = 1'b0;
  assign rq_wdata[REQ_LOAD*256 +: 256] = '0;
  assign rq_wstrb[REQ_LOAD*32 +: 32] = '0;

  systole_dma_weights #(.ROWS(ROWS), .COLS(COLS), .BF16(BF16)) u_weights (
      .clk, .rst(urst),
      .cmd_valid(cmd_valid[UNIT_WEIGHT]), .cmd_ready(cmd_ready[UNIT_WEIGHT]),
      .cmd_insn(cmd_insn[UNIT_WEIGHT*256 +: 256]), .done(done[UNIT_WEIGHT]),
      .wrow_valid, .wrow_ready, .wrow_data,
      .mem_req_valid(rq_valid[REQ_WEIGHT]), .mem_req_ready(rq_ready[REQ_WEIGHT]),
      .mem_req_addr(rq_addr[REQ_WEIGHT*48 +: 48]),
      .mem_rsp_valid(rsp_valid[REQ_WEIGHT]), .mem_rsp_rdata(rsp_rdata),
      .bytes_weights(b_weights), .stall_memory(stall_weight)
  );
  assign rq_write[REQ_WEIGHT] = 1'b0;
  assign rq_wdata[REQ_WEIGHT*256 +: 256] = '0;
  assign rq_wstrb[REQ_WEIGHT*32 +: 32] = '0;

  systole_mxu #(.ROWS(ROWS), .COLS(COLS), .BF16(BF16), .UB_ROWS(UB_ROWS), .ACC_ROWS(ACC_ROWS),
                .WFIFO_TILES(WFIFO_TILES)) u_mxu (
      .clk, .rst(urst), .launch_start,
      .cmd_valid(cmd_valid[UNIT_MXU]), .cmd_ready(cmd_ready[UNIT_MXU]),
      .cmd_insn(cmd_insn[UNIT_MXU*256 +: 256]), .done(done[UNIT_MXU]),
      .wrow_valid, .wrow_ready, .wrow_data,
      .ub_rd_en(mxu_ub_rd_en), .ub_rd_addr(mxu_ub_rd_addr), .ub_rd_data(ub_q[0 +: UB_BITS]),
      .acc_rd_en(mxu_acc_rd_en), .acc_rd_addr(mxu_acc_rd_addr), .acc_rd_data(acc_q[0 +: ACC_BITS]),
      .acc_wr_en(mxu_acc_wr_en), .acc_wr_addr(mxu_acc_wr_addr), .acc_wr_data(mxu_acc_wr_data),
      .busy_event(mxu_busy), .stall_wfifo(mxu_stall_wfifo)
  );

  systole_vector_unit #(.ROWS(ROWS), .COLS(COLS), .BF16(BF16), .UB_ROWS(UB_ROWS), .ACC_ROWS(ACC_ROWS)) u_vector (
      .clk, .rst(urst), .launch_start,
      .cmd_valid(cmd_valid[UNIT_VECTOR]), .cmd_ready(cmd_ready[UNIT_VECTOR]),
      .cmd_insn(cmd_insn[UNIT_VECTOR*256 +: 256]), .done(done[UNIT_VECTOR]),
      .ub_rd_req(vec_ub_rd_req), .ub_rd_addr(vec_ub_rd_addr), .ub_rd_gnt(ub_rd_gnt[0]),
      .ub_rd_data(ub_q[UB_BITS +: UB_BITS]),
      .ub_wr_req(vec_ub_wr_req), .ub_wr_addr(vec_ub_wr_addr), .ub_wr_data(vec_ub_wr_data),
      .ub_wr_gnt(ub_wr_gnt[0]),
      .acc_rd_req(vec_acc_rd_req), .acc_rd_addr(vec_acc_rd_addr), .acc_rd_gnt(acc_rd_gnt[0]),
      .acc_rd_data(acc_q[ACC_BITS +: ACC_BITS]),
      .acc_wr_req(vec_acc_wr_req), .acc_wr_addr(vec_acc_wr_addr), .acc_wr_data(vec_acc_wr_data),
      .acc_wr_gnt(vec_acc_wr_gnt)
  );

  systole_dma_store #(.ROWS(ROWS), .COLS(COLS), .BF16(BF16), .UB_ROWS(UB_ROWS), .ACC_ROWS(ACC_ROWS)) u_store (
      .clk, .rst(urst),
      .cmd_valid(cmd_valid[UNIT_STORE]), .cmd_ready(cmd_ready[UNIT_STORE]),
      .cmd_insn(cmd_insn[UNIT_STORE*256 +: 256]), .done(done[UNIT_STORE]),
      .ub_rd_req(st_ub_rd_req), .ub_rd_addr(st_ub_rd_addr), .ub_rd_gnt(ub_rd_gnt[1]),
      .ub_rd_data(ub_q[UB_BITS +: UB_BITS]),
      .acc_rd_req(st_acc_rd_req), .acc_rd_addr(st_acc_rd_addr), .acc_rd_gnt(acc_rd_gnt[1]),
      .acc_rd_data(acc_q[ACC_BITS +: ACC_BITS]),
      .mem_req_valid(rq_valid[REQ_STORE]), .mem_req_ready(rq_ready[REQ_STORE]),
      .mem_req_addr(rq_addr[REQ_STORE*48 +: 48]), .mem_req_wdata(rq_wdata[REQ_STORE*256 +: 256]),
      .mem_req_wstrb(rq_wstrb[REQ_STORE*32 +: 32]), .mem_rsp_valid(rsp_valid[REQ_STORE]),
      .bytes_from_ub(b_from_ub), .bytes_from_acc(b_from_acc), .stall_memory(stall_store)
  );
  assign rq_write[REQ_STORE] = 1'b1;

  // ---- Host access and the device-memory arbiter ---------------------------------------------
  assign rq_valid[REQ_HOST] = host_req_valid;
  assign host_req_ready = rq_ready[REQ_HOST];
  assign rq_write[REQ_HOST] = host_req_write;
  assign rq_addr[REQ_HOST*48 +: 48] = host_req_addr;
  assign rq_wdata[REQ_HOST*256 +: 256] = host_req_wdata;
  assign rq_wstrb[REQ_HOST*32 +: 32] = host_req_wstrb;
  assign host_rsp_valid = rsp_valid[REQ_HOST];
  assign host_rsp_rdata = rsp_rdata;

  systole_mem_arbiter #(.N(5), .OUTSTANDING(32)) u_mem_arb (
      .clk, .rst,
      .req_valid(rq_valid), .req_ready(rq_ready), .req_write(rq_write), .req_addr(rq_addr),
      .req_wdata(rq_wdata), .req_wstrb(rq_wstrb), .rsp_valid, .rsp_rdata,
      .mem_req_valid, .mem_req_ready, .mem_req_write, .mem_req_addr, .mem_req_wdata,
      .mem_req_wstrb, .mem_rsp_valid, .mem_rsp_rdata
  );

  // ---- Performance lanes from the units ------------------------------------------------------
  logic [31:0] host_bytes;
  always_comb begin
    host_bytes = '0;
    if (host_req_valid && host_req_ready) begin
      for (int b = 0; b < 32; b++) host_bytes = host_bytes + 32'(host_req_wstrb[b]);
    end
    trace_accept = cmd_valid & cmd_ready;
    trace_done = done;
    trace_stall = '0;
    trace_stall[UNIT_LOAD] = stall_load;
    trace_stall[UNIT_WEIGHT] = stall_weight;
    trace_stall[UNIT_MXU] = mxu_stall_wfifo;
    trace_stall[UNIT_STORE] = stall_store;
    perf_unit_inc = '0;
    perf_unit_inc[PERF_LANE_MXU_BUSY*32 +: 32]     = 32'(mxu_busy);
    perf_unit_inc[PERF_LANE_STALL_WFIFO*32 +: 32]  = 32'(mxu_stall_wfifo);
    perf_unit_inc[PERF_LANE_STALL_MEMORY*32 +: 32] = 32'(stall_load) + 32'(stall_weight) + 32'(stall_store);
    perf_unit_inc[PERF_LANE_BYTES_DRAM_TO_UB*32 +: 32]   = b_to_ub;
    perf_unit_inc[PERF_LANE_BYTES_DRAM_TO_ACC*32 +: 32]  = b_to_acc;
    perf_unit_inc[PERF_LANE_BYTES_WEIGHTS*32 +: 32]      = b_weights;
    perf_unit_inc[PERF_LANE_BYTES_UB_TO_DRAM*32 +: 32]   = b_from_ub;
    perf_unit_inc[PERF_LANE_BYTES_ACC_TO_DRAM*32 +: 32]  = b_from_acc;
    perf_unit_inc[PERF_LANE_BYTES_HOST*32 +: 32]         = host_bytes;
  end
endmodule
