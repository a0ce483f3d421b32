// A smoke check of the Arty A7 netlist (Yosys synth_xilinx) under Icarus 11, by hand, as
// fpga/sim/ice40_netlist_smoke_tb.v is for the iCEBreaker (not in CTest: Icarus runs a
// gate-level netlist at about 100 cycles a second here). After systole_board_reset's 4 096
// cycles it sends a line of garbage at 10 clocks per bit (3 Mbaud at 30 MHz) and prints every
// byte the netlist sends back: the bridge must answer with one kError frame ("SYLK", version 1,
// type 0x7F, code 5 = kBadMagic), as the RTL does in
// SerialBoard.GarbageOnTheLineGetsAnErrorReplyAndTheBoardRecovers. The cells are Yosys's own
// models (share/xilinx/cells_sim.v: LUTs, carry, flip-flops, LUT RAM, RAMB36E1, DSP48E1, I/O
// and clock buffers); the MMCM, a black box in Yosys's library, is fpga/sim/mmcme2_base.sv, so
// the harness's clock is the MMCM's output.
//   make fpga BOARD=arty_a7     (or any build that leaves build-fpga/arty_a7/netlist.v)
//   iverilog -g2012 -o /tmp/arty_smoke.vvp -s xilinx_netlist_smoke_tb \
//     fpga/sim/xilinx_netlist_smoke_tb.v fpga/sim/mmcme2_base.sv \
//     /usr/share/yosys/xilinx/cells_sim.v build-fpga/arty_a7/netlist.v && vvp -n /tmp/arty_smoke.vvp
`timescale 1ns/1ps
module xilinx_netlist_smoke_tb;
  reg clk = 0, rx = 1;
  wire tx;
  wire [3:0] led;
  arty_a7_top dut(.CLK100MHZ(clk), .uart_txd_in(rx), .uart_rxd_out(tx), .ck_rst(1'b1), .led(led));
  always #5 clk = ~clk;
  localparam integer BIT = 10;
  task send(input [7:0] b); integer i; begin
    rx = 0; repeat (BIT) @(posedge clk);
    for (i = 0; i < 8; i = i + 1) begin rx = b[i]; repeat (BIT) @(posedge clk); end
    rx = 1; repeat (BIT) @(posedge clk);
  end endtask
  // receiver: sample mid-bit
  integer n = 0; reg [7:0] got; integer k;
  initial begin
    forever begin
      @(negedge tx);
      repeat (BIT/2) @(posedge clk);
      for (k = 0; k < 8; k = k + 1) begin repeat (BIT) @(posedge clk); got[k] = tx; end
      repeat (BIT) @(posedge clk);
      $display("tx byte %0d: %02x '%c' at %0t", n, got, (got >= 32 && got < 127) ? got : 8'h2e, $time);
      n = n + 1;
    end
  end
  initial begin
    repeat (4200) @(posedge clk);
    $display("reset over at %0t, led %b", $time, led);
    send("h"); send("e"); send("l"); send("l"); send("o"); send(8'h0d); send(8'h0a);
    repeat (6000) @(posedge clk);
    $display("done: %0d bytes back", n);
    $finish;
  end
endmodule
