// systole_host_dma_regs — the descriptor and status registers of systole_host_dma (the map of
// docs/HOST_LINKS.md, byte offsets 0x00-0x24): what the driver writes before START, the
// checks START makes, STATUS (BUSY, DONE, ERROR and its code), the counters and the interrupt.
//
// Split from the engine (systole_host_dma), which only sees START with the transfer it
// describes, and tells this block when the transfer has finished or a host response failed.
// Same timing as the core's register bus: always ready, read data the cycle after.
//
// START checks the descriptor: the host and device addresses must share their offset within
// a 32-byte word (MISALIGNED) and the device range must lie in device memory (RANGE); either
// ends the transfer at once with DONE and ERROR, moving nothing. A zero length is DONE at once.
//
// Parameters: MEM_BYTES_LO/HI, the configuration's device memory size (the bound of RANGE),
// set by the parent; the defaults are rejected at elaboration.
module systole_host_dma_regs #(
    parameter integer MEM_BYTES_LO = 0,
    parameter integer MEM_BYTES_HI = -1,
    localparam integer KW = 28  // word counts: up to (31 + 2^32 - 1) / 32 + 1 words
) (
    input  logic          clk,
    input  logic          rst,
    // Register bus
    input  logic          cfg_valid,
    input  logic          cfg_write,
    input  logic [5:0]    cfg_addr,
    input  logic [31:0]   cfg_wdata,
    output logic          cfg_rvalid,
    output logic [31:0]   cfg_rdata,
    output logic          irq,           // STATUS.DONE while CTRL.IRQ_ENABLE
    // The engine
    output logic          busy_o,        // a transfer runs
    output logic          err_o,         // ... and has failed: no new bursts
    output logic          start_o,       // START of a transfer that passed its checks, or not:
                                         // the engine loads the values below while !busy_o
    output logic          to_host_o,     // with start_o: device → host
    output logic [63:0]   host_base_o,   // with start_o: the host address, word-aligned
    output logic [47:0]   dev_base_o,    // with start_o: the device address, word-aligned
    output logic [KW-1:0] nwords_o,      // with start_o: words the transfer touches
    output logic [4:0]    first_lo_o,    // with start_o: first byte lane of the first word
    output logic [4:0]    last_hi_o,     // with start_o: last byte lane of the last word
    input  logic          finished_i,    // nothing of the transfer is in flight any more
    input  logic          r_bad_i,       // an R beat with SLVERR or DECERR
    input  logic          b_bad_i        // a B response with SLVERR or DECERR
);
  localparam logic [5:0] REG_HOST_LO = 6'h00, REG_HOST_HI = 6'h04, REG_DEV_LO = 6'h08,
                         REG_DEV_HI = 6'h0C, REG_LENGTH = 6'h10, REG_CTRL = 6'h14,
                         REG_STATUS = 6'h18, REG_COUNT = 6'h1C, REG_BYTES = 6'h20,
                         REG_CYCLES = 6'h24;
  localparam logic [3:0] E_NONE = 4'd0, E_MISALIGNED = 4'd1, E_RANGE = 4'd2,
                         E_HOST_READ = 4'd3, E_HOST_WRITE = 4'd4;

  // ---- Parameters --------------------------------------------------------------------------
  // Configuration parameters come from the parent; the defaults fail this check.
  if (MEM_BYTES_HI < 0 || MEM_BYTES_HI > 65535 || (MEM_BYTES_HI == 0 && MEM_BYTES_LO == 0))
  begin : g_mem_check
    systole_param_error_host_dma_MEM_BYTES_missing_or_out_of_range u_error ();
  end
  localparam logic [31:0] MEM_HI = MEM_BYTES_HI, MEM_LO = MEM_BYTES_LO;
  localparam logic [63:0] MEM_BYTES = 64'(MEM_HI) << 32 | 64'(MEM_LO);

  // ---- Registers ---------------------------------------------------------------------------
  logic [63:0] d_host_q, d_host_d;
  logic [47:0] d_dev_q, d_dev_d;
  logic [31:0] d_len_q, d_len_d;
  logic        d_to_host_q, d_to_host_d, d_irq_en_q, d_irq_en_d;
  logic        busy_q, busy_d, done_q, done_d, err_q, err_d;
  logic [3:0]  err_code_q, err_code_d;
  logic [31:0] n_count_q, n_count_d, n_bytes_q, n_bytes_d, n_cycles_q, n_cycles_d;
  logic        cfg_rvalid_q, cfg_rvalid_d;
  logic [31:0] cfg_rdata_q, cfg_rdata_d;
  wire         wr = cfg_valid && cfg_write;
  wire         start = wr && cfg_addr == REG_CTRL && cfg_wdata[0] && !busy_q;

  assign busy_o = busy_q;
  assign err_o = err_q;
  assign cfg_rvalid = cfg_rvalid_q;
  assign cfg_rdata = cfg_rdata_q;
  assign irq = done_q && d_irq_en_q;

  // ---- START: the checks and the transfer the descriptor describes --------------------------
  wire [63:0] s_dev = {16'd0, d_dev_q};
  /* verilator lint_off UNUSEDSIGNAL */  // words: s_end / 32, the low bits are not needed
  wire [32:0] s_end = {28'd0, d_dev_q[4:0]} + {1'b0, d_len_q} + 33'd31;
  /* verilator lint_on UNUSEDSIGNAL */
  wire [3:0]  s_error = d_host_q[4:0] != d_dev_q[4:0] ? E_MISALIGNED :
                        s_dev + {32'd0, d_len_q} > MEM_BYTES ? E_RANGE : E_NONE;
  assign start_o     = start;
  assign to_host_o   = cfg_wdata[1];
  assign host_base_o = {d_host_q[63:5], 5'd0};
  assign dev_base_o  = {d_dev_q[47:5], 5'd0};
  assign nwords_o    = s_end[32:5];
  assign first_lo_o  = d_dev_q[4:0];
  assign last_hi_o   = d_dev_q[4:0] + d_len_q[4:0] - 5'd1;

  // ---- Next state: a register write, START, then the running transfer's events --------------
  always_comb begin
    d_host_d = d_host_q;
    d_dev_d = d_dev_q;
    d_len_d = d_len_q;
    d_to_host_d = d_to_host_q;
    d_irq_en_d = d_irq_en_q;
    busy_d = busy_q;
    done_d = done_q;
    err_d = err_q;
    err_code_d = err_code_q;
    n_count_d = n_count_q;
    n_bytes_d = n_bytes_q;
    n_cycles_d = n_cycles_q;
    cfg_rvalid_d = cfg_valid && !cfg_write;
    if (wr) begin
      case (cfg_addr)
        REG_HOST_LO: d_host_d[31:0] = cfg_wdata;
        REG_HOST_HI: d_host_d[63:32] = cfg_wdata;
        REG_DEV_LO: d_dev_d[31:0] = cfg_wdata;
        REG_DEV_HI: d_dev_d[47:32] = cfg_wdata[15:0];
        REG_LENGTH: d_len_d = cfg_wdata;
        REG_CTRL: if (!busy_q) {d_irq_en_d, d_to_host_d} = cfg_wdata[2:1];
        REG_STATUS: if (!busy_q) begin  // write 1 to clear DONE / ERROR (of a finished transfer)
          if (cfg_wdata[1]) done_d = 1'b0;
          if (cfg_wdata[2]) err_d = 1'b0;
        end
        default: ;
      endcase
    end
    if (start) begin
      {done_d, err_d, err_code_d} = {s_error != E_NONE, s_error != E_NONE, s_error};
      busy_d = s_error == E_NONE && d_len_q != 0;
      if (s_error == E_NONE && d_len_q == 0) {done_d, n_count_d} = {1'b1, n_count_q + 1'b1};
      n_cycles_d = '0;
    end
    if (busy_q) n_cycles_d = n_cycles_q + 1'b1;
    if (busy_q && (r_bad_i || b_bad_i) && !err_q) begin
      {err_d, err_code_d} = {1'b1, r_bad_i ? E_HOST_READ : E_HOST_WRITE};
    end
    if (finished_i) begin
      {busy_d, done_d} = 2'b01;
      if (!(err_q || r_bad_i || b_bad_i)) begin
        {n_count_d, n_bytes_d} = {n_count_q + 1'b1, n_bytes_q + d_len_q};
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      {d_host_q, d_dev_q, d_len_q, d_to_host_q, d_irq_en_q} <= '0;
      {busy_q, done_q, err_q, err_code_q, n_count_q, n_bytes_q, n_cycles_q} <= '0;
      cfg_rvalid_q <= 1'b0;
    end else begin
      {d_host_q, d_dev_q, d_len_q, d_to_host_q, d_irq_en_q} <=
          {d_host_d, d_dev_d, d_len_d, d_to_host_d, d_irq_en_d};
      {busy_q, done_q, err_q, err_code_q, n_count_q, n_bytes_q, n_cycles_q} <=
          {busy_d, done_d, err_d, err_code_d, n_count_d, n_bytes_d, n_cycles_d};
      cfg_rvalid_q <= cfg_rvalid_d;
    end
  end

  // ---- Register reads: the cycle after the request, whatever the address (not reset) --------
  always_comb begin
    case (cfg_addr)
      REG_HOST_LO: cfg_rdata_d = d_host_q[31:0];
      REG_HOST_HI: cfg_rdata_d = d_host_q[63:32];
      REG_DEV_LO: cfg_rdata_d = d_dev_q[31:0];
      REG_DEV_HI: cfg_rdata_d = {16'd0, d_dev_q[47:32]};
      REG_LENGTH: cfg_rdata_d = d_len_q;
      REG_CTRL: cfg_rdata_d = {29'd0, d_irq_en_q, d_to_host_q, 1'b0};
      REG_STATUS: cfg_rdata_d = {24'd0, err_code_q, 1'b0, err_q, done_q, busy_q};
      REG_COUNT: cfg_rdata_d = n_count_q;
      REG_BYTES: cfg_rdata_d = n_bytes_q;
      REG_CYCLES: cfg_rdata_d = n_cycles_q;
      default: cfg_rdata_d = '0;
    endcase
  end
  always_ff @(posedge clk) cfg_rdata_q <= cfg_rdata_d;
endmodule
