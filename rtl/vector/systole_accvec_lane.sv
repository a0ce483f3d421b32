// systole_accvec_lane — one element of ACCVEC (docs/ISA.md "ACCVEC"): y = a op b in IEEE-754
// binary32 with the host interpreter's rules (docs/NUMERICS.md, "ACCVEC"), bit-exact against
// AccOpF32 in sim/model/numerics.hpp.
//
// add, sub, mul, max and min are combinational (y_o follows a_i, b_i at once). div and sqrt run
// in systole_fp32_ieee_divsqrt: start_i high in cycle t loads the operands, 27 steps follow, and
// y_o holds the result from cycle t + 28 until the next start; the vector unit's ACCVEC engine
// counts the cycles (all lanes of a row start together).
module systole_accvec_lane (
    input  logic        clk,
    input  logic [2:0]  op_i,     // isa::AccOp: add, sub, mul, max, min, div, sqrt
    input  logic        start_i,  // div, sqrt: load a_i, b_i
    input  logic [31:0] a_i,
    input  logic [31:0] b_i,
    output logic [31:0] y_o
);
  `include "systole_isa.svh"
  localparam logic [2:0] OP_ADD = 3'(ACCVEC_OP_ADD), OP_SUB = 3'(ACCVEC_OP_SUB),
                         OP_MUL = 3'(ACCVEC_OP_MUL), OP_MAX = 3'(ACCVEC_OP_MAX),
                         OP_MIN = 3'(ACCVEC_OP_MIN), OP_SQRT = 3'(ACCVEC_OP_SQRT);
  localparam logic [31:0] CANONICAL_NAN = 32'h7FC0_0000;

  logic [31:0] sum, product, quotient;
  systole_fp32_ieee_add u_add (.a(a_i), .b(b_i), .sub(op_i == OP_SUB), .y(sum));
  systole_fp32_ieee_mul u_mul (.a(a_i), .b(b_i), .y(product));
  systole_fp32_ieee_divsqrt u_divsqrt (.clk, .start_i, .sqrt_i(op_i == OP_SQRT), .a_i, .b_i,
                                       .y_o(quotient));

  // max and min as the interpreter computes them: NaN in either gives the canonical NaN,
  // otherwise a > b ? a : b (a < b ? a : b), so of two zeros (equal) the result is b.
  // Keys that order as unsigned integers like the values (−0 below +0, hence the zero case).
  logic a_nan, b_nan, both_zero, a_less, a_more;
  logic [31:0] ka, kb;
  assign a_nan = a_i[30:23] == 8'hFF && a_i[22:0] != 23'd0;
  assign b_nan = b_i[30:23] == 8'hFF && b_i[22:0] != 23'd0;
  assign both_zero = a_i[30:0] == 31'd0 && b_i[30:0] == 31'd0;
  assign ka = a_i[31] ? ~a_i : {1'b1, a_i[30:0]};
  assign kb = b_i[31] ? ~b_i : {1'b1, b_i[30:0]};
  assign a_less = !both_zero && ka < kb;
  assign a_more = !both_zero && ka > kb;

  always_comb begin
    case (op_i)
      OP_ADD, OP_SUB: y_o = sum;
      OP_MUL: y_o = product;
      OP_MAX: y_o = (a_nan || b_nan) ? CANONICAL_NAN : (a_more ? a_i : b_i);
      OP_MIN: y_o = (a_nan || b_nan) ? CANONICAL_NAN : (a_less ? a_i : b_i);
      default: y_o = quotient;  // div, sqrt (the sequencer admits no op above sqrt)
    endcase
  end
endmodule
