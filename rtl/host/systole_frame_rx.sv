// systole_frame_rx — the receiving half of the USB bridge: parses docs/PROTOCOL.md frames from
// an FT245-style byte FIFO (rx_valid/rx_ready/rx_data, one byte per cycle) and hands each one,
// or the reason the stream went wrong, to systole_usb_bridge.
//
// Header errors are found as soon as the offending bytes arrive, because on a byte stream there
// is no connection to close: a bad magic (after 4 bytes) or version (after 6) is reported with
// request id 0 (the id has not arrived yet), a payload above MAX_PAYLOAD (after 16) with the
// frame's id. Each then makes the parser hunt for the next "SYLK" in the stream, the last three
// bytes it has seen included, so the bridge keeps working after garbage. A frame that stops
// arriving for RX_TIMEOUT cycles is dropped and reported as MALFORMED (truncated), with its id
// once the header is complete; a hunt that times out ends silently.
//
// WRITE_MEMORY data (payload bytes 8..) goes straight into the bridge's buffer, aligned as its
// device address is (byte `address % 32` of word 0), so the memory engine writes whole words.
// Nothing executes before the checksum has been compared, so a corrupted frame writes nothing
// but the buffer. The first 16 payload bytes (every request's fixed fields) are kept in
// `fields`. Between frames (frame_valid or err_valid high, until `ack`) no byte is taken.
module systole_frame_rx #(
    parameter integer MAX_PAYLOAD = 4096,
    parameter integer RX_TIMEOUT = 0,  // cycles; set by systole_usb_bridge (the default fails)
    parameter integer BUF_AW = 8
) (
    input  logic               clk,
    input  logic               rst,
    input  logic               rx_valid,
    output logic               rx_ready,
    input  logic [7:0]         rx_data,
    // a complete frame (checksum compared) or a stream error, held until `ack`
    output logic               frame_valid,
    output logic               crc_ok,
    output logic [15:0]        frame_type,
    output logic [31:0]        frame_id,
    output logic [31:0]        frame_len,
    output logic [127:0]       fields,
    output logic               err_valid,
    output logic [3:0]         err_code,
    output logic [31:0]        err_id,
    input  logic               ack,
    // WRITE_MEMORY data into the bridge buffer (one byte lane per cycle)
    output logic               buf_wr_en,
    output logic [BUF_AW-1:0]  buf_wr_addr,
    output logic [31:0]        buf_wr_lanes,
    output logic [255:0]       buf_wr_data
);
  localparam logic [31:0] MAGIC = 32'h4B4C5953;      // "SYLK" little-endian
  localparam logic [31:0] CRC_AFTER_MAGIC = 32'hD9AC0D81;  // CRC register after "SYLK"
  localparam logic [15:0] T_WRITE_MEMORY = 16'd5;
  localparam logic [3:0] E_MALFORMED = 4'd1, E_TOO_LARGE = 4'd3, E_BAD_VERSION = 4'd4,
                         E_BAD_MAGIC = 4'd5;
  localparam integer TW = $clog2(RX_TIMEOUT + 1);

  if (MAX_PAYLOAD < 16 || MAX_PAYLOAD % 32 != 0) begin : g_payload_check
    systole_param_error_frame_rx_MAX_PAYLOAD_must_be_a_multiple_of_32 u_error ();
  end
  if (RX_TIMEOUT < 1) begin : g_timeout_check
    systole_param_error_frame_rx_RX_TIMEOUT_must_be_positive u_error ();
  end

  localparam logic [1:0] S_HDR = 2'd0, S_HUNT = 2'd1, S_PAY = 2'd2, S_HOLD = 2'd3;
  logic [1:0]   state_q, state_d;
  logic [4:0]   idx_q, idx_d;        // header byte index
  // payload byte index: below the frame's length, which is at most MAX_PAYLOAD (checked)
  localparam integer PW = $clog2(MAX_PAYLOAD + 1);
  logic [PW-1:0] pos_q, pos_d;
  logic [159:0] hdr_q, hdr_d;
  logic [127:0] fields_q, fields_d;
  logic [23:0]  win_q, win_d;        // the last three bytes, newest in the top byte
  logic [31:0]  crc_q, crc_d;
  logic [TW-1:0] idle_q, idle_d;     // cycles since the last byte of an unfinished frame
  logic         frame_q, frame_d, crc_ok_q, crc_ok_d, err_q, err_d, hunt_q, hunt_d;
  logic [3:0]   code_q, code_d;
  logic [31:0]  err_id_q, err_id_d;

  logic        take;
  logic [31:0] crc_next;
  systole_crc32_byte u_crc (.crc_in(crc_q), .data(rx_data), .crc_out(crc_next));

  logic [31:0] len;       // payload_bytes once the header is complete
  logic [31:0] len_now;   // payload_bytes as byte 15 arrives
  logic [31:0] buf_pos;   // WRITE_MEMORY: buffer byte of payload byte pos_q
  assign len = hdr_q[127:96];
  assign len_now = {rx_data, hdr_q[119:96]};
  assign buf_pos = 32'(pos_q) - 32'd8 + {27'd0, fields_q[4:0]};
  assign take = rx_valid && rx_ready;
  assign rx_ready = state_q != S_HOLD;

  always_comb begin
    state_d = state_q;
    idx_d = idx_q;
    pos_d = pos_q;
    hdr_d = hdr_q;
    fields_d = fields_q;
    win_d = win_q;
    crc_d = crc_q;
    idle_d = idle_q;
    frame_d = frame_q;
    crc_ok_d = crc_ok_q;
    err_d = err_q;
    hunt_d = hunt_q;
    code_d = code_q;
    err_id_d = err_id_q;
    buf_wr_en = 1'b0;

    if (take) begin
      idle_d = '0;
      win_d = {rx_data, win_q[23:8]};
    end else if (state_q == S_PAY || state_q == S_HUNT || (state_q == S_HDR && idx_q != 0)) begin
      idle_d = idle_q + 1'b1;
    end

    case (state_q)
      S_HDR: if (take) begin
        hdr_d[8 * idx_q +: 8] = rx_data;
        if (idx_q < 5'd16) crc_d = crc_next;
        idx_d = idx_q + 1'b1;
        if (idx_q == 5'd3 && {rx_data, hdr_q[23:0]} != MAGIC) begin
          {err_d, code_d, err_id_d, hunt_d, state_d} = {1'b1, E_BAD_MAGIC, 32'd0, 1'b1, S_HOLD};
        end else if (idx_q == 5'd5 && {rx_data, hdr_q[39:32]} != 16'd1) begin
          {err_d, code_d, err_id_d, hunt_d, state_d} = {1'b1, E_BAD_VERSION, 32'd0, 1'b1, S_HOLD};
        end else if (idx_q == 5'd15 && len_now > 32'(MAX_PAYLOAD)) begin
          {err_d, code_d, err_id_d, hunt_d, state_d} =
              {1'b1, E_TOO_LARGE, hdr_q[95:64], 1'b1, S_HOLD};
        end else if (idx_q == 5'd19) begin
          pos_d = '0;
          if (len == 0) begin
            frame_d = 1'b1;
            crc_ok_d = ~crc_q == {rx_data, hdr_q[151:128]};
            state_d = S_HOLD;
          end else begin
            state_d = S_PAY;
          end
        end
      end else if (idx_q != 0 && idle_q >= TW'(RX_TIMEOUT)) begin
        {err_d, code_d, err_id_d, hunt_d, state_d} = {1'b1, E_MALFORMED, 32'd0, 1'b0, S_HOLD};
      end
      S_HUNT: if (take) begin
        if ({rx_data, win_q} == MAGIC) begin
          hdr_d[31:0] = MAGIC;
          crc_d = CRC_AFTER_MAGIC;
          idx_d = 5'd4;
          state_d = S_HDR;
        end
      end else if (idle_q >= TW'(RX_TIMEOUT)) begin
        idx_d = '0;
        crc_d = '1;
        state_d = S_HDR;
      end
      S_PAY: if (take) begin
        crc_d = crc_next;
        if (pos_q < PW'(16)) fields_d[8 * pos_q[3:0] +: 8] = rx_data;
        buf_wr_en = hdr_q[63:48] == T_WRITE_MEMORY && pos_q >= PW'(8);
        pos_d = pos_q + 1'b1;
        if (pos_q == PW'(len - 1)) begin
          frame_d = 1'b1;
          crc_ok_d = ~crc_next == hdr_q[159:128];
          state_d = S_HOLD;
        end
      end else if (idle_q >= TW'(RX_TIMEOUT)) begin
        {err_d, code_d, err_id_d, hunt_d, state_d} =
            {1'b1, E_MALFORMED, hdr_q[95:64], 1'b0, S_HOLD};
      end
      default: if (ack) begin  // S_HOLD: the bridge has answered
        frame_d = 1'b0;
        err_d = 1'b0;
        idx_d = '0;
        crc_d = '1;
        idle_d = '0;
        fields_d = '0;
        state_d = hunt_q ? S_HUNT : S_HDR;
        hunt_d = 1'b0;
      end
    endcase
  end

  assign buf_wr_addr = buf_pos[BUF_AW+4:5];
  assign buf_wr_lanes = 32'd1 << buf_pos[4:0];
  assign buf_wr_data = {32{rx_data}};

  assign frame_valid = frame_q;
  assign crc_ok = crc_ok_q;
  assign frame_type = hdr_q[63:48];
  assign frame_id = hdr_q[95:64];
  assign frame_len = len;
  assign fields = fields_q;
  assign err_valid = err_q;
  assign err_code = code_q;
  assign err_id = err_id_q;

  always_ff @(posedge clk) begin
    if (rst) begin
      state_q <= S_HDR;
      idx_q <= '0;
      pos_q <= '0;
      hdr_q <= '0;
      fields_q <= '0;
      win_q <= '0;
      crc_q <= '1;
      idle_q <= '0;
      frame_q <= 1'b0;
      crc_ok_q <= 1'b0;
      err_q <= 1'b0;
      hunt_q <= 1'b0;
      code_q <= '0;
      err_id_q <= '0;
    end else begin
      state_q <= state_d;
      idx_q <= idx_d;
      pos_q <= pos_d;
      hdr_q <= hdr_d;
      fields_q <= fields_d;
      win_q <= win_d;
      crc_q <= crc_d;
      idle_q <= idle_d;
      frame_q <= frame_d;
      crc_ok_q <= crc_ok_d;
      err_q <= err_d;
      hunt_q <= hunt_d;
      code_q <= code_d;
      err_id_q <= err_id_d;
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst && buf_wr_en) begin
      assert (buf_pos < 32'(MAX_PAYLOAD + 32))
      else $error("systole_frame_rx: buffer byte %0d beyond the payload limit", buf_pos);
    end
  end
`endif
endmodule
