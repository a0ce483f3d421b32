// systole_control — the register block and the sequencer, wired together.
//
// What the integrator connects (systole_core):
//   host register bus and irq                      -> the host link
//   mem_*                                          -> one requester of memory/systole_mem_arbiter
//                                                     (instruction fetch, reads only)
//   launch_start, cmd_valid/cmd_ready/cmd_insn/done -> the five units, index = unit number
//                                                     (0 LOAD, 1 WEIGHT, 2 MXU, 3 VECTOR, 4 STORE),
//                                                     cmd_insn[u*256 +: 256]
//   unit_reset                                     -> OR it into every unit's rst: CTRL.SOFT_RESET
//   perf_unit_inc                                  <- the other blocks' performance lanes
//                                                     (regs::Counters() order, 32 bits each); the
//                                                     sequencer adds its own to lanes CYCLES,
//                                                     INSNS, MACS, STALL_TOKEN, STALL_DISPATCH
module systole_control #(
    parameter integer ROWS = 0,
    parameter integer COLS = 0,
    parameter integer BF16 = -1,
    parameter integer UB_ROWS = 0,
    parameter integer ACC_ROWS = 0,
    parameter integer WFIFO_TILES = 0,
    parameter integer CMDQ_DEPTH = 0,
    parameter integer TOKEN_CAP = 0,
    parameter integer LOAD_CREDITS = 0,
    parameter integer MEM_BYTES_LO = 0,
    parameter integer MEM_BYTES_HI = -1,
    parameter integer MEM_CHANNELS = 0,
    parameter integer INTERLEAVE_LOG2 = 0,
    parameter integer CLOCK_MHZ = 0,
    parameter integer NAME0 = 0,
    parameter integer NAME1 = -1,
    parameter integer NAME2 = -1,
    parameter integer NAME3 = -1
) (
    input  logic              clk,
    input  logic              rst,
    // Host register bus
    input  logic              reg_valid,
    input  logic              reg_write,
    input  logic [11:0]       reg_addr,
    input  logic [31:0]       reg_wdata,
    output logic              reg_rvalid,
    output logic [31:0]       reg_rdata,
    output logic              irq,
    // Instruction fetch
    output logic              mem_req_valid,
    input  logic              mem_req_ready,
    output logic              mem_req_write,
    output logic [47:0]       mem_req_addr,
    output logic [255:0]      mem_req_wdata,
    output logic [31:0]       mem_req_wstrb,
    input  logic              mem_rsp_valid,
    input  logic [255:0]      mem_rsp_rdata,
    // Units
    output logic              unit_reset,
    output logic              launch_start,
    output logic [4:0]        cmd_valid,
    input  logic [4:0]        cmd_ready,
    output logic [5*256-1:0]  cmd_insn,
    input  logic [4:0]        done,
    // Performance lanes of the other blocks
    input  logic [14*32-1:0]  perf_unit_inc
);
  `include "systole_regs.svh"

  if (PERF_LANES != 14) begin : g_lanes_check
    systole_param_error_perf_ports_are_14_lanes_but_PERF_LANES_differs u_error ();
  end

  logic        soft_reset, launch_valid, launch_ready, launch_abort, seq_busy;
  logic [63:0] launch_pc, end_fault_pc;
  logic [31:0] launch_count;
  logic        launch_end, irq_user;
  logic [7:0]  end_error;
  logic [15:0] irq_code;
  logic        perf_cycles, perf_stall_dispatch;
  logic [2:0]  perf_insns, perf_stall_token;
  logic [31:0] perf_macs;
  logic [14*32-1:0] perf_inc;

  assign unit_reset = soft_reset;

  always_comb begin
    perf_inc = perf_unit_inc;
    perf_inc[PERF_LANE_CYCLES * 32 +: 32] = perf_unit_inc[PERF_LANE_CYCLES * 32 +: 32] + 32'(perf_cycles);
    perf_inc[PERF_LANE_INSNS * 32 +: 32] = perf_unit_inc[PERF_LANE_INSNS * 32 +: 32] + 32'(perf_insns);
    perf_inc[PERF_LANE_MACS * 32 +: 32] = perf_unit_inc[PERF_LANE_MACS * 32 +: 32] + perf_macs;
    perf_inc[PERF_LANE_STALL_TOKEN * 32 +: 32] =
        perf_unit_inc[PERF_LANE_STALL_TOKEN * 32 +: 32] + 32'(perf_stall_token);
    perf_inc[PERF_LANE_STALL_DISPATCH * 32 +: 32] =
        perf_unit_inc[PERF_LANE_STALL_DISPATCH * 32 +: 32] + 32'(perf_stall_dispatch);
  end

  systole_regs #(
      .ROWS(ROWS), .COLS(COLS), .BF16(BF16), .UB_ROWS(UB_ROWS), .ACC_ROWS(ACC_ROWS),
      .WFIFO_TILES(WFIFO_TILES), .CMDQ_DEPTH(CMDQ_DEPTH), .TOKEN_CAP(TOKEN_CAP), .LOAD_CREDITS(LOAD_CREDITS),
      .MEM_BYTES_LO(MEM_BYTES_LO), .MEM_BYTES_HI(MEM_BYTES_HI), .MEM_CHANNELS(MEM_CHANNELS),
      .INTERLEAVE_LOG2(INTERLEAVE_LOG2), .CLOCK_MHZ(CLOCK_MHZ),
      .NAME0(NAME0), .NAME1(NAME1), .NAME2(NAME2), .NAME3(NAME3)
  ) u_regs (
      .clk, .rst, .reg_valid, .reg_write, .reg_addr, .reg_wdata, .reg_rvalid, .reg_rdata, .irq,
      .perf_inc, .soft_reset, .launch_valid, .launch_ready, .launch_pc, .launch_count,
      .launch_abort, .seq_busy, .launch_end, .end_error, .end_fault_pc, .irq_user,
      .irq_code_in(irq_code)
  );

  systole_sequencer #(
      .ROWS(ROWS), .COLS(COLS), .BF16(BF16), .UB_ROWS(UB_ROWS), .ACC_ROWS(ACC_ROWS),
      .WFIFO_TILES(WFIFO_TILES), .TOKEN_CAP(TOKEN_CAP),
      .MEM_BYTES_LO(MEM_BYTES_LO), .MEM_BYTES_HI(MEM_BYTES_HI)
  ) u_seq (
      .clk, .rst, .soft_reset, .launch_valid, .launch_ready, .launch_pc, .launch_count,
      .launch_abort, .busy(seq_busy), .launch_end, .end_error, .end_fault_pc, .irq_user,
      .irq_code, .mem_req_valid, .mem_req_ready, .mem_req_write, .mem_req_addr, .mem_req_wdata,
      .mem_req_wstrb, .mem_rsp_valid, .mem_rsp_rdata, .launch_start, .cmd_valid, .cmd_ready,
      .cmd_insn, .done, .perf_cycles, .perf_insns, .perf_macs, .perf_stall_token,
      .perf_stall_dispatch
  );
endmodule
