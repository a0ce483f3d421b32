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
//   which _HI returns (the last latched value). Each counter's upper 28 bits and the latched
//   halves live in small memories (LUT RAM on FPGAs: docs/FPGA.md, Tang Nano 20K), see
//   "Performance counters" below.
// * STATUS.BUSY: a launch executes, or one waits in the queue while no error blocks it (so a
//   poller sees BUSY right after its doorbell). STATUS.CMDQ_LEVEL: launches in the queue.
//
// Sequencer side (see systole_sequencer.sv): launch_valid/launch_ready/launch_pc/launch_count,
// launch_abort and soft_reset (combinational pulses in the cycle of the CTRL write), seq_busy,
// launch_end/end_error/end_fault_pc, irq_user/irq_code.
module systole_regs #(
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

  // ---- Parameters --------------------------------------------------------------------------
  // Every parameter is the configuration's (rtl/generated/params/*.vc), passed down from the
  // top; the defaults are outside the legal ranges, so a parent that forgets one fails here.
  if (CMDQ_DEPTH < 1 || CMDQ_DEPTH > 255) begin : g_cmdq_check
    systole_param_error_CMDQ_DEPTH_must_be_1_to_255 u_error ();
  end
  if (ROWS < 1 || ROWS > 65535 || COLS < 1 || COLS > 65535) begin : g_array_check
    systole_param_error_ROWS_and_COLS_must_be_1_to_65535 u_error ();
  end
  if (BF16 != 0 && BF16 != 1) begin : g_bf16_check
    systole_param_error_BF16_must_be_0_or_1 u_error ();
  end
  if (UB_ROWS < 1 || ACC_ROWS < 1) begin : g_buf_check
    systole_param_error_UB_ROWS_and_ACC_ROWS_must_be_at_least_1 u_error ();
  end
  if (WFIFO_TILES < 1 || WFIFO_TILES > 255 || TOKEN_CAP < 1 || TOKEN_CAP > 255) begin : g_q_check
    systole_param_error_WFIFO_TILES_and_TOKEN_CAP_must_be_1_to_255 u_error ();
  end
  if (LOAD_CREDITS < 2 || LOAD_CREDITS > 128) begin : g_credits_check
    systole_param_error_LOAD_CREDITS_must_be_2_to_128 u_error ();
  end
  if (MEM_BYTES_HI < 0 || MEM_BYTES_HI > 65535) begin : g_mem_hi_check
    systole_param_error_MEM_BYTES_HI_must_be_0_to_65535 u_error ();
  end
  if (MEM_CHANNELS < 1 || MEM_CHANNELS > 255) begin : g_channels_check
    systole_param_error_MEM_CHANNELS_must_be_1_to_255 u_error ();
  end
  if (INTERLEAVE_LOG2 < 5 || INTERLEAVE_LOG2 > 20) begin : g_interleave_check
    systole_param_error_INTERLEAVE_LOG2_must_be_5_to_20 u_error ();
  end
  if (CLOCK_MHZ < 1) begin : g_clock_check
    systole_param_error_CLOCK_MHZ_must_be_at_least_1 u_error ();
  end
  // The name is 1 to 16 ASCII characters, NUL-padded: NAME0's first byte is not NUL.
  if ((NAME0 & 255) == 0 || (NAME0 & 32'h80808080) != 0 || (NAME1 & 32'h80808080) != 0 ||
      (NAME2 & 32'h80808080) != 0 || (NAME3 & 32'h80808080) != 0) begin : g_name_check
    systole_param_error_NAME0_to_NAME3_must_hold_an_ASCII_name u_error ();
  end
  if (PERF_LANES != 14) begin : g_lanes_check
    systole_param_error_perf_inc_has_14_lanes_but_PERF_LANES_differs u_error ();
  end
  // The counters' exactness argument (below) needs at most 16 visit slots.
  if (PERF_LANE_BITS > 4 || PERF_LANES > 2 ** PERF_LANE_BITS) begin : g_lane_bits_check
    systole_param_error_PERF_LANE_BITS_must_be_at_most_4_and_index_every_lane u_error ();
  end

  localparam integer NPERF = PERF_LANES;
  localparam integer QAW = (CMDQ_DEPTH > 1) ? $clog2(CMDQ_DEPTH) : 1;
  localparam integer QCW = $clog2(CMDQ_DEPTH + 1);
  localparam logic [2:0] IRQ_DONE = 3'b001, IRQ_ERROR = 3'b010, IRQ_USER = 3'b100;


  // ---- State -------------------------------------------------------------------------------
  logic [63:0]        cmd_pc_q, cmd_pc_d;
  logic [31:0]        cmd_count_q, cmd_count_d;
  logic [QAW-1:0]     q_rd_q, q_rd_d, q_wr_q, q_wr_d;
  logic [QCW-1:0]     q_level_q, q_level_d;
  logic [7:0]         error_code_q, error_code_d;
  logic [63:0]        fault_pc_q, fault_pc_d;
  logic [31:0]        launches_done_q, launches_done_d;
  logic [2:0]         irq_enable_q, irq_enable_d, irq_status_q, irq_status_d;
  logic [31:0]        irq_code_q, irq_code_d;
  logic               rvalid_q, rvalid_d;
  logic [31:0]        rdata_q, rdata_d;
  logic [95:0]        q_head;                 // the oldest queued launch: {count, pc}

  assign reg_rvalid = rvalid_q;
  assign reg_rdata = rdata_q;

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
  assign q_empty = q_level_q == '0;
  assign q_full = q_level_q == QCW'(CMDQ_DEPTH);
  assign launch_valid = !q_empty && error_code_q == ERR_NONE && !do_abort && !do_soft_reset;
  assign launch_pc = q_head[63:0];
  assign launch_count = q_head[95:64];
  assign q_pop = launch_valid && launch_ready;
  assign q_push = doorbell && !q_full;
  assign q_clear = do_soft_reset || do_abort;

  // RW registers.
  always_comb begin
    cmd_pc_d = cmd_pc_q;
    cmd_count_d = cmd_count_q;
    irq_enable_d = irq_enable_q;
    if (wr) begin
      case (reg_addr)
        REG_CMD_PC_LO: cmd_pc_d[31:0] = reg_wdata;
        REG_CMD_PC_HI: cmd_pc_d[63:32] = reg_wdata;
        REG_CMD_COUNT: cmd_count_d = reg_wdata;
        REG_IRQ_ENABLE: irq_enable_d = reg_wdata[2:0];
        default: ;
      endcase
    end
  end

  // Launch queue, error, interrupt and launch bookkeeping, in the model's order within one
  // cycle: the host's write first, then the sequencer's event.
  always_comb begin
    q_rd_d = q_rd_q;
    q_wr_d = q_wr_q;
    q_level_d = q_level_q;
    error_code_d = error_code_q;
    fault_pc_d = fault_pc_q;
    irq_status_d = irq_status_q;
    launches_done_d = launches_done_q;
    irq_code_d = irq_code_q;
    if (q_clear) begin
      q_rd_d = '0;
      q_wr_d = '0;
      q_level_d = '0;
    end else begin
      if (q_push) q_wr_d = (q_wr_q == QAW'(CMDQ_DEPTH - 1)) ? '0 : q_wr_q + 1'b1;
      if (q_pop) q_rd_d = (q_rd_q == QAW'(CMDQ_DEPTH - 1)) ? '0 : q_rd_q + 1'b1;
      q_level_d = q_level_q + QCW'(q_push) - QCW'(q_pop);
    end
    if (wr && reg_addr == REG_IRQ_STATUS) irq_status_d = irq_status_q & ~reg_wdata[2:0];
    if (doorbell && q_full) begin
      if (error_code_d == ERR_NONE) begin
        error_code_d = ERR_CMDQ_OVERFLOW;
        fault_pc_d = cmd_pc_q;
      end
      irq_status_d = irq_status_d | IRQ_ERROR;
    end
    if (do_abort && !seq_running && !q_empty) begin
      if (error_code_d == ERR_NONE) begin
        error_code_d = ERR_ABORTED;
        fault_pc_d = q_head[63:0];
      end
      irq_status_d = irq_status_d | IRQ_ERROR;
    end
    if (do_clear_error) begin
      error_code_d = ERR_NONE;
      fault_pc_d = '0;
    end
    if (launch_end) begin
      if (end_error != ERR_NONE) begin
        if (error_code_d == ERR_NONE) begin
          error_code_d = end_error;
          fault_pc_d = end_fault_pc;
        end
        irq_status_d = irq_status_d | IRQ_ERROR;
      end else begin
        irq_status_d = irq_status_d | IRQ_DONE;
        launches_done_d = launches_done_q + 32'd1;
      end
    end
    if (irq_user) begin
      irq_status_d = irq_status_d | IRQ_USER;
      irq_code_d = 32'(irq_code_in);
    end
  end

  assign irq = (irq_status_q & irq_enable_q) != 3'd0;

  // ---- Performance counters --------------------------------------------------------------
  // Which offsets are counter halves comes from the register map (reg_perf_half).
  logic [PERF_LANE_BITS+1:0] perf_half;
  logic                      perf_sel, perf_hi_sel;
  logic [PERF_LANE_BITS-1:0] perf_idx;
  assign perf_half = reg_perf_half(reg_addr);
  assign perf_sel = perf_half[PERF_LANE_BITS + 1];
  assign perf_hi_sel = perf_half[PERF_LANE_BITS];
  assign perf_idx = perf_half[PERF_LANE_BITS-1:0];

  // Counter i is {hi_i + pend_i, lo_i}. Its low PLO_W = 36 bits are flip-flops with their own
  // adder. Its high PHI_W = 28 bits, hi_i, are an entry of a small memory that one shared
  // incrementer brings up to date: it visits one slot a cycle (slot_q, all NSLOT = 16 in turn)
  // and adds pend_i, a carry out of lo_i that no visit has added yet. An increment is below
  // 2^32, so the increments of the 16 cycles between two visits add less than 2^36: lo_i wraps
  // at most once between visits and one pending bit is exact (asserted below). An entry reads
  // 0 until a visit writes it after reset or CLEAR_COUNTERS (live_valid_q). The memory has two
  // copies for its two readers, the visit (slot_q) and the host's _LO read (perf_idx). On the
  // Tang Nano 20K this keeps 14 x 28 bits of adders and their flip-flops, and the 28-bit read
  // mux of the latch, out of the LUTs (docs/FPGA.md).
  localparam integer NSLOT = 2 ** PERF_LANE_BITS;
  localparam integer PLO_W = 32 + PERF_LANE_BITS;
  localparam integer PHI_W = 64 - PLO_W;

  logic [NPERF*PLO_W-1:0]    lo_q, lo_d;        // [i*PLO_W +: PLO_W]: counter i's low bits
  logic [NSLOT-1:0]          carry;             // lo_i wraps in this cycle
  logic [NSLOT-1:0]          pend_q, pend_d;    // a wrap of lo_i that hi_i does not hold yet
  logic [NSLOT-1:0]          live_valid_q;      // hi_i written since CLEAR_COUNTERS
  logic [PERF_LANE_BITS-1:0] slot_q;            // the slot the incrementer visits
  logic [PHI_W-1:0]          live_a [NSLOT];    // hi_i, read by the visit
  logic [PHI_W-1:0]          live_b [NSLOT];    // the same, read for the host's latch
  logic [PHI_W-1:0]          visit_next;
  logic                      visit_wr;

  always_comb begin
    logic [PLO_W:0] sum;
    carry = '0;
    lo_d = lo_q;
    for (int i = 0; i < NPERF; i++) begin
      sum = {1'b0, lo_q[i * PLO_W +: PLO_W]} + (PLO_W + 1)'(perf_inc[i * 32 +: 32]);
      lo_d[i * PLO_W +: PLO_W] = sum[PLO_W-1:0];
      carry[i] = sum[PLO_W];
    end
    pend_d = pend_q | carry;
    pend_d[slot_q] = carry[slot_q];  // the visit adds pend_q's bit now
  end

  // The visit writes only a pending carry: hi_i + 1 (an unwritten entry is 0).
  assign visit_wr = pend_q[slot_q];
  assign visit_next = (live_valid_q[slot_q] ? live_a[slot_q] : '0) + PHI_W'(1);
  always_ff @(posedge clk) begin
    if (visit_wr) begin
      live_a[slot_q] <= visit_next;
      live_b[slot_q] <= visit_next;
    end
  end

  // The latched high halves: reading counter i's _LO writes entry i of latch_mem with bits
  // 63:32 of its value before this cycle's edge (hi_i + pend_i and lo_i's top bits; the
  // memory's read is asynchronous, so a visit writing the entry at the same edge is not seen)
  // and sets its valid bit; an entry whose bit is clear reads 0 (CLEAR_COUNTERS, reset). A
  // latch and a _HI read never meet in one cycle (one host request per cycle).
  logic                      hi_latch;
  logic [NSLOT-1:0]          latch_valid_q;
  logic [31:0]               latch_mem [NSLOT];
  logic [PLO_W-1:0]          idx_lo;
  logic [PHI_W-1:0]          idx_hi;
  logic [31:0]               hi_rdata;
  assign hi_latch = rd && perf_sel && !perf_hi_sel;
  assign idx_lo = perf_sel ? lo_q[perf_idx * PLO_W +: PLO_W] : '0;  // evaluated only for a counter read (simulation speed)
  assign idx_hi = (live_valid_q[perf_idx] ? live_b[perf_idx] : '0) + PHI_W'(pend_q[perf_idx]);
  always_ff @(posedge clk) begin
    if (hi_latch) latch_mem[perf_idx] <= {idx_hi, idx_lo[PLO_W-1:32]};
  end
  assign hi_rdata = latch_valid_q[perf_idx] ? latch_mem[perf_idx] : 32'd0;

  // ---- Host reads ----------------------------------------------------------------------------
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
                             (32'(TOKEN_CAP[7:0]) << REG_CFG_QUEUES_TOKEN_CAPACITY_LSB) |
                             (32'(LOAD_CREDITS[7:0]) << REG_CFG_QUEUES_LOAD_CREDITS_LSB);
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

  // Offsets that read as zero (unmapped, write-only) come from the register map
  // (reg_reads_zero); a counter half from reg_perf_half; every other readable offset is here.
  always_comb begin
    logic [31:0] value;
    value = id_value;
    if (perf_sel) begin
      value = perf_hi_sel ? hi_rdata : idx_lo[31:0];
    end else begin
      case (reg_addr)
        REG_STATUS:
          value = (32'(seq_busy || (!q_empty && error_code_q == ERR_NONE)) << REG_STATUS_BUSY_LSB) |
                  (32'(error_code_q != ERR_NONE) << REG_STATUS_ERROR_LSB) |
                  (32'(q_level_q) << REG_STATUS_CMDQ_LEVEL_LSB);
        REG_ERROR_CODE: value = 32'(error_code_q);
        REG_FAULT_PC_LO: value = fault_pc_q[31:0];
        REG_FAULT_PC_HI: value = fault_pc_q[63:32];
        REG_CMD_PC_LO: value = cmd_pc_q[31:0];
        REG_CMD_PC_HI: value = cmd_pc_q[63:32];
        REG_CMD_COUNT: value = cmd_count_q;
        REG_LAUNCHES_DONE: value = launches_done_q;
        REG_IRQ_ENABLE: value = 32'(irq_enable_q);
        REG_IRQ_STATUS: value = 32'(irq_status_q);
        REG_IRQ_CODE: value = irq_code_q;
        default: ;
      endcase
    end
    if (reg_reads_zero(reg_addr)) value = 32'd0;
    rvalid_d = rd;
    rdata_d = rd ? value : 32'd0;
  end

  // ---- Registers ---------------------------------------------------------------------------
  always_ff @(posedge clk) begin
    if (rst) begin
      cmd_pc_q <= '0;
      cmd_count_q <= '0;
      irq_enable_q <= '0;
      rvalid_q <= 1'b0;
      rdata_q <= '0;
    end else begin
      cmd_pc_q <= cmd_pc_d;
      cmd_count_q <= cmd_count_d;
      irq_enable_q <= irq_enable_d;
      rvalid_q <= rvalid_d;
      rdata_q <= rdata_d;
    end
  end

  // CTRL.SOFT_RESET clears the launch queue and the error and interrupt state.
  always_ff @(posedge clk) begin
    if (rst || do_soft_reset) begin
      q_rd_q <= '0;
      q_wr_q <= '0;
      q_level_q <= '0;
      error_code_q <= ERR_NONE;
      fault_pc_q <= '0;
      launches_done_q <= '0;
      irq_status_q <= '0;
      irq_code_q <= '0;
    end else begin
      q_rd_q <= q_rd_d;
      q_wr_q <= q_wr_d;
      q_level_q <= q_level_d;
      error_code_q <= error_code_d;
      fault_pc_q <= fault_pc_d;
      launches_done_q <= launches_done_d;
      irq_status_q <= irq_status_d;
      irq_code_q <= irq_code_d;
    end
  end

  // CTRL.CLEAR_COUNTERS zeroes the counters.
  always_ff @(posedge clk) begin
    if (rst || do_clear_counters) begin
      lo_q <= '0;
      pend_q <= '0;
      live_valid_q <= '0;
      latch_valid_q <= '0;
    end else begin
      lo_q <= lo_d;
      pend_q <= pend_d;
      if (visit_wr) live_valid_q[slot_q] <= 1'b1;
      if (hi_latch) latch_valid_q[perf_idx] <= 1'b1;
    end
  end

  // The incrementer's visits go round all slots, whatever else happens.
  always_ff @(posedge clk) begin
    if (rst) slot_q <= '0;
    else slot_q <= slot_q + PERF_LANE_BITS'(1);
  end

  // The launch queue's storage: written, never reset; LUT RAM where there is some. (Two
  // entries in flip-flops took fewer LUT4s on the Tang Nano 20K but more slices: a flip-flop
  // fed by a flip-flop still takes a LUT position there; docs/FPGA.md.)
  logic [95:0] q_mem [CMDQ_DEPTH];
  always_ff @(posedge clk) begin
    if (q_push) q_mem[q_wr_q] <= {cmd_count_q, cmd_pc_q};
  end
  assign q_head = q_mem[q_rd_q];

  // ---- Assertions --------------------------------------------------------------------------
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      assert (!(q_pop && q_empty)) else $error("regs: launch from an empty queue");
    end
    // Checked in the cycles a low part wraps, the only ones it can fail in (a loop run every
    // cycle would cost the simulation: rtl/README.md, "Logic that simulates well").
    if (!rst && !do_clear_counters && |carry) begin
      for (int i = 0; i < NPERF; i++) begin
        assert (!(pend_q[i] && carry[i] && slot_q != PERF_LANE_BITS'(i)))
        else $error("regs: counter %0d wrapped its low %0d bits twice between two visits", i, PLO_W);
      end
    end
  end
`endif
endmodule
