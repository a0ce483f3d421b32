// systole_usb_bridge — terminates the link protocol (docs/PROTOCOL.md) on a byte stream, so a
// host reaches the core over USB (an FT245-style FIFO: one byte per cycle each way, valid/ready)
// with the same frames as over TCP. docs/HOST_LINKS.md describes it for the host side.
//
//   rx FIFO ─► systole_frame_rx ─► decode ─┬─ register bus (READ/WRITE_REGISTER, WAIT polls)
//                 │ WRITE_MEMORY data       └─ memory engine ─► host memory port (32-byte words)
//                 ▼                                 ▲ READ_MEMORY data
//               buffer (systole_row_ram, MAX_PAYLOAD + 32 bytes) ─► systole_frame_tx ─► tx FIFO
//
// One request at a time, each answered before the next byte is taken. HELLO (any request id)
// starts a session; other requests need one and strictly increasing ids. ALLOCATE and FREE get
// UNKNOWN_TYPE: a USB device has one host, which keeps the allocation books itself. Memory
// accesses may have any alignment and length up to MAX_PAYLOAD (READ) or MAX_PAYLOAD - 8 bytes
// of data (WRITE); every 32-byte word carries byte strobes for exactly the bytes asked for, as
// the rtl link's accesses do, so PERF_BYTES_HOST counts the same. WAIT polls STATUS every 64
// cycles until the core is idle or irq is high, or timeout_ms * CYCLES_PER_MS cycles passed.
// Error replies carry the code and an empty message (the host knows what it asked).
module systole_usb_bridge #(
    parameter integer MAX_PAYLOAD = 4096,
    // From the configuration (set by the parent, e.g. systole_usb_top from CLOCK_MHZ and the
    // memory size); the defaults fail the checks below.
    parameter integer RX_TIMEOUT = 0,         // cycles; systole_usb_top: 100 ms
    parameter integer CYCLES_PER_MS = 0,
    parameter integer MEM_BYTES_LO = 0,
    parameter integer MEM_BYTES_HI = -1
) (
    input  logic         clk,
    input  logic         rst,
    input  logic         rx_valid,
    output logic         rx_ready,
    input  logic [7:0]   rx_data,
    output logic         tx_valid,
    input  logic         tx_ready,
    output logic [7:0]   tx_data,
    // to the core (rtl/systole_core.sv)
    output logic         reg_valid,
    output logic         reg_write,
    output logic [11:0]  reg_addr,
    output logic [31:0]  reg_wdata,
    input  logic         reg_rvalid,
    input  logic [31:0]  reg_rdata,
    input  logic         irq,
    output logic         host_req_valid,
    input  logic         host_req_ready,
    output logic         host_req_write,
    output logic [47:0]  host_req_addr,
    output logic [255:0] host_req_wdata,
    output logic [31:0]  host_req_wstrb,
    input  logic         host_rsp_valid,
    input  logic [255:0] host_rsp_rdata
);
  `include "systole_regs.svh"
  if (RX_TIMEOUT < 1 || CYCLES_PER_MS < 1) begin : g_clock_check
    systole_param_error_usb_bridge_RX_TIMEOUT_and_CYCLES_PER_MS_must_be_at_least_1 u_error ();
  end
  if (MEM_BYTES_HI < 0 || MEM_BYTES_HI > 65535 || (MEM_BYTES_HI == 0 && MEM_BYTES_LO == 0))
  begin : g_mem_check
    systole_param_error_usb_bridge_MEM_BYTES_missing_or_out_of_range u_error ();
  end
  localparam integer BUF_WORDS = MAX_PAYLOAD / 32 + 1;
  localparam integer BUF_AW = $clog2(BUF_WORDS);
  localparam logic [31:0] MEM_HI = MEM_BYTES_HI, MEM_LO = MEM_BYTES_LO;
  localparam logic [63:0] MEM_BYTES = (64'(MEM_HI) << 32) | 64'(MEM_LO);
  // Widths that hold every value the checks let through (narrower counters and comparisons
  // than the fields': the same replies, in fewer LUTs on small FPGAs, docs/FPGA.md):
  localparam integer KM = $clog2(MEM_BYTES + 64'd1);            // MEM_BYTES < 2^KM
  localparam integer MW = $clog2((31 + MAX_PAYLOAD + 31) / 32 + 1);  // words of one access
  localparam integer WW = 32 + $clog2(CYCLES_PER_MS + 1);       // a WAIT's cycles
  localparam logic [3:0] B_IDLE = 4'd0, B_REG_RD = 4'd1, B_REG_WAIT = 4'd2, B_MEM_FETCH = 4'd3,
                         B_MEM_REQ = 4'd4, B_MEM_RSP = 4'd5, B_POLL = 4'd6, B_POLL_WAIT = 4'd7,
                         B_GAP = 4'd8, B_REPLY = 4'd9, B_SEND = 4'd10;
  localparam logic [15:0] T_HELLO = 16'd1, T_READ_REG = 16'd2, T_WRITE_REG = 16'd3,
                          T_READ_MEM = 16'd4, T_WRITE_MEM = 16'd5, T_WAIT = 16'd8,
                          T_ERROR = 16'h7F;
  localparam logic [31:0] E_MALFORMED = 1, E_BAD_CHECKSUM = 2, E_TOO_LARGE = 3, E_BAD_VERSION = 4,
                          E_OUT_OF_ORDER = 6, E_UNKNOWN_TYPE = 8, E_OUT_OF_BOUNDS = 9,
                          E_BAD_REGISTER = 11;

  // ---- receiver, buffer, transmitter
  logic         f_valid, f_crc_ok, e_valid, rx_ack;
  logic [15:0]  f_type;
  logic [31:0]  f_id, f_len, e_id;
  logic [127:0] f_fields;
  logic [3:0]   e_code;
  logic         rxb_en, engb_en, txb_rd, engb_rd;
  logic [BUF_AW-1:0] rxb_addr, txb_addr, eng_word;
  logic [31:0]  rxb_lanes;
  logic [255:0] rxb_data, buf_q;
  logic         tx_start, tx_busy, tx_done;

  systole_frame_rx #(.MAX_PAYLOAD(MAX_PAYLOAD), .RX_TIMEOUT(RX_TIMEOUT), .BUF_AW(BUF_AW)) u_rx (
      .clk(clk), .rst(rst), .rx_valid(rx_valid), .rx_ready(rx_ready), .rx_data(rx_data),
      .frame_valid(f_valid), .crc_ok(f_crc_ok), .frame_type(f_type), .frame_id(f_id),
      .frame_len(f_len), .fields(f_fields), .err_valid(e_valid), .err_code(e_code),
      .err_id(e_id), .ack(rx_ack), .buf_wr_en(rxb_en), .buf_wr_addr(rxb_addr),
      .buf_wr_lanes(rxb_lanes), .buf_wr_data(rxb_data));

  // Gated by reset: the state registers hold random values until the first edge with rst.
  systole_row_ram #(.DEPTH(BUF_WORDS), .LANES(32), .LANE_BITS(8), .READ_PORTS(1)) u_buf (
      .clk(clk), .wr_en(!rst && (rxb_en || engb_en)), .wr_addr(engb_en ? eng_word : rxb_addr),
      .wr_lanes(engb_en ? 32'hFFFFFFFF : rxb_lanes), .wr_data(engb_en ? host_rsp_rdata : rxb_data),
      .rd_en(!rst && (txb_rd || engb_rd)), .rd_addr(engb_rd ? eng_word : txb_addr), .rd_data(buf_q));

  // A reply's type is a request type (all below 256) with the reply bit, or ERROR; its length
  // is at most MAX_PAYLOAD (longer requests fail TOO_LARGE): the registers hold those bits and
  // the frame's header gets the rest as zeros.
  localparam integer RLW = $clog2(MAX_PAYLOAD + 1);
  logic [7:0]     r_type_q, r_type_d;
  logic [31:0]    r_id_q, r_id_d;
  logic [RLW-1:0] r_len_q, r_len_d;
  logic [159:0] r_fields_q, r_fields_d;
  logic         r_buf_q, r_buf_d;
  logic [4:0]   m_off_q, m_off_d;

  systole_frame_tx #(.BUF_AW(BUF_AW)) u_tx (
      .clk(clk), .rst(rst), .start(tx_start), .reply_type(16'(r_type_q)), .reply_id(r_id_q),
      .reply_len(32'(r_len_q)), .reply_fields(r_fields_q), .from_buf(r_buf_q), .buf_off(m_off_q),
      .busy(tx_busy), .done(tx_done), .buf_rd_en(txb_rd), .buf_rd_addr(txb_addr),
      .buf_rd_data(buf_q), .tx_valid(tx_valid), .tx_ready(tx_ready), .tx_data(tx_data));

  // ---- request decoding (combinational, used in B_IDLE)
  logic [63:0] addr;
  logic [31:0] mem_len, reg_off;
  logic        in_bounds, reg_ok;
  assign addr = f_fields[63:0];
  assign mem_len = f_type == T_READ_MEM ? f_fields[95:64] : f_len - 32'd8;
  // addr <= MEM_BYTES && mem_len <= MEM_BYTES - addr, i.e. addr + mem_len <= MEM_BYTES: a term
  // of 2^KM or more is out by itself, else the (KM + 1)-bit sum decides.
  assign in_bounds = (addr >> KM) == '0 && (64'(mem_len) >> KM) == '0 &&
                     (KM+1)'(addr) + (KM+1)'(mem_len) <= (KM+1)'(MEM_BYTES);
  assign reg_off = f_fields[31:0];
  assign reg_ok = reg_off < 32'(REG_WINDOW_BYTES) && reg_off[1:0] == 2'd0;
  logic unused_fields;
  assign unused_fields = ^f_fields[127:96];  // no request has more than 12 fixed bytes

  // ---- state
  logic [3:0]  state_q, state_d;
  logic        session_q, session_d;
  logic [31:0] last_id_q, last_id_d;
  logic        m_write_q, m_write_d;
  logic [47:0] m_base_q, m_base_d;      // device address of word 0
  logic [MW-1:0] m_words_q, m_words_d, m_w_q, m_w_d;  // at most MAX_PAYLOAD bytes: checked
  logic [4:0]  m_end_q, m_end_d;        // byte of the last word that is the last byte
  // WAIT: cycles left before the timeout (timeout_ms * CYCLES_PER_MS, counted down and held at
  // 0), so "timed out" is left == 0 where it was "cycles counted >= the limit".
  logic [WW-1:0] w_left_q, w_left_d;
  logic [5:0]  gap_q, gap_d;
  logic [4:0]  lo, hi;

  assign eng_word = BUF_AW'(m_w_q);
  assign lo = m_w_q == 0 ? m_off_q : 5'd0;
  assign hi = m_w_q == m_words_q - 1 ? m_end_q : 5'd31;

  // An error reply to the current frame (or stream error).
  task automatic fail(input logic [31:0] code, input logic [31:0] id);
    r_type_d = 8'(T_ERROR);
    r_id_d = id;
    r_len_d = RLW'(8);
    r_fields_d = {128'd0, code};
    r_buf_d = 1'b0;
    state_d = B_REPLY;
  endtask

  always_comb begin
    state_d = state_q;
    session_d = session_q;
    last_id_d = last_id_q;
    {r_type_d, r_id_d, r_len_d, r_fields_d, r_buf_d} =
        {r_type_q, r_id_q, r_len_q, r_fields_q, r_buf_q};
    {m_write_d, m_base_d, m_words_d, m_w_d, m_off_d, m_end_d} =
        {m_write_q, m_base_q, m_words_q, m_w_q, m_off_q, m_end_q};
    w_left_d = w_left_q;
    gap_d = gap_q;
    reg_valid = 1'b0;
    reg_write = 1'b0;
    reg_addr = reg_off[11:0];
    reg_wdata = f_fields[63:32];
    host_req_valid = 1'b0;
    host_req_write = m_write_q;
    host_req_addr = m_base_q + 48'({m_w_q, 5'd0});
    host_req_wdata = buf_q;
    host_req_wstrb = ({32{1'b1}} << lo) & ({32{1'b1}} >> (5'd31 - hi));
    engb_en = 1'b0;
    engb_rd = 1'b0;
    tx_start = 1'b0;
    rx_ack = 1'b0;

    case (state_q)
      B_IDLE: if (e_valid) begin
        fail({28'd0, e_code}, e_id);
      end else if (f_valid) begin
        // Every reply echoes the request's id with the reply bit set; most are empty.
        {r_type_d, r_id_d, r_len_d, r_fields_d, r_buf_d} = {8'(f_type | 16'h80), f_id, RLW'(0), 160'd0, 1'b0};
        if (!f_crc_ok) fail(E_BAD_CHECKSUM, f_id);
        else if (f_type[7] || f_type == T_ERROR) fail(E_OUT_OF_ORDER, f_id);
        else if (f_type == T_HELLO) begin
          if (f_len < 32'd6 || f_fields[47:16] != f_len - 32'd6) fail(E_MALFORMED, f_id);
          else if (f_fields[15:0] != 16'd1) fail(E_BAD_VERSION, f_id);
          else begin
            session_d = 1'b1;
            last_id_d = f_id;
            r_len_d = RLW'(20);
            r_fields_d = {MEM_BYTES, 32'(MAX_PAYLOAD), MEM_BYTES};
            state_d = B_REPLY;
          end
        end else if (!session_q || f_id <= last_id_q) fail(E_OUT_OF_ORDER, f_id);
        else begin
          last_id_d = f_id;
          state_d = B_REPLY;  // replaced below by the request's work
          case (f_type)
            T_READ_REG, T_WRITE_REG:
              if (f_len != (f_type == T_READ_REG ? 32'd4 : 32'd8)) fail(E_MALFORMED, f_id);
              else if (!reg_ok) fail(E_BAD_REGISTER, f_id);
              else if (f_type == T_READ_REG) begin
                r_len_d = RLW'(4);
                state_d = B_REG_RD;
              end else begin
                reg_valid = 1'b1;
                reg_write = 1'b1;
              end
            T_READ_MEM, T_WRITE_MEM:
              if (f_type == T_READ_MEM ? f_len != 32'd12 : f_len < 32'd8) fail(E_MALFORMED, f_id);
              else if (mem_len > 32'(MAX_PAYLOAD)) fail(E_TOO_LARGE, f_id);
              else if (!in_bounds) fail(E_OUT_OF_BOUNDS, f_id);
              else begin
                m_write_d = f_type == T_WRITE_MEM;
                m_base_d = {addr[47:5], 5'd0};
                m_off_d = addr[4:0];
                m_end_d = 5'(addr[4:0] + mem_len[4:0] - 5'd1);
                m_words_d = MW'((32'(addr[4:0]) + mem_len + 32'd31) >> 5);
                m_w_d = '0;
                r_len_d = m_write_d ? RLW'(0) : RLW'(mem_len);
                r_buf_d = !m_write_d;
                if (mem_len != 0) state_d = m_write_d ? B_MEM_FETCH : B_MEM_REQ;
              end
            T_WAIT:
              if (f_len != 32'd4) fail(E_MALFORMED, f_id);
              else begin
                w_left_d = WW'(64'(f_fields[31:0]) * 64'(CYCLES_PER_MS));
                r_len_d = RLW'(1);
                state_d = B_POLL;
              end
            default: fail(E_UNKNOWN_TYPE, f_id);
          endcase
        end
      end
      B_REG_RD: begin
        reg_valid = 1'b1;
        state_d = B_REG_WAIT;
      end
      B_REG_WAIT: if (reg_rvalid) begin
        r_fields_d = {128'd0, reg_rdata};
        state_d = B_REPLY;
      end
      B_MEM_FETCH: begin  // a write's next word from the buffer
        engb_rd = 1'b1;
        state_d = B_MEM_REQ;
      end
      B_MEM_REQ: begin
        host_req_valid = 1'b1;
        if (host_req_ready) state_d = B_MEM_RSP;
      end
      B_MEM_RSP: if (host_rsp_valid) begin
        engb_en = !m_write_q;
        m_w_d = m_w_q + 1'b1;
        if (m_w_q + 1'b1 == m_words_q) state_d = B_REPLY;
        else state_d = m_write_q ? B_MEM_FETCH : B_MEM_REQ;
      end
      B_POLL, B_POLL_WAIT, B_GAP: begin
        if (w_left_q != '0) w_left_d = w_left_q - 1'b1;
        if (state_q == B_POLL) begin
          reg_valid = 1'b1;
          reg_addr = REG_STATUS;
          state_d = B_POLL_WAIT;
        end else if (state_q == B_POLL_WAIT && reg_rvalid) begin
          state_d = B_GAP;
          gap_d = '0;
          if (reg_rdata[REG_STATUS_BUSY_LSB] == 1'b0 &&
              reg_rdata[REG_STATUS_CMDQ_LEVEL_LSB +: REG_STATUS_CMDQ_LEVEL_WIDTH] == '0) begin
            r_fields_d = 160'd1;
            state_d = B_REPLY;
          end
        end else if (state_q == B_GAP) begin
          gap_d = gap_q + 1'b1;
          if (gap_q == 6'd63) state_d = B_POLL;
        end
        if (state_d != B_REPLY && irq) begin
          r_fields_d = 160'd1;
          state_d = B_REPLY;
        end else if (state_d != B_REPLY && state_q == B_GAP && w_left_q == '0) begin
          r_fields_d = 160'd0;  // timed out
          state_d = B_REPLY;
        end
      end
      B_REPLY: begin
        tx_start = 1'b1;
        state_d = B_SEND;
      end
      B_SEND: if (tx_done) begin
        rx_ack = 1'b1;
        state_d = B_IDLE;
      end
      default: state_d = B_IDLE;
    endcase
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      state_q <= B_IDLE;
      session_q <= 1'b0;
      last_id_q <= '0;
      {r_type_q, r_id_q, r_len_q, r_fields_q, r_buf_q} <= '0;
      {m_write_q, m_base_q, m_words_q, m_w_q, m_off_q, m_end_q} <= '0;
      w_left_q <= '0;
      gap_q <= '0;
    end else begin
      state_q <= state_d;
      session_q <= session_d;
      last_id_q <= last_id_d;
      {r_type_q, r_id_q, r_len_q, r_fields_q, r_buf_q} <=
          {r_type_d, r_id_d, r_len_d, r_fields_d, r_buf_d};
      {m_write_q, m_base_q, m_words_q, m_w_q, m_off_q, m_end_q} <=
          {m_write_d, m_base_d, m_words_d, m_w_d, m_off_d, m_end_d};
      w_left_q <= w_left_d;
      gap_q <= gap_d;
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      assert (!(tx_start && tx_busy)) else $error("systole_usb_bridge: reply while sending one");
      assert (!(rxb_en && engb_en)) else $error("systole_usb_bridge: two buffer writers");
    end
  end
`endif
endmodule
