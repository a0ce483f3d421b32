// systole_dma_weights — the WEIGHT unit: one R×C weight tile from device memory into the
// MXU's weight FIFO per LOAD_WEIGHTS.
//
// `load_weights dram=A, stride=S, rows=k, cols=n` (docs/ISA.md) pushes ROWS rows: row t < k holds
// the n elements at A + t*S followed by zeros, rows t >= k are zero. The k memory rows stream
// through systole_row_reader; the zero rows need no memory traffic.
module systole_dma_weights #(
    parameter integer ROWS = 4,
    parameter integer COLS = 4,
    parameter integer BF16 = 0,
    parameter integer EW = BF16 != 0 ? 16 : 8
) (
    input  logic                 clk,
    input  logic                 rst,
    input  logic                 cmd_valid,
    output logic                 cmd_ready,
    /* verilator lint_off UNUSEDSIGNAL */  // the header's tokens are the sequencer's business
    input  logic [255:0]         cmd_insn,
    /* verilator lint_on UNUSEDSIGNAL */
    output logic                 done,
    // weight rows to the MXU's FIFO, row 0 first
    output logic                 wrow_valid,
    input  logic                 wrow_ready,
    output logic [COLS*EW-1:0]   wrow_data,
    // device memory
    output logic                 mem_req_valid,
    input  logic                 mem_req_ready,
    output logic [47:0]          mem_req_addr,
    input  logic                 mem_rsp_valid,
    input  logic [255:0]         mem_rsp_rdata,
    // performance events
    output logic [31:0]          bytes_weights,
    output logic                 stall_memory
);
  `include "systole_isa.svh"

  localparam integer E = EW / 8;
  localparam integer ROW_BYTES = COLS * E;

  logic        active;
  logic [47:0] next_addr;
  logic [31:0] stride;
  logic [15:0] mem_rows;     // k: rows read from memory
  logic [15:0] cols;         // n
  logic [15:0] jobs_left;
  logic [15:0] pushed;       // rows pushed to the FIFO so far (0..ROWS)

  assign cmd_ready = !active;
  wire take = cmd_valid && cmd_ready;

  logic                   row_valid, row_ready, job_ready, reader_idle;
  logic [ROW_BYTES*8-1:0] row_data;
  wire                    job_valid = active && jobs_left != 0;

  systole_row_reader #(.ROW_BYTES(ROW_BYTES)) u_reader (
      .clk, .rst,
      .job_valid, .job_ready,
      .job_addr(next_addr),
      .job_len(16'(32'(cols) * E)),
      .job_dst(16'd0),
      .row_valid, .row_ready, .row_data,
      .mem_req_valid, .mem_req_ready, .mem_req_addr, .mem_rsp_valid, .mem_rsp_rdata,
      .stall_memory, .idle(reader_idle)
  );

  // Rows below k come from memory, the rest are zero.
  wire from_memory = pushed < mem_rows;
  assign wrow_valid = active && (from_memory ? row_valid : 1'b1);
  assign wrow_data  = from_memory ? row_data : '0;
  assign row_ready  = from_memory && wrow_ready;
  wire   push       = wrow_valid && wrow_ready;
  assign bytes_weights = push && from_memory ? 32'(cols) * E : 32'd0;

  always_ff @(posedge clk) begin
    done <= 1'b0;
    if (rst) begin
      active <= 1'b0;
      jobs_left <= '0;
      pushed <= '0;
    end else if (take) begin
      active    <= 1'b1;
      next_addr <= cmd_insn[LOAD_WEIGHTS_DRAM_LSB +: LOAD_WEIGHTS_DRAM_WIDTH];
      stride    <= cmd_insn[LOAD_WEIGHTS_STRIDE_LSB +: LOAD_WEIGHTS_STRIDE_WIDTH];
      mem_rows  <= cmd_insn[LOAD_WEIGHTS_ROWS_LSB +: LOAD_WEIGHTS_ROWS_WIDTH];
      cols      <= cmd_insn[LOAD_WEIGHTS_COLS_LSB +: LOAD_WEIGHTS_COLS_WIDTH];
      jobs_left <= cmd_insn[LOAD_WEIGHTS_ROWS_LSB +: LOAD_WEIGHTS_ROWS_WIDTH];
      pushed    <= '0;
    end else if (active) begin
      if (job_valid && job_ready) begin
        jobs_left <= jobs_left - 16'd1;
        next_addr <= next_addr + 48'(stride);
      end
      if (push) begin
        pushed <= pushed + 16'd1;
        if (pushed + 16'd1 == 16'(ROWS)) begin
          active <= 1'b0;
          done <= 1'b1;
        end
      end
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst && take) begin
      assert (cmd_insn[7:0] == OP_LOAD_WEIGHTS)
      else $error("systole_dma_weights: offered opcode 0x%02x", cmd_insn[7:0]);
    end
  end
`endif
  wire unused_ok = &{1'b0, reader_idle};
endmodule
