// systole_vector_accvec — the vector unit's ACCVEC engine (docs/ISA.md "ACCVEC"): elementwise
// IEEE-754 binary32 arithmetic on accumulator rows, written back to accumulator rows with no
// rounding to bf16, bit-exact against sim/model/accvec.cpp. The optimizer update of a training
// step (m' = mu·m + g; w' = w − lr·m'; Adam's sqrt and division) is this arithmetic.
//
// One row at a time, in order, each read completely before it is written (so dst may overlap
// a or b, as the ISA allows):
//   RA   read row a + i on the shared ACC read port (req until granted)
//   RB   read row b (+ i unless bcast), unless b is the immediate or the op is sqrt
//   LAT  the last read's data arrives; operands are latched the cycle after each grant, since
//        the port's data changes with the next grant to any unit
//   EX   COLS lanes (systole_accvec_lane) compute: one cycle for add/sub/mul/max/min, 29 for
//        div and sqrt (load, 27 steps of the iterative divider/square root, take the result)
//   WR   write row dst + i on the ACC write port, which the MXU and LOAD take first (req until
//        granted)
// So a row takes 5 cycles (4 without a b row, 33 for div, 32 for sqrt) when the ports are free:
// sim/timing/timing.cpp's estimate. done pulses the cycle after the last row's write grant.
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
  typedef enum logic [2:0] {S_IDLE, S_RA, S_RB, S_LAT, S_EX, S_WR} state_e;

  state_e state_q, state_d;
  logic [2:0]  op_q, op_d;
  logic        bcast_q, bcast_d, bcol_q, bcol_d, reads_b_q, reads_b_d, iter_q, iter_d;
  logic [31:0] ra_q, ra_d, rb_q, rb_d, rd_q, rd_d;   // the current row of a, b and dst
  logic [15:0] left_q, left_d;                       // rows after the current one
  logic [4:0]  cnt_q, cnt_d;                         // EX cycles of div / sqrt
  logic        lat_a_q, lat_b_q, done_q;
  logic [COLS*32-1:0] x_q, y_q, r_q, lane_y;
  logic [31:0] imm;

  logic [2:0] dec_op;
  logic       dec_scalar;
  assign dec_op = insn_i[ACCVEC_OP_LSB +: 3];
  assign dec_scalar = insn_i[ACCVEC_SCALAR_LSB];
  assign imm = insn_i[ACCVEC_IMM_LSB +: ACCVEC_IMM_WIDTH];

  assign busy_o = state_q != S_IDLE;
  assign done_o = done_q;
  assign acc_rd_req = state_q == S_RA || state_q == S_RB;
  assign acc_rd_addr = ACC_AW'(state_q == S_RB ? rb_q : ra_q);
  assign acc_wr_req = state_q == S_WR;
  assign acc_wr_addr = ACC_AW'(rd_q);
  assign acc_wr_data = r_q;

  always_comb begin
    state_d = state_q;
    op_d = op_q;
    bcast_d = bcast_q;
    bcol_d = bcol_q;
    reads_b_d = reads_b_q;
    iter_d = iter_q;
    ra_d = ra_q;
    rb_d = rb_q;
    rd_d = rd_q;
    left_d = left_q;
    cnt_d = cnt_q;
    case (state_q)
      S_IDLE: begin
        if (start_i) begin
          state_d = S_RA;
          op_d = dec_op;
          bcast_d = insn_i[ACCVEC_BCAST_LSB];
          bcol_d = insn_i[ACCVEC_BCOL_LSB];
          reads_b_d = !dec_scalar && dec_op != 3'(ACCVEC_OP_SQRT);
          iter_d = dec_op == 3'(ACCVEC_OP_DIV) || dec_op == 3'(ACCVEC_OP_SQRT);
          ra_d = 32'(insn_i[ACCVEC_A_LSB +: ACCVEC_A_WIDTH]);
          rb_d = 32'(insn_i[ACCVEC_B_LSB +: ACCVEC_B_WIDTH]);
          rd_d = 32'(insn_i[ACCVEC_DST_LSB +: ACCVEC_DST_WIDTH]);
          left_d = insn_i[ACCVEC_ROWS_LSB +: ACCVEC_ROWS_WIDTH] - 16'd1;
        end
      end
      S_RA: begin
        if (acc_rd_gnt && reads_b_q) state_d = S_RB;
        else if (acc_rd_gnt) state_d = S_LAT;
      end
      S_RB: if (acc_rd_gnt) state_d = S_LAT;
      S_LAT: begin
        state_d = S_EX;
        cnt_d = '0;
      end
      S_EX: begin
        cnt_d = cnt_q + 5'd1;
        if (!iter_q || cnt_q == 5'(DIVSQRT_CYCLES + 1)) state_d = S_WR;  // result in the step's
                                                                           // 28th cycle
      end
      S_WR: begin
        if (acc_wr_gnt) begin
          ra_d = ra_q + 32'd1;
          rb_d = bcast_q ? rb_q : rb_q + 32'd1;
          rd_d = rd_q + 32'd1;
          left_d = left_q - 16'd1;
          if (left_q == 16'd0) state_d = S_IDLE;
          else state_d = S_RA;
        end
      end
      default: state_d = S_IDLE;
    endcase
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      state_q <= S_IDLE;
      lat_a_q <= 1'b0;
      lat_b_q <= 1'b0;
      done_q <= 1'b0;
    end else begin
      state_q <= state_d;
      lat_a_q <= state_q == S_RA && acc_rd_gnt;
      lat_b_q <= state_q == S_RB && acc_rd_gnt;
      done_q <= state_q == S_WR && acc_wr_gnt && left_q == 16'd0;
    end
  end

  // The instruction's fields and the row's operands: meaningful only while it runs, not reset.
  always_ff @(posedge clk) begin
    op_q <= op_d;
    bcast_q <= bcast_d;
    bcol_q <= bcol_d;
    reads_b_q <= reads_b_d;
    iter_q <= iter_d;
    ra_q <= ra_d;
    rb_q <= rb_d;
    rd_q <= rd_d;
    left_q <= left_d;
    cnt_q <= cnt_d;
    if (lat_a_q) x_q <= acc_rd_data;
    if (lat_b_q) y_q <= bcol_q ? {COLS{acc_rd_data[31:0]}} : acc_rd_data;
    else if (state_q == S_IDLE && start_i && dec_scalar) y_q <= {COLS{imm}};
    if (state_q == S_EX) r_q <= lane_y;
  end

  for (genvar j = 0; j < COLS; j++) begin : g_lane
    systole_accvec_lane u_lane (
        .clk, .op_i(op_q), .start_i(state_q == S_EX && cnt_q == 5'd0),
        .a_i(x_q[j*32 +: 32]), .b_i(y_q[j*32 +: 32]), .y_o(lane_y[j*32 +: 32]));
  end

`ifndef SYNTHESIS
  // The sequencer faults ACCVEC with scalar and bcast/bcol and admits no op above sqrt.
  always_ff @(posedge clk) begin
    if (!rst && start_i) begin
      assert (state_q == S_IDLE) else $error("systole_vector_accvec: started while busy");
      assert (dec_op <= 3'(ACCVEC_OP_SQRT)) else $error("systole_vector_accvec: op %0d", dec_op);
      assert (!(dec_scalar && (insn_i[ACCVEC_BCAST_LSB] || insn_i[ACCVEC_BCOL_LSB])))
      else $error("systole_vector_accvec: scalar with bcast or bcol");
    end
  end
`endif
endmodule
