// systole_vector_reads — the read walk of the vector unit: the rows an ACTIVATE, VECTOR or POOL
// instruction reads, in program order, one per cycle when granted.
//
//   ACTIVATE  the bias row once (if the instruction adds one), then accumulator row acc + i for
//             each output row i;
//   VECTOR    row a + i, then row b + i (row b itself with bcast), for each output row i;
//   POOL      the window's rows in row-major window order, for each output pixel in row-major
//             order: src + (oy·stride_h + wy)·in_w + ox·stride_w + wx (REDUCE over=rows is a
//             1 x rows window: decode maps it here);
//   REDUCE    (over=elems) row src + i for each output row i, one read per group.
// The reads of one output row form a "group"; its first and last read are marked, and the
// group's destination row is alloc_addr_o while its last read is made. A read is requested only
// while the unit is active and, except the ACTIVATE bias row, while an output slot is free;
// a unified-buffer read also waits while a slot still has to write the same row (hazard_i),
// so a read never overtakes an earlier write.
//
// Split from systole_vector_unit: the walk is the unit's one nontrivial state machine; the
// output slots (systole_vector_slots) and the lanes only follow the marks it gives each read.
//
// Parameters (from systole_vector_unit; the defaults are rejected at elaboration):
//   UB_ROWS, ACC_ROWS  the buffers' sizes: the widths of the row ports and the bounds the
//                      assertions check addresses against.
module systole_vector_reads #(
    parameter integer UB_ROWS = 0,
    parameter integer ACC_ROWS = 0,
    localparam integer UB_AW = $clog2(UB_ROWS),
    localparam integer ACC_AW = $clog2(ACC_ROWS)
) (
    input  logic              clk,
    input  logic              rst,
    // The instruction: start_i loads the walk from systole_vector_decode's outputs.
    input  logic              start_i,
    input  logic              active_i,      // the instruction has reads left to issue
    input  logic [1:0]        mode_i,        // held while the instruction runs
    input  logic              bcast_i,       // held while the instruction runs
    input  logic              bias_i,        // with start_i: ACTIVATE reads a bias row first
    input  logic [31:0]       ra_i,          // with start_i: the walk's start (see decode)
    input  logic [31:0]       rb_i,
    input  logic [31:0]       wd_i,
    input  logic [15:0]       last_i_i,
    input  logic [15:0]       last_oy_i,
    input  logic [15:0]       last_wx_i,     // 16 bits: REDUCE over=rows windows reach 65535
    input  logic [7:0]        last_wy_i,
    input  logic [31:0]       in_w_i,
    input  logic [31:0]       step_w_i,
    input  logic [31:0]       step_h_i,
    // Output slots.
    input  logic              credit_i,      // an output slot is free
    input  logic              hazard_i,      // a slot still has to write row rd_addr_o
    output logic [UB_AW-1:0]  rd_addr_o,     // the unified-buffer row of this cycle's read
    output logic              alloc_o,       // a group's last read is granted: take a slot
    output logic [UB_AW-1:0]  alloc_addr_o,  // ... for this destination row
    // The read of this cycle and its marks.
    output logic              rd_fire_o,     // granted at this edge
    output logic              rd_bias_o,     // the ACTIVATE bias row (no group)
    output logic              rd_first_o,    // first read of its group
    output logic              rd_last_o,     // last read of its group
    output logic              rd_final_o,    // the instruction's last read is granted
    // ACC read port (shared, req/gnt)
    output logic              acc_rd_req,
    output logic [ACC_AW-1:0] acc_rd_addr,
    input  logic              acc_rd_gnt,
    // UB read port (shared, req/gnt)
    output logic              ub_rd_req,
    output logic [UB_AW-1:0]  ub_rd_addr,
    input  logic              ub_rd_gnt
);

  // ---- Parameters --------------------------------------------------------------------------
  // Configuration parameters come from the parent; the defaults fail this check.
  if (UB_ROWS < 2 || ACC_ROWS < 2) begin : g_buffer_check
    systole_param_error_vector_reads_UB_ROWS_and_ACC_ROWS_must_be_at_least_2 u_error ();
  end

  localparam logic [1:0] MODE_ACT = 2'd0, MODE_VEC = 2'd1, MODE_POOL = 2'd2, MODE_RED = 2'd3;

  // ---- Walk state --------------------------------------------------------------------------
  // Addresses are kept at full field width and checked against the buffer size by the
  // assertions; the ports take the low bits.
  logic [31:0] ra_q, ra_d;                // ACT: acc row i; VEC: a + i; POOL: the current window row
  logic [31:0] rb_q, rb_d;                // ACT: the bias row; VEC: the row of b for row i
  logic [31:0] wd_q, wd_d;                // destination row of the current group
  logic        bias_phase_q, bias_phase_d;  // ACT: the bias row is still to be read
  logic        second_q, second_d;          // VEC: row b is next
  logic [15:0] count_i_q, count_i_d;      // ACT/VEC: output row; POOL: output x
  logic [15:0] last_i_q, last_i_d;        // ACT/VEC: rows - 1; POOL: out_w - 1
  logic [15:0] oy_q, oy_d, last_oy_q, last_oy_d;
  logic [15:0] wx_q, wx_d, last_wx_q, last_wx_d;
  logic [7:0]  wy_q, wy_d, last_wy_q, last_wy_d;
  logic [31:0] line_row_q, line_row_d;    // POOL: first row of the current window line
  logic [31:0] pix_row_q, pix_row_d;      // POOL: first row of the current window
  logic [31:0] oy_row_q, oy_row_d;        // POOL: first row of the current output row's windows
  logic [31:0] in_w_q, in_w_d, step_w_q, step_w_d, step_h_q, step_h_d;

  // ---- The read of this cycle --------------------------------------------------------------
  logic [31:0] rd_addr;
  logic        rd_want;

  always_comb begin
    rd_bias_o = 1'b0;
    rd_first_o = 1'b1;
    rd_last_o = 1'b1;
    rd_addr = ra_q;
    case (mode_i)
      MODE_ACT: begin
        rd_bias_o = bias_phase_q;
        rd_addr = bias_phase_q ? rb_q : ra_q;
      end
      MODE_VEC: begin
        rd_first_o = !second_q;
        rd_last_o = second_q;
        rd_addr = second_q ? rb_q : ra_q;
      end
      MODE_RED: ;  // one read per group: row ra
      default: begin
        rd_first_o = (wx_q == 16'd0) && (wy_q == 8'd0);
        rd_last_o = (wx_q == last_wx_q) && (wy_q == last_wy_q);
      end
    endcase
  end

  assign rd_addr_o    = rd_addr[UB_AW-1:0];
  assign rd_want      = active_i && (rd_bias_o || credit_i) && (mode_i == MODE_ACT || !hazard_i);
  assign acc_rd_req   = rd_want && mode_i == MODE_ACT;
  assign acc_rd_addr  = rd_addr[ACC_AW-1:0];
  assign ub_rd_req    = rd_want && mode_i != MODE_ACT;
  assign ub_rd_addr   = rd_addr[UB_AW-1:0];
  assign rd_fire_o    = (acc_rd_req && acc_rd_gnt) || (ub_rd_req && ub_rd_gnt);
  assign alloc_o      = rd_fire_o && !rd_bias_o && rd_last_o;
  assign alloc_addr_o = wd_q[UB_AW-1:0];
  assign rd_final_o   = alloc_o && count_i_q == last_i_q
                        && (mode_i != MODE_POOL || oy_q == last_oy_q);

  // ---- Next walk state ---------------------------------------------------------------------
  always_comb begin
    ra_d = ra_q;
    rb_d = rb_q;
    wd_d = wd_q;
    bias_phase_d = bias_phase_q;
    second_d = second_q;
    count_i_d = count_i_q;
    last_i_d = last_i_q;
    oy_d = oy_q;
    last_oy_d = last_oy_q;
    wx_d = wx_q;
    wy_d = wy_q;
    last_wx_d = last_wx_q;
    last_wy_d = last_wy_q;
    line_row_d = line_row_q;
    pix_row_d = pix_row_q;
    oy_row_d = oy_row_q;
    in_w_d = in_w_q;
    step_w_d = step_w_q;
    step_h_d = step_h_q;
    if (start_i) begin
      ra_d = ra_i;
      rb_d = rb_i;
      wd_d = wd_i;
      bias_phase_d = bias_i;
      second_d = 1'b0;
      count_i_d = 16'd0;
      last_i_d = last_i_i;
      oy_d = 16'd0;
      last_oy_d = last_oy_i;
      wx_d = 16'd0;
      wy_d = 8'd0;
      last_wx_d = last_wx_i;
      last_wy_d = last_wy_i;
      line_row_d = ra_i;
      pix_row_d = ra_i;
      oy_row_d = ra_i;
      in_w_d = in_w_i;
      step_w_d = step_w_i;
      step_h_d = step_h_i;
    end else if (rd_fire_o) begin
      case (mode_i)
        MODE_ACT: begin
          if (bias_phase_q) begin
            bias_phase_d = 1'b0;
          end else begin
            ra_d = ra_q + 32'd1;
            wd_d = wd_q + 32'd1;
            count_i_d = count_i_q + 16'd1;
          end
        end
        MODE_VEC: begin
          if (!second_q) begin
            second_d = 1'b1;
          end else begin
            second_d = 1'b0;
            ra_d = ra_q + 32'd1;
            if (!bcast_i) rb_d = rb_q + 32'd1;
            wd_d = wd_q + 32'd1;
            count_i_d = count_i_q + 16'd1;
          end
        end
        MODE_RED: begin
          ra_d = ra_q + 32'd1;
          wd_d = wd_q + 32'd1;
          count_i_d = count_i_q + 16'd1;
        end
        default: begin
          if (wx_q != last_wx_q) begin
            wx_d = wx_q + 16'd1;
            ra_d = ra_q + 32'd1;
          end else if (wy_q != last_wy_q) begin
            wx_d = 16'd0;
            wy_d = wy_q + 8'd1;
            line_row_d = line_row_q + in_w_q;
            ra_d = line_row_q + in_w_q;
          end else begin
            // The window is complete: on to the next output pixel.
            wx_d = 16'd0;
            wy_d = 8'd0;
            wd_d = wd_q + 32'd1;
            if (count_i_q != last_i_q) begin
              count_i_d = count_i_q + 16'd1;
              pix_row_d = pix_row_q + step_w_q;
              line_row_d = pix_row_q + step_w_q;
              ra_d = pix_row_q + step_w_q;
            end else begin
              count_i_d = 16'd0;
              oy_d = oy_q + 16'd1;
              oy_row_d = oy_row_q + step_h_q;
              pix_row_d = oy_row_q + step_h_q;
              line_row_d = oy_row_q + step_h_q;
              ra_d = oy_row_q + step_h_q;
            end
          end
        end
      endcase
    end
  end

  // The walk only means something while an instruction runs: loaded by start_i, not reset.
  always_ff @(posedge clk) begin
    if (!rst) begin
      ra_q <= ra_d;
      rb_q <= rb_d;
      wd_q <= wd_d;
      bias_phase_q <= bias_phase_d;
      second_q <= second_d;
      count_i_q <= count_i_d;
      last_i_q <= last_i_d;
      oy_q <= oy_d;
      last_oy_q <= last_oy_d;
      wx_q <= wx_d;
      wy_q <= wy_d;
      last_wx_q <= last_wx_d;
      last_wy_q <= last_wy_d;
      line_row_q <= line_row_d;
      pix_row_q <= pix_row_d;
      oy_row_q <= oy_row_d;
      in_w_q <= in_w_d;
      step_w_q <= step_w_d;
      step_h_q <= step_h_d;
    end
  end

  // ---- Assertions --------------------------------------------------------------------------
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst && acc_rd_req) begin
      assert (rd_addr < ACC_ROWS) else $error("systole_vector_unit: acc read row %0d", rd_addr);
    end
    if (!rst && ub_rd_req) begin
      assert (rd_addr < UB_ROWS) else $error("systole_vector_unit: ub read row %0d", rd_addr);
    end
    if (!rst && alloc_o) begin
      assert (wd_q < UB_ROWS) else $error("systole_vector_unit: ub write row %0d", wd_q);
    end
  end
`endif
endmodule
