// systole_regs — the host register block of arch/regs/regmap.hpp (rtl/generated/systole_regs.svh),
// with the behaviour of sim/model/registers.cpp.
//
// Host bus: always ready; a read's data is on reg_rdata with reg_rvalid the cycle after the
// request; unknown offsets (and write-only registers) read 0; writes to read-only registers are
// ignored.
//
// * Identity registers from the parameters (regs::IdentityRegisters).
// * CMD_PC/CMD_COUNT, DOORBELL: a command queue of CMDQ_DEPTH launches; a doorbell with the
//   queue full raises CMDQ_OVERFLOW at CMD_PC. The oldest launch is offered to the sequencer
//   (launch_valid) while ERROR_CODE is 0.
// * The first error sticks (ERROR_CODE, FAULT_PC) until CTRL.CLEAR_ERROR or SOFT_RESET; every
//   error raises IRQ_STATUS.ERROR. A launch that reaches HALT increments LAUNCHES_DONE and
//   raises IRQ_STATUS.DONE; INTERRUPT sets IRQ_CODE and IRQ_STATUS.USER.
// * CTRL acts in bit order: SOFT_RESET (queue, error state, IRQ_STATUS, IRQ_CODE,
//   LAUNCHES_DONE; pulses soft_reset to the sequencer and the units), ABORT (a running launch
//   stops with ABORTED, reported by the sequencer; with none running, the oldest queued one is
//   reported ABORTED at its pc; queued launches are dropped), CLEAR_ERROR, CLEAR_COUNTERS.
// * IRQ_ENABLE (3 bits), IRQ_STATUS write-1-to-clear (an event in the same cycle wins),
//   irq = |(IRQ_STATUS & IRQ_ENABLE).
// * 14 64-bit PERF counters, each adding its 32-bit lane of perf_inc every cycle (lanes in
//   regs::Counters() order). Reading _LO returns the low half and latches the high half,
//   which _HI returns (the last latched value).
// * STATUS.BUSY: a launch executes, or one waits in the queue while no error blocks it (so a
//   poller sees BUSY right after its doorbell). STATUS.CMDQ_LEVEL: launches in the queue.
//
// Sequencer side (see systole_sequencer.sv): launch_valid/launch_ready/launch_pc/launch_count,
// launch_abort and soft_reset (combinational pulses in the cycle of the CTRL write), seq_busy,
// launch_end/end_error/end_fault_pc, irq_user/irq_code.
module systole_regs #(
    parameter integer ROWS = 4,
    parameter integer COLS = 4,
    parameter integer BF16 = 0,
    parameter integer UB_ROWS = 1024,
    parameter integer ACC_ROWS = 64,
    parameter integer WFIFO_TILES = 2,
    parameter integer CMDQ_DEPTH = 2,
    parameter integer TOKEN_CAP = 255,
    parameter integer MEM_BYTES_LO = 1048576,
    parameter integer MEM_BYTES_HI = 0,
    parameter integer MEM_CHANNELS = 2,
    parameter integer INTERLEAVE_LOG2 = 8,
    parameter integer CLOCK_MHZ = 48,
    parameter integer NAME0 = 0,
    parameter integer NAME1 = 0,
    parameter integer NAME2 = 0,
    parameter integer NAME3 = 0
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
    // Performance events, one 32-bit lane per counter in regs::Counters() order
    input  logic [14*32-1:0]  perf_inc,
    // Sequencer
    output logic              soft_reset,
    output logic              launch_valid,
    input  logic              launch_ready,
    output logic [63:0]       launch_pc,
    output logic [31:0]       launch_count,
    output logic              launch_abort,
    input  logic              seq_busy,
    input  logic              launch_end,
    input  logic [7:0]        end_error,
    input  logic [63:0]       end_fault_pc,
    input  logic              irq_user,
    input  logic [15:0]       irq_code_in
);
  `include "systole_isa.svh"
  `include "systole_regs.svh"

  if (CMDQ_DEPTH < 1 || CMDQ_DEPTH > 255) begin : g_cmdq_check
    systole_param_error_CMDQ_DEPTH_must_be_1_to_255 u_error ();
  end

  localparam integer NPERF = 14;
  localparam integer QAW = (CMDQ_DEPTH > 1) ? $clog2(CMDQ_DEPTH) : 1;
  localparam integer QCW = $clog2(CMDQ_DEPTH + 1);
  localparam logic [2:0] IRQ_DONE = 3'b001, IRQ_ERROR = 3'b010, IRQ_USER = 3'b100;


  // ---- State -------------------------------------------------------------------------------
  logic [63:0]    cmd_pc;
  logic [31:0]    cmd_count;
  logic [63:0]    q_pc [CMDQ_DEPTH];
  logic [31:0]    q_count [CMDQ_DEPTH];
  logic [QAW-1:0] q_rd, q_wr;
  logic [QCW-1:0] q_level;
  logic [7:0]     error_code;
  logic [63:0]    fault_pc;
  logic [31:0]    launches_done;
  logic [2:0]     irq_enable, irq_status;
  logic [31:0]    irq_code;
  logic [63:0]    perf [NPERF];
  logic [31:0]    perf_hi [NPERF];

  // ---- Host writes ---------------------------------------------------------------------------
  logic wr, rd, ctrl_wr, doorbell;
  logic do_soft_reset, do_abort, do_clear_error, do_clear_counters;
  assign wr = reg_valid && reg_write;
  assign rd = reg_valid && !reg_write;
  assign ctrl_wr = wr && reg_addr == REG_CTRL;
  assign doorbell = wr && reg_addr == REG_DOORBELL;
  assign do_soft_reset = ctrl_wr && reg_wdata[REG_CTRL_SOFT_RESET_LSB];
  assign do_abort = ctrl_wr && reg_wdata[REG_CTRL_ABORT_LSB];
  assign do_clear_error = ctrl_wr && reg_wdata[REG_CTRL_CLEAR_ERROR_LSB];
  assign do_clear_counters = ctrl_wr && reg_wdata[REG_CTRL_CLEAR_COUNTERS_LSB];

  assign soft_reset = do_soft_reset;
  // With a soft reset the sequencer is reset anyway; an abort reaches it only while it runs
  // and does not end in this very cycle.
  logic seq_running;
  assign seq_running = seq_busy && !launch_end;
  assign launch_abort = do_abort && !do_soft_reset;

  logic q_empty, q_full, q_pop, q_push, q_clear;
  assign q_empty = q_level == '0;
  assign q_full = q_level == QCW'(CMDQ_DEPTH);
  assign launch_valid = !q_empty && error_code == ERR_NONE && !do_abort && !do_soft_reset;
  assign launch_pc = q_pc[q_rd];
  assign launch_count = q_count[q_rd];
  assign q_pop = launch_valid && launch_ready;
  assign q_push = doorbell && !q_full;
  assign q_clear = do_soft_reset || do_abort;

  // Error, interrupt and launch bookkeeping, in the model's order within one cycle: the host's
  // write first, then the sequencer's event.
  logic [7:0]  error_next;
  logic [63:0] fault_pc_next;
  logic [2:0]  irq_status_next;
  always_comb begin
    error_next = error_code;
    fault_pc_next = fault_pc;
    irq_status_next = irq_status;
    if (wr && reg_addr == REG_IRQ_STATUS) irq_status_next = irq_status & ~reg_wdata[2:0];
    if (doorbell && q_full) begin
      if (error_next == ERR_NONE) begin
        error_next = ERR_CMDQ_OVERFLOW;
        fault_pc_next = cmd_pc;
      end
      irq_status_next = irq_status_next | IRQ_ERROR;
    end
    if (do_abort && !seq_running && !q_empty) begin
      if (error_next == ERR_NONE) begin
        error_next = ERR_ABORTED;
        fault_pc_next = q_pc[q_rd];
      end
      irq_status_next = irq_status_next | IRQ_ERROR;
    end
    if (do_clear_error) begin
      error_next = ERR_NONE;
      fault_pc_next = '0;
    end
    if (launch_end) begin
      if (end_error != ERR_NONE) begin
        if (error_next == ERR_NONE) begin
          error_next = end_error;
          fault_pc_next = end_fault_pc;
        end
        irq_status_next = irq_status_next | IRQ_ERROR;
      end else begin
        irq_status_next = irq_status_next | IRQ_DONE;
      end
    end
    if (irq_user) irq_status_next = irq_status_next | IRQ_USER;
  end

  always_ff @(posedge clk) begin
    if (q_push) begin
      q_pc[q_wr] <= cmd_pc;
      q_count[q_wr] <= cmd_count;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      cmd_pc <= '0;
      cmd_count <= '0;
      irq_enable <= '0;
    end else if (wr) begin
      case (reg_addr)
        REG_CMD_PC_LO: cmd_pc[31:0] <= reg_wdata;
        REG_CMD_PC_HI: cmd_pc[63:32] <= reg_wdata;
        REG_CMD_COUNT: cmd_count <= reg_wdata;
        REG_IRQ_ENABLE: irq_enable <= reg_wdata[2:0];
        default: ;
      endcase
    end
  end

  always_ff @(posedge clk) begin
    if (rst || do_soft_reset) begin
      q_rd <= '0;
      q_wr <= '0;
      q_level <= '0;
      error_code <= ERR_NONE;
      fault_pc <= '0;
      launches_done <= '0;
      irq_status <= '0;
      irq_code <= '0;
    end else begin
      if (q_clear) begin
        q_rd <= '0;
        q_wr <= '0;
        q_level <= '0;
      end else begin
        if (q_push) q_wr <= (q_wr == QAW'(CMDQ_DEPTH - 1)) ? '0 : q_wr + 1'b1;
        if (q_pop) q_rd <= (q_rd == QAW'(CMDQ_DEPTH - 1)) ? '0 : q_rd + 1'b1;
        q_level <= q_level + QCW'(q_push) - QCW'(q_pop);
      end
      error_code <= error_next;
      fault_pc <= fault_pc_next;
      irq_status <= irq_status_next;
      if (launch_end && end_error == ERR_NONE) launches_done <= launches_done + 32'd1;
      if (irq_user) irq_code <= 32'(irq_code_in);
    end
  end

  assign irq = (irq_status & irq_enable) != 3'd0;

  // ---- Performance counters --------------------------------------------------------------
  localparam logic [11:0] PERF_FIRST = REG_PERF_CYCLES_LO;
  localparam logic [11:0] PERF_END = REG_PERF_CYCLES_LO + 12'(8 * NPERF);
  logic        perf_sel;
  logic [3:0]  perf_idx;
  logic [11:0] perf_off;
  assign perf_off = reg_addr - PERF_FIRST;
  assign perf_sel = reg_addr >= PERF_FIRST && reg_addr < PERF_END && reg_addr[1:0] == 2'd0;
  assign perf_idx = perf_off[6:3];
  // verilator lint_off UNUSEDSIGNAL
  logic unused_perf_off;
  assign unused_perf_off = ^{perf_off[11:7], perf_off[1:0]};
  // verilator lint_on UNUSEDSIGNAL

  for (genvar i = 0; i < NPERF; i++) begin : g_perf
    always_ff @(posedge clk) begin
      if (rst || do_clear_counters) begin
        perf[i] <= '0;
        perf_hi[i] <= '0;
      end else begin
        perf[i] <= perf[i] + 64'(perf_inc[i * 32 +: 32]);
        if (rd && perf_sel && perf_idx == 4'(i) && !perf_off[2]) perf_hi[i] <= perf[i][63:32];
      end
    end
  end

  // Identity values.
  logic [31:0] id_value;
  always_comb begin
    case (reg_addr)
      REG_ID_MAGIC: id_value = REG_MAGIC_VALUE;
      REG_ID_VERSION: id_value = (32'(ISA_VERSION_MAJOR) << REG_ID_VERSION_MAJOR_LSB) |
                             (32'(ISA_VERSION_MINOR) << REG_ID_VERSION_MINOR_LSB);
      REG_CFG_ARRAY: id_value = (32'(ROWS[15:0]) << REG_CFG_ARRAY_ROWS_LSB) |
                            (32'(COLS[15:0]) << REG_CFG_ARRAY_COLS_LSB);
      REG_CFG_DTYPE: id_value = 32'(BF16 != 0 ? 1 : 0);
      REG_CFG_UB_ROWS: id_value = 32'(UB_ROWS);
      REG_CFG_ACC_ROWS: id_value = 32'(ACC_ROWS);
      REG_CFG_QUEUES: id_value = (32'(WFIFO_TILES[7:0]) << REG_CFG_QUEUES_WFIFO_TILES_LSB) |
                             (32'(CMDQ_DEPTH[7:0]) << REG_CFG_QUEUES_CMDQ_DEPTH_LSB) |
                             (32'(TOKEN_CAP[7:0]) << REG_CFG_QUEUES_TOKEN_CAPACITY_LSB);
      REG_CFG_MEM_SIZE_LO: id_value = 32'(MEM_BYTES_LO);
      REG_CFG_MEM_SIZE_HI: id_value = 32'(MEM_BYTES_HI);
      REG_CFG_MEM: id_value = (32'(MEM_CHANNELS[7:0]) << REG_CFG_MEM_CHANNELS_LSB) |
                          (32'(INTERLEAVE_LOG2[7:0]) << REG_CFG_MEM_INTERLEAVE_LOG2_LSB);
      REG_CFG_CLOCK_MHZ: id_value = 32'(CLOCK_MHZ);
      REG_CFG_NAME0: id_value = 32'(NAME0);
      REG_CFG_NAME1: id_value = 32'(NAME1);
      REG_CFG_NAME2: id_value = 32'(NAME2);
      REG_CFG_NAME3: id_value = 32'(NAME3);
      default: id_value = 32'd0;
    endcase
  end

  // ---- Host reads ----------------------------------------------------------------------------
  logic [31:0] rdata_c;
  always_comb begin
    rdata_c = id_value;
    if (perf_sel) begin
      rdata_c = perf_off[2] ? perf_hi[perf_idx] : perf[perf_idx][31:0];
    end else begin
      case (reg_addr)
        REG_STATUS:
          rdata_c = (32'(seq_busy || (!q_empty && error_code == ERR_NONE)) << REG_STATUS_BUSY_LSB) |
                    (32'(error_code != ERR_NONE) << REG_STATUS_ERROR_LSB) |
                    (32'(q_level) << REG_STATUS_CMDQ_LEVEL_LSB);
        REG_ERROR_CODE: rdata_c = 32'(error_code);
        REG_FAULT_PC_LO: rdata_c = fault_pc[31:0];
        REG_FAULT_PC_HI: rdata_c = fault_pc[63:32];
        REG_CMD_PC_LO: rdata_c = cmd_pc[31:0];
        REG_CMD_PC_HI: rdata_c = cmd_pc[63:32];
        REG_CMD_COUNT: rdata_c = cmd_count;
        REG_LAUNCHES_DONE: rdata_c = launches_done;
        REG_IRQ_ENABLE: rdata_c = 32'(irq_enable);
        REG_IRQ_STATUS: rdata_c = 32'(irq_status);
        REG_IRQ_CODE: rdata_c = irq_code;
        default: ;
      endcase
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      reg_rvalid <= 1'b0;
      reg_rdata <= '0;
    end else begin
      reg_rvalid <= rd;
      reg_rdata <= rd ? rdata_c : 32'd0;
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      assert (!(q_pop && q_empty)) else $error("regs: launch from an empty queue");
    end
  end
`endif
endmodule
