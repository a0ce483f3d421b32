// systole_sdram_ctrl — device memory in one x16 SDR SDRAM chip (the ULX3S board's 32 MB), behind
// the core's device-memory port (rtl/systole_core.sv): one request at a time, every request
// answered in order (reads with data, writes with an acknowledgement), responses never refused
// — the same port contract as systole_ice40_spram.
//
// One 256-bit row of the port is 16 beats of 16 bits: two bursts of 8 (mode register BL 8,
// sequential). BL 8 rather than a full-page burst because a full page needs a BURST TERMINATE
// or PRECHARGE at the right edge after every access; two BL 8 commands 8 cycles apart give the
// same 16 uninterrupted beats, and every burst ends by itself. Byte strobes become DQM (write
// latency 0: each beat's two strobes, inverted).
//
// Address map (byte address): [4:0] within the row (always 0), then the column's upper bits
// [COL_BITS:5], the bank [COL_BITS+2:COL_BITS+1], the row above. Consecutive 32-byte rows
// stay in one SDRAM row for 2^(COL_BITS+1) bytes (1 KiB with 512 columns) and then move to the
// next bank, so that a sequential stream is mostly row hits.
//
// Open-page policy: a row stays open after its access (one open row per bank, four banks); a
// hit costs only its column commands, a conflict PRE + ACT. Rows are closed for every refresh
// (PRECHARGE ALL + AUTO REFRESH): refreshes come every 7.8 us, so no row stays open anywhere
// near tRAS(max) = 100 us.
//
// Refresh: a free-running timer asks for one AUTO REFRESH every REFI cycles (64 ms / 8192,
// rounded down, less one cycle); requests wait while one is owed. A free-running timer (not
// restarted by the refresh) keeps the 8192 refreshes within 64 ms however long a request
// delays one: the one cycle less per interval is 8192 cycles of slack, far more than the
// longest request delays a REF (the tests hold every gap between REFs within 64 ms / 8192 + 64
// cycles, at 20 and at 143 MHz).
//
// Power-up: 200 us of NOPs with CKE high after reset, PRECHARGE ALL, two AUTO REFRESHes,
// LOAD MODE REGISTER, then requests are taken (init_done).
//
// Timing: the -7 speed grade (AS4C16M16SA-7 / AS4C32M16SB-7, 143 MHz at CL3): tRCD 21 ns,
// tRP 21 ns, tRC 63 ns, tRAS 42 ns, tRRD 14 ns, tWR 14 ns, tMRD 2 clocks, tRFC = tRC 63 ns,
// each rounded up to whole cycles of CLOCK_MHZ (with 1 % slack, so that the grade's 143 MHz
// counts as its 7 ns clock). sim/dram/sdram_device computes the same cycles (Grade7).
// Every rule is enforced by a down-counter per bank or per chip, loaded when a command is
// issued with the cycles until the next command of a kind may follow, so the command order is
// free and each rule is written once.
//
// Pins: registered outputs; DQ as separate out / output-enable / in (the board top owns the
// tristate buffer and the clock to the chip). Read data is sampled CAS_LATENCY + 1 edges after
// the command leaves its register (the chip samples the command one edge later).
module systole_sdram_ctrl #(
    parameter integer CLOCK_MHZ = 0,     // the configuration's clock; at most 143 (-7 grade)
    parameter integer CAS_LATENCY = 2,   // 2 (up to 100 MHz) or 3
    parameter integer COL_BITS = 9,      // 512 columns (32 MB chip); 10 for the 64 MB chip
    parameter integer ROW_BITS = 13,     // 8192 rows
    localparam integer ADDR_BITS = ROW_BITS + 2 + COL_BITS + 1  // byte address bits
) (
    input  logic                 clk,
    input  logic                 rst,
    output logic                 init_done,
    // requester port (rtl/README.md)
    input  logic                 req_valid,
    output logic                 req_ready,
    input  logic                 req_write,
    // verilator lint_off UNUSEDSIGNAL
    input  logic [ADDR_BITS-1:0] req_addr,  // [4:0]: within the row, always 0
    // verilator lint_on UNUSEDSIGNAL
    input  logic [255:0]         req_wdata,
    input  logic [31:0]          req_wstrb,
    output logic                 rsp_valid,
    output logic [255:0]         rsp_rdata,
    // SDRAM pins
    output logic                 sdram_cke,
    output logic                 sdram_cs_n,
    output logic                 sdram_ras_n,
    output logic                 sdram_cas_n,
    output logic                 sdram_we_n,
    output logic [1:0]           sdram_ba,
    output logic [12:0]          sdram_a,
    output logic [1:0]           sdram_dqm,
    output logic [15:0]          sdram_dq_o,
    output logic                 sdram_dq_oe,
    input  logic [15:0]          sdram_dq_i
);
  if (CLOCK_MHZ < 1 || CLOCK_MHZ > 143) begin : g_check_clock
    systole_param_error_sdram_ctrl_CLOCK_MHZ_must_be_1_to_143 u_error ();
  end
  if (CAS_LATENCY != 2 && CAS_LATENCY != 3) begin : g_check_cl
    systole_param_error_sdram_ctrl_CAS_LATENCY_must_be_2_or_3 u_error ();
  end
  if (CAS_LATENCY == 2 && CLOCK_MHZ > 100) begin : g_check_cl2
    systole_param_error_sdram_ctrl_CAS_LATENCY_2_only_up_to_100_MHz u_error ();
  end
  if (COL_BITS < 8 || COL_BITS > 10 || ROW_BITS < 1 || ROW_BITS > 13) begin : g_check_geometry
    systole_param_error_sdram_ctrl_COL_BITS_8_to_10_ROW_BITS_1_to_13 u_error ();
  end

  // Nanoseconds to cycles, rounded up, at least one (1 % slack: see the header).
  function automatic integer cycles(input integer ns);
    integer c;
    c = (ns * CLOCK_MHZ + 989) / 1000;
    cycles = c < 1 ? 1 : c;
  endfunction
  localparam integer T_RCD = cycles(21);
  localparam integer T_RP = cycles(21);
  localparam integer T_RC = cycles(63);
  localparam integer T_RAS = cycles(42);
  localparam integer T_RRD = cycles(14);
  localparam integer T_WR = cycles(14);
  localparam integer T_MRD = 2;
  localparam integer T_RFC = cycles(63);
  localparam integer T_INIT = cycles(200000);  // 200 us
  localparam integer REFI = (7812 * CLOCK_MHZ) / 1000 - 1;  // 64 ms / 8192, see the header
  localparam integer BL = 8;
  localparam integer INIT_REFRESHES = 2;
  // Issue-to-issue distances (in edges) the counters enforce beyond the datasheet's:
  //  a column command to the next: BL (bursts are never cut short);
  //  a read to a write: the read's last beat is on DQ CAS_LATENCY + BL edges after the read
  //  reaches the chip; one more edge lets the chip's drivers turn off (tHZ) before ours drive.
  localparam integer RD_TO_WR = CAS_LATENCY + BL + 1;
  localparam integer WR_TO_PRE = BL - 1 + T_WR;  // last write beat + tWR
  localparam integer CW = 8;                      // counter width: every distance < 256
  localparam integer IW = $clog2(T_INIT + 1);
  localparam integer FW = $clog2(REFI + 1);
  localparam integer CH = COL_BITS - 4;           // column bits above the 16 beats

  // {cs_n, ras_n, cas_n, we_n}
  localparam logic [3:0] CMD_NOP = 4'b0111;
  localparam logic [3:0] CMD_ACT = 4'b0011;
  localparam logic [3:0] CMD_RD = 4'b0101;
  localparam logic [3:0] CMD_WR = 4'b0100;
  localparam logic [3:0] CMD_PRE = 4'b0010;
  localparam logic [3:0] CMD_REF = 4'b0001;
  localparam logic [3:0] CMD_MRS = 4'b0000;
  // BL 8 (A[2:0] = 3), sequential (A3 = 0), CAS latency (A[6:4]), burst writes (A9 = 0)
  localparam logic [12:0] MODE = 13'(3 | (CAS_LATENCY << 4));

  typedef enum logic [2:0] {
    S_WAIT, S_PRECHARGE, S_REFRESH, S_MODE, S_RUN
  } state_e;
  state_e state_q, state_d;

  logic [IW-1:0] init_q, init_d;           // power-up wait
  logic [1:0]    init_refs_q, init_refs_d;
  logic [FW-1:0] refi_q, refi_d;           // free-running refresh timer
  logic [1:0]    owed_q, owed_d;           // refreshes owed
  // the request being served
  logic              busy_q, busy_d, second_q, second_d, write_q, write_d;
  logic [1:0]        bank_q, bank_d;
  logic [ROW_BITS-1:0] row_q, row_d;
  logic [CH-1:0]     colh_q, colh_d;
  logic [255:0]      wdata_q, wdata_d;
  logic [31:0]       wstrb_q, wstrb_d;
  // open rows
  logic [3:0]            open_q, open_d;
  logic [4*ROW_BITS-1:0] open_row_q, open_row_d;
  // timing counters: per bank (ACT, PRE, RD/WR allowed when zero) and per chip
  logic [4*CW-1:0] act_wait_q, act_wait_d, pre_wait_q, pre_wait_d, col_wait_q, col_wait_d;
  logic [CW-1:0]   rrd_q, rrd_d, rfc_q, rfc_d, mrd_q, mrd_d, rd_wait_q, rd_wait_d;
  logic [CW-1:0]   wr_wait_q, wr_wait_d;
  // write beats
  logic          writing_q, writing_d;
  logic [3:0]    wbeat_q, wbeat_d;
  // read capture: rd_line_q[k] = a read left the command register k + 1 edges ago
  logic [CAS_LATENCY:0] rd_line_q, rd_line_d;
  logic [2:0]    cap_left_q, cap_left_d;   // beats of the burst being captured still to come
  logic          capturing_q, capturing_d;
  logic [3:0]    cap_idx_q, cap_idx_d;
  logic [255:0]  rdata_q, rdata_d;
  logic          rsp_valid_q, rsp_valid_d;
  // pins
  logic [3:0]    cmd_q, cmd_d;
  logic [1:0]    ba_q, ba_d;
  logic [12:0]   a_q, a_d;
  logic [1:0]    dqm_q, dqm_d;
  logic [15:0]   dq_o_q, dq_o_d;
  logic          dq_oe_q, dq_oe_d;

  assign init_done = state_q == S_RUN;
  assign req_ready = !rst && state_q == S_RUN && !busy_q && owed_q == 2'd0 &&
                     !(writing_q && wbeat_q != 4'd15);
  assign rsp_valid = rsp_valid_q;
  assign rsp_rdata = rdata_q;
  assign sdram_cke = 1'b1;
  assign {sdram_cs_n, sdram_ras_n, sdram_cas_n, sdram_we_n} = cmd_q;
  assign sdram_ba = ba_q;
  assign sdram_a = a_q;
  assign sdram_dqm = dqm_q;
  assign sdram_dq_o = dq_o_q;
  assign sdram_dq_oe = dq_oe_q;

  function automatic logic [CW-1:0] dec(input logic [CW-1:0] v);
    dec = v == '0 ? '0 : v - 1'b1;
  endfunction
  // a counter that must reach zero `dist` edges from now (an issue-to-issue distance)
  function automatic logic [CW-1:0] at_least(input logic [CW-1:0] v, input integer distance);
    logic [CW-1:0] need;
    need = CW'(distance - 1);
    at_least = v > need ? v : need;
  endfunction

  logic accept, hit, all_closed, pre_all_ok, ref_ok, act_ok, col_ok;
  logic [ROW_BITS-1:0] bank_row;  // the open row of the request's bank
  assign accept = req_valid && req_ready;

  always_comb begin
    // a loop, not open_row_q[ROW_BITS*bank_q +: ...]: Yosys maps that product to a DSP
    bank_row = '0;
    for (int b = 0; b < 4; b++) begin
      if (bank_q == 2'(b)) bank_row = open_row_q[ROW_BITS*b +: ROW_BITS];
    end
    all_closed = open_q == 4'd0;
    pre_all_ok = mrd_q == '0;
    ref_ok = mrd_q == '0 && rfc_q == '0;
    for (int b = 0; b < 4; b++) begin
      if (open_q[b] && pre_wait_q[CW*b +: CW] != '0) pre_all_ok = 1'b0;
      if (act_wait_q[CW*b +: CW] != '0) ref_ok = 1'b0;
    end
    hit = open_q[bank_q] && bank_row == row_q;
    act_ok = act_wait_q[CW*bank_q +: CW] == '0 && rrd_q == '0 && rfc_q == '0 && mrd_q == '0;
    col_ok = col_wait_q[CW*bank_q +: CW] == '0 && mrd_q == '0 &&
             (write_q ? wr_wait_q == '0 : rd_wait_q == '0);
  end

  always_comb begin
    state_d = state_q;
    init_d = init_q;
    init_refs_d = init_refs_q;
    refi_d = refi_q;
    owed_d = owed_q;
    busy_d = busy_q;
    second_d = second_q;
    write_d = write_q;
    bank_d = bank_q;
    row_d = row_q;
    colh_d = colh_q;
    wdata_d = wdata_q;
    wstrb_d = wstrb_q;
    open_d = open_q;
    open_row_d = open_row_q;
    for (int b = 0; b < 4; b++) begin
      act_wait_d[CW*b +: CW] = dec(act_wait_q[CW*b +: CW]);
      pre_wait_d[CW*b +: CW] = dec(pre_wait_q[CW*b +: CW]);
      col_wait_d[CW*b +: CW] = dec(col_wait_q[CW*b +: CW]);
    end
    rrd_d = dec(rrd_q);
    rfc_d = dec(rfc_q);
    mrd_d = dec(mrd_q);
    rd_wait_d = dec(rd_wait_q);
    wr_wait_d = dec(wr_wait_q);
    writing_d = writing_q;
    wbeat_d = wbeat_q;
    rd_line_d = {rd_line_q[CAS_LATENCY-1:0], 1'b0};
    cap_left_d = cap_left_q;
    capturing_d = capturing_q;
    cap_idx_d = cap_idx_q;
    rdata_d = rdata_q;
    rsp_valid_d = 1'b0;
    cmd_d = CMD_NOP;
    ba_d = ba_q;
    a_d = a_q;
    dqm_d = 2'b00;
    dq_o_d = dq_o_q;
    dq_oe_d = 1'b0;

    // refresh timer: runs from the end of power-up
    if (state_q == S_RUN) begin
      if (refi_q == '0) begin
        refi_d = FW'(REFI - 1);
        owed_d = owed_q + 2'd1;
      end else begin
        refi_d = refi_q - 1'b1;
      end
    end

    if (accept) begin
      busy_d = 1'b1;
      second_d = 1'b0;
      write_d = req_write;
      colh_d = req_addr[COL_BITS:5];
      bank_d = req_addr[COL_BITS+2:COL_BITS+1];
      row_d = req_addr[ADDR_BITS-1:COL_BITS+3];
      wdata_d = req_wdata;
      wstrb_d = req_wstrb;
    end

    case (state_q)
      S_WAIT: begin
        init_d = init_q - 1'b1;
        if (init_q == '0) state_d = S_PRECHARGE;
      end
      S_PRECHARGE: begin
        cmd_d = CMD_PRE;
        a_d = 13'h400;  // A10: all banks
        for (int b = 0; b < 4; b++) act_wait_d[CW*b +: CW] = CW'(T_RP - 1);
        state_d = S_REFRESH;
      end
      S_REFRESH: begin
        if (ref_ok) begin
          cmd_d = CMD_REF;
          rfc_d = CW'(T_RFC - 1);
          init_refs_d = init_refs_q + 2'd1;
          if (init_refs_q == 2'(INIT_REFRESHES - 1)) state_d = S_MODE;
        end
      end
      S_MODE: begin
        if (ref_ok) begin
          cmd_d = CMD_MRS;
          a_d = MODE;
          ba_d = 2'b00;
          mrd_d = CW'(T_MRD - 1);
          refi_d = FW'(REFI - 1);
          state_d = S_RUN;
        end
      end
      S_RUN: begin
        if (busy_q) begin
          if (hit) begin
            if (col_ok) begin
              cmd_d = write_q ? CMD_WR : CMD_RD;
              ba_d = bank_q;
              a_d = 13'({colh_q, second_q, 3'b000});  // A10 low: no auto-precharge
              second_d = 1'b1;
              if (second_q) busy_d = 1'b0;
              rd_wait_d = at_least(rd_wait_d, BL);
              if (write_q) begin
                wr_wait_d = at_least(wr_wait_d, BL);
                pre_wait_d[CW*bank_q +: CW] = at_least(pre_wait_d[CW*bank_q +: CW], WR_TO_PRE);
              end else begin
                wr_wait_d = at_least(wr_wait_d, RD_TO_WR);
                pre_wait_d[CW*bank_q +: CW] = at_least(pre_wait_d[CW*bank_q +: CW], BL);
              end
            end
          end else if (open_q[bank_q]) begin
            if (pre_wait_q[CW*bank_q +: CW] == '0 && mrd_q == '0) begin
              cmd_d = CMD_PRE;
              ba_d = bank_q;
              a_d = 13'h000;
              open_d[bank_q] = 1'b0;
              act_wait_d[CW*bank_q +: CW] = at_least(act_wait_d[CW*bank_q +: CW], T_RP);
            end
          end else if (act_ok) begin
            cmd_d = CMD_ACT;
            ba_d = bank_q;
            a_d = 13'(row_q);
            open_d[bank_q] = 1'b1;
            for (int b = 0; b < 4; b++) begin
              if (bank_q == 2'(b)) open_row_d[ROW_BITS*b +: ROW_BITS] = row_q;
            end
            act_wait_d[CW*bank_q +: CW] = CW'(T_RC - 1);
            pre_wait_d[CW*bank_q +: CW] = CW'(T_RAS - 1);
            col_wait_d[CW*bank_q +: CW] = CW'(T_RCD - 1);
            rrd_d = CW'(T_RRD - 1);
          end
        end else if (owed_q != 2'd0) begin
          // PRECHARGE ALL, then AUTO REFRESH
          if (!all_closed) begin
            if (pre_all_ok) begin
              cmd_d = CMD_PRE;
              a_d = 13'h400;
              open_d = 4'd0;
              for (int b = 0; b < 4; b++) begin
                act_wait_d[CW*b +: CW] = at_least(act_wait_d[CW*b +: CW], T_RP);
              end
            end
          end else if (ref_ok) begin
            cmd_d = CMD_REF;
            rfc_d = CW'(T_RFC - 1);
            owed_d = owed_d - 2'd1;
          end
        end
      end
      default: state_d = S_WAIT;
    endcase

    // write beats: beat 0 leaves with the first WR, beat 8 with the second. The data and
    // strobes shift down one beat at a time (a shift register, not a 16-way multiplexer); a
    // request taken with the last beat loads its own.
    if ((cmd_d == CMD_WR && !second_q) || writing_q) begin
      dq_o_d = wdata_q[15:0];
      dqm_d = ~wstrb_q[1:0];
      dq_oe_d = 1'b1;
      if (!accept) begin
        wdata_d = {16'd0, wdata_q[255:16]};
        wstrb_d = {2'd0, wstrb_q[31:2]};
      end
    end
    if (cmd_d == CMD_WR && !second_q) begin
      writing_d = 1'b1;
      wbeat_d = 4'd1;
    end else if (writing_q) begin
      wbeat_d = wbeat_q + 4'd1;
      if (wbeat_q == 4'd15) begin
        writing_d = 1'b0;
        rsp_valid_d = 1'b1;  // the acknowledgement, after every earlier read's data
      end
    end

    // read capture: the chip drives beat 0 CAS_LATENCY edges after it samples the RD
    rd_line_d[0] = cmd_d == CMD_RD;
    if (rd_line_q[CAS_LATENCY] || capturing_q) begin
      rdata_d = {sdram_dq_i, rdata_q[255:16]};  // beat 0 ends at the bottom after 16
      cap_idx_d = cap_idx_q + 4'd1;
      if (cap_idx_q == 4'd15) rsp_valid_d = 1'b1;
      if (rd_line_q[CAS_LATENCY]) begin
        capturing_d = 1'b1;
        cap_left_d = 3'd6;
      end else begin
        cap_left_d = cap_left_q - 3'd1;
        if (cap_left_q == 3'd0) capturing_d = 1'b0;
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      state_q <= S_WAIT;
      init_q <= IW'(T_INIT);
      init_refs_q <= '0;
      refi_q <= '0;
      owed_q <= '0;
      busy_q <= 1'b0;
      second_q <= 1'b0;
      write_q <= 1'b0;
      bank_q <= '0;
      row_q <= '0;
      colh_q <= '0;
      open_q <= '0;
      open_row_q <= '0;
      act_wait_q <= '0;
      pre_wait_q <= '0;
      col_wait_q <= '0;
      rrd_q <= '0;
      rfc_q <= '0;
      mrd_q <= '0;
      rd_wait_q <= '0;
      wr_wait_q <= '0;
      writing_q <= 1'b0;
      wbeat_q <= '0;
      rd_line_q <= '0;
      cap_left_q <= '0;
      capturing_q <= 1'b0;
      cap_idx_q <= '0;
      rsp_valid_q <= 1'b0;
      cmd_q <= CMD_NOP;
      ba_q <= '0;
      a_q <= '0;
      dqm_q <= 2'b11;
      dq_o_q <= '0;
      dq_oe_q <= 1'b0;
    end else begin
      state_q <= state_d;
      init_q <= init_d;
      init_refs_q <= init_refs_d;
      refi_q <= refi_d;
      owed_q <= owed_d;
      busy_q <= busy_d;
      second_q <= second_d;
      write_q <= write_d;
      bank_q <= bank_d;
      row_q <= row_d;
      colh_q <= colh_d;
      open_q <= open_d;
      open_row_q <= open_row_d;
      act_wait_q <= act_wait_d;
      pre_wait_q <= pre_wait_d;
      col_wait_q <= col_wait_d;
      rrd_q <= rrd_d;
      rfc_q <= rfc_d;
      mrd_q <= mrd_d;
      rd_wait_q <= rd_wait_d;
      wr_wait_q <= wr_wait_d;
      writing_q <= writing_d;
      wbeat_q <= wbeat_d;
      rd_line_q <= rd_line_d;
      cap_left_q <= cap_left_d;
      capturing_q <= capturing_d;
      cap_idx_q <= cap_idx_d;
      rsp_valid_q <= rsp_valid_d;
      cmd_q <= cmd_d;
      ba_q <= ba_d;
      a_q <= a_d;
      dqm_q <= dqm_d;
      dq_o_q <= dq_o_d;
      dq_oe_q <= dq_oe_d;
    end
  end
  // Data registers: no reset (written before they are read).
  always_ff @(posedge clk) begin
    wdata_q <= wdata_d;
    wstrb_q <= wstrb_d;
    rdata_q <= rdata_d;
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      assert (!(state_q == S_RUN && refi_q == '0 && owed_q == 2'd3))
      else $error("systole_sdram_ctrl: more than three refreshes owed");
      assert (!(req_valid && req_addr[4:0] != 5'd0))
      else $error("systole_sdram_ctrl: address 0x%0h is not a multiple of 32", req_addr);
    end
  end
`endif
endmodule
