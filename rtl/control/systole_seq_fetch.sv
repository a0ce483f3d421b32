// systole_seq_fetch — the sequencer's instruction fetch: reads a launch's program from device
// memory, one 32-byte word per instruction, and keeps up to DEPTH words requested or buffered
// ahead of dispatch, so that dispatch finds the next instruction waiting instead of paying a
// memory round trip per instruction.
//
// The buffer is read at the pop: word_o is the word the last pop took, registered, so the
// buffer is a block RAM's read port with its output register (on the Tang Nano 20K 8 BSRAMs
// instead of 64 RAM16SDP4 = 512 LUT4 sites, and the dispatcher's 256-bit instruction register
// with them: docs/FPGA.md). A pop never takes the slot a response fills in the same cycle (a
// pop needs a buffered word, so that slot would be full), so the RAM needs no read-write
// ordering (no_rw_check).
//
// A launch (start_i) restarts the fetch at start_pc_i for start_count_i words; start_run_i says
// whether to fetch at all (a launch whose CMD_PC is misaligned faults before its first fetch).
// No request goes past the last 32-byte word of device memory (dispatch reports DRAM_RANGE when
// it reaches that address). stop_i stops requesting; responses still due are then dropped as
// they arrive, and idle_o stays low until the last one has, so that a new launch never sees an
// old launch's words. A soft reset empties the buffer but keeps counting the responses due; only
// the power-on reset forgets them.
//
// Parameters:
//   MEM_BYTES_LO/HI  device-memory size (low 32 / high 16 bits): where fetching must stop.
//                    Configuration parameters, set by the parent (the defaults fail the check).
//   DEPTH            requests in flight plus words buffered; at least 1. A design choice of the
//                    sequencer (4 covers the fetch round trip at one instruction per 4 cycles).
module systole_seq_fetch #(
    parameter integer MEM_BYTES_LO = 0,
    parameter integer MEM_BYTES_HI = -1,
    parameter integer DEPTH = 4
) (
    input  logic         clk,
    input  logic         rst,
    input  logic         soft_reset,
    // Control from dispatch
    input  logic         start_i,        // a launch starts: restart at start_pc_i
    input  logic         start_run_i,    // ... and fetch (0: the launch faults at once)
    input  logic [63:0]  start_pc_i,
    input  logic [31:0]  start_count_i,  // instructions of the launch
    input  logic         stop_i,         // stop fetching (the launch stops)
    input  logic         pop_i,          // dispatch takes the oldest word (only when avail_o)
    output logic         avail_o,        // a fetched word waits
    output logic [255:0] word_o,         // the word the last pop took (from the cycle after it)
    output logic         idle_o,         // no response is due
    // Device-memory requester port (reads only)
    output logic         mem_req_valid,
    input  logic         mem_req_ready,
    output logic         mem_req_write,
    output logic [47:0]  mem_req_addr,
    output logic [255:0] mem_req_wdata,
    output logic [31:0]  mem_req_wstrb,
    input  logic         mem_rsp_valid,
    input  logic [255:0] mem_rsp_rdata
);
  // ---- Parameters --------------------------------------------------------------------------
  if (MEM_BYTES_HI < 0 || MEM_BYTES_HI > 65535) begin : g_mem_hi_check
    systole_param_error_MEM_BYTES_HI_must_be_0_to_65535 u_error ();
  end
  if (MEM_BYTES_HI == 0 && MEM_BYTES_LO >= 0 && MEM_BYTES_LO < 32) begin : g_mem_check
    systole_param_error_MEM_BYTES_must_be_at_least_32 u_error ();
  end
  if (DEPTH < 1) begin : g_depth_check
    systole_param_error_fetch_DEPTH_must_be_at_least_1 u_error ();
  end

  localparam logic [31:0] MEM_LO32 = MEM_BYTES_LO;
  localparam logic [31:0] MEM_HI32 = MEM_BYTES_HI;
  localparam logic [63:0] MEM_BYTES = (64'(MEM_HI32) << 32) | 64'(MEM_LO32);
  localparam logic [63:0] MEM_LAST_PC = MEM_BYTES - 64'd32;
  // The next address is kept as its low KM bits and whether it is 2^KM or more ("far"): a far
  // address is beyond the memory, so nothing is requested from it and it never advances (only
  // a request does), and a near one is its low bits. A 64-bit address register and adder did
  // the same in wider logic.
  localparam integer KM = $clog2(MEM_BYTES + 64'd1);  // MEM_BYTES < 2^KM
  localparam integer AW = (DEPTH > 1) ? $clog2(DEPTH) : 1;  // buffer index
  localparam integer CW = $clog2(DEPTH + 1);                // count 0..DEPTH
  // At most MEM_WORDS requests go out before the address leaves the memory, so a count above
  // that is never used up: `left` is KI bits, a larger count saturated to 2^KI - 1 (as the
  // sequencer's index and count are).
  localparam logic [63:0] MEM_WORDS = MEM_BYTES >> 5;
  localparam integer KI = ($clog2(MEM_WORDS + 64'd2) < 32) ? $clog2(MEM_WORDS + 64'd2) : 32;

  // ---- State -------------------------------------------------------------------------------
  logic          on_q, on_d;            // fetching for the current launch
  logic [KM-1:0] addr_q, addr_d;        // next address to request (its low KM bits)
  logic          far_q, far_d;          // ... is 2^KM or more
  logic [KI-1:0] left_q, left_d;        // instructions of the launch not yet requested
  logic [CW-1:0] inflight_q, inflight_d;  // requests without response (dropped when !on_q)
  logic [CW-1:0] level_q, level_d;      // words waiting in the buffer
  logic [AW-1:0] wr_q, wr_d, rd_q, rd_d;
  (* ram_style = "block", no_rw_check *)
  logic [255:0]  buf_q [DEPTH];         // storage: written, never reset
  logic [255:0]  word_q;                // the word the last pop took: never reset

  logic issue, push;

  // ---- Logic -------------------------------------------------------------------------------
  assign mem_req_valid = on_q && left_q != 0 && !far_q && 64'(addr_q) <= MEM_LAST_PC &&
                         ({1'b0, inflight_q} + {1'b0, level_q} < (CW + 1)'(DEPTH));
  assign mem_req_write = 1'b0;
  assign mem_req_addr = 48'(addr_q);
  assign mem_req_wdata = '0;
  assign mem_req_wstrb = '0;
  assign issue = mem_req_valid && mem_req_ready;
  assign push = mem_rsp_valid && on_q;
  assign avail_o = level_q != '0;
  assign word_o = word_q;
  assign idle_o = inflight_q == '0;

  always_comb begin
    on_d = on_q;
    addr_d = addr_q;
    far_d = far_q;
    left_d = left_q;
    wr_d = wr_q;
    rd_d = rd_q;
    inflight_d = inflight_q + CW'(issue) - CW'(mem_rsp_valid);
    level_d = level_q + CW'(push) - CW'(pop_i);
    if (issue) begin
      {far_d, addr_d} = (KM+1)'(addr_q) + (KM+1)'(32);  // near before the request
      left_d = left_q - KI'(1);
    end
    if (push) wr_d = (wr_q == AW'(DEPTH - 1)) ? '0 : wr_q + 1'b1;
    if (pop_i) rd_d = (rd_q == AW'(DEPTH - 1)) ? '0 : rd_q + 1'b1;
    if (start_i) begin
      on_d = start_run_i;
      addr_d = start_pc_i[KM-1:0];
      far_d = (start_pc_i >> KM) != '0;
      left_d = (33'(start_count_i) >> KI) != '0 ? '1 : KI'(start_count_i);
      level_d = '0;
      wr_d = '0;
      rd_d = '0;
    end else if (stop_i) begin
      on_d = 1'b0;
    end
  end

  always_ff @(posedge clk) begin
    if (rst || soft_reset) begin
      on_q <= 1'b0;
      addr_q <= '0;
      far_q <= 1'b0;
      left_q <= '0;
      level_q <= '0;
      wr_q <= '0;
      rd_q <= '0;
    end else begin
      on_q <= on_d;
      addr_q <= addr_d;
      far_q <= far_d;
      left_q <= left_d;
      level_q <= level_d;
      wr_q <= wr_d;
      rd_q <= rd_d;
    end
  end

  // Responses still due survive a soft reset (they arrive later and are dropped).
  always_ff @(posedge clk) begin
    if (rst) inflight_q <= '0;
    else inflight_q <= inflight_d;
  end

  always_ff @(posedge clk) begin
    if (push) buf_q[wr_q] <= mem_rsp_rdata;
    if (pop_i) word_q <= buf_q[rd_q];
  end

  // ---- Assertions --------------------------------------------------------------------------
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      assert (!(mem_rsp_valid && inflight_q == '0))
        else $error("sequencer fetch: response without a request");
      assert (!(push && level_q == CW'(DEPTH)))
        else $error("sequencer fetch: buffer overflow");
      assert (!(pop_i && !avail_o))
        else $error("sequencer fetch: pop from an empty buffer");
      assert (!(pop_i && push && rd_q == wr_q))
        else $error("sequencer fetch: pop of the slot a response fills");
    end
  end
`endif
endmodule
