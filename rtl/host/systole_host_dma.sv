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
  localparam logic [5:0] REG_HOST_LO = 6'h00, REG_HOST_HI = 6'h04, REG_DEV_LO = 6'h08,
                         REG_DEV_HI = 6'h0C, REG_LENGTH = 6'h10, REG_CTRL = 6'h14,
                         REG_STATUS = 6'h18, REG_COUNT = 6'h1C, REG_BYTES = 6'h20,
                         REG_CYCLES = 6'h24;
  localparam logic [3:0] E_NONE = 4'd0, E_MISALIGNED = 4'd1, E_RANGE = 4'd2,
                         E_HOST_READ = 4'd3, E_HOST_WRITE = 4'd4;
  if (MEM_BYTES_HI < 0 || MEM_BYTES_HI > 65535 || (MEM_BYTES_HI == 0 && MEM_BYTES_LO == 0))
  begin : g_mem_check
    systole_param_error_host_dma_MEM_BYTES_missing_or_out_of_range u_error ();
  end
  localparam logic [31:0] MEM_HI = MEM_BYTES_HI, MEM_LO = MEM_BYTES_LO;
  localparam logic [63:0] MEM_BYTES = 64'(MEM_HI) << 32 | 64'(MEM_LO);
  localparam integer KW = 28;  // word counts: up to (31 + 2^32 - 1) / 32 + 1 words
  localparam integer FW = $clog2(FIFO_WORDS);
  localparam integer BW = $clog2(MAX_WRITES + 1);
  localparam logic [KW:0] FIFO_K = FIFO_WORDS[KW:0];
  localparam logic [BW-1:0] WRITES_K = MAX_WRITES[BW-1:0];

  if (FIFO_WORDS < BURST_BEATS || (FIFO_WORDS & (FIFO_WORDS - 1)) != 0 || BURST_BEATS < 1 ||
      BURST_BEATS > 128) begin : g_check
    systole_param_error_host_dma_FIFO_WORDS_or_BURST_BEATS u_error ();
  end

  // ---- Descriptor and status registers --------------------------------------------------------
  logic [63:0] d_host;
  logic [47:0] d_dev;
  logic [31:0] d_len, n_count, n_bytes, n_cycles;
  logic        d_to_host, d_irq_en, busy, done, err;
  logic [3:0]  err_code;
  wire         wr = cfg_valid && cfg_write;
  wire         start = wr && cfg_addr == REG_CTRL && cfg_wdata[0] && !busy;

  // ---- The running transfer (latched at START) --------------------------------------------------
  logic [63:0]   host_base;   // word-aligned
  logic [47:0]   dev_base;
  logic [KW-1:0] nwords;
  logic [4:0]    first_lo, last_hi;  // byte lanes of the first and the last word
  logic          to_host;
  // Word counters: asked of the host (AR/AW), received (R), written or read on each side.
  logic [KW-1:0] ar_word, r_word, dw_word, rd_word, aw_word, w_word;
  logic [FW:0]   f_count;
  logic [5:0]    dev_out;     // device requests waiting for their response
  logic [BW-1:0] b_out;
  logic [7:0]    w_left;      // beats left in the current W burst, 0: a new burst starts

  function automatic logic [31:0] strobe(input logic [KW-1:0] k);
    logic [4:0] lo, hi;
    lo = k == '0 ? first_lo : 5'd0;
    hi = k == nwords - 1'b1 ? last_hi : 5'd31;
    for (int b = 0; b < 32; b++) strobe[b] = 5'(b) >= lo && 5'(b) <= hi;
  endfunction
  // Beats of the burst starting at word k: BURST_BEATS, the words left, or up to the 4 KiB page.
  function automatic logic [7:0] burst(input logic [KW-1:0] k);
    logic [KW-1:0] left;
    logic [7:0]    page, len;
    left = nwords - k;
    page = 8'd128 - {1'b0, host_base[11:5] + k[6:0]};
    len = 8'(BURST_BEATS);
    if (page < len) len = page;
    if (left < {{(KW - 8){1'b0}}, len}) len = left[7:0];
    burst = len;
  endfunction

  // ---- Data FIFO (register storage, first-word fall-through) ----------------------------------
  logic [255:0] f_mem [FIFO_WORDS];
  logic [FW:0]  f_rd, f_wr;
  logic         f_push, f_pop;
  logic [255:0] f_in;
  assign f_count = f_wr - f_rd;
  always_ff @(posedge clk) if (f_push) f_mem[f_wr[FW-1:0]] <= f_in;

  // ---- Host → device: AR bursts, R beats into the FIFO, FIFO into device writes ---------------
  wire [7:0]  ar_len = burst(ar_word);
  wire [KW:0] h2d_reserved = {1'b0, ar_word - dw_word};
  wire        ar_issue = busy && !to_host && !err && !m_arvalid && ar_word < nwords &&
                         h2d_reserved + {{(KW - 7){1'b0}}, ar_len} <= FIFO_K;
  wire        r_fire = m_rvalid && m_rready;
  wire        r_bad = r_fire && m_rresp >= 2'b10;  // SLVERR or DECERR; [0] alone is EXOKAY
  assign m_rready = 1'b1;  // room for every beat was reserved before its burst was asked for

  // ---- Device → host: device reads into the FIFO, AW bursts, W beats out of it, B counted -----
  wire [KW-1:0] rd_limit = err ? aw_word : nwords;
  wire [KW:0]   d2h_reserved = {1'b0, rd_word - w_word};
  wire [7:0]    aw_len = burst(aw_word);
  wire          aw_issue = busy && to_host && !err && !m_awvalid && aw_word < nwords &&
                           b_out < WRITES_K;
  wire [7:0]    w_cur = w_left == 8'd0 ? burst(w_word) : w_left;
  wire          w_fire = m_wvalid && m_wready;
  wire          b_bad = m_bvalid && m_bready && m_bresp >= 2'b10;
  assign m_wvalid = busy && to_host && w_word < aw_word && f_count != '0;
  assign m_wdata = f_mem[f_rd[FW-1:0]];
  assign m_wstrb = strobe(w_word);
  assign m_wlast = w_cur == 8'd1;
  assign m_bready = 1'b1;

  // The device side: FIFO words written (host → device), or reads running ahead (device → host).
  assign dev_req_write = !to_host;
  // At most 32 device requests in flight (dev_out's range; the core's arbiter holds 32 too).
  assign dev_req_valid = busy && dev_out < 6'd32 &&
                         (to_host ? rd_word < rd_limit && d2h_reserved < FIFO_K : f_count != '0);
  assign dev_req_addr = dev_base + {15'd0, to_host ? rd_word : dw_word, 5'd0};
  assign dev_req_wdata = to_host ? '0 : f_mem[f_rd[FW-1:0]];
  assign dev_req_wstrb = strobe(to_host ? rd_word : dw_word);
  wire   dev_fire = dev_req_valid && dev_req_ready;

  assign f_push = to_host ? dev_rsp_valid && busy : r_fire && !r_bad && !err;
  assign f_in = to_host ? dev_rsp_rdata : m_rdata;
  assign f_pop = to_host ? w_fire : dev_fire;

  wire finished = busy && dev_out == '0 && (to_host
      ? !m_awvalid && b_out == '0 && w_word == aw_word && (err || aw_word == nwords)
      : !m_arvalid && r_word == ar_word && f_count == '0 && (err || dw_word == nwords));

  // Checks of START: the device range must lie in device memory, both addresses share lanes.
  wire [63:0] s_dev = {16'd0, d_dev};
  /* verilator lint_off UNUSEDSIGNAL */  // words: s_end / 32, the low bits are not needed
  wire [32:0] s_end = {28'd0, d_dev[4:0]} + {1'b0, d_len} + 33'd31;
  /* verilator lint_on UNUSEDSIGNAL */
  wire [3:0]  s_error = d_host[4:0] != d_dev[4:0] ? E_MISALIGNED :
                        s_dev + {32'd0, d_len} > MEM_BYTES ? E_RANGE : E_NONE;

  always_ff @(posedge clk) begin
    if (rst) begin
      {d_host, d_dev, d_len, d_to_host, d_irq_en} <= '0;
      {busy, done, err, err_code, n_count, n_bytes, n_cycles} <= '0;
      {ar_word, r_word, dw_word, rd_word, aw_word, w_word, dev_out, b_out, w_left} <= '0;
      {m_arvalid, m_awvalid, f_rd, f_wr} <= '0;
      {host_base, dev_base, nwords, first_lo, last_hi, to_host, m_araddr, m_arlen} <= '0;
      {m_awaddr, m_awlen} <= '0;
      cfg_rvalid <= 1'b0;
    end else begin
      cfg_rvalid <= cfg_valid && !cfg_write;
      if (wr) begin
        case (cfg_addr)
          REG_HOST_LO: d_host[31:0] <= cfg_wdata;
          REG_HOST_HI: d_host[63:32] <= cfg_wdata;
          REG_DEV_LO: d_dev[31:0] <= cfg_wdata;
          REG_DEV_HI: d_dev[47:32] <= cfg_wdata[15:0];
          REG_LENGTH: d_len <= cfg_wdata;
          REG_CTRL: if (!busy) {d_irq_en, d_to_host} <= cfg_wdata[2:1];
          REG_STATUS: if (!busy) begin  // write 1 to clear DONE / ERROR (of a finished transfer)
            if (cfg_wdata[1]) done <= 1'b0;
            if (cfg_wdata[2]) err <= 1'b0;
          end
          default: ;
        endcase
      end
      if (start) begin
        {done, err, err_code} <= {s_error != E_NONE, s_error != E_NONE, s_error};
        busy <= s_error == E_NONE && d_len != 0;
        if (s_error == E_NONE && d_len == 0) {done, n_count} <= {1'b1, n_count + 1'b1};
        to_host <= cfg_wdata[1];
        host_base <= {d_host[63:5], 5'd0};
        dev_base <= {d_dev[47:5], 5'd0};
        nwords <= s_end[32:5];
        first_lo <= d_dev[4:0];
        last_hi <= d_dev[4:0] + d_len[4:0] - 5'd1;
        {ar_word, r_word, dw_word, rd_word, aw_word, w_word, dev_out, b_out, w_left} <= '0;
        {f_rd, f_wr} <= '0;
        n_cycles <= '0;
      end
      if (busy) n_cycles <= n_cycles + 1'b1;
      // AR / AW: address and length latched with valid, held until accepted.
      if (ar_issue) begin
        {m_arvalid, m_araddr, m_arlen} <= {1'b1, host_base + {31'd0, ar_word, 5'd0}, ar_len - 8'd1};
        ar_word <= ar_word + {{(KW - 8){1'b0}}, ar_len};
      end else if (m_arready) m_arvalid <= 1'b0;
      if (aw_issue) begin
        {m_awvalid, m_awaddr, m_awlen} <= {1'b1, host_base + {31'd0, aw_word, 5'd0}, aw_len - 8'd1};
        aw_word <= aw_word + {{(KW - 8){1'b0}}, aw_len};
      end else if (m_awready) m_awvalid <= 1'b0;
      if (r_fire) r_word <= r_word + 1'b1;
      if (w_fire) {w_word, w_left} <= {w_word + 1'b1, w_cur - 8'd1};
      if (dev_fire && to_host) rd_word <= rd_word + 1'b1;
      if (dev_fire && !to_host) dw_word <= dw_word + 1'b1;
      dev_out <= dev_out + 6'(dev_fire) - 6'(dev_rsp_valid && busy);
      b_out <= b_out + {{(BW - 1){1'b0}}, aw_issue} - {{(BW - 1){1'b0}}, m_bvalid};
      if (f_push) f_wr <= f_wr + 1'b1;
      if (f_pop) f_rd <= f_rd + 1'b1;
      if (busy && (r_bad || b_bad) && !err) begin
        {err, err_code} <= {1'b1, r_bad ? E_HOST_READ : E_HOST_WRITE};
      end
      if (finished) begin
        {busy, done} <= 2'b01;
        if (!(err || r_bad || b_bad)) {n_count, n_bytes} <= {n_count + 1'b1, n_bytes + d_len};
      end
    end
  end

  always_ff @(posedge clk) begin
    case (cfg_addr)
      REG_HOST_LO: cfg_rdata <= d_host[31:0];
      REG_HOST_HI: cfg_rdata <= d_host[63:32];
      REG_DEV_LO: cfg_rdata <= d_dev[31:0];
      REG_DEV_HI: cfg_rdata <= {16'd0, d_dev[47:32]};
      REG_LENGTH: cfg_rdata <= d_len;
      REG_CTRL: cfg_rdata <= {29'd0, d_irq_en, d_to_host, 1'b0};
      REG_STATUS: cfg_rdata <= {24'd0, err_code, 1'b0, err, done, busy};
      REG_COUNT: cfg_rdata <= n_count;
      REG_BYTES: cfg_rdata <= n_bytes;
      REG_CYCLES: cfg_rdata <= n_cycles;
      default: cfg_rdata <= '0;
    endcase
  end
  assign irq = done && d_irq_en;

`ifndef SYNTHESIS
  // RLAST must close each burst where its length says (bursts are asked for in word order).
  logic [7:0] r_left;
  wire  [7:0] r_cur = r_left == 8'd0 ? burst(r_word) : r_left;
  always_ff @(posedge clk) begin
    if (rst || start) r_left <= 8'd0;
    else if (r_fire) r_left <= r_cur - 8'd1;
  end
  always_ff @(posedge clk) begin
    if (!rst) begin
      assert (!(m_rvalid && r_word >= ar_word))
      else $error("systole_host_dma: R beat not asked for");
      assert (!(r_fire && m_rlast != (r_cur == 8'd1)))
      else $error("systole_host_dma: RLAST not at the end of a burst");
      assert (!(m_bvalid && b_out == '0)) else $error("systole_host_dma: B response not asked for");
      assert (!(dev_rsp_valid && dev_out == '0))
      else $error("systole_host_dma: device response not asked for");
      assert (!(f_push && !f_pop && f_count == (FW + 1)'(FIFO_WORDS)))
      else $error("systole_host_dma: FIFO overflow");
    end
  end
`endif
endmodule
