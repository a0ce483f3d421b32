// systole_hbm_timing — the timing state of one DRAM channel: which command each bank may take
// this cycle, and when a refresh is due.
//
// Every JEDEC rule "command B no sooner than tX after command A" is a down-counter loaded when
// A issues and read as "zero: B allowed". A counter loaded with tX - 1 at A's edge reaches zero
// exactly tX cycles after A, so the checks here and sim/dram/dram_device.cpp agree to the cycle.
// Loads take the maximum with the running count, since several rules can feed one counter
// (a bank's PRE waits for tRAS after ACT, tRTP after RD and the write recovery after WR).
// Counters are 16 bits: every timing input must be at least 1 (arch/config checks this).
module systole_hbm_timing #(
    // DRAM geometry, set by systole_hbm_channel (the defaults fail the check below):
    parameter integer BG_BITS = 0,  // log2(bank groups), at least 1
    parameter integer BA_BITS = 0   // log2(banks per group), at least 1
) (
    input  logic                              clk,
    input  logic                              rst,
    // the command issued at this edge (see systole_hbm_channel for the encoding)
    input  logic [2:0]                        cmd,
    input  logic [BG_BITS+BA_BITS-1:0]        cmd_bank,  // {bank group, bank}
    // timing, cycles (the [dram] section of the configuration)
    input  logic [15:0]                       t_burst, t_rcd, t_rp, t_ras, t_wl, t_wr, t_rtp,
    input  logic [15:0]                       t_rrd_s, t_rrd_l, t_faw, t_ccd_s, t_ccd_l,
    input  logic [15:0]                       t_wtr, t_rtw, t_refi, t_rfc,
    // what each bank may take this cycle
    output logic [(1<<(BG_BITS+BA_BITS))-1:0] act_ok,
    output logic [(1<<(BG_BITS+BA_BITS))-1:0] pre_ok,
    output logic [(1<<(BG_BITS+BA_BITS))-1:0] rd_ok,
    output logic [(1<<(BG_BITS+BA_BITS))-1:0] wr_ok,
    output logic                              ref_ok,     // every bank idle for tRP and tRFC
    output logic                              ref_due     // a refresh interval has elapsed
);
  if (BG_BITS < 1 || BA_BITS < 1) begin : g_check_geometry
    systole_param_error_hbm_timing_BG_BITS_and_BA_BITS_must_be_at_least_1 u_error ();
  end
  localparam integer NB = 1 << (BG_BITS + BA_BITS);
  localparam integer NG = 1 << BG_BITS;
  localparam logic [2:0] CmdAct = 3'd1, CmdPre = 3'd2, CmdRd = 3'd3, CmdWr = 3'd4, CmdRef = 3'd5;

  // Next value of a counter: count down, or wait at least `cycles` from this edge.
  function automatic logic [15:0] after(input logic [15:0] count, input logic load,
                                        input logic [15:0] cycles);
    logic [15:0] down;
    down = (count == 16'd0) ? 16'd0 : count - 16'd1;
    if (load && cycles - 16'd1 > down) after = cycles - 16'd1;
    else after = down;
  endfunction

  logic [15:0] act_q [NB], act_d [NB];   // ACT: tRP after PRE, tRFC after REF
  logic [15:0] col_q [NB], col_d [NB];   // RD/WR: tRCD after ACT
  logic [15:0] pre_q [NB], pre_d [NB];   // PRE: tRAS, tRTP, write recovery
  logic [15:0] rrd_l_q [NG], rrd_l_d [NG], ccd_l_q [NG], ccd_l_d [NG];
  logic [15:0] rrd_s_q, rrd_s_d, ccd_s_q, ccd_s_d, wtr_q, wtr_d, rtw_q, rtw_d;
  logic [15:0] faw_q [4], faw_d [4];     // one counter per ACT in the tFAW window
  logic [15:0] refi_q, refi_d;
  logic        due_q, due_d;

  wire [BG_BITS-1:0] cmd_group = cmd_bank[BG_BITS+BA_BITS-1:BA_BITS];
  wire is_act = cmd == CmdAct, is_pre = cmd == CmdPre, is_rd = cmd == CmdRd;
  wire is_wr = cmd == CmdWr, is_ref = cmd == CmdRef;
  wire [15:0] write_to_pre = t_wl + t_burst + t_wr;
  wire [15:0] write_to_rd = t_wl + t_burst + t_wtr;

  logic [NB-1:0] bank_hit;   // the command's bank, one-hot
  logic [NG-1:0] group_hit;  // its bank group, one-hot
  always_comb begin
    for (int b = 0; b < NB; b++) bank_hit[b] = cmd_bank == (BG_BITS + BA_BITS)'(b);
    for (int g = 0; g < NG; g++) group_hit[g] = cmd_group == BG_BITS'(g);
  end

  logic faw_free;
  logic [1:0] faw_slot;
  always_comb begin
    faw_free = 1'b0;
    faw_slot = '0;
    for (int k = 3; k >= 0; k--) begin
      if (faw_q[k] == 16'd0) begin
        faw_free = 1'b1;
        faw_slot = 2'(k);
      end
    end
  end

  always_comb begin
    for (int b = 0; b < NB; b++) begin
      act_d[b] = after(act_q[b], (is_pre && bank_hit[b]) || is_ref, is_ref ? t_rfc : t_rp);
      col_d[b] = after(col_q[b], is_act && bank_hit[b], t_rcd);
      pre_d[b] = after(pre_q[b], bank_hit[b] && (is_act || is_rd || is_wr),
                       is_act ? t_ras : is_rd ? t_rtp : write_to_pre);
    end
    for (int g = 0; g < NG; g++) begin
      rrd_l_d[g] = after(rrd_l_q[g], is_act && group_hit[g], t_rrd_l);
      ccd_l_d[g] = after(ccd_l_q[g], (is_rd || is_wr) && group_hit[g], t_ccd_l);
    end
    rrd_s_d = after(rrd_s_q, is_act, t_rrd_s);
    ccd_s_d = after(ccd_s_q, is_rd || is_wr, t_ccd_s);
    wtr_d = after(wtr_q, is_wr, write_to_rd);
    rtw_d = after(rtw_q, is_rd, t_rtw);
    for (int k = 0; k < 4; k++) faw_d[k] = after(faw_q[k], is_act && faw_slot == 2'(k), t_faw);
    // The interval counter restarts at every edge it reaches zero; `due` holds until a REF.
    refi_d = (refi_q == 16'd0) ? t_refi - 16'd1 : refi_q - 16'd1;
    due_d = (due_q || refi_q == 16'd0) && !is_ref;
  end

  always_comb begin
    ref_ok = 1'b1;
    for (int b = 0; b < NB; b++) begin
      act_ok[b] = act_q[b] == 0 && rrd_l_q[b>>BA_BITS] == 0 && rrd_s_q == 0 && faw_free;
      pre_ok[b] = pre_q[b] == 0;
      rd_ok[b] = col_q[b] == 0 && ccd_l_q[b>>BA_BITS] == 0 && ccd_s_q == 0 && wtr_q == 0;
      wr_ok[b] = col_q[b] == 0 && ccd_l_q[b>>BA_BITS] == 0 && ccd_s_q == 0 && rtw_q == 0;
      if (act_q[b] != 0) ref_ok = 1'b0;
    end
  end
  assign ref_due = due_q;

  always_ff @(posedge clk) begin
    if (rst) begin
      for (int b = 0; b < NB; b++) begin
        act_q[b] <= '0;
        col_q[b] <= '0;
        pre_q[b] <= '0;
      end
      for (int g = 0; g < NG; g++) begin
        rrd_l_q[g] <= '0;
        ccd_l_q[g] <= '0;
      end
      for (int k = 0; k < 4; k++) faw_q[k] <= '0;
      {rrd_s_q, ccd_s_q, wtr_q, rtw_q} <= '0;
      refi_q <= t_refi - 16'd1;
      due_q <= 1'b0;
    end else begin
      for (int b = 0; b < NB; b++) begin
        act_q[b] <= act_d[b];
        col_q[b] <= col_d[b];
        pre_q[b] <= pre_d[b];
      end
      for (int g = 0; g < NG; g++) begin
        rrd_l_q[g] <= rrd_l_d[g];
        ccd_l_q[g] <= ccd_l_d[g];
      end
      for (int k = 0; k < 4; k++) faw_q[k] <= faw_d[k];
      {rrd_s_q, ccd_s_q, wtr_q, rtw_q} <= {rrd_s_d, ccd_s_d, wtr_d, rtw_d};
      refi_q <= refi_d;
      due_q <= due_d;
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      assert (!(is_act && !act_ok[cmd_bank]))
      else $error("systole_hbm_timing: ACT to bank %0d before its timing allows", cmd_bank);
      assert (!(is_pre && !pre_ok[cmd_bank]))
      else $error("systole_hbm_timing: PRE to bank %0d before its timing allows", cmd_bank);
      assert (!(is_rd && !rd_ok[cmd_bank]) && !(is_wr && !wr_ok[cmd_bank]))
      else $error("systole_hbm_timing: RD/WR to bank %0d before its timing allows", cmd_bank);
      assert (!(is_ref && !ref_ok))
      else $error("systole_hbm_timing: REF before every bank is idle");
    end
  end
`endif
endmodule
