// systole_vector_slots — the vector unit's output slots: an in-order buffer of DEPTH result
// rows between the lanes and the unified-buffer write port.
//
// A slot is allocated (alloc_i, with its destination row) when a group's last read is granted,
// filled (fill_i, with the lanes' result row) two cycles after that read's data arrives, and
// freed when its row write is granted. Slots are allocated, filled and written in order, so
// three pointers suffice. The read walk starts a group only while a slot is free (credit_o),
// so the lanes' pipeline, which never stalls, always has somewhere to put its result; with
// DEPTH = 5 ACTIVATE sustains one row per cycle (a slot lives four cycles from read grant to
// write grant). hazard_o tells the walk that an allocated slot still has to write the row it
// is about to read, so that a read never overtakes an earlier write.
//
// Parameters (from systole_vector_unit; the defaults are rejected at elaboration):
//   ROWS, COLS, BF16  the shape of a unified-buffer row (max(ROWS, COLS) elements of 8 or 16
//                     bits), the width of a slot.
//   UB_ROWS           the unified buffer's size: the width of a destination row.
module systole_vector_slots #(
    parameter integer ROWS = 0,
    parameter integer COLS = 0,
    parameter integer BF16 = -1,
    parameter integer UB_ROWS = 0,
    localparam integer W = (ROWS > COLS) ? ROWS : COLS,
    localparam integer EW = (BF16 != 0) ? 16 : 8,
    localparam integer UB_AW = $clog2(UB_ROWS)
) (
    input  logic             clk,
    input  logic             rst,
    input  logic             alloc_i,       // take the next slot for row alloc_addr_i
    input  logic [UB_AW-1:0] alloc_addr_i,
    input  logic             fill_i,        // the oldest unfilled slot's result is fill_data_i
    input  logic [W*EW-1:0]  fill_data_i,
    input  logic [UB_AW-1:0] rd_addr_i,     // the row the read walk is about to read
    output logic             hazard_o,      // ... is still to be written by an allocated slot
    output logic             credit_o,      // a slot is free
    output logic             empty_d_o,     // no slot will be allocated after this edge
    // UB write port (shared, req/gnt; written at the granting edge; always whole rows)
    output logic             ub_wr_req,
    output logic [UB_AW-1:0] ub_wr_addr,
    output logic [W*EW-1:0]  ub_wr_data,
    input  logic             ub_wr_gnt
);

  // ---- Parameters --------------------------------------------------------------------------
  // Configuration parameters come from the parent; the defaults fail these checks.
  if (ROWS < 1 || COLS < 1) begin : g_shape_check
    systole_param_error_vector_slots_ROWS_and_COLS_must_be_at_least_1 u_error ();
  end
  if (BF16 != 0 && BF16 != 1) begin : g_bf16_check
    systole_param_error_vector_slots_BF16_must_be_0_or_1 u_error ();
  end
  if (UB_ROWS < 2) begin : g_ub_check
    systole_param_error_vector_slots_UB_ROWS_must_be_at_least_2 u_error ();
  end

  localparam integer DEPTH = 5;  // slots: see the header
  localparam integer SW = 3;     // slot index / count bits

  function automatic logic [SW-1:0] next_slot(input logic [SW-1:0] p);
    next_slot = (p == SW'(DEPTH - 1)) ? '0 : p + 1'b1;
  endfunction

  // ---- State -------------------------------------------------------------------------------
  logic [UB_AW-1:0] slot_addr_q [DEPTH];        // storage: written on alloc, never reset
  logic [W*EW-1:0]  slot_data_q [DEPTH];        // storage: written on fill, never reset
  logic [DEPTH-1:0] slot_used_q, slot_used_d;   // allocated: the row write is still to happen
  logic [DEPTH-1:0] slot_full_q, slot_full_d;   // ... and its result is in slot_data_q
  logic [SW-1:0]    alloc_ptr_q, alloc_ptr_d;
  logic [SW-1:0]    fill_ptr_q, fill_ptr_d;
  logic [SW-1:0]    head_ptr_q, head_ptr_d;
  logic [SW-1:0]    count_q, count_d;

  // ---- Reads and writes --------------------------------------------------------------------
  always_comb begin
    hazard_o = 1'b0;
    for (int k = 0; k < DEPTH; k++) begin
      if (slot_used_q[k] && slot_addr_q[k] == rd_addr_i) hazard_o = 1'b1;
    end
  end
  assign credit_o = count_q < SW'(DEPTH);

  logic wr_fire;
  assign ub_wr_req  = slot_used_q[head_ptr_q] && slot_full_q[head_ptr_q];
  assign ub_wr_addr = slot_addr_q[head_ptr_q];
  assign ub_wr_data = slot_data_q[head_ptr_q];
  assign wr_fire    = ub_wr_req && ub_wr_gnt;

  // ---- Next state --------------------------------------------------------------------------
  always_comb begin
    alloc_ptr_d = alloc_ptr_q;
    fill_ptr_d = fill_ptr_q;
    head_ptr_d = head_ptr_q;
    slot_used_d = slot_used_q;
    slot_full_d = slot_full_q;
    if (alloc_i) alloc_ptr_d = next_slot(alloc_ptr_q);
    if (fill_i) fill_ptr_d = next_slot(fill_ptr_q);
    if (wr_fire) head_ptr_d = next_slot(head_ptr_q);
    // fill_i fills a slot other than the head being freed unless the head's own result arrives
    // now, which cannot be: a slot's result is written before its write is requested.
    // Likewise a slot is never allocated while it is being written (it is still used).
    for (int k = 0; k < DEPTH; k++) begin
      if (fill_i && fill_ptr_q == SW'(k)) slot_full_d[k] = 1'b1;
      else if (wr_fire && head_ptr_q == SW'(k)) slot_full_d[k] = 1'b0;
      if (alloc_i && alloc_ptr_q == SW'(k)) slot_used_d[k] = 1'b1;
      else if (wr_fire && head_ptr_q == SW'(k)) slot_used_d[k] = 1'b0;
    end
    count_d = count_q + SW'(alloc_i) - SW'(wr_fire);
  end
  assign empty_d_o = count_d == '0;

  always_ff @(posedge clk) begin
    if (rst) begin
      slot_used_q <= '0;
      slot_full_q <= '0;
      alloc_ptr_q <= '0;
      fill_ptr_q <= '0;
      head_ptr_q <= '0;
      count_q <= '0;
    end else begin
      slot_used_q <= slot_used_d;
      slot_full_q <= slot_full_d;
      alloc_ptr_q <= alloc_ptr_d;
      fill_ptr_q <= fill_ptr_d;
      head_ptr_q <= head_ptr_d;
      count_q <= count_d;
    end
  end

  // Storage.
  always_ff @(posedge clk) begin
    if (alloc_i) slot_addr_q[alloc_ptr_q] <= alloc_addr_i;
    if (fill_i) slot_data_q[fill_ptr_q] <= fill_data_i;
  end

  // ---- Assertions --------------------------------------------------------------------------
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst && fill_i) begin
      assert (!slot_full_q[fill_ptr_q]) else $error("systole_vector_unit: result into a full slot");
    end
    if (!rst) begin
      assert (count_q <= SW'(DEPTH)) else $error("systole_vector_unit: slot count");
    end
  end
`endif
endmodule
