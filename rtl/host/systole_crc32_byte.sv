// systole_crc32_byte — one byte of CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), the
// frame checksum of docs/PROTOCOL.md, as zlib's crc32 computes it: start from 32'hFFFFFFFF,
// feed every byte, invert the result. Combinational, one byte per cycle, so the USB bridge
// checks and produces checksums at the byte-stream rate without a table ROM.
module systole_crc32_byte (
    input  logic [31:0] crc_in,
    input  logic [7:0]  data,
    output logic [31:0] crc_out
);
  always_comb begin
    logic [31:0] c;
    c = crc_in ^ {24'd0, data};
    for (int b = 0; b < 8; b++) begin
      c = c[0] ? ((c >> 1) ^ 32'hEDB88320) : (c >> 1);
    end
    crc_out = c;
  end
endmodule
