#!/usr/bin/env bash
# Installs the Debian packages Systole builds and tests with, then the project-local Python
# virtual environments: .venv/ (Debian's python3, the pinned python/requirements.txt: numpy, jax,
# jaxlib, pytest, scikit-learn) that the Python package and its tests use, and .venv-fpga/ (the pinned
# fpga/requirements.txt: YoWASP Yosys and nextpnr for ECP5 and Gowin, Apycula) for `make fpga`.
# Idempotent and quiet: when everything is present it runs one dpkg query and compares one
# stamp per environment (its requirements file's checksum, kept in the environment).
# Usage: scripts/setup.sh            (all packages, then both virtual environments)
#        scripts/setup.sh fpga       (all packages, then .venv-fpga/ only: what `make fpga` needs)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

packages=(
  # build
  build-essential cmake ninja-build ccache pkg-config
  # C++ libraries
  libcli11-dev libfmt-dev nlohmann-json3-dev libtomlplusplus-dev libzip-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libboost-dev libisal-dev zlib1g-dev  # driver: Boost.Asio (header-only), ISA-L crc32 (zlib: the reference in tests)
  libusb-1.0-0-dev          # driver: usb:// links to boards
  tcl                       # hls/: tclsh checks the Vitis HLS scripts
  libsystemc-dev            # sim/systemc: the SystemC/TLM-2.0 virtual platform (SystemC 2.3.4)
  libgloo-dev               # runtime/pod: Gloo's all-reduce for data-parallel training across devices
  openmpi-bin               # mpirun: launches a pod's processes (runtime::ResolvePodProcesses reads its environment)
  # sanitizer and fuzzer runtimes (clang's libFuzzer)
  clang libclang-rt-14-dev
  # hardware tools
  verilator yosys iverilog
  # FPGA flow (fpga/README.md): iCE40 place and route, icepack/icetime, board programming
  nextpnr-ice40 fpga-icestorm fpga-icestorm-chipdb openfpgaloader
  # Python package (python/): pybind11's CMake package, headers, venv for .venv/
  pybind11-dev python3-dev python3-venv
  chromium                  # headless: the array view's page is tested in a real browser
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
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
fi

# A virtual environment from a requirements file: Debian's interpreter (the one python3-dev has
# headers for, so the extension module built against it loads), never whatever python3 comes
# first on PATH. Nothing happens when the stamp matches the file.
make_venv() {
  local venv=$1 requirements=$2
  local stamp="$venv/.requirements.sha256" want
  want=$(sha256sum < "$requirements")
  if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    return 0
  fi
  echo "setup: creating $venv (${requirements#"$root"/})"
  [[ -x "$venv/bin/python" ]] || /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$requirements"
  echo "$want" > "$stamp"
  echo "setup: $venv ready ($("$venv/bin/python" --version))"
}

# `import systole` from .venv's interpreter without PYTHONPATH: a .pth file naming the main
# build tree's package (build/python, what `make python` and `make test` build). Python skips
# the entry while that folder does not exist; PYTHONPATH still wins for other build trees.
link_build_package() {
  local site pth
  site=$("$root/.venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  pth="$site/systole-build-tree.pth"
  [[ -f "$pth" && "$(cat "$pth")" == "$root/build/python" ]] && return 0
  echo "$root/build/python" > "$pth"
}

if [[ "${1:-}" != fpga ]]; then
  make_venv "$root/.venv" "$root/python/requirements.txt"
  link_build_package
fi
make_venv "$root/.venv-fpga" "$root/fpga/requirements.txt"
