#!/usr/bin/env bash
# Installs the Debian packages Systole builds and tests with, and nothing else.
# Idempotent and quiet: when every package is present it only runs one dpkg query.
# Usage: scripts/setup.sh            (all packages)
set -euo pipefail

packages=(
  # build
  build-essential cmake ninja-build ccache pkg-config
  # C++ libraries
  libcli11-dev libfmt-dev nlohmann-json3-dev libtomlplusplus-dev libzip-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libboost-dev libisal-dev zlib1g-dev  # driver: Boost.Asio (header-only), ISA-L crc32 (zlib: the reference in tests)
  libusb-1.0-0-dev          # driver: usb:// links to boards
  # sanitizer and fuzzer runtimes (clang's libFuzzer)
  clang libclang-rt-14-dev
  # hardware tools
  verilator yosys iverilog
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "setup: installing ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
