# Systole — top-level entry points. Every target installs and builds what it needs first.
# `make help` lists them.

BUILD      ?= build
SANITIZE_BUILD ?= build-sanitize
FUZZ_SECONDS ?= 15
JOBS       ?= $(shell nproc)
CONFIG     ?= small
GENERATOR  := $(shell command -v ninja >/dev/null 2>&1 && echo Ninja || echo "Unix Makefiles")
SYSTOLE    := $(BUILD)/cli/systole
CTEST_ARGS ?=
# Every tree is built by clang (Debian's clang, installed by scripts/setup.sh for the sanitizer
# tree too): the Verilated models' per-cycle code simulates 1.24-1.45 times as fast as GCC's
# (cmake/Verilate.cmake, SYSTOLE_VERILATED_OPT). A tree configured before keeps its compiler.
COMPILERS  := CC=clang CXX=clang++

.PHONY: help setup configure build python run trace test test-fast test-sanitize fuzz lint bench hls generate clean
.PHONY: fpga fpga-all fpga-prog fpga-area

help: ## Show this help
	@echo "Systole — an open TPU. Targets:"
	@awk -F':.*## ' '/^[a-z-]+:.*## / { printf "  make %-15s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)
	@echo
	@echo "Variables: BUILD=$(BUILD) JOBS=$(JOBS) CTEST_ARGS='-R regex' to select tests"

setup: ## Install missing Debian packages and the pinned .venv/ (idempotent; quiet when all present)
	@scripts/setup.sh

$(BUILD)/build.ninja $(BUILD)/Makefile:
	@scripts/setup.sh
	$(COMPILERS) cmake -S . -B $(BUILD) -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=RelWithDebInfo

configure: setup $(BUILD)/build.ninja ## Configure the main build tree (build/)

build: configure ## Build everything in build/
	cmake --build $(BUILD) -j $(JOBS)

python: configure ## Build the Python package into build/python: PYTHONPATH=build/python .venv/bin/python (docs/PYTHON.md)
	cmake --build $(BUILD) -j $(JOBS) --target systole_python

# RUN_MODEL: any HLO file; DEVICE: rtl (the Verilated core in process; `small` needs it in
# SYSTOLE_RTL_CONFIGS) or ref. ResNet-50 (the corpus's 06_resnet50_inference_f32.hlo) takes
# 7.6 minutes on one rtl device (measured with GCC; `systole run --jobs 2`: 2.4, README), hence the small CNN by default: docs/COMPILER.md.
# run builds the `systole` command alone (with the Verilated cores it links), not the tests.
run: configure ## Compile an HLO network (examples/hlo/small_cnn_f32.hlo) and run it on the default device (rtl)
	cmake --build $(BUILD) -j $(JOBS) --target systole
	$(SYSTOLE) compile $(or $(RUN_MODEL),examples/hlo/small_cnn_f32.hlo) --config $(CONFIG) -q \
	  -o $(BUILD)/run_model.sbin --listing $(BUILD)/run_model.s
	$(SYSTOLE) run $(BUILD)/run_model.sbin --device $(or $(DEVICE),rtl) --random-inputs 1

# A timeline of the demo run (Perfetto, chrome://tracing) and its HTML report: docs/TRACE.md.
trace: configure ## Run the demo model with a timeline (build/run.json) and write its report (build/run.html)
	cmake --build $(BUILD) -j $(JOBS) --target systole
	$(SYSTOLE) run $(or $(RUN_MODEL),examples/hlo/small_cnn_f32.hlo) --config $(CONFIG) --device $(or $(DEVICE),rtl) \
	  --random-inputs 1 -q --trace $(BUILD)/run.json
	$(SYSTOLE) report $(BUILD)/run.json -o $(BUILD)/run.html
	@echo "timeline: $(BUILD)/run.json (open in https://ui.perfetto.dev)  report: $(BUILD)/run.html"

test: build ## Build and run every test: main build, then the sanitizer build's tests and fuzzers
	ctest --test-dir $(BUILD) --output-on-failure --no-tests=error -j $(JOBS) $(CTEST_ARGS)
	$(MAKE) --no-print-directory sanitize-configure
	cmake --build $(SANITIZE_BUILD) -j $(JOBS) --target sanitize_tests $(FUZZERS)
	ctest --test-dir $(SANITIZE_BUILD) --output-on-failure --no-tests=error -j $(JOBS) -L '^(sanitize|fuzz)$$' $(CTEST_ARGS)

