// Includes every generated RTL header so that the lint and synthesis checks in
// tests/rtl/CMakeLists.txt prove Verilator, Icarus and Yosys all accept them.
module generated_headers_check (
  output logic [7:0] opcode_o,
  output logic [11:0] doorbell_o
);
  `include "systole_isa.svh"
  `include "systole_regs.svh"
  assign opcode_o = OP_MATMUL;
  assign doorbell_o = REG_DOORBELL;
endmodule
