// systole_sequencer — fetch, decode, check, dispatch, dependency tokens and precise faults.
//
// One launch at a time (from systole_regs). This module is the dispatch state machine; the work
// is done by the blocks around it:
//
//   systole_seq_fetch       fetches the launch's instructions from device memory through the
//                           requester port (one 32-byte word each, up to FETCH_DEPTH requests
//                           or buffered words ahead)
//   systole_seq_check       the decode, operand, weight-FIFO and program-order token checks
//   systole_seq_unit_queue  one per unit (LOAD, WEIGHT, MXU, VECTOR, STORE): its command queue,
//                           the runtime tokens it waits for, its accepted instructions until
//                           their signals are sent
//
// Each instruction goes through the dispatch states
//
//   S_NEXT   the program-counter checks, in the golden model's order: CMD_PC not a multiple of
//            32 (MISALIGNED, at launch), index == CMD_COUNT (PROGRAM_OVERRUN), the fetch
//            outside device memory (DRAM_RANGE); then the fetched word is taken
//   S_DECODE  decoding (ILLEGAL_OPCODE, RESERVED_BITS, ILLEGAL_FIELD incl. token masks) and the
//            products the operand checks need
//   S_OPERANDS the operand checks against the configuration, in docs/ISA.md order per opcode
//   S_ISSUE  the weight-FIFO checks (WFIFO_UNDERFLOW, NO_WEIGHTS, WFIFO_OVERFLOW) and the
//            program-order token checks (TOKEN_UNDERFLOW, then TOKEN_OVERFLOW), against
//            counters that hold "earlier pushes minus earlier pops" and "earlier signals minus
//            earlier waits" exactly as sim/model/sequencer.cpp does; then the dispatch
//
// Unit instructions (LOAD, WEIGHT, MXU, VECTOR, STORE) are pushed into a per-unit queue of
// UNIT_QDEPTH entries (a full queue stalls dispatch: perf STALL_DISPATCH). A queue head first
// takes its wait tokens from the runtime token counters (one per ordered unit pair; waiting:
// perf STALL_TOKEN), then is offered to the unit (cmd_valid/cmd_insn, accepted with cmd_ready,
// rtl/README.md "Unit command interface"). When the unit pulses `done`, the instruction's
// signal tokens are sent; a signal whose counter is at TOKEN_CAP waits (the signals of one
// instruction are sent together, and a unit's signals in its program order). The unit may run
// ahead meanwhile: up to UNIT_INFLIGHT accepted instructions whose signals are not sent yet.
// SYNC waits until every unit queue is empty and every accepted instruction has sent its
// signals; INTERRUPT pulses irq_user with its code at dispatch and continues; HALT waits like
// SYNC and ends the launch with error 0.
//
// A fault stops dispatch; the faulting instruction and everything after it do nothing. When
// every dispatched instruction has completed, launch_end pulses with the error code and the
// faulting instruction's address. `launch_abort` (CTRL.ABORT) stops dispatch the same way and ends the
// launch with ABORTED at the address of the first undispatched instruction; it is ignored when
// idle or when the launch already stops (fault or HALT reached).
//
// Launch interface (systole_regs drives it):
//   launch_valid/launch_ready/launch_pc/launch_count  a launch handshake; launch_ready is high
//                        only when idle (and no fetch response of an earlier launch is due)
//   launch_abort         one-cycle pulse, CTRL.ABORT
//   soft_reset           one-cycle pulse, CTRL.SOFT_RESET: everything returns to reset except
//                        the count of fetch responses still due, which are then dropped
//   busy                 a launch is executing (from handshake until launch_end)
//   launch_end           one-cycle pulse after the launch ended (busy already low), with
//                        end_error (0 = HALT) and end_fault_pc (valid while launch_end is high)
//   irq_user, irq_code   one-cycle pulse per INTERRUPT, at its dispatch
//   launch_start         one-cycle pulse to the units after the handshake, before the first
//                        instruction is offered
//
// Performance events (registered, one cycle late): perf_cycles (1 while busy), perf_insns
// (instructions retired this cycle: a unit instruction when its signals are sent, SYNC,
// INTERRUPT and HALT when they execute), perf_macs (rows*k*COLS of a MATMUL at dispatch),
// perf_stall_token (queue heads waiting for a token), perf_stall_dispatch (dispatch waiting for
// a full unit queue).
//
// Programs that overwrite their own instructions ahead of the dispatch point are undefined
// (the fetch runs ahead and no STORE is ordered before a fetch).
//
// Parameters:
//   ROWS, COLS, BF16, UB_ROWS, ACC_ROWS, WFIFO_TILES, TOKEN_CAP, MEM_BYTES_LO/HI
//                  configuration parameters (rtl/README.md), set by the parent; the defaults
//                  fail the elaboration checks of the blocks that use them
//   UNIT_QDEPTH    command-queue entries per unit (at least 2)
//   UNIT_INFLIGHT  accepted instructions per unit whose signals are not sent (at least 1)
//   FETCH_DEPTH    instruction words requested or buffered ahead of dispatch (at least 1)
module systole_sequencer #(
    parameter integer ROWS = 0,
    parameter integer COLS = 0,
    parameter integer BF16 = -1,
    parameter integer UB_ROWS = 0,
    parameter integer ACC_ROWS = 0,
    parameter integer WFIFO_TILES = 0,
    parameter integer TOKEN_CAP = 0,
    parameter integer MEM_BYTES_LO = 0,
    parameter integer MEM_BYTES_HI = -1,
    parameter integer UNIT_QDEPTH = 4,
    parameter integer UNIT_INFLIGHT = 4,
    parameter integer FETCH_DEPTH = 4
) (
    input  logic              clk,
    input  logic              rst,
    input  logic              soft_reset,
    // Launches (systole_regs)
    input  logic              launch_valid,
    output logic              launch_ready,
    input  logic [63:0]       launch_pc,
    input  logic [31:0]       launch_count,
    input  logic              launch_abort,
    output logic              busy,
    output logic              launch_end,
    output logic [7:0]        end_error,
    output logic [63:0]       end_fault_pc,
    output logic              irq_user,
    output logic [15:0]       irq_code,
    // Instruction fetch: device-memory requester port (reads only)
    output logic              mem_req_valid,
    input  logic              mem_req_ready,
    output logic              mem_req_write,
    output logic [47:0]       mem_req_addr,
    output logic [255:0]      mem_req_wdata,
    output logic [31:0]       mem_req_wstrb,
    input  logic              mem_rsp_valid,
    input  logic [255:0]      mem_rsp_rdata,
    // Units, index = unit number (UNIT_LOAD ... UNIT_STORE of systole_isa.svh)
    output logic              launch_start,
    output logic [4:0]        cmd_valid,
    input  logic [4:0]        cmd_ready,
    output logic [5*256-1:0]  cmd_insn,
    input  logic [4:0]        done,
    // Performance events
    output logic              perf_cycles,
    output logic [2:0]        perf_insns,
    output logic [31:0]       perf_macs,
    output logic [2:0]        perf_stall_token,
    output logic              perf_stall_dispatch
);
  `include "systole_isa.svh"
  `include "systole_regs.svh"

  // ---- Parameters --------------------------------------------------------------------------
  if (ISA_UNITS != 5) begin : g_units_check
    systole_param_error_unit_ports_are_5_wide_but_ISA_UNITS_differs u_error ();
  end
  if (MEM_BYTES_HI < 0 || MEM_BYTES_HI > 65535) begin : g_mem_hi_check
    systole_param_error_MEM_BYTES_HI_must_be_0_to_65535 u_error ();
  end

  localparam integer NU = ISA_UNITS;
  localparam logic [31:0] MEM_LO32 = MEM_BYTES_LO;
  localparam logic [31:0] MEM_HI32 = MEM_BYTES_HI;
  localparam logic [63:0] MEM_LAST_PC = ((64'(MEM_HI32) << 32) | 64'(MEM_LO32)) - 64'd32;
  // cur_pc advances only past an instruction fetched at or below MEM_LAST_PC, so it stays below
  // 2^KM unless the launch started there (and faults at once): its bits from KM up never
  // change, and the adder and the range test need only its low KM bits (the 64-bit ones took
  // 118 ALU cells on the Tang Nano 20K).
  localparam integer KM = $clog2(MEM_LAST_PC + 64'd33);  // MEM_BYTES < 2^KM
  // A launch runs at most MEM_WORDS instructions before its PC leaves device memory, so its
  // index stays at or below MEM_WORDS, and a CMD_COUNT above that is never reached: the index
  // and the count are KI bits wide, a larger count saturated to 2^KI - 1 (> MEM_WORDS), which
  // the index never reaches either (asserted below). The same machine as 32-bit ones.
  localparam logic [63:0] MEM_WORDS = (MEM_LAST_PC + 64'd32) >> 5;
  localparam integer KI = ($clog2(MEM_WORDS + 64'd2) < 32) ? $clog2(MEM_WORDS + 64'd2) : 32;
  function automatic logic [KI-1:0] sat_count(logic [31:0] c);
    sat_count = (33'(c) >> KI) != '0 ? '1 : KI'(c);
  endfunction

  // ---- State -------------------------------------------------------------------------------
  typedef enum logic [2:0] {
    S_IDLE = 3'd0,
    S_NEXT = 3'd1,
    S_DECODE = 3'd2,
    S_OPERANDS = 3'd3,
    S_ISSUE = 3'd4,
    S_DRAIN = 3'd5
  } state_e;
  state_e       state_q, state_d;
  logic [63:0]  cur_pc_q, cur_pc_d;        // address of the next instruction to dispatch
  logic [KI-1:0] cur_idx_q, cur_idx_d;     // its index in the launch
  logic [KI-1:0] count_q, count_d;         // CMD_COUNT of the launch, saturated (KI above)
  logic [255:0] ci_q;  // the instruction being checked: the fetch's word, loaded at each pop
  logic         abort_req_q, abort_req_d;
  logic [7:0]   stop_error_q, stop_error_d;  // S_DRAIN: how the launch ends
  logic         launch_start_q, launch_start_d;
  logic         launch_end_q, launch_end_d;
  logic [7:0]   end_error_q, end_error_d;
  logic         irq_user_q, irq_user_d;
  logic         perf_cycles_q, perf_cycles_d;
  logic [2:0]   perf_insns_q, perf_insns_d;
  logic [31:0]  perf_macs_q, perf_macs_d;
  logic [2:0]   perf_stall_token_q, perf_stall_token_d;
  logic         perf_stall_dispatch_q, perf_stall_dispatch_d;

  assign launch_start = launch_start_q;
  assign launch_end = launch_end_q;
  assign end_error = end_error_q;
  // The faulting instruction's address is cur_pc_q: a launch stops with an error at cur_pc_q
  // (at the launch PC, which cur_pc_q takes at the same edge, when it is MISALIGNED), and
  // cur_pc_q moves on only when an instruction retires or the next launch starts, which waits
  // for the cycle after launch_end (launch_ready). So while launch_end is high, the one cycle
  // systole_regs reads it, the fault PC needs no register of its own.
  assign end_fault_pc = end_error_q == ERR_NONE ? 64'd0 : cur_pc_q;
  assign irq_user = irq_user_q;
  // The INTERRUPT's code, read by systole_regs in the irq_user cycle: ci_q still holds the
  // INTERRUPT then (the next pop, in S_NEXT, loads it at the end of that cycle).
  assign irq_code = ci_q[INTERRUPT_CODE_LSB +: INTERRUPT_CODE_WIDTH];
  assign perf_cycles = perf_cycles_q;
  assign perf_insns = perf_insns_q;
  assign perf_macs = perf_macs_q;
  assign perf_stall_token = perf_stall_token_q;
  assign perf_stall_dispatch = perf_stall_dispatch_q;

  // ---- Blocks ------------------------------------------------------------------------------
  logic         launch_go;      // the launch handshake completes
  logic         fetch_pop, fetch_stop, fetch_avail, fetch_idle;
  logic [255:0] fetch_word;
  assign ci_q = fetch_word;
  logic         pc_beyond;      // cur_pc_q > MEM_LAST_PC
  assign pc_beyond = cur_pc_q[63:KM] != '0 || cur_pc_q[KM-1:0] > MEM_LAST_PC[KM-1:0];
  logic         unit_op;        // ci_q runs in a unit ...
  logic [2:0]   unit;           // ... this one
  logic [7:0]   check_err;      // ci_q's first fault (S_ISSUE)
  logic [31:0]  matmul_macs;
  logic         dispatch;       // a unit instruction enters its queue
  logic         check_decode, check_operands;  // the check steps of S_DECODE, S_OPERANDS
  logic [NU-1:0] q_full, q_stall, q_idle, sig_send;
  logic [NU*NU-1:0] tok_at_cap;   // [c*NU + p]: counter p -> c at TOKEN_CAP
  logic [NU*NU-1:0] sig_mask;     // [p*NU + c]: p's oldest done instruction signals c

  systole_seq_fetch #(
      .MEM_BYTES_LO(MEM_BYTES_LO),
      .MEM_BYTES_HI(MEM_BYTES_HI),
      .DEPTH(FETCH_DEPTH)
  ) u_fetch (
      .clk(clk),
      .rst(rst),
      .soft_reset(soft_reset),
      .start_i(launch_go),
      .start_run_i(launch_pc[4:0] == 5'd0),
      .start_pc_i(launch_pc),
      .start_count_i(launch_count),
      .stop_i(fetch_stop),
      .pop_i(fetch_pop),
      .avail_o(fetch_avail),
      .word_o(fetch_word),
      .idle_o(fetch_idle),
      .mem_req_valid(mem_req_valid),
      .mem_req_ready(mem_req_ready),
      .mem_req_write(mem_req_write),
      .mem_req_addr(mem_req_addr),
      .mem_req_wdata(mem_req_wdata),
      .mem_req_wstrb(mem_req_wstrb),
      .mem_rsp_valid(mem_rsp_valid),
      .mem_rsp_rdata(mem_rsp_rdata)
  );

  systole_seq_check #(
      .ROWS(ROWS),
      .COLS(COLS),
      .BF16(BF16),
      .UB_ROWS(UB_ROWS),
      .ACC_ROWS(ACC_ROWS),
      .WFIFO_TILES(WFIFO_TILES),
      .TOKEN_CAP(TOKEN_CAP),
      .MEM_BYTES_LO(MEM_BYTES_LO),
      .MEM_BYTES_HI(MEM_BYTES_HI)
  ) u_check (
      .clk(clk),
      .rst(rst),
      .soft_reset(soft_reset),
      .launch_i(launch_go),
      .insn_i(ci_q),
      .decode_i(check_decode),
      .operands_i(check_operands),
      .dispatch_i(dispatch),
      .unit_op_o(unit_op),
      .unit_o(unit),
      .err_o(check_err),
      .macs_o(matmul_macs)
  );

  for (genvar u = 0; u < NU; u++) begin : g_unit
    logic [NU-1:0] tok_in, out_at_cap;
    for (genvar p = 0; p < NU; p++) begin : g_peer
      assign tok_in[p] = sig_send[p] && sig_mask[p * NU + u];    // p signals u
      assign out_at_cap[p] = tok_at_cap[p * NU + u];             // counter u -> p is full
    end
    systole_seq_unit_queue #(
        .UNIT(u),
        .TOKEN_CAP(TOKEN_CAP),
        .QDEPTH(UNIT_QDEPTH),
        .INFLIGHT(UNIT_INFLIGHT)
    ) u_queue (
        .clk(clk),
        .rst(rst),
        .soft_reset(soft_reset),
        .launch_i(launch_go),
        .push_i(dispatch && unit == 3'(u)),
        .push_insn_i(ci_q),
        .full_o(q_full[u]),
        .cmd_valid_o(cmd_valid[u]),
        .cmd_ready_i(cmd_ready[u]),
        .cmd_insn_o(cmd_insn[u * 256 +: 256]),
        .done_i(done[u]),
        .tok_in_i(tok_in),
        .tok_at_cap_o(tok_at_cap[u * NU +: NU]),
        .out_at_cap_i(out_at_cap),
        .sig_send_o(sig_send[u]),
        .sig_mask_o(sig_mask[u * NU +: NU]),
        .stall_o(q_stall[u]),
        .idle_o(q_idle[u])
    );
  end

  // ---- Dispatch ----------------------------------------------------------------------------
  logic [7:0] op;
  logic       units_idle, issue_ok, seq_retire, stall_dispatch;
  logic [2:0] retire_now, stall_tok_now;
  assign op = ci_q[ISA_OPCODE_LSB +: ISA_OPCODE_WIDTH];
  assign units_idle = &q_idle;
  assign check_decode = state_q == S_DECODE;
  assign check_operands = state_q == S_OPERANDS;
  assign launch_ready = state_q == S_IDLE && !launch_end_q && fetch_idle;
  assign busy = state_q != S_IDLE;
  assign launch_go = state_q == S_IDLE && launch_valid && launch_ready;
  assign issue_ok = state_q == S_ISSUE && !abort_req_q && check_err == ERR_NONE;
  assign stall_dispatch = issue_ok && unit_op && q_full[unit];
  assign dispatch = issue_ok && unit_op && !q_full[unit];
  assign seq_retire = issue_ok && !unit_op && (op == OP_INTERRUPT || units_idle);
  assign fetch_pop = state_q == S_NEXT && !abort_req_q && cur_idx_q != count_q &&
                     !pc_beyond && fetch_avail;
  assign fetch_stop = state_q == S_DRAIN || state_d == S_DRAIN;

  always_comb begin
    retire_now = 3'(seq_retire);
    stall_tok_now = 3'd0;
    for (int u = 0; u < NU; u++) begin
      retire_now = retire_now + 3'(sig_send[u]);
      stall_tok_now = stall_tok_now + 3'(q_stall[u]);
    end
  end

  always_comb begin
    state_d = state_q;
    cur_pc_d = cur_pc_q;
    cur_idx_d = cur_idx_q;
    count_d = count_q;
    abort_req_d = abort_req_q;
    stop_error_d = stop_error_q;
    launch_start_d = 1'b0;
    launch_end_d = 1'b0;
    end_error_d = end_error_q;
    irq_user_d = 1'b0;
    perf_cycles_d = busy;
    perf_insns_d = retire_now;
    perf_macs_d = (dispatch && op == OP_MATMUL) ? matmul_macs : 32'd0;
    perf_stall_token_d = stall_tok_now;
    perf_stall_dispatch_d = stall_dispatch;
    if (launch_abort && state_q != S_IDLE && state_q != S_DRAIN) abort_req_d = 1'b1;

    case (state_q)
      S_IDLE: begin
        abort_req_d = 1'b0;
        if (launch_go) begin
          launch_start_d = 1'b1;
          cur_pc_d = launch_pc;
          cur_idx_d = '0;
          count_d = sat_count(launch_count);
          if (launch_pc[4:0] != 5'd0) begin
            stop_error_d = ERR_MISALIGNED;
            state_d = S_DRAIN;
          end else begin
            state_d = S_NEXT;
          end
        end
      end
      S_NEXT: begin
        if (abort_req_q) begin
          stop_error_d = ERR_ABORTED;
          state_d = S_DRAIN;
        end else if (cur_idx_q == count_q) begin
          stop_error_d = ERR_PROGRAM_OVERRUN;
          state_d = S_DRAIN;
        end else if (pc_beyond) begin
          stop_error_d = ERR_DRAM_RANGE;
          state_d = S_DRAIN;
        end else if (fetch_pop) begin
          state_d = S_DECODE;  // ci_q holds the popped word from the next cycle
        end
      end
      S_DECODE: state_d = S_OPERANDS;
      S_OPERANDS: state_d = S_ISSUE;
      S_ISSUE: begin
        if (abort_req_q) begin
          stop_error_d = ERR_ABORTED;
          state_d = S_DRAIN;
        end else if (check_err != ERR_NONE) begin
          stop_error_d = check_err;
          state_d = S_DRAIN;
        end else if (dispatch || seq_retire) begin
          cur_pc_d = {cur_pc_q[63:KM], cur_pc_q[KM-1:0] + KM'(32)};  // = cur_pc_q + 32
          cur_idx_d = cur_idx_q + KI'(1);
          if (op == OP_INTERRUPT) begin
            irq_user_d = 1'b1;
          end
          if (op == OP_HALT) begin
            stop_error_d = ERR_NONE;
            state_d = S_DRAIN;
          end else begin
            state_d = S_NEXT;
          end
        end
      end
      S_DRAIN: begin
        if (units_idle) begin
          launch_end_d = 1'b1;
          end_error_d = stop_error_q;
          state_d = S_IDLE;
        end
      end
      default: state_d = S_IDLE;
    endcase
  end

  always_ff @(posedge clk) begin
    if (rst || soft_reset) begin
      state_q <= S_IDLE;
      cur_pc_q <= '0;
      cur_idx_q <= '0;
      count_q <= '0;
      abort_req_q <= 1'b0;
      stop_error_q <= ERR_NONE;
      launch_start_q <= 1'b0;
      launch_end_q <= 1'b0;
      end_error_q <= ERR_NONE;
      irq_user_q <= 1'b0;
      perf_cycles_q <= 1'b0;
      perf_insns_q <= '0;
      perf_macs_q <= '0;
      perf_stall_token_q <= '0;
      perf_stall_dispatch_q <= 1'b0;
    end else begin
      state_q <= state_d;
      cur_pc_q <= cur_pc_d;
      cur_idx_q <= cur_idx_d;
      count_q <= count_d;
      abort_req_q <= abort_req_d;
      stop_error_q <= stop_error_d;
      launch_start_q <= launch_start_d;
      launch_end_q <= launch_end_d;
      end_error_q <= end_error_d;
      irq_user_q <= irq_user_d;
      perf_cycles_q <= perf_cycles_d;
      perf_insns_q <= perf_insns_d;
      perf_macs_q <= perf_macs_d;
      perf_stall_token_q <= perf_stall_token_d;
      perf_stall_dispatch_q <= perf_stall_dispatch_d;
    end
  end

  // ---- Assertions --------------------------------------------------------------------------
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!(rst || soft_reset)) begin
      assert (!(dispatch && seq_retire))
        else $error("sequencer: a unit instruction and a sequencer one retire together");
      assert (!(launch_end_q && busy))
        else $error("sequencer: launch_end while a launch executes");
      assert (!(state_q == S_ISSUE && pc_beyond))
        else $error("sequencer: an instruction beyond device memory reached S_ISSUE");
      assert (64'(cur_idx_q) <= MEM_WORDS)
        else $error("sequencer: launch index %0d past the memory's %0d words", cur_idx_q, MEM_WORDS);
    end
  end
`endif
endmodule