test-fast: build ## Run the main build's tests only (no sanitizer build)
	ctest --test-dir $(BUILD) --output-on-failure --no-tests=error -j $(JOBS) $(CTEST_ARGS)

# One clang tree serves the sanitizer tests and the fuzzers: ASan and UBSan everywhere,
# libFuzzer's coverage in the parsers and decoders only (tests/fuzz/CMakeLists.txt). Before, a GCC
# sanitizer tree and a clang fuzz tree compiled the same libraries twice (README, build time).
.PHONY: sanitize-configure
sanitize-configure: setup
	@test -f $(SANITIZE_BUILD)/CMakeCache.txt || $(COMPILERS) cmake -S . -B $(SANITIZE_BUILD) -G "$(GENERATOR)" \
	  -DCMAKE_BUILD_TYPE=Debug -DSYSTOLE_SANITIZE=ON -DSYSTOLE_FUZZ=ON -DSYSTOLE_BENCH=OFF -DSYSTOLE_RTL=OFF
	cmake $(SANITIZE_BUILD) -DFUZZ_SECONDS=$(FUZZ_SECONDS) -DFUZZ_RUNS=$(FUZZ_RUNS) -DFUZZ_JOBS=$(FUZZ_JOBS) >/dev/null

test-sanitize: sanitize-configure ## Build the toolchain, model and driver with ASan+UBSan (clang) and run their tests
	cmake --build $(SANITIZE_BUILD) -j $(JOBS) --target sanitize_tests
	ctest --test-dir $(SANITIZE_BUILD) --output-on-failure --no-tests=error -j $(JOBS) -L '^sanitize$$' $(CTEST_ARGS)

# The long tests: the small CNN trained to accuracy on digits (docs/TRAINING.md), ResNet-50 end
# to end (ref, the SystemC platform, and rtl with
# SYSTOLE_RESNET_RTL=1), corpus files that take a minute each on the Verilated core, every HLO
# file that fits tiny through the simulated serial board (docs/SERIAL.md), and a GEMM on `v2`
# (128x128), Verilated
# hierarchically (one array row Verilated once: cmake/Verilate.cmake) in under 1 GB, but its
# 90 MB of generated C++ take a while to compile (rtl/README.md); LONG_V2=OFF leaves it out.
LONG_V2 ?= ON
.PHONY: test-long
test-long: setup ## Build the long tests in build-long/ and run them (ResNet-50, v2, the CNN trained, the iCEBreaker netlist, the Arty A7 synthesis; not in `make test`)
	@test -f build-long/CMakeCache.txt || $(COMPILERS) cmake -S . -B build-long -G "$(GENERATOR)" \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSYSTOLE_BENCH=OFF -DSYSTOLE_COMPILER_LONG=ON \
	  -DSYSTOLE_RTL_LONG=$(LONG_V2)
	cmake --build build-long -j $(JOBS) --target compiler_resnet_tests compiler_corpus_rtl_long_tests \
	  driver_serial_board_long_tests systemc_long_tests training_long_tests fpga_netlist_tests systole \
	  $(if $(filter ON,$(LONG_V2)),rtl_core_long_test)
	ctest --test-dir build-long --output-on-failure --no-tests=error -L long $(CTEST_ARGS)

# The fuzzers start from seed corpora of the project's own files (tests/fuzz/CMakeLists.txt).
# fuzz-long runs each to FUZZ_RUNS executions over FUZZ_JOBS processes: hours (fuzz_server,
# fuzz_assembler and fuzz_hlo are the slow ones, 1.5-2.5 h each; docs/FUZZING.md has measured rates).
FUZZERS := fuzz_decode fuzz_assembler fuzz_bundle fuzz_npy fuzz_config fuzz_frame fuzz_hlo fuzz_server
FUZZ_RUNS ?= 10000000
FUZZ_JOBS ?= 1
.PHONY: fuzz-build fuzz-long
fuzz-build: sanitize-configure
	cmake --build $(SANITIZE_BUILD) -j $(JOBS) --target $(FUZZERS)

