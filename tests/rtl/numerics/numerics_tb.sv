// Test top for rtl/numerics/: every combinational unit side by side on the same operands, so
// one Verilated model checks them all against sim/model/numerics.hpp (numerics_test.cpp).
module numerics_tb (
    // Unused: sim/rtl/harness.hpp drives a clock into every top; these units have none.
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic        clk,
    /* verilator lint_on UNUSEDSIGNAL */
    input  logic [31:0] a,
    input  logic [31:0] b,
    input  logic [5:0]  shift,
    output logic [31:0] add_y,      // a + b
    output logic [31:0] sub_y,      // a - b (a + (b with its sign flipped))
    output logic [31:0] mul_y,      // a × b
    output logic [31:0] max_y,
    output logic [31:0] min_y,
    output logic [15:0] bf16_y,     // fp32 a → bf16
    output logic [31:0] widen_y,    // bf16 a[15:0] → fp32
    output logic [63:0] requant_y,  // (a × b + 2^(shift-1)) >>> shift, int64
    output logic [17:0] requant_sat18_y,  // ... saturated to 18 bits (the int8 vector lane's)
    output logic [7:0]  requant_sat8_y,   // ... saturated to 8 bits (saturates most operands)
    output logic [7:0]  sat_y       // saturate the int64 {b, a} to int8
);
  systole_fp32_add u_add (.a(a), .b(b), .y(add_y));
  systole_fp32_add u_sub (.a(a), .b({~b[31], b[30:0]}), .y(sub_y));
  systole_fp32_mul u_mul (.a(a), .b(b), .y(mul_y));
  systole_fp32_max u_max (.a(a), .b(b), .y(max_y));
  systole_fp32_min u_min (.a(a), .b(b), .y(min_y));
  systole_fp32_to_bf16 u_to_bf16 (.a(a), .y(bf16_y));
  systole_bf16_to_fp32 u_widen (.a(a[15:0]), .y(widen_y));
  systole_requant u_requant (.v(a), .s(b), .shift(shift), .y(requant_y));
  systole_requant_sat #(.BITS(18)) u_requant_sat18 (
      .v(a), .s(b), .shift(shift), .en(1'b1), .y(requant_sat18_y));
  systole_requant_sat #(.BITS(8)) u_requant_sat8 (
      .v(a), .s(b), .shift(shift), .en(1'b1), .y(requant_sat8_y));
  systole_sat_int8 u_sat (.v({b, a}), .y(sat_y));
endmodule
