// systole_dma_store — the STORE unit: unified-buffer or accumulator rows → device memory.
//
// `store mem=ub|acc, dram=A, stride=S, row=r, col=c, rows=n, elems=e` (docs/ISA.md): elements
// c..c+e-1 of buffer row r+i go to A + i*S. Each row is read once from the buffer, then written
// as the 32-byte words that cover its bytes, with byte strobes so the bytes around it in device
// memory are untouched. Reads run ahead of the writer into a two-row staging FIFO (a read is
// issued while fewer than two rows are staged or arriving, so no read is ever refused room),
// and the writer starts the next row — from the FIFO, or straight from the read port — in the
// cycle its current row's last word is accepted: a stream of rows costs one cycle per word,
// one-word rows included. The unit is done when every write is acknowledged.
module systole_dma_store #(
    parameter integer ROWS = 4,
    parameter integer COLS = 4,
    parameter integer BF16 = 0,
    parameter integer UB_ROWS = 1024,
    parameter integer ACC_ROWS = 64,
    parameter integer EW = BF16 != 0 ? 16 : 8,
    parameter integer W = ROWS > COLS ? ROWS : COLS,
    parameter integer UB_AW = $clog2(UB_ROWS),
    parameter integer ACC_AW = $clog2(ACC_ROWS)
) (
    input  logic                 clk,
    input  logic                 rst,
    input  logic                 cmd_valid,
    output logic                 cmd_ready,
    input  logic [255:0]         cmd_insn,
    output logic                 done,
    // unified-buffer read port (shared)
    output logic                 ub_rd_req,
    output logic [UB_AW-1:0]     ub_rd_addr,
    input  logic                 ub_rd_gnt,
    input  logic [W*EW-1:0]      ub_rd_data,
    // accumulator read port (shared)
    output logic                 acc_rd_req,
    output logic [ACC_AW-1:0]    acc_rd_addr,
    input  logic                 acc_rd_gnt,
    input  logic [COLS*32-1:0]   acc_rd_data,
    // device memory (writes; every write is acknowledged)
    output logic                 mem_req_valid,
    input  logic                 mem_req_ready,
    output logic [47:0]          mem_req_addr,
    output logic [255:0]         mem_req_wdata,
    output logic [31:0]          mem_req_wstrb,
    input  logic                 mem_rsp_valid,
    // performance events
    output logic [31:0]          bytes_from_ub,
    output logic [31:0]          bytes_from_acc,
    output logic                 stall_memory
);
  `include "systole_isa.svh"

  localparam integer E = EW / 8;
  localparam integer UB_BYTES = W * E;
  localparam integer ACC_BYTES = COLS * 4;
  localparam integer ROW_BYTES = UB_BYTES > ACC_BYTES ? UB_BYTES : ACC_BYTES;

  // ---- The instruction ---------------------------------------------------------------------
  logic        active;
  logic        from_acc;
  logic [31:0] stride;
  logic [23:0] first_row;
  logic [15:0] col;
  logic [15:0] elems;
  logic [15:0] rows;
  wire  [15:0] elem_bytes = from_acc ? 16'd4 : 16'(E);
  wire  [31:0] row_len = 32'(elems) * 32'(elem_bytes);   // bytes per row
  wire  [19:0] row_dst = 20'(32'(col) * 32'(elem_bytes));  // first byte within the buffer row

  assign cmd_ready = !active;
  wire take = cmd_valid && cmd_ready;

  // ---- Read side: rows into the staging FIFO (q0 is its head) -------------------------------
  logic [15:0] rd_index;          // next row to read
  logic        rd_pending;        // read granted last cycle: its data is on the port now
  logic [1:0]  q_count;           // rows in the FIFO
  logic [ROW_BYTES*8-1:0] q0, q1;
  // Only registered state decides a read, so the buffer request never waits on memory.
  wire  rd_want = active && rd_index != rows && 32'(q_count) + 32'(rd_pending) < 2;
  assign ub_rd_req   = rd_want && !from_acc;
  assign acc_rd_req  = rd_want && from_acc;
  assign ub_rd_addr  = UB_AW'(32'(first_row) + 32'(rd_index));
  assign acc_rd_addr = ACC_AW'(32'(first_row) + 32'(rd_index));
  wire  rd_fire = from_acc ? (acc_rd_req && acc_rd_gnt) : (ub_rd_req && ub_rd_gnt);
  wire [ROW_BYTES*8-1:0] rd_data = from_acc ? (ROW_BYTES*8)'(acc_rd_data)
                                            : (ROW_BYTES*8)'(ub_rd_data);

  // ---- Write side: the words of the current row ----------------------------------------------
  logic                   writing;     // `cur` holds the row being written
  logic [ROW_BYTES*8-1:0] cur;
  logic [47:0]            row_addr;    // device address of the current row's first byte
  logic [47:0]            next_addr;   // device address of the next row to start
  logic [15:0]            wr_word;     // word index within the row
  logic [15:0]            wr_index;    // rows fully issued
  logic [31:0]            acks_owed;   // writes issued and not yet acknowledged

  wire [42:0] first_word = row_addr[47:5];
  wire [42:0] last_word  = 43'((row_addr + 48'(row_len) - 48'd1) >> 5);
  wire [42:0] this_word  = first_word + 43'(wr_word);
  wire        last_of_row = this_word == last_word;

  // Byte b of this word is data byte k = 32*wr_word + b - (row_addr mod 32), which is byte
  // row_dst + k of the buffer row.
  logic signed [19:0] delta;
  always_comb delta = 20'(row_dst) + 20'(32 * 32'(wr_word)) - 20'(row_addr[4:0]);
  always_comb begin
    mem_req_wdata = '0;
    mem_req_wstrb = '0;
    for (int b = 0; b < 32; b++) begin
      logic signed [19:0] p;
      p = 20'(b) + delta;
      if (p >= 20'(row_dst) && p < 20'(row_dst) + 20'(row_len) && p < 20'(ROW_BYTES)) begin
        mem_req_wdata[b*8 +: 8] = cur[p[$clog2(ROW_BYTES+1)-1:0]*8 +: 8];
        mem_req_wstrb[b] = 1'b1;
      end
    end
  end
  assign mem_req_valid = writing;
  assign mem_req_addr  = {this_word, 5'b0};
  assign stall_memory  = mem_req_valid && !mem_req_ready;
  wire   wr_fire       = mem_req_valid && mem_req_ready;
  wire   row_issued    = wr_fire && last_of_row;

  // The writer takes the next row when it is free or finishing: the FIFO head, or else the
  // row arriving on the read port (which then bypasses the FIFO).
  wire   start    = active && (!writing || row_issued) && (q_count != 0 || rd_pending);
  wire   pop      = start && q_count != 0;
  wire   push     = rd_pending && !(start && q_count == 0);

  assign bytes_from_ub  = row_issued && !from_acc ? row_len : 32'd0;
  assign bytes_from_acc = row_issued && from_acc ? row_len : 32'd0;

  always_ff @(posedge clk) begin
    done <= 1'b0;
    if (rst) begin
      active <= 1'b0;
      rd_pending <= 1'b0;
      q_count <= '0;
      writing <= 1'b0;
      acks_owed <= '0;
    end else begin
      acks_owed <= acks_owed + 32'(wr_fire) - 32'(mem_rsp_valid);
      if (take) begin
        active    <= 1'b1;
        from_acc  <= cmd_insn[STORE_MEM_LSB];
        next_addr <= cmd_insn[STORE_DRAM_LSB +: STORE_DRAM_WIDTH];
        stride    <= cmd_insn[STORE_STRIDE_LSB +: STORE_STRIDE_WIDTH];
        first_row <= cmd_insn[STORE_ROW_LSB +: STORE_ROW_WIDTH];
        col       <= cmd_insn[STORE_COL_LSB +: STORE_COL_WIDTH];
        elems     <= cmd_insn[STORE_ELEMS_LSB +: STORE_ELEMS_WIDTH];
        rows      <= cmd_insn[STORE_ROWS_LSB +: STORE_ROWS_WIDTH];
        rd_index  <= '0;
        wr_index  <= '0;
      end else if (active) begin
        // Read: the data of a granted read is on the port one cycle later.
        rd_pending <= rd_fire;
        if (rd_fire) rd_index <= rd_index + 16'd1;
        // Staging FIFO: at most two rows, so q1 is only written when q0 stays occupied.
        if (pop && push) begin
          q0 <= q_count == 2'd2 ? q1 : rd_data;
          if (q_count == 2'd2) q1 <= rd_data;
        end else if (pop) begin
          q0 <= q1;
          q_count <= q_count - 2'd1;
        end else if (push) begin
          if (q_count == 2'd0) q0 <= rd_data;
          else q1 <= rd_data;
          q_count <= q_count + 2'd1;
        end
        // Write.
        if (row_issued) wr_index <= wr_index + 16'd1;
        if (start) begin
          cur       <= q_count != 0 ? q0 : rd_data;
          writing   <= 1'b1;
          wr_word   <= '0;
          row_addr  <= next_addr;
          next_addr <= next_addr + 48'(stride);
        end else if (row_issued) begin
          writing <= 1'b0;
        end else if (wr_fire) begin
          wr_word <= wr_word + 16'd1;
        end
        // Done when every row is issued and every write acknowledged.
        if (!writing && q_count == 0 && !rd_pending && wr_index == rows && rd_index == rows &&
            acks_owed == 32'(mem_rsp_valid)) begin
          active <= 1'b0;
          done <= 1'b1;
        end
      end
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst && take) begin
      assert (cmd_insn[7:0] == OP_STORE)
      else $error("systole_dma_store: offered opcode 0x%02x", cmd_insn[7:0]);
    end
    if (!rst) begin
      assert (!(mem_rsp_valid && acks_owed == 0))
      else $error("systole_dma_store: acknowledgement with no write outstanding");
    end
  end
`endif
endmodule