fuzz: fuzz-build ## Build the libFuzzer targets (the sanitizer tree) and run each for FUZZ_SECONDS
	ctest --test-dir $(SANITIZE_BUILD) --output-on-failure --no-tests=error -L '^fuzz$$' -j $(JOBS)

fuzz-long: fuzz-build ## Run each fuzzer to FUZZ_RUNS (10 M) executions in FUZZ_JOBS processes: hours; not in `make test`
	ctest --test-dir $(SANITIZE_BUILD) --output-on-failure --no-tests=error -L '^fuzz_long$$' -j $(JOBS)

bench: build ## Run the benchmarks (golden-model GEMM throughput, …, Python's overhead: docs/PYTHON.md)
	cmake --build $(BUILD) -j $(JOBS) --target rtl_core_bench
	$(BUILD)/bench/model_gemm_bench --benchmark_counters_tabular=true
	$(BUILD)/bench/driver_link_bench
	$(BUILD)/bench/rtl_core_bench
	$(BUILD)/bench/memory_bench
	PYTHONPATH=$(BUILD)/python .venv/bin/python bench/python_bench.py --systole $(SYSTOLE) --json $(BUILD)/bench/python_bench.json

hls: build ## C-simulate the HLS kernels against the golden model; writes the Vitis testbench's vectors (hls/README.md)
	ctest --test-dir $(BUILD) --output-on-failure --no-tests=error -L '^hls$$' -j $(JOBS)
	@echo "golden vectors for the Vitis testbench: $(BUILD)/tests/hls/golden_vectors_{tiny,small}.bin"

# The open FPGA flow (fpga/README.md, docs/FPGA.md): fpga/flow.py with Debian's yosys and
# nextpnr-ice40 for iCE40, YoWASP Yosys and nextpnr from .venv-fpga/ for ECP5 and Gowin, and
# Debian's yosys alone for Xilinx (arty_a7: synthesis, fit check and a Vivado script, since no
# open place and route for Xilinx is installable). Each build writes build-fpga/BOARD/report.json
# and fails when the design does not fit or misses its clock (Xilinx: when it does not fit).
# SEEDS=N places and routes with seeds 1..N and reports min/median/max Fmax.
BOARD        ?= icebreaker
FPGA_BOARDS  := icebreaker ulx3s tangnano20k arty_a7
FPGA_BUILD   ?= build-fpga
SEEDS        ?=
AREA_FAMILY  ?= ice40
AREA_CONFIG  ?= tiny
FPGA_FLOW    := python3 fpga/flow.py --out $(FPGA_BUILD)

fpga: ## Bitstream + build-fpga/BOARD/report.json for BOARD=icebreaker|ulx3s|tangnano20k (SEEDS=N: seed sweep); arty_a7: synthesis + Vivado script
	@scripts/setup.sh fpga
	$(FPGA_FLOW) build $(BOARD) $(if $(SEEDS),--seeds $(SEEDS))

fpga-all: ## Build every board (SEEDS=N too), print the summary; fails if any board failed
	@scripts/setup.sh fpga
	@rc=0; for b in $(FPGA_BOARDS); do $(FPGA_FLOW) build $$b $(if $(SEEDS),--seeds $(SEEDS)) || rc=1; done; \
	  $(FPGA_FLOW) summary $(FPGA_BOARDS); exit $$rc

fpga-prog: ## Program BOARD with openFPGALoader (its last successful build)
	$(FPGA_FLOW) prog $(BOARD)

fpga-area: ## Per-module area of systole_core without flattening (AREA_FAMILY=ice40|ecp5|gowin|xilinx|generic, AREA_CONFIG=tiny)
	@scripts/setup.sh fpga
	$(FPGA_FLOW) area --family $(AREA_FAMILY) --config $(AREA_CONFIG)

generate: build ## Regenerate files derived from the ISA/register definitions
	$(SYSTOLE) gen --root .

lint: build ## Lint the RTL (Verilator -Wall, Icarus, Yosys) and check generated files are current
	$(SYSTOLE) gen --check --root .
	ctest --test-dir $(BUILD) --output-on-failure --no-tests=error -L lint

clean: ## Remove build trees
	rm -rf $(BUILD) $(SANITIZE_BUILD) build-asan build-fuzz build-long $(FPGA_BUILD)
