// systole_seq_unit_queue — one execution unit's side of the sequencer: its in-order command
// queue, the dependency tokens it waits for, and its accepted instructions until their signals
// are sent. The sequencer instantiates one per unit (a generate loop over ISA_UNITS).
//
//   push_i    dispatch appends an instruction (never when full_o)
//   head      waits until every unit named in its wait mask has a token for it (stall_o while
//             one is missing), takes them all at once, then is offered to the unit
//             (cmd_valid_o / cmd_ready_i, rtl/README.md "Unit command interface")
//   accepted  instructions wait for the unit's in-order `done` pulses; the oldest done one
//             then sends its signal tokens (sig_send_o, sig_mask_o), all at once and only when
//             no receiving counter is at TOKEN_CAP. At most INFLIGHT instructions are accepted
//             and not yet signalled: the unit may run ahead of its signals that far.
//
// Tokens: this module holds the runtime counters of the tokens sent *to* its unit, one per
// sending unit (p -> UNIT): +1 when p sends one (tok_in_i[p]), -1 when the head takes it. They
// return to zero at every launch (a launch may end with tokens nobody took). tok_at_cap_o tells
// the senders which counters are full; out_at_cap_i is the same for this unit's own signals.
//
// Parameters:
//   UNIT       this unit's number (UNIT_LOAD ... UNIT_STORE): its counter from itself stays 0.
//              Set by the parent; the default fails the check.
//   TOKEN_CAP  configuration parameter (queues.token_capacity): tokens a unit pair can hold.
//              Set by the parent; the default fails the check.
//   QDEPTH     command-queue entries (at least 2): dispatch stalls on a full queue.
//   INFLIGHT   accepted instructions whose signals are not sent yet (at least 1).
module systole_seq_unit_queue #(
    parameter integer UNIT = -1,
    parameter integer TOKEN_CAP = 0,
    parameter integer QDEPTH = 4,
    parameter integer INFLIGHT = 4
) (
    input  logic         clk,
    input  logic         rst,
    input  logic         soft_reset,
    input  logic         launch_i,      // a launch starts: token counters return to zero
    // From dispatch
    input  logic         push_i,
    input  logic [255:0] push_insn_i,
    output logic         full_o,
    // To the unit
    output logic         cmd_valid_o,
    input  logic         cmd_ready_i,
    output logic [255:0] cmd_insn_o,
    input  logic         done_i,
    // Tokens, index = the other unit's number
    input  logic [4:0]   tok_in_i,      // [p]: unit p sends this unit a token this cycle
    output logic [4:0]   tok_at_cap_o,  // [p]: the p -> this unit counter holds TOKEN_CAP
    input  logic [4:0]   out_at_cap_i,  // [c]: the this unit -> c counter holds TOKEN_CAP
    output logic         sig_send_o,    // the oldest done instruction sends its signals
    output logic [4:0]   sig_mask_o,    // ... to these units
    // Status
    output logic         stall_o,       // the head waits for a token (perf STALL_TOKEN)
    output logic         idle_o         // nothing queued, nothing accepted and unsignalled
);
  `include "systole_isa.svh"

  // ---- Parameters --------------------------------------------------------------------------
  localparam integer NU = ISA_UNITS;
  if (NU != 5) begin : g_units_check
    systole_param_error_token_ports_are_5_bits_but_ISA_UNITS_differs u_error ();
  end
  if (UNIT < 0 || UNIT >= NU) begin : g_unit_check
    systole_param_error_UNIT_must_be_a_unit_number u_error ();
  end
  if (TOKEN_CAP < 1 || TOKEN_CAP > 255) begin : g_cap_check
    systole_param_error_TOKEN_CAP_must_be_1_to_255 u_error ();
  end
  if (QDEPTH < 2 || INFLIGHT < 1) begin : g_depth_check
    systole_param_error_QDEPTH_at_least_2_INFLIGHT_at_least_1 u_error ();
  end

  // A counter never passes TOKEN_CAP: it is TW bits wide (8 for a capacity of 255).
  localparam integer TW = $clog2(TOKEN_CAP + 1);
  localparam logic [TW-1:0] CAPW = TW'(TOKEN_CAP);
  localparam integer QAW = $clog2(QDEPTH);
  localparam integer QCW = $clog2(QDEPTH + 1);
  localparam integer IAW = (INFLIGHT > 1) ? $clog2(INFLIGHT) : 1;
  localparam integer ICW = $clog2(INFLIGHT + 1);

  // ---- State -------------------------------------------------------------------------------
  logic [QAW-1:0] wr_q, wr_d, rd_q, rd_d;
  logic [QCW-1:0] cnt_q, cnt_d;
  logic           taken_q, taken_d;     // the head's wait tokens are taken
  logic [IAW-1:0] if_wr_q, if_wr_d, if_rd_q, if_rd_d;
  logic [ICW-1:0] if_cnt_q, if_cnt_d;   // accepted, signals not sent
  logic [ICW-1:0] done_cnt_q, done_cnt_d;  // of these, done
  logic [NU*TW-1:0] tok_q;              // [p*TW +: TW]: tokens p -> UNIT
  logic [255:0]   mem_q [QDEPTH];       // storage: written, never reset
  logic [NU-1:0]  sig_q [INFLIGHT];     // storage: signal masks of accepted instructions

  // ---- Logic -------------------------------------------------------------------------------
  logic [255:0]  head;
  logic [NU-1:0] head_wait, avail, if_head;
  logic          queued, take, accept;

  assign head = mem_q[rd_q];
  assign head_wait = head[ISA_WAIT_LSB +: NU];
  assign queued = cnt_q != '0;
  for (genvar p = 0; p < NU; p++) begin : g_avail
    assign avail[p] = tok_q[p * TW +: TW] != '0;
    // A counter never passes TOKEN_CAP (its senders stop there; asserted below), so "at the
    // cap" is equality: an AND of 8 bits, where ">=" became an 8-bit carry chain (Yosys keeps
    // comparisons with a constant as adders: 20 chains, ~200 LUT4 sites on the Tang Nano 20K).
    assign tok_at_cap_o[p] = tok_q[p * TW +: TW] == CAPW;
  end
  assign stall_o = queued && !taken_q && head_wait != '0 && (head_wait & ~avail) != '0;
  assign take = queued && !taken_q && head_wait != '0 && (head_wait & ~avail) == '0;
  assign cmd_valid_o = queued && (taken_q || head_wait == '0) && if_cnt_q != ICW'(INFLIGHT);
  assign cmd_insn_o = head;
  assign accept = cmd_valid_o && cmd_ready_i;
  assign full_o = cnt_q == QCW'(QDEPTH);

  assign if_head = sig_q[if_rd_q];
  assign sig_send_o = done_cnt_q != '0 && (if_head & out_at_cap_i) == '0;
  assign sig_mask_o = if_head;
  assign idle_o = cnt_q == '0 && if_cnt_q == '0;

  always_comb begin
    wr_d = wr_q;
    rd_d = rd_q;
    taken_d = taken_q;
    if_wr_d = if_wr_q;
    if_rd_d = if_rd_q;
    cnt_d = cnt_q + QCW'(push_i) - QCW'(accept);
    if_cnt_d = if_cnt_q + ICW'(accept) - ICW'(sig_send_o);
    done_cnt_d = done_cnt_q + ICW'(done_i) - ICW'(sig_send_o);
    if (push_i) wr_d = (wr_q == QAW'(QDEPTH - 1)) ? '0 : wr_q + 1'b1;
    if (accept) rd_d = (rd_q == QAW'(QDEPTH - 1)) ? '0 : rd_q + 1'b1;
    if (accept) taken_d = 1'b0;
    else if (take) taken_d = 1'b1;
    if (accept) if_wr_d = (if_wr_q == IAW'(INFLIGHT - 1)) ? '0 : if_wr_q + 1'b1;
    if (sig_send_o) if_rd_d = (if_rd_q == IAW'(INFLIGHT - 1)) ? '0 : if_rd_q + 1'b1;
  end

  always_ff @(posedge clk) begin
    if (rst || soft_reset) begin
      wr_q <= '0;
      rd_q <= '0;
      cnt_q <= '0;
      taken_q <= 1'b0;
      if_wr_q <= '0;
      if_rd_q <= '0;
      if_cnt_q <= '0;
      done_cnt_q <= '0;
    end else begin
      wr_q <= wr_d;
      rd_q <= rd_d;
      cnt_q <= cnt_d;
      taken_q <= taken_d;
      if_wr_q <= if_wr_d;
      if_rd_q <= if_rd_d;
      if_cnt_q <= if_cnt_d;
      done_cnt_q <= done_cnt_d;
    end
  end

  // The token counters' next values are computed here, not in a _d signal of the block above:
  // the same circuit, but Verilator evaluates logic fed by the core's inputs (tok_in_i and
  // take are) at every eval() and again after the edge, and a register's update only at the
  // edge (rtl/README.md, "Logic that simulates well").
  always_ff @(posedge clk) begin
    for (int p = 0; p < NU; p++) begin
      if (rst || soft_reset || p == UNIT || launch_i) tok_q[p * TW +: TW] <= '0;
      else tok_q[p * TW +: TW] <= tok_q[p * TW +: TW] + TW'(tok_in_i[p]) - TW'(take && head_wait[p]);
    end
  end

  always_ff @(posedge clk) begin
    if (push_i) mem_q[wr_q] <= push_insn_i;
    if (accept) sig_q[if_wr_q] <= head[ISA_SIGNAL_LSB +: NU];
  end

  // ---- Assertions --------------------------------------------------------------------------
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!(rst || soft_reset)) begin
      assert (!(done_i && done_cnt_q == if_cnt_q))
        else $error("sequencer: unit %0d pulsed done with no accepted instruction pending", UNIT);
      assert (!(push_i && full_o))
        else $error("sequencer: push into the full queue of unit %0d", UNIT);
      // (checked only in the cycles a token arrives: the simulation runs these five every cycle)
      if (tok_in_i != '0) begin
        for (int p = 0; p < NU; p++) begin
          assert (!(p != UNIT && tok_in_i[p] && !(take && head_wait[p]) &&
                    tok_q[p * TW +: TW] >= CAPW))
            else $error("sequencer: token counter %0d->%0d overflows", p, UNIT);
        end
      end
    end
  end
`endif
endmodule
