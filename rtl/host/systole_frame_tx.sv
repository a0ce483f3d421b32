// systole_frame_tx — the sending half of the USB bridge: writes one reply frame
// (docs/PROTOCOL.md) into an FT245-style byte FIFO (tx_valid/tx_ready/tx_data).
//
// The header carries the CRC of header and payload but goes first, so every reply is walked
// twice over the same byte source: once to compute the CRC (one byte per cycle, nothing sent),
// once to send. The payload is either up to 20 bytes of `fields` (register values, HELLO, WAIT,
// ERROR) or READ_MEMORY data in the bridge buffer, starting at byte `buf_off` of word 0, which
// is read one 32-byte word at a time through the buffer's synchronous read port (a word is
// fetched when the walk first needs it: one stall cycle per 32 bytes).
module systole_frame_tx #(
    parameter integer BUF_AW = 8
) (
    input  logic               clk,
    input  logic               rst,
    input  logic               start,      // one cycle; the inputs below are held until done
    input  logic [15:0]        reply_type,
    input  logic [31:0]        reply_id,
    input  logic [31:0]        reply_len,
    input  logic [159:0]       reply_fields,
    input  logic               from_buf,
    input  logic [4:0]         buf_off,
    output logic               busy,
    output logic               done,       // one cycle after the last byte left
    output logic               buf_rd_en,
    output logic [BUF_AW-1:0]  buf_rd_addr,
    input  logic [255:0]       buf_rd_data,
    output logic               tx_valid,
    input  logic               tx_ready,
    output logic [7:0]         tx_data
);
  localparam logic [1:0] T_IDLE = 2'd0, T_CRC = 2'd1, T_SEND = 2'd2;
  localparam logic [31:0] MAGIC = 32'h4B4C5953;

  // A reply's payload fits the buffer (reply_len <= 32 * 2^BUF_AW - buf_off; asserted below), so
  // a frame's byte index fits IW bits: the walk's counter and comparisons are that narrow.
  localparam integer IW = BUF_AW + 6;

  logic [1:0]        state_q, state_d;
  logic [IW-1:0]     idx_q, idx_d;      // byte of the frame being walked
  logic [31:0]       crc_q, crc_d;
  logic [BUF_AW-1:0] word_q, word_d;    // buffer word on buf_rd_data
  logic              word_ok_q, word_ok_d;

  logic [IW-1:0] pos;      // payload byte idx_q - 20, as a buffer byte
  logic         in_buf;    // idx_q is a payload byte from the buffer
  logic         have;      // the byte at idx_q is available this cycle
  logic [7:0]   byte_c;
  logic [31:0]  crc_next;
  logic [159:0] header;
  logic         last;
  logic [IW-1:0] field_idx;  // payload byte idx_q - 20 of `reply_fields`
  logic         unused;

  assign header = {~crc_q, reply_len, reply_id, reply_type, 16'd1, MAGIC};
  assign pos = idx_q - IW'(20) + IW'(buf_off);
  assign in_buf = from_buf && idx_q >= IW'(20);
  assign have = !in_buf || (word_ok_q && word_q == pos[BUF_AW+4:5]);
  assign last = idx_q == IW'(reply_len) + IW'(19);
  assign field_idx = idx_q - IW'(20);
  assign unused = ^{pos[IW-1:BUF_AW+5], field_idx[IW-1:5], reply_len[31:IW]};

  always_comb begin
    if (idx_q < IW'(20)) byte_c = header[8 * idx_q[4:0] +: 8];
    else if (from_buf) byte_c = buf_rd_data[8 * pos[4:0] +: 8];
    else byte_c = reply_fields[8 * field_idx[4:0] +: 8];
  end

  systole_crc32_byte u_crc (.crc_in(crc_q), .data(byte_c), .crc_out(crc_next));

  always_comb begin
    state_d = state_q;
    idx_d = idx_q;
    crc_d = crc_q;
    word_d = word_q;
    word_ok_d = word_ok_q;
    buf_rd_en = 1'b0;
    buf_rd_addr = pos[BUF_AW+4:5];
    tx_valid = 1'b0;
    done = 1'b0;
    case (state_q)
      T_IDLE: if (start) begin
        state_d = T_CRC;
        idx_d = '0;
        crc_d = '1;
        word_ok_d = 1'b0;  // the buffer has new contents
      end
      T_CRC, T_SEND: if (!have) begin
        buf_rd_en = 1'b1;
        word_d = pos[BUF_AW+4:5];
        word_ok_d = 1'b1;
      end else if (state_q == T_CRC) begin
        if (idx_q < IW'(16) || idx_q >= IW'(20)) crc_d = crc_next;
        idx_d = idx_q + 1'b1;
        if (last) begin
          idx_d = '0;
          state_d = T_SEND;
        end
      end else begin
        tx_valid = 1'b1;
        if (tx_ready) begin
          idx_d = idx_q + 1'b1;
          if (last) begin
            state_d = T_IDLE;
            done = 1'b1;
          end
        end
      end
      default: state_d = T_IDLE;
    endcase
  end

  assign tx_data = byte_c;
  assign busy = state_q != T_IDLE;

  always_ff @(posedge clk) begin
    if (rst) begin
      state_q <= T_IDLE;
      idx_q <= '0;
      crc_q <= '1;
      word_q <= '0;
      word_ok_q <= 1'b0;
    end else begin
      state_q <= state_d;
      idx_q <= idx_d;
      crc_q <= crc_d;
      word_q <= word_d;
      word_ok_q <= word_ok_d;
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst && state_q != T_IDLE && !from_buf && idx_q >= IW'(20)) begin
      assert (idx_q < IW'(40))
      else $error("systole_frame_tx: a %0d-byte reply without the buffer (at most 20)", reply_len);
    end
    if (!rst && state_q != T_IDLE) begin
      assert (64'(reply_len) + 64'(buf_off) <= 64'd32 << BUF_AW)
      else $error("systole_frame_tx: a %0d-byte reply at byte %0d does not fit the buffer",
                  reply_len, buf_off);
    end
  end
`endif
endmodule
