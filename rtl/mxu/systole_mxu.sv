// systole_mxu — the matrix unit: executes MATMUL (docs/ISA.md) on a weight-stationary
// R x C systolic array with double-buffered weights.
//
//   cmd ─► issue ──ub_rd_en──► UB ──► mask (t >= k → +0) ──► systolic array ──► accumulate ──► ACC
//          (one row           (1 cycle)                      (R + C - 1 cycles)  read-modify-write
//           per cycle)                                                           (ACC read issued
//                                                                                 1 cycle ahead)
//   WEIGHT DMA ─► weight FIFO ─► loader ─► shadow weight bank of the array
//
// Pipeline of one input row (cycle numbers relative to its ub_rd_en in cycle I):
//   I            issue: ub_rd_en / ub_rd_addr
//   I+1          S: the UB row is valid; masked and presented to the array
//   I+R+C-1      acc_rd_en for the row (accumulate only)
//   I+R+C        T: the column sums leave the array; ACC row (forwarded if needed) + sums
//   I+R+C+1      acc_wr_en / acc_wr_addr / acc_wr_data: the row is written at the edge ending it
//   I+R+C+2      done, if it was the MATMUL's last row
//
// Throughput: one row per cycle. A MATMUL is accepted while the previous one issues its last
// row, so back-to-back MATMULs stream without a bubble; a MATMUL with pop waits (stall_wfifo)
// only until its tile is in the shadow bank.
//
// Weights. Each PE has two weight banks. `cur_bank` is the stationary tile's bank; the other
// (shadow) bank receives the next tile from the FIFO while the current one computes. A pop
// flips cur_bank between two input rows; every row carries its bank through the array, so
// rows of the old tile still in flight finish with the old weights.
//   Loading a bank overwrites it, so it starts only after the last row that used that bank has
//   passed the last array row: a row issued in cycle I uses PE[t][j] in cycle I+1+t+j, and
//   column j's shifts happen j cycles after column 0's, so the first shift (array input in
//   cycle L) must satisfy L >= I_last + R. `drain[b]` counts that down. The R shifts end with
//   column 0's last one in cycle L+R-1 and a pop may issue in that cycle (its row reaches
//   PE[0][j] in cycle I+1+j, after column j's last shift in L+R-1+j). Consequence: a tile swap
//   is free when the MATMUL before the pop streams at least 2R-2 rows (e.g. rows >= R+C on a
//   square array); shorter ones wait for the load.
//
// Accumulation. The row's old ACC value is read one cycle before its sums arrive. The two
// previous writes may not be in the RAM yet for that read (one is written at the same edge as
// the read, which then returns undefined data; the other one edge later), so they are forwarded:
// back-to-back MATMULs accumulating into the same rows (K tiling, even rows=1) are correct.
module systole_mxu #(
    parameter integer ROWS = 0,
    parameter integer COLS = 0,
    parameter integer BF16 = -1,
    parameter integer UB_ROWS = 0,
    parameter integer ACC_ROWS = 0,
    parameter integer WFIFO_TILES = 0,
    localparam integer EW = (BF16 != 0) ? 16 : 8,
    localparam integer W = (ROWS > COLS) ? ROWS : COLS,
    localparam integer UB_AW = $clog2(UB_ROWS),
    localparam integer ACC_AW = $clog2(ACC_ROWS)
) (
    input  logic                clk,
    input  logic                rst,
    input  logic                launch_start,
    // MATMUL commands from the sequencer
    input  logic                cmd_valid,
    output logic                cmd_ready,
    input  logic [255:0]        cmd_insn,
    output logic                done,
    // weight rows from the WEIGHT DMA (ROWS per tile, row t = T[t][0..COLS-1])
    input  logic                wrow_valid,
    output logic                wrow_ready,
    input  logic [COLS*EW-1:0]  wrow_data,
    // UB read port A
    output logic                ub_rd_en,
    output logic [UB_AW-1:0]    ub_rd_addr,
    input  logic [W*EW-1:0]     ub_rd_data,
    // ACC read port A and the ACC write port
    output logic                acc_rd_en,
    output logic [ACC_AW-1:0]   acc_rd_addr,
    input  logic [COLS*32-1:0]  acc_rd_data,
    output logic                acc_wr_en,
    output logic [ACC_AW-1:0]   acc_wr_addr,
    output logic [COLS*32-1:0]  acc_wr_data,
    // performance events
    output logic                busy_event,
    output logic                stall_wfifo
);
  `include "systole_isa.svh"

  // ---- parameter checks --------------------------------------------------------------------
  if (ROWS < 1) begin : g_rows_check
    systole_param_error_mxu_ROWS_must_be_at_least_1 u_error ();
  end
  if (COLS < 1) begin : g_cols_check
    systole_param_error_mxu_COLS_must_be_at_least_1 u_error ();
  end
  if (BF16 != 0 && BF16 != 1) begin : g_bf16_check
    systole_param_error_mxu_BF16_must_be_0_or_1 u_error ();
  end
  if (UB_ROWS < 2 || ACC_ROWS < 2) begin : g_buffer_check
    systole_param_error_mxu_UB_ROWS_and_ACC_ROWS_must_be_at_least_2 u_error ();
  end
  if (WFIFO_TILES < 1) begin : g_wfifo_check
    systole_param_error_mxu_WFIFO_TILES_must_be_at_least_1 u_error ();
  end

  localparam integer LAT = ROWS + COLS - 1;       // array latency, S to T
  localparam integer DW = $clog2(ROWS + 1);       // drain counter width
  localparam integer DRAIN = ROWS >= 2 ? ROWS - 2 : 0;

  // ---- decode ------------------------------------------------------------------------------
  logic              dec_pop, dec_accumulate;
  logic [UB_AW-1:0]  dec_ub;
  logic [ACC_AW-1:0] dec_acc;
  // rows and k in the widths the checks leave them (rows <= min(UB_ROWS, ACC_ROWS), k <= ROWS;
  // asserted below): the command queue then holds only these bits (docs/FPGA.md, Tang Nano 20K).
  localparam integer KR = $clog2((UB_ROWS < ACC_ROWS ? UB_ROWS : ACC_ROWS) + 1);
  localparam integer KK = $clog2(ROWS + 1);
  logic [KR-1:0]     dec_rows;
  logic [KK-1:0]     dec_k;
  // The sequencer has checked the opcode and every range (ub + rows <= UB_ROWS, ...), so only
  // the low address bits matter and the rest of the instruction is not looked at.
  assign dec_pop = cmd_insn[MATMUL_POP_LSB];
  assign dec_accumulate = cmd_insn[MATMUL_ACCUMULATE_LSB];
  assign dec_ub = cmd_insn[MATMUL_UB_LSB +: UB_AW];
  assign dec_acc = cmd_insn[MATMUL_ACC_LSB +: ACC_AW];
  assign dec_rows = cmd_insn[MATMUL_ROWS_LSB +: KR];
  assign dec_k = cmd_insn[MATMUL_K_LSB +: KK];

  // ---- weight FIFO and the loader of the shadow bank -------------------------------------------
  logic              cur_bank_q, cur_bank_d;      // bank of the stationary tile
  logic              shadow_full_q, shadow_full_d;  // the shadow bank holds (or receives) the next tile
  logic [DW-1:0]     ld_left_q, ld_left_d;  // FIFO reads still to issue for the tile being loaded
  logic [DW-1:0]     drain_q [2], drain_d [2];     // cycles until no in-flight row uses bank b
  logic              fifo_tile_ready, fifo_rd_en, ld_start, shadow_ready;
  logic [COLS*EW-1:0] fifo_rd_data;
  logic              wload_en_q, wload_en_d, wload_bank_q, wload_bank_d;

  systole_weight_fifo #(.ROWS(ROWS), .COLS(COLS), .BF16(BF16), .TILES(WFIFO_TILES)) u_wfifo (
      .clk,
      .rst,
      .clear(launch_start),
      .push_valid(wrow_valid),
      .push_ready(wrow_ready),
      .push_data(wrow_data),
      .tile_ready(fifo_tile_ready),
      .rd_en(fifo_rd_en),
      .rd_data(fifo_rd_data)
  );

  assign ld_start = !shadow_full_q && fifo_tile_ready && drain_q[~cur_bank_q] == '0;
  assign fifo_rd_en = ld_start || ld_left_q != '0;
  assign shadow_ready = shadow_full_q && ld_left_q == '0;

  // ---- issue: one UB row per cycle -----------------------------------------------------------
  logic              act_valid_q, act_valid_d;     // a MATMUL is in the issue stage
  logic              act_pop_q, act_pop_d;  // ... and still has to pop its tile before its first row
  logic              act_accumulate_q, act_accumulate_d;
  logic [UB_AW-1:0]  act_ub_q, act_ub_d;
  logic [ACC_AW-1:0] act_acc_q, act_acc_d;
  logic [KR-1:0]     act_rows_q, act_rows_d;      // rows still to issue
  logic [ROWS-1:0]   act_mask_q, act_mask_d;      // element t is used (t < k)
  logic              issue, issue_last, issue_bank, accept;
  logic [ROWS-1:0]   dec_mask;

  always_comb begin
    for (int t = 0; t < ROWS; t++) dec_mask[t] = 32'(t) < 32'(dec_k);
  end

  assign issue = act_valid_q && (!act_pop_q || shadow_ready);
  assign issue_last = issue && act_rows_q == KR'(1);
  assign issue_bank = act_pop_q ? ~cur_bank_q : cur_bank_q;
  assign cmd_ready = !act_valid_q || issue_last;
  assign accept = cmd_valid && cmd_ready;
  assign ub_rd_en = issue;
  assign ub_rd_addr = act_ub_q;
  assign stall_wfifo = act_valid_q && act_pop_q && !shadow_ready;

  always_comb begin
    act_valid_d = act_valid_q;
    act_pop_d = act_pop_q;
    cur_bank_d = cur_bank_q;
    shadow_full_d = shadow_full_q;
    ld_left_d = ld_left_q;
    wload_en_d = wload_en_q;
    wload_bank_d = wload_bank_q;
    act_accumulate_d = act_accumulate_q;
    act_ub_d = act_ub_q;
    act_acc_d = act_acc_q;
    act_rows_d = act_rows_q;
    act_mask_d = act_mask_q;
    drain_d[0] = drain_q[0];
    drain_d[1] = drain_q[1];
    // The issue stage.
    if (accept) begin
      act_valid_d = 1'b1;
      act_pop_d = dec_pop;
      act_accumulate_d = dec_accumulate;
      act_ub_d = dec_ub;
      act_acc_d = dec_acc;
      act_rows_d = dec_rows;
      act_mask_d = dec_mask;
    end else if (issue) begin
      act_valid_d = !issue_last;
      act_pop_d = 1'b0;
      act_ub_d = act_ub_q + 1'b1;
      act_acc_d = act_acc_q + 1'b1;
      act_rows_d = act_rows_q - 1'b1;
    end
    // The pop: the shadow bank becomes the stationary tile.
    if (issue && act_pop_q) cur_bank_d = ~cur_bank_q;
    // Drain counters: bank b is free R-1 cycles after its last row is issued (see above).
    for (int b = 0; b < 2; b++) begin
      if (issue && issue_bank == b[0]) drain_d[b] = DW'(DRAIN);
      else if (drain_q[b] != '0) drain_d[b] = drain_q[b] - 1'b1;
    end
    // The loader: R FIFO reads (tile rows R-1 .. 0), each shifted into the shadow bank the
    // cycle after.
    if (launch_start) begin
      shadow_full_d = 1'b0;
      ld_left_d = '0;
    end else if (ld_start) begin
      shadow_full_d = 1'b1;
      ld_left_d = DW'(ROWS - 1);
    end else begin
      if (ld_left_q != '0) ld_left_d = ld_left_q - 1'b1;
      if (issue && act_pop_q) shadow_full_d = 1'b0;
    end
    wload_en_d = fifo_rd_en && !launch_start;
    wload_bank_d = ~cur_bank_q;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      act_valid_q <= '0;
      act_pop_q <= '0;
      cur_bank_q <= '0;
      shadow_full_q <= '0;
      ld_left_q <= '0;
      wload_en_q <= '0;
      wload_bank_q <= '0;
      drain_q[0] <= '0;
      drain_q[1] <= '0;
    end else begin
      act_valid_q <= act_valid_d;
      act_pop_q <= act_pop_d;
      cur_bank_q <= cur_bank_d;
      shadow_full_q <= shadow_full_d;
      ld_left_q <= ld_left_d;
      wload_en_q <= wload_en_d;
      wload_bank_q <= wload_bank_d;
      drain_q[0] <= drain_d[0];
      drain_q[1] <= drain_d[1];
    end
  end

  // The issuing instruction's fields: meaningful only while act_valid_q, so not reset.
  always_ff @(posedge clk) begin
    if (!rst) begin
      act_accumulate_q <= act_accumulate_d;
      act_ub_q <= act_ub_d;
      act_acc_q <= act_acc_d;
      act_rows_q <= act_rows_d;
      act_mask_q <= act_mask_d;
    end
  end

  // ---- S: the UB row enters the array ------------------------------------------------------
  // The row's control travels beside the array in shift registers: bit/field d is stage S + d
  // (d = 0 is S itself, d = LAT is T).
  logic [LAT:0]              p_valid, p_accumulate, p_last;
  logic [(LAT+1)*ACC_AW-1:0] p_acc;
  logic                      s_bank;
  logic [ROWS-1:0]           s_mask;
  logic [ROWS*EW-1:0]        s_row;

  always_ff @(posedge clk) begin
    if (rst) begin
      p_valid <= '0;
    end else begin
      p_valid <= {p_valid[LAT-1:0], issue};
    end
    p_accumulate <= {p_accumulate[LAT-1:0], act_accumulate_q};
    p_last <= {p_last[LAT-1:0], issue_last};
    p_acc <= {p_acc[LAT*ACC_AW-1:0], act_acc_q};
    s_bank <= issue_bank;
    s_mask <= act_mask_q;
  end

  always_comb begin
    for (int t = 0; t < ROWS; t++) begin
      s_row[t*EW +: EW] = s_mask[t] ? ub_rd_data[t*EW +: EW] : '0;  // +0 beyond k
    end
  end
  assign busy_event = p_valid[0];

  logic [COLS*32-1:0] array_out;
  systole_systolic_array #(.ROWS(ROWS), .COLS(COLS), .BF16(BF16)) u_array (
      .clk,
      .in_row(s_row),
      .in_bank(s_bank),
      .wload_en(wload_en_q),
      .wload_bank(wload_bank_q),
      .wload_row(fifo_rd_data),
      .out_row(array_out)
  );

  // ---- accumulate: read at T-1, add at T, write at T+1 ------------------------------------------
  logic [ACC_AW-1:0] t_acc;  // the row's accumulator address at T
  assign acc_rd_en = p_valid[LAT-1] && p_accumulate[LAT-1];
  assign acc_rd_addr = p_acc[(LAT-1)*ACC_AW +: ACC_AW];
  assign t_acc = p_acc[LAT*ACC_AW +: ACC_AW];

  logic               wr_valid, wr_last, wr2_valid;
  logic [ACC_AW-1:0]  wr_addr, wr2_addr;
  logic [COLS*32-1:0] wr_data, wr2_data, acc_old, acc_new;

  // The row's current ACC contents: the newest of the two writes the RAM read missed, else
  // the RAM.
  always_comb begin
    if (wr_valid && wr_addr == t_acc) acc_old = wr_data;
    else if (wr2_valid && wr2_addr == t_acc) acc_old = wr2_data;
    else acc_old = acc_rd_data;
  end

  for (genvar j = 0; j < COLS; j++) begin : g_accumulate
    logic [31:0] sum;
    if (BF16 != 0) begin : g_fp32
      systole_fp32_add u_add (.a(acc_old[j*32 +: 32]), .b(array_out[j*32 +: 32]), .y(sum));
    end else begin : g_int32
      assign sum = acc_old[j*32 +: 32] + array_out[j*32 +: 32];  // wraps modulo 2^32
    end
    assign acc_new[j*32 +: 32] = p_accumulate[LAT] ? sum : array_out[j*32 +: 32];
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      wr_valid <= 1'b0;
      wr2_valid <= 1'b0;
      done <= 1'b0;
    end else begin
      wr_valid <= p_valid[LAT];
      wr2_valid <= wr_valid;
      done <= wr_valid && wr_last;
    end
    wr_last <= p_last[LAT];
    wr_addr <= t_acc;
    wr_data <= acc_new;
    wr2_addr <= wr_addr;
    wr2_data <= wr_data;
  end

  assign acc_wr_en = wr_valid;
  assign acc_wr_addr = wr_addr;
  assign acc_wr_data = wr_data;

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst && accept) begin
      assert (cmd_insn[ISA_OPCODE_LSB +: ISA_OPCODE_WIDTH] == OP_MATMUL)
      else $error("systole_mxu: command is not a MATMUL (opcode %0h)",
                  cmd_insn[ISA_OPCODE_LSB +: ISA_OPCODE_WIDTH]);
      assert (cmd_insn[MATMUL_ROWS_LSB +: MATMUL_ROWS_WIDTH] != 16'd0 &&
              cmd_insn[MATMUL_ROWS_LSB +: MATMUL_ROWS_WIDTH] >> KR == '0 &&
              cmd_insn[MATMUL_K_LSB +: MATMUL_K_WIDTH] != 16'd0 &&
              32'(cmd_insn[MATMUL_K_LSB +: MATMUL_K_WIDTH]) <= ROWS)
      else $error("systole_mxu: MATMUL rows %0d / k %0d out of range",
                  cmd_insn[MATMUL_ROWS_LSB +: MATMUL_ROWS_WIDTH], cmd_insn[MATMUL_K_LSB +: MATMUL_K_WIDTH]);
    end
    if (!rst && wrow_valid && wrow_ready && launch_start) begin
      assert (0) else $error("systole_mxu: weight row pushed during launch_start");
    end
  end
`endif

  // Instruction bits the MXU does not need (header, tokens, reserved, high address bits) and
  // UB row elements beyond the array rows (W > ROWS).
  // verilator lint_off UNUSEDSIGNAL
  logic unused;
  assign unused = ^{cmd_insn, ub_rd_data};
  // verilator lint_on UNUSEDSIGNAL
endmodule
