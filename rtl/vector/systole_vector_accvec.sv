// systole_vector_accvec — the vector unit's ACCVEC engine (docs/ISA.md "ACCVEC"): elementwise
// IEEE-754 binary32 arithmetic on accumulator rows, written back to accumulator rows with no
// rounding to bf16, bit-exact against sim/model/accvec.cpp. The optimizer update of a training
// step (m' = mu·m + g; w' = w − lr·m'; Adam's sqrt and division) is this arithmetic.
//
// Each row goes through four stages:
//   READ  read row a + i on the shared ACC read port, then row b (+ i unless bcast) unless b is
//         the immediate or the op is sqrt (req until granted)
//   LAT   each read's data arrives the cycle after its grant and is latched then, since the
//         port's data changes with the next grant to any unit
//   EX    the cycle after the row's last operand arrived: COLS lanes (systole_accvec_lane)
//         compute, one cycle for add/sub/mul/max/min, 29 for div and sqrt (load, 27 steps of the
//         iterative divider/square root, take the result); the result joins a small queue
//   WR    write row dst + i on the ACC write port, which the MXU and LOAD take first (req until
//         granted)
// Rows overlap: row i + 1's reads are issued while row i computes and waits to be written, up to
// FLIGHT rows read and not yet written (the result queue's depth, so a blocked write port never
// loses a result). With free ports a row then costs its reads alone: 2 cycles with a b row, 1
// without. The ISA's order, each row read completely before it is written and a row written by
// an earlier row read as written, holds because overlap is allowed only when no row in flight
// can write a row a later read takes: dst − a and dst − b outside 1 .. FLIGHT − 1, and a bcast
// b row outside dst's rows. Otherwise, and for div and sqrt (one divider per lane), one row at a
// time: 5 cycles a row (4 without b, 33 for div, 32 for sqrt). sim/timing/timing.cpp's estimate
// (TimingModel::AccVecCycles) is both; done pulses the cycle after the last row's write grant.
//
// Parameters (from systole_vector_unit; the defaults are rejected at elaboration): COLS lanes,
// ACC_ROWS the accumulator rows (the port's address width).
module systole_vector_accvec #(
    parameter integer COLS = 0,
    parameter integer ACC_ROWS = 0,
    localparam integer ACC_AW = $clog2(ACC_ROWS)
) (
    input  logic                  clk,
    input  logic                  rst,
    input  logic                  start_i,   // accept insn_i (an ACCVEC) at this edge
    // Only ACCVEC's fields are read: the header's tokens and reserved bits are not.
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic [255:0]          insn_i,
    /* verilator lint_on UNUSEDSIGNAL */
    output logic                  busy_o,
    output logic                  done_o,
    // ACC read port (shared, req/gnt; data the cycle after gnt)
    output logic                  acc_rd_req,
    output logic [ACC_AW-1:0]     acc_rd_addr,
    input  logic                  acc_rd_gnt,
    input  logic [COLS*32-1:0]    acc_rd_data,
    // ACC write port (shared, req/gnt; written at the granting edge; whole rows)
    output logic                  acc_wr_req,
    output logic [ACC_AW-1:0]     acc_wr_addr,
    output logic [COLS*32-1:0]    acc_wr_data,
    input  logic                  acc_wr_gnt
);
  `include "systole_isa.svh"

  if (COLS < 1) begin : g_cols_check
    systole_param_error_accvec_COLS_must_be_at_least_1 u_error ();
  end
  if (ACC_ROWS < 2) begin : g_acc_check
    systole_param_error_accvec_ACC_ROWS_must_be_at_least_2 u_error ();
  end

  localparam integer DIVSQRT_CYCLES = 27;  // systole_fp32_ieee_divsqrt's steps
  localparam integer FLIGHT = 4;           // rows read and not yet written, at most
  localparam integer FW = $clog2(FLIGHT + 1);

  // The instruction: fields kept while it runs (not reset: meaningful only then).
  logic [2:0]  op_q;
  logic        bcast_q, bcol_q, reads_b_q, iter_q, serial_q;
  // READ: the next row's a and b; rows not yet read; whether the next read is b's.
  logic [31:0] ra_q, rb_q;
  logic [15:0] to_read_q;
  logic        phase_b_q;
  // LAT, EX: which operand arrives; the EX cycle and its count (div, sqrt).
  logic        lat_a_q, lat_b_q, lat_last_q, ex_q;
  logic [4:0]  cnt_q;
  logic [COLS*32-1:0] x_q, y_q, lane_y;
  // WR: the result queue, the next row written, rows not yet written, rows in flight.
  logic [COLS*32-1:0] queue_q[FLIGHT];
  logic [$clog2(FLIGHT)-1:0] head_q, tail_q;
  logic [FW-1:0] queued_q, in_flight_q;
  logic [31:0] rd_q;
  logic [16:0] to_write_q;
  logic        done_q;

  logic [2:0]  dec_op;
  logic        dec_scalar, dec_bcast, dec_reads_b, dec_iter, dec_serial;
  logic [31:0] dec_a, dec_b, dec_dst, imm;
  logic [15:0] dec_rows;
  assign dec_op = insn_i[ACCVEC_OP_LSB +: 3];
  assign dec_scalar = insn_i[ACCVEC_SCALAR_LSB];
  assign dec_bcast = insn_i[ACCVEC_BCAST_LSB];
  assign dec_a = 32'(insn_i[ACCVEC_A_LSB +: ACCVEC_A_WIDTH]);
  assign dec_b = 32'(insn_i[ACCVEC_B_LSB +: ACCVEC_B_WIDTH]);
  assign dec_dst = 32'(insn_i[ACCVEC_DST_LSB +: ACCVEC_DST_WIDTH]);
  assign dec_rows = 16'(insn_i[ACCVEC_ROWS_LSB +: ACCVEC_ROWS_WIDTH]);
  assign imm = insn_i[ACCVEC_IMM_LSB +: ACCVEC_IMM_WIDTH];
  assign dec_reads_b = !dec_scalar && dec_op != 3'(ACCVEC_OP_SQRT);
  assign dec_iter = dec_op == 3'(ACCVEC_OP_DIV) || dec_op == 3'(ACCVEC_OP_SQRT);
  // A row in flight (at most FLIGHT − 1 before the one being read) writes dst + i; row j reads
  // a + j: the same row when dst − a = j − i in 1 .. FLIGHT − 1 (b likewise). A bcast b row is
  // read by every row, so it must not be one of dst's.
  function automatic logic WritesAhead(input logic [31:0] dst, input logic [31:0] src);
    WritesAhead = dst > src && dst - src < 32'(FLIGHT);
  endfunction
  assign dec_serial = dec_iter || WritesAhead(dec_dst, dec_a) ||
                      (dec_reads_b && !dec_bcast && WritesAhead(dec_dst, dec_b)) ||
                      (dec_reads_b && dec_bcast && dec_b >= dec_dst && dec_b - dec_dst < 32'(dec_rows));

  logic rd_grant_a, rd_grant_b, wr_grant, push, row_read;
  assign acc_rd_req = phase_b_q ||
                      (to_read_q != 16'd0 && in_flight_q < (serial_q ? FW'(1) : FW'(FLIGHT)));
  assign acc_rd_addr = ACC_AW'(phase_b_q ? rb_q : ra_q);
  assign rd_grant_a = acc_rd_req && acc_rd_gnt && !phase_b_q;
  assign rd_grant_b = acc_rd_gnt && phase_b_q;
  assign row_read = rd_grant_b || (rd_grant_a && !reads_b_q);
  assign push = ex_q && (!iter_q || cnt_q == 5'(DIVSQRT_CYCLES + 1));  // result in the step's
                                                                       // 28th cycle
  assign acc_wr_req = queued_q != '0;
  assign acc_wr_addr = ACC_AW'(rd_q);
  assign acc_wr_data = queue_q[head_q];
  assign wr_grant = acc_wr_req && acc_wr_gnt;
  assign busy_o = to_write_q != '0;
  assign done_o = done_q;

  always_ff @(posedge clk) begin
    if (rst) begin
      to_read_q <= '0;
      to_write_q <= '0;
      phase_b_q <= 1'b0;
      lat_a_q <= 1'b0;
      lat_b_q <= 1'b0;
      lat_last_q <= 1'b0;
      ex_q <= 1'b0;
      head_q <= '0;
      tail_q <= '0;
      queued_q <= '0;
      in_flight_q <= '0;
      done_q <= 1'b0;
    end else begin
      if (start_i) begin
        to_read_q <= dec_rows;
        to_write_q <= 17'(dec_rows);
      end else begin
        if (rd_grant_a) to_read_q <= to_read_q - 16'd1;
        if (wr_grant) to_write_q <= to_write_q - 17'd1;
      end
      if (rd_grant_a && reads_b_q) phase_b_q <= 1'b1;
      else if (rd_grant_b) phase_b_q <= 1'b0;
      lat_a_q <= rd_grant_a;
      lat_b_q <= rd_grant_b;
      lat_last_q <= row_read;
      if (lat_last_q) ex_q <= 1'b1;
      else if (push) ex_q <= 1'b0;
      if (push) tail_q <= tail_q + 1'b1;
      if (wr_grant) head_q <= head_q + 1'b1;
      queued_q <= queued_q + FW'(push) - FW'(wr_grant);
      in_flight_q <= in_flight_q + FW'(rd_grant_a) - FW'(wr_grant);
      done_q <= wr_grant && to_write_q == 17'd1;
    end
  end

  always_ff @(posedge clk) begin
    if (start_i) begin
      op_q <= dec_op;
      bcast_q <= dec_bcast;
      bcol_q <= insn_i[ACCVEC_BCOL_LSB];
      reads_b_q <= dec_reads_b;
      iter_q <= dec_iter;
      serial_q <= dec_serial;
      ra_q <= dec_a;
      rb_q <= dec_b;
      rd_q <= dec_dst;
    end else begin
      if (rd_grant_a) ra_q <= ra_q + 32'd1;
      if (rd_grant_b && !bcast_q) rb_q <= rb_q + 32'd1;
      if (wr_grant) rd_q <= rd_q + 32'd1;
    end
    cnt_q <= lat_last_q ? 5'd0 : cnt_q + 5'd1;
    if (lat_a_q) x_q <= acc_rd_data;
    if (lat_b_q) y_q <= bcol_q ? {COLS{acc_rd_data[31:0]}} : acc_rd_data;
    else if (start_i && dec_scalar) y_q <= {COLS{imm}};
    if (push) queue_q[tail_q] <= lane_y;
  end

  // The lanes read x_q and y_q in the EX cycle, before the next row's operands replace them: a
  // later row's a arrives at the earliest in that same cycle and is latched at its end.
  for (genvar j = 0; j < COLS; j++) begin : g_lane
    systole_accvec_lane u_lane (
        .clk, .op_i(op_q), .start_i(ex_q && cnt_q == 5'd0),
        .a_i(x_q[j*32 +: 32]), .b_i(y_q[j*32 +: 32]), .y_o(lane_y[j*32 +: 32]));
  end

`ifndef SYNTHESIS
  // The sequencer faults ACCVEC with scalar and bcast/bcol and admits no op above sqrt.
  always_ff @(posedge clk) begin
    if (!rst && start_i) begin
      assert (!busy_o) else $error("systole_vector_accvec: started while busy");
      assert (dec_op <= 3'(ACCVEC_OP_SQRT)) else $error("systole_vector_accvec: op %0d", dec_op);
      assert (!(dec_scalar && (insn_i[ACCVEC_BCAST_LSB] || insn_i[ACCVEC_BCOL_LSB])))
      else $error("systole_vector_accvec: scalar with bcast or bcol");
    end
  end
`endif
endmodule
