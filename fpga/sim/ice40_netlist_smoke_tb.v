// A smoke check of the iCEBreaker netlist under Icarus 11, by hand (not in CTest: Icarus runs
// this gate-level netlist at about 100 cycles a second here, far too slow for programs; the test
// is tests/fpga/netlist under Verilator). After systole_board_reset's 4 096 cycles it sends a
// line of garbage over RX at 12 clocks per bit and prints every byte the netlist sends back on
// TX: the bridge must answer with one kError frame ("SYLK", version 1, type 0x7F, code 5 =
// kBadMagic), as the RTL does in SerialBoard.GarbageOnTheLineGetsAnErrorReplyAndTheBoardRecovers.
//   python3 -c "s=open('/usr/share/yosys/ice40/cells_sim.v').read(); a=s.index('module SB_PLL40_PAD (');
//     b=s.index('endmodule',a)+9; open('/tmp/cells_nopll.v','w').write(s[:a]+s[b:])"
//   iverilog -g2012 -DNO_ICE40_DEFAULT_ASSIGNMENTS -o /tmp/smoke.vvp -s ice40_netlist_smoke_tb \
//     fpga/sim/ice40_netlist_smoke_tb.v fpga/sim/sb_pll40_pad.sv /tmp/cells_nopll.v \
//     build-fpga/icebreaker/netlist.v && vvp -n /tmp/smoke.vvp
// (Icarus rejects a second SB_PLL40_PAD, hence the library without its empty one.)
`timescale 1ns/1ps
module ice40_netlist_smoke_tb;
  reg clk = 0, rx = 1;
  wire tx, ledr, ledg;
  icebreaker_top dut(.CLK(clk), .RX(rx), .TX(tx), .BTN_N(1'b1), .LEDR_N(ledr), .LEDG_N(ledg));
  always #5 clk = ~clk;
  localparam integer BIT = 12;
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
    $display("reset over at %0t", $time);
    send("h"); send("e"); send("l"); send("l"); send("o"); send(8'h0d); send(8'h0a);
    repeat (30000) @(posedge clk);
    $display("done: %0d bytes back", n);
    $finish;
  end
endmodule
