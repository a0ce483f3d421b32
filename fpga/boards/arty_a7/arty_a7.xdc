## Arty A7-35T (Rev. D/E, XC7A35TICSG324-1L): the pins arty_a7_top uses. Pin names, package
## pins and I/O standards as in Digilent's master constraint file for this board,
## https://github.com/Digilent/digilent-xdc/blob/master/Arty-A7-35-Master.xdc (commit 0256a131),
## whose port names the top keeps; the timing exceptions below are ours. Read by the Vivado
## script fpga/flow.py writes (build-fpga/arty_a7/vivado/build.tcl); the open flow itself does
## not read it (Yosys has no use for pins), fpga/tests/test_flow.py checks every top port is here.

## Configuration bank voltage (bank 0 is at 3.3 V on the Arty)
set_property CFGBVS VCCO [current_design]
set_property CONFIG_VOLTAGE 3.3 [current_design]

## Clock: the 100 MHz oscillator. The MMCM's 30 MHz output clock is derived from it by Vivado.
set_property -dict { PACKAGE_PIN E3    IOSTANDARD LVCMOS33 } [get_ports { CLK100MHZ }]; #IO_L12P_T1_MRCC_35 Sch=gclk[100]
create_clock -add -name sys_clk_pin -period 10.00 -waveform {0 5} [get_ports { CLK100MHZ }];

## USB-UART (FT2232H channel B): uart_txd_in is the FT2232H's TXD, uart_rxd_out its RXD
set_property -dict { PACKAGE_PIN D10   IOSTANDARD LVCMOS33 } [get_ports { uart_rxd_out }]; #IO_L19N_T3_VREF_16 Sch=uart_rxd_out
set_property -dict { PACKAGE_PIN A9    IOSTANDARD LVCMOS33 } [get_ports { uart_txd_in }]; #IO_L14N_T2_SRCC_16 Sch=uart_txd_in

## The red RESET button (active low; also the ChipKit header's reset)
set_property -dict { PACKAGE_PIN C2    IOSTANDARD LVCMOS33 } [get_ports { ck_rst }]; #IO_L16P_T2_35 Sch=ck_rst

## LEDs LD4..LD7
set_property -dict { PACKAGE_PIN H5    IOSTANDARD LVCMOS33 } [get_ports { led[0] }]; #IO_L24N_T3_35 Sch=led[4]
set_property -dict { PACKAGE_PIN J5    IOSTANDARD LVCMOS33 } [get_ports { led[1] }]; #IO_25_35 Sch=led[5]
set_property -dict { PACKAGE_PIN T9    IOSTANDARD LVCMOS33 } [get_ports { led[2] }]; #IO_L24P_T3_A01_D17_14 Sch=led[6]
set_property -dict { PACKAGE_PIN T10   IOSTANDARD LVCMOS33 } [get_ports { led[3] }]; #IO_L24N_T3_A00_D16_14 Sch=led[7]

## The UART line and the button are asynchronous to the clock (systole_uart_rx and
## systole_board_reset each bring theirs into the clock domain through two flip-flops), and the
## LEDs are read by eye: no I/O timing to meet.
set_false_path -from [get_ports { uart_txd_in ck_rst }]
set_false_path -to [get_ports { uart_rxd_out led[*] }]
