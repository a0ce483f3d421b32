// systole_host_dma — a bus-master DMA engine between host memory (an AXI4 master, what a PCIe
// hard block's AXI bridge presents) and device memory (a requester on the core's host port).
// docs/HOST_LINKS.md has the register map and the driver's side.
//
// One transfer at a time, described by registers (cfg_*, same timing as the core's register
// bus: always ready, read data the cycle after): host address (64-bit), device address, length
// in bytes, direction. Both sides move 32-byte words; a transfer covers the words from
// floor(address / 32) to the word of its last byte, and each word's strobes are exactly the
// transfer's bytes in it, so nothing outside the range is written on either side and the
// core's PERF_BYTES_HOST counts exactly `length`. The host and device addresses must therefore
// share their offset within a 32-byte word (the driver places its buffer so): the engine needs
// no byte rotator, and any alignment and length of the device range is reachable.
//
// Host → device: AXI read bursts (at most BURST_BEATS beats, never across 4 KiB) are issued
// while the data FIFO has room reserved for every beat asked for, so several bursts are in
// flight and rready is always high; the FIFO drains into device-memory writes. Device → host:
// device reads (with their strobes) run ahead while the FIFO has room for their responses; AW
// bursts are issued independently and W beats follow from the FIFO; B responses are counted.
//
// Errors (STATUS.ERROR with a code; the transfer ends only once nothing is in flight):
// MISALIGNED and RANGE are found at START and move nothing; HOST_READ / HOST_WRITE (an SLVERR
// or DECERR response) stop new bursts, and the words already received are still delivered
// (the destination holds a prefix of the range; nothing outside it).
//
// The descriptor and status registers, START's checks and the counters are
// systole_host_dma_regs; this file is the engine that moves the words.
module systole_host_dma #(
    parameter integer MEM_BYTES_LO = 0,  // configuration (set by the parent; the defaults fail)
    parameter integer MEM_BYTES_HI = -1,
    parameter integer BURST_BEATS = 8,   // largest AXI burst (a PCIe read request of 256 bytes)
    parameter integer FIFO_WORDS = 32,   // data FIFO, a power of two >= BURST_BEATS
    parameter integer MAX_WRITES = 8     // AW bursts waiting for their B response
) (
    input  logic         clk,
    input  logic         rst,
    // Descriptor registers (byte offsets 0x00-0x24, see REG_* below)
    input  logic         cfg_valid,
    input  logic         cfg_write,
    input  logic [5:0]   cfg_addr,
    input  logic [31:0]  cfg_wdata,
    output logic         cfg_rvalid,
    output logic [31:0]  cfg_rdata,
    output logic         irq,            // STATUS.DONE while CTRL.IRQ_ENABLE
    // AXI4 master to host memory (one ID: responses in order; INCR bursts of 32-byte beats)
    output logic         m_arvalid,
    input  logic         m_arready,
    output logic [63:0]  m_araddr,
    output logic [7:0]   m_arlen,
    input  logic         m_rvalid,
    output logic         m_rready,
    input  logic [255:0] m_rdata,
    input  logic [1:0]   m_rresp,
    input  logic         m_rlast,
    output logic         m_awvalid,
    input  logic         m_awready,
    output logic [63:0]  m_awaddr,
    output logic [7:0]   m_awlen,
    output logic         m_wvalid,
    input  logic         m_wready,
    output logic [255:0] m_wdata,
    output logic [31:0]  m_wstrb,
    output logic         m_wlast,
    input  logic         m_bvalid,
    output logic         m_bready,
    input  logic [1:0]   m_bresp,
    // Requester on the core's host memory port (every request gets one response, in order)
    output logic         dev_req_valid,
    input  logic         dev_req_ready,
    output logic         dev_req_write,
    output logic [47:0]  dev_req_addr,
    output logic [255:0] dev_req_wdata,
    output logic [31:0]  dev_req_wstrb,
    input  logic         dev_rsp_valid,
    input  logic [255:0] dev_rsp_rdata
);
  localparam integer KW = 28;  // word counts: up to (31 + 2^32 - 1) / 32 + 1 words
  localparam integer FW = $clog2(FIFO_WORDS);
  localparam integer BW = $clog2(MAX_WRITES + 1);
  localparam logic [KW:0] FIFO_K = FIFO_WORDS[KW:0];
  localparam logic [BW-1:0] WRITES_K = MAX_WRITES[BW-1:0];

  if (FIFO_WORDS < BURST_BEATS || (FIFO_WORDS & (FIFO_WORDS - 1)) != 0 || BURST_BEATS < 1 ||
      BURST_BEATS > 128) begin : g_check
    systole_param_error_host_dma_FIFO_WORDS_or_BURST_BEATS u_error ();
  end

  // ---- Descriptor and status registers (MEM_BYTES_* are checked there) ------------------------
  logic          busy, err, start, s_to_host;
  logic [63:0]   s_host_base;
  logic [47:0]   s_dev_base;
  logic [KW-1:0] s_nwords;
  logic [4:0]    s_first_lo, s_last_hi;
  logic          finished, r_bad, b_bad;

  systole_host_dma_regs #(.MEM_BYTES_LO(MEM_BYTES_LO), .MEM_BYTES_HI(MEM_BYTES_HI)) u_regs (
      .clk, .rst, .cfg_valid, .cfg_write, .cfg_addr, .cfg_wdata, .cfg_rvalid, .cfg_rdata, .irq,
      .busy_o(busy), .err_o(err), .start_o(start), .to_host_o(s_to_host),
      .host_base_o(s_host_base), .dev_base_o(s_dev_base), .nwords_o(s_nwords),
      .first_lo_o(s_first_lo), .last_hi_o(s_last_hi),
      .finished_i(finished), .r_bad_i(r_bad), .b_bad_i(b_bad));

  // ---- The running transfer (latched at START) --------------------------------------------------
  logic [63:0]   host_base_q, host_base_d;   // word-aligned
  logic [47:0]   dev_base_q, dev_base_d;
  logic [KW-1:0] nwords_q, nwords_d;
  logic [4:0]    first_lo_q, first_lo_d;     // byte lanes of the first word
  logic [4:0]    last_hi_q, last_hi_d;       // ... and of the last word
  logic          to_host_q, to_host_d;
  // Word counters: asked of the host (AR/AW), received (R), written or read on each side.
  logic [KW-1:0] ar_word_q, ar_word_d, r_word_q, r_word_d, dw_word_q, dw_word_d;
  logic [KW-1:0] rd_word_q, rd_word_d, aw_word_q, aw_word_d, w_word_q, w_word_d;
  logic [FW:0]   f_count;
  logic [5:0]    dev_out_q, dev_out_d;       // device requests waiting for their response
  logic [BW-1:0] b_out_q, b_out_d;
  logic [7:0]    w_left_q, w_left_d;         // beats left in the current W burst, 0: a new one
  // AR and AW channels: address and length latched with valid, held until accepted.
  logic          m_arvalid_q, m_arvalid_d, m_awvalid_q, m_awvalid_d;
  logic [63:0]   m_araddr_q, m_araddr_d, m_awaddr_q, m_awaddr_d;
  logic [7:0]    m_arlen_q, m_arlen_d, m_awlen_q, m_awlen_d;
  assign m_arvalid = m_arvalid_q;
  assign m_araddr = m_araddr_q;
  assign m_arlen = m_arlen_q;
  assign m_awvalid = m_awvalid_q;
  assign m_awaddr = m_awaddr_q;
  assign m_awlen = m_awlen_q;

  function automatic logic [31:0] strobe(input logic [KW-1:0] k, input logic [KW-1:0] n,
                                         input logic [4:0] first_lo, input logic [4:0] last_hi);
    logic [4:0] lo, hi;
    lo = k == '0 ? first_lo : 5'd0;
    hi = k == n - 1'b1 ? last_hi : 5'd31;
    for (int b = 0; b < 32; b++) strobe[b] = 5'(b) >= lo && 5'(b) <= hi;
  endfunction
  // Beats of the burst starting at word k: BURST_BEATS, the words left, or up to the 4 KiB page.
  function automatic logic [7:0] burst(input logic [KW-1:0] k, input logic [KW-1:0] n,
                                      input logic [6:0] base_word);  // host_base[11:5]
    logic [KW-1:0] left;
    logic [7:0]    page, len;
    left = n - k;
    page = 8'd128 - {1'b0, base_word + k[6:0]};
    len = 8'(BURST_BEATS);
    if (page < len) len = page;
    if (left < {{(KW - 8){1'b0}}, len}) len = left[7:0];
    burst = len;
  endfunction

  // ---- Data FIFO (register storage, first-word fall-through) ----------------------------------
  logic [255:0] f_mem_q [FIFO_WORDS];
  logic [FW:0]  f_rd_q, f_rd_d, f_wr_q, f_wr_d;
  logic         f_push, f_pop;
  logic [255:0] f_in;
  assign f_count = f_wr_q - f_rd_q;
  always_ff @(posedge clk) if (f_push) f_mem_q[f_wr_q[FW-1:0]] <= f_in;

  // ---- Host → device: AR bursts, R beats into the FIFO, FIFO into device writes ---------------
  wire [7:0]  ar_len = burst(ar_word_q, nwords_q, host_base_q[11:5]);
  wire [KW:0] h2d_reserved = {1'b0, ar_word_q - dw_word_q};
  wire        ar_issue = busy && !to_host_q && !err && !m_arvalid_q && ar_word_q < nwords_q &&
                         h2d_reserved + {{(KW - 7){1'b0}}, ar_len} <= FIFO_K;
  wire        r_fire = m_rvalid && m_rready;
  assign r_bad = r_fire && m_rresp >= 2'b10;  // SLVERR or DECERR; [0] alone is EXOKAY
  assign m_rready = 1'b1;  // room for every beat was reserved before its burst was asked for

  // ---- Device → host: device reads into the FIFO, AW bursts, W beats out of it, B counted -----
  wire [KW-1:0] rd_limit = err ? aw_word_q : nwords_q;
  wire [KW:0]   d2h_reserved = {1'b0, rd_word_q - w_word_q};
  wire [7:0]    aw_len = burst(aw_word_q, nwords_q, host_base_q[11:5]);
  wire          aw_issue = busy && to_host_q && !err && !m_awvalid_q && aw_word_q < nwords_q &&
                           b_out_q < WRITES_K;
  wire [7:0]    w_cur = w_left_q == 8'd0 ? burst(w_word_q, nwords_q, host_base_q[11:5]) : w_left_q;
  wire          w_fire = m_wvalid && m_wready;
  assign b_bad = m_bvalid && m_bready && m_bresp >= 2'b10;
  assign m_wvalid = busy && to_host_q && w_word_q < aw_word_q && f_count != '0;
  assign m_wdata = f_mem_q[f_rd_q[FW-1:0]];
  assign m_wstrb = strobe(w_word_q, nwords_q, first_lo_q, last_hi_q);
  assign m_wlast = w_cur == 8'd1;
  assign m_bready = 1'b1;

  // The device side: FIFO words written (host → device), or reads running ahead (device → host).
  assign dev_req_write = !to_host_q;
  // At most 32 device requests in flight (dev_out's range; the core's arbiter holds 32 too).
  assign dev_req_valid = busy && dev_out_q < 6'd32 &&
                         (to_host_q ? rd_word_q < rd_limit && d2h_reserved < FIFO_K : f_count != '0);
  assign dev_req_addr = dev_base_q + {15'd0, to_host_q ? rd_word_q : dw_word_q, 5'd0};
  assign dev_req_wdata = to_host_q ? '0 : f_mem_q[f_rd_q[FW-1:0]];
  assign dev_req_wstrb = strobe(to_host_q ? rd_word_q : dw_word_q, nwords_q, first_lo_q, last_hi_q);
  wire   dev_fire = dev_req_valid && dev_req_ready;

  assign f_push = to_host_q ? dev_rsp_valid && busy : r_fire && !r_bad && !err;
  assign f_in = to_host_q ? dev_rsp_rdata : m_rdata;
  assign f_pop = to_host_q ? w_fire : dev_fire;

  assign finished = busy && dev_out_q == '0 && (to_host_q
      ? !m_awvalid_q && b_out_q == '0 && w_word_q == aw_word_q && (err || aw_word_q == nwords_q)
      : !m_arvalid_q && r_word_q == ar_word_q && f_count == '0 && (err || dw_word_q == nwords_q));

  // ---- Next state: START, then the events of the running transfer -----------------------------
  // Later assignments win: the counters of in-flight requests and the FIFO pointers keep
  // counting through a START (which comes only while nothing is busy).
  always_comb begin
    host_base_d = host_base_q;
    dev_base_d = dev_base_q;
    nwords_d = nwords_q;
    first_lo_d = first_lo_q;
    last_hi_d = last_hi_q;
    to_host_d = to_host_q;
    ar_word_d = ar_word_q;
    r_word_d = r_word_q;
    dw_word_d = dw_word_q;
    rd_word_d = rd_word_q;
    aw_word_d = aw_word_q;
    w_word_d = w_word_q;
    w_left_d = w_left_q;
    m_arvalid_d = m_arvalid_q;
    m_araddr_d = m_araddr_q;
    m_arlen_d = m_arlen_q;
    m_awvalid_d = m_awvalid_q;
    m_awaddr_d = m_awaddr_q;
    m_awlen_d = m_awlen_q;
    f_rd_d = f_rd_q;
    f_wr_d = f_wr_q;
    if (start) begin
      to_host_d = s_to_host;
      host_base_d = s_host_base;
      dev_base_d = s_dev_base;
      nwords_d = s_nwords;
      first_lo_d = s_first_lo;
      last_hi_d = s_last_hi;
      {ar_word_d, r_word_d, dw_word_d, rd_word_d, aw_word_d, w_word_d, w_left_d} = '0;
      {f_rd_d, f_wr_d} = '0;
    end
    if (ar_issue) begin
      {m_arvalid_d, m_araddr_d, m_arlen_d} =
          {1'b1, host_base_q + {31'd0, ar_word_q, 5'd0}, ar_len - 8'd1};
      ar_word_d = ar_word_q + {{(KW - 8){1'b0}}, ar_len};
    end else if (m_arready) begin
      m_arvalid_d = 1'b0;
    end
    if (aw_issue) begin
      {m_awvalid_d, m_awaddr_d, m_awlen_d} =
          {1'b1, host_base_q + {31'd0, aw_word_q, 5'd0}, aw_len - 8'd1};
      aw_word_d = aw_word_q + {{(KW - 8){1'b0}}, aw_len};
    end else if (m_awready) begin
      m_awvalid_d = 1'b0;
    end
    if (r_fire) r_word_d = r_word_q + 1'b1;
    if (w_fire) {w_word_d, w_left_d} = {w_word_q + 1'b1, w_cur - 8'd1};
    if (dev_fire && to_host_q) rd_word_d = rd_word_q + 1'b1;
    if (dev_fire && !to_host_q) dw_word_d = dw_word_q + 1'b1;
    dev_out_d = dev_out_q + 6'(dev_fire) - 6'(dev_rsp_valid && busy);
    b_out_d = b_out_q + {{(BW - 1){1'b0}}, aw_issue} - {{(BW - 1){1'b0}}, m_bvalid};
    if (f_push) f_wr_d = f_wr_q + 1'b1;
    if (f_pop) f_rd_d = f_rd_q + 1'b1;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      {ar_word_q, r_word_q, dw_word_q, rd_word_q, aw_word_q, w_word_q} <= '0;
      {dev_out_q, b_out_q, w_left_q} <= '0;
      {m_arvalid_q, m_awvalid_q, f_rd_q, f_wr_q} <= '0;
      {host_base_q, dev_base_q, nwords_q, first_lo_q, last_hi_q, to_host_q} <= '0;
      {m_araddr_q, m_arlen_q, m_awaddr_q, m_awlen_q} <= '0;
    end else begin
      {ar_word_q, r_word_q, dw_word_q, rd_word_q, aw_word_q, w_word_q} <=
          {ar_word_d, r_word_d, dw_word_d, rd_word_d, aw_word_d, w_word_d};
      {dev_out_q, b_out_q, w_left_q} <= {dev_out_d, b_out_d, w_left_d};
      {m_arvalid_q, m_awvalid_q, f_rd_q, f_wr_q} <= {m_arvalid_d, m_awvalid_d, f_rd_d, f_wr_d};
      {host_base_q, dev_base_q, nwords_q, first_lo_q, last_hi_q, to_host_q} <=
          {host_base_d, dev_base_d, nwords_d, first_lo_d, last_hi_d, to_host_d};
      {m_araddr_q, m_arlen_q, m_awaddr_q, m_awlen_q} <=
          {m_araddr_d, m_arlen_d, m_awaddr_d, m_awlen_d};
    end
  end

  // ---- Assertions ------------------------------------------------------------------------------
`ifndef SYNTHESIS
  // RLAST must close each burst where its length says (bursts are asked for in word order).
  logic [7:0] r_left_q, r_left_d;
  wire  [7:0] r_cur = r_left_q == 8'd0 ? burst(r_word_q, nwords_q, host_base_q[11:5]) : r_left_q;
  always_comb begin
    r_left_d = r_left_q;
    if (start) r_left_d = 8'd0;
    else if (r_fire) r_left_d = r_cur - 8'd1;
  end
  always_ff @(posedge clk) begin
    if (rst) begin
      r_left_q <= 8'd0;
    end else begin
      r_left_q <= r_left_d;
    end
  end
  always_ff @(posedge clk) begin
    if (!rst) begin
      assert (!(m_rvalid && r_word_q >= ar_word_q))
      else $error("systole_host_dma: R beat not asked for");
      assert (!(r_fire && m_rlast != (r_cur == 8'd1)))
      else $error("systole_host_dma: RLAST not at the end of a burst");
      assert (!(m_bvalid && b_out_q == '0)) else $error("systole_host_dma: B response not asked for");
      assert (!(dev_rsp_valid && dev_out_q == '0))
      else $error("systole_host_dma: device response not asked for");
      assert (!(f_push && !f_pop && f_count == (FW + 1)'(FIFO_WORDS)))
      else $error("systole_host_dma: FIFO overflow");
    end
  end
`endif
endmodule
