# sapsim build: CPU library + CLI always; the CUDA backend whenever nvcc is found.
# Targets: all, test, test-gpu, bench, deps, clean, asan, train-example.

CC      ?= gcc
NVCC    ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
BUILD   ?= build
OPT     ?= -O3
# MuJoCo 4.0's C library (compiler and test oracle), unpacked from the pinned
# mujoco-core wheel by `make deps` into MJ_DIR; linked by file name with an rpath
MJ_VERSION := 4.0.0
MJ_DIR  ?= $(CURDIR)/build/mujoco-$(MJ_VERSION)
MJ_LIB  := $(MJ_DIR)/lib/libmujoco.so.$(MJ_VERSION)
MJ_LINK := -L$(MJ_DIR)/lib -l:libmujoco.so.$(MJ_VERSION) -Wl,-rpath,$(MJ_DIR)/lib
CFLAGS  += -std=c11 $(OPT) -g -fopenmp -Wall -Wextra -Werror -Wmissing-prototypes \
           -Wno-unknown-pragmas -Iinclude -Ikernels -Ihost -isystem $(MJ_DIR)/include
LDLIBS  += $(MJ_LINK) -lm -fopenmp
BASE_CFLAGS := $(CFLAGS)
TEST_LDLIBS = -llapacke -llapack -lblas

# the library is host/*.c (with kernels/); the sapsim tool (commands, bench, JSON writer) is
# host/cli/, linked against libsapsim.a
CLI_SRC    := $(wildcard host/cli/*.c)
HOST_SRC   := $(wildcard host/*.c)
HOST_OBJ   := $(HOST_SRC:%.c=$(BUILD)/%.o)
TEST_SRC   := $(wildcard tests/test_*.c)
TEST_BIN   := $(TEST_SRC:%.c=$(BUILD)/%)
CLI_OBJ    := $(CLI_SRC:%.c=$(BUILD)/%.o)
# every header (the fuzz targets, built from sources in one command, depend on them all);
# objects and test programs depend on the headers they include, from the compilers'
# dependency files (DEPFLAGS: $(BUILD)/.../x.d beside x.o, included at the end)
KERNEL_HDR := $(wildcard kernels/*.h) $(wildcard include/sapsim/*.h) $(wildcard host/*.h)
DEPFLAGS    = -MMD -MP -MF $(basename $@).d

ifneq ($(NVCC),)
  CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
  CU_SRC    := $(wildcard kernels/*.cu)
  CU_OBJ    := $(CU_SRC:%.cu=$(BUILD)/%.o)
  CUDA_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90
  NVFLAGS   += -O3 -std=c++17 $(CUDA_ARCH) -Iinclude -Ikernels -Ihost \
               -Xcompiler -Wall,-Wextra,-Werror,-fPIC,-fvisibility=hidden -Werror all-warnings -DSAP_HAVE_CUDA
  CFLAGS    += -DSAP_HAVE_CUDA -isystem $(CUDA_HOME)/include
  LDLIBS    += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcusolver -lcudart -lstdc++
endif

# The CUDA backend emulated on the CPU (tests/shim/cuda_runtime.h): the same host and
# kernel sources built as host code, so the GPU parity tests run in CI without a GPU.
CXX       ?= g++
EMU       := $(BUILD)/emu
EMU_FLAGS := -DSAP_HAVE_CUDA -DSAP_CUDA_SHIM -Itests/shim
EMU_CXX    = $(CXX) -x c++ -std=c++17 $(OPT) -g -Wall -Wextra -Werror -Iinclude -Ikernels -Ihost $(EMU_FLAGS)
EMU_CU    := $(wildcard kernels/*.cu)
EMU_OBJ   := $(HOST_SRC:%.c=$(EMU)/%.o) $(EMU_CU:%.cu=$(EMU)/%.o) $(EMU)/tests/shim/cuda_shim.o \
             $(EMU)/tests/shim/cusolver_shim.o
EMU_LIB   := $(EMU)/libsapsim.a
EMU_TEST  := $(BUILD)/tests/test_gpu_emulated
# tests/test_shim.cu (block-cooperative kernels): emulated always, on a device via nvcc
SHIM_TEST := $(BUILD)/tests/test_shim_emulated $(if $(NVCC),$(BUILD)/tests/test_shim_gpu)

LIB := $(BUILD)/libsapsim.a
CLI := $(BUILD)/sapsim
# the shared library the Python package loads with ctypes (python/): the same objects
# as libsapsim.a, so every host object is position independent (the .cu ones already are)
SO  := $(BUILD)/libsapsim.so
CFLAGS += -fPIC -fvisibility=hidden

.PHONY: all test test-gpu bench deps clean asan asan-ci fuzz fuzz-ci fuzz-deps error-table check-templates check-layers golden-update drake-deps oracle-long \
        train-example
all: $(CLI) $(TEST_BIN) $(EMU_TEST) $(SHIM_TEST)

$(BUILD)/%.o: %.c $(BUILD)/%.d | $(MJ_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/%.o: %.cu $(BUILD)/%.d
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) $(DEPFLAGS) -c $< -o $@

# extra nvcc flags for the solve kernels only, for register experiments on a device
# (e.g. SOLVE_NVFLAGS=-maxrregcount=128 BUILD=build-r128)
SOLVE_NVFLAGS ?=
$(BUILD)/kernels/solve.o: NVFLAGS += $(SOLVE_NVFLAGS)

$(LIB): $(HOST_OBJ) $(CU_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(CLI): $(CLI_OBJ) $(LIB) | $(MJ_LIB)
	$(CC) $(CFLAGS) $(CLI_OBJ) $(LIB) $(LDLIBS) -o $@

# MuJoCo is found in the build (its rpath) or beside the library ($ORIGIN: the Python
# package bundles both); it exports the public API only (host/libsapsim.map; tests link
# the static library and may use internals)
$(SO): $(HOST_OBJ) $(CU_OBJ) host/libsapsim.map | $(MJ_LIB)
	$(CC) -shared -Wl,--no-undefined -Wl,--version-script=host/libsapsim.map -o $@ $(HOST_OBJ) $(CU_OBJ) \
	  $(LDLIBS) -Wl,-rpath,'$$ORIGIN'
all: $(SO)

$(BUILD)/tests/%: tests/%.c $(BUILD)/tests/%.d $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -Itests $< $(LIB) $(LDLIBS) $(TEST_LDLIBS) -o $@

$(EMU)/host/%.o: host/%.c $(EMU)/host/%.d | $(MJ_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(EMU_FLAGS) $(DEPFLAGS) -c $< -o $@

$(EMU)/kernels/%.o: kernels/%.cu $(EMU)/kernels/%.d
	@mkdir -p $(dir $@)
	$(EMU_CXX) $(DEPFLAGS) -c $< -o $@

$(EMU)/tests/shim/%.o: tests/shim/%.cpp $(EMU)/tests/shim/%.d
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 $(OPT) -g -Wall -Wextra -Werror -Itests/shim $(DEPFLAGS) -c $< -o $@

$(EMU_LIB): $(EMU_OBJ)
	rm -f $@ && ar rcs $@ $^

$(EMU_TEST): tests/test_gpu.c $(EMU_TEST).d $(EMU_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(EMU_FLAGS) $(DEPFLAGS) -Itests $< $(EMU_LIB) $(filter-out -lcusolver -lcudart,$(LDLIBS)) \
	  $(TEST_LDLIBS) -lstdc++ -o $@

$(BUILD)/tests/test_shim_emulated: tests/test_shim.cu $(BUILD)/tests/test_shim_emulated.d $(EMU)/tests/shim/cuda_shim.o
	@mkdir -p $(dir $@)
	$(EMU_CXX) -Itests $(DEPFLAGS) $< -x none $(EMU)/tests/shim/cuda_shim.o -o $@

$(BUILD)/tests/test_shim_gpu: tests/test_shim.cu $(BUILD)/tests/test_shim_gpu.d
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) $(DEPFLAGS) -Itests $< -o $@

# install what is missing (Debian packages); a no-op when everything is there
DEB_PKGS := python3-pip python3-venv unzip liblapacke-dev libblas-dev liblapack-dev python3-matplotlib \
            libosmesa6
deps:
	@missing=""; for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing$$missing"; S=""; [ "$$(id -u)" -ne 0 ] && S=sudo; \
	  $$S apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$S apt-get install -y -qq \
	    --no-install-recommends $$missing >/dev/null || { echo "deps: apt-get failed"; exit 1; }; \
	fi
	@$(MAKE) --no-print-directory $(MJ_LIB)

# MuJoCo's C library and headers from the pinned wheel (no Python at run time);
# a no-op once unpacked
$(MJ_LIB):
	@echo "deps: fetching MuJoCo $(MJ_VERSION) (the mujoco-core wheel)"
	@rm -rf $(MJ_DIR) && mkdir -p $(MJ_DIR)/wheel $(MJ_DIR)/lib $(MJ_DIR)/include
	@python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
	  --platform manylinux_2_28_x86_64 -d $(MJ_DIR)/wheel mujoco-core==$(MJ_VERSION) \
	  || { echo "deps: could not download mujoco-core==$(MJ_VERSION) with pip (network or index unreachable?)"; \
	       rm -rf $(MJ_DIR); exit 1; }
	@cd $(MJ_DIR)/wheel && unzip -q -o mujoco_core-*.whl 'mujoco/libmujoco.so.*' 'mujoco/include/*' \
	  || { echo "deps: the mujoco-core wheel has no libmujoco.so or headers"; rm -rf $(MJ_DIR); exit 1; }
	@mv $(MJ_DIR)/wheel/mujoco/include/mujoco $(MJ_DIR)/include/mujoco
	@mv $(MJ_DIR)/wheel/mujoco/libmujoco.so.$(MJ_VERSION) $(MJ_LIB).tmp
	@rm -rf $(MJ_DIR)/wheel && mv $(MJ_LIB).tmp $(MJ_LIB)

# Python (python/): a virtual environment in the build with numpy and pytest, the
# package installed from python/ against this build's library; its tests run as
# build/tests/test_python beside the C tests, and tests/run.sh counts them
PYENV   := $(BUILD)/pyenv
PY_TEST := $(BUILD)/tests/test_python
PY_SRC  := $(wildcard python/sapsim/*.py) python/pyproject.toml python/setup.py scenes/ant.xml scenes/humanoid.xml \
           scenes/cartpole.xml scenes/quadruped_roll.xml

$(PYENV)/.ready: python/requirements-test.txt
	@rm -rf $(PYENV)
	@python3 -m venv $(PYENV) || { echo "python: 'python3 -m venv' failed (Debian: python3-venv)"; exit 1; }
	$(PYENV)/bin/pip install -q --disable-pip-version-check -r python/requirements-test.txt
	@touch $@

$(PY_TEST): $(SO) $(CLI) $(PYENV)/.ready $(PY_SRC)
	SAPSIM_LIB=$(abspath $(SO)) SAPSIM_MUJOCO_LIB=$(MJ_LIB) $(PYENV)/bin/pip install -q \
	  --disable-pip-version-check --no-build-isolation --no-deps --force-reinstall ./python
	@mkdir -p $(dir $@)
	@printf '#!/bin/sh\n# python/tests against the package installed in $(PYENV)\nSAPSIM_CLI=%s exec %s -m pytest -q -p no:cacheprovider python/tests "$$@"\n' \
	  $(abspath $(CLI)) $(abspath $(PYENV))/bin/python > $@ && chmod +x $@

# real Drake (pydrake) for python/tests/test_drake.py, into the same environment; CI
# installs it, a plain `make test` skips those tests without it
drake-deps: deps $(PYENV)/.ready
	$(PYENV)/bin/pip install -q --disable-pip-version-check -r python/requirements-drake.txt

test: deps
	$(MAKE) all $(PY_TEST) check-templates check-layers
	@bash tests/run.sh $(BUILD)/tests

# the size-ratio collision oracle at 10000 poses per pair (make test runs 1000);
# docs/collision_oracle.md holds its table
oracle-long: deps $(BUILD)/tests/test_collision_oracle
	SAPSIM_ORACLE_POSES=10000 $(BUILD)/tests/test_collision_oracle

# re-pin tests/golden.txt (tests/test_golden.c: hashes of fixed CPU runs per preset) in a
# commit that changes results on purpose
golden-update: $(BUILD)/tests/test_golden
	SAPSIM_GOLDEN_UPDATE=tests/golden.txt $(BUILD)/tests/test_golden

# the layers point down: include/ <- kernels/ <- host/ <- tools; fails on an include that
# points up, or a kernels/ object of the build calling a host function other than sap_fail
# (tests/check_layers.sh)
check-layers: $(LIB) $(EMU_LIB)
	@bash tests/check_layers.sh $(BUILD)

# the fp32 instances of the per-world templates compute in float (tests/check_templates.c)
check-templates:
	$(CC) -std=c11 -fsyntax-only -Wall -Wextra -Werror -Wfloat-conversion -Wdouble-promotion \
	  -Iinclude -Ikernels -Ihost -isystem $(MJ_DIR)/include tests/check_templates.c
	@echo "check-templates: the fp32 template instances compute in float"

# Training examples (not part of make test): a venv of the build with
# python/requirements-train.txt (stable-baselines3, torch, gymnasium, matplotlib),
# then cartpole balance and ant locomotion with PPO on the CPU; the curves, CSVs and
# summaries land in docs/ (train_cartpole.*, train_ant.*). TRAIN_PIP_OPTS is passed
# to pip (e.g. an index of CPU-only torch wheels); TRAIN_ARGS to both scripts.
TRAINENV := $(BUILD)/trainenv
TRAIN_PIP_OPTS ?=
TRAIN_ARGS ?=
$(TRAINENV)/.ready: python/requirements-train.txt
	@rm -rf $(TRAINENV)
	@python3 -m venv $(TRAINENV)
	$(TRAINENV)/bin/pip install -q --disable-pip-version-check $(TRAIN_PIP_OPTS) -r python/requirements-train.txt
	@touch $@

train-example: deps
	$(MAKE) $(SO) $(TRAINENV)/.ready
	cd python/examples && SAPSIM_LIB=$(abspath $(SO)) PYTHONPATH=$(abspath python) OMP_NUM_THREADS=1 \
	  $(abspath $(TRAINENV))/bin/python train_cartpole.py $(TRAIN_ARGS)
	cd python/examples && SAPSIM_LIB=$(abspath $(SO)) PYTHONPATH=$(abspath python) OMP_NUM_THREADS=1 \
	  $(abspath $(TRAINENV))/bin/python train_ant.py $(TRAIN_ARGS)

# GPU tests fail hard when no usable GPU exists
test-gpu: deps
	$(MAKE) all
	@SAPSIM_REQUIRE_GPU=1 bash tests/run.sh $(BUILD)/tests gpu

# the main job: benchmark on the default scene, GPU when there is one, else CPU
bench: deps
	$(MAKE) $(CLI)
	$(CLI) bench scenes/humanoid.xml --worlds 1,64,1024 --steps 200 --device auto

# CPU tests under AddressSanitizer and UBSan (no CUDA)
asan: deps
	$(MAKE) BUILD=build-asan NVCC= OPT="-O1 -fsanitize=address,undefined -fno-omit-frame-pointer" \
	  LDLIBS="$(MJ_LINK) -lm -fopenmp -fsanitize=address,undefined" all
	@bash tests/run.sh build-asan/tests

# docs/bad_inputs.md: what each bad scene gets, as tests/test_errors.c sees it
error-table: $(BUILD)/tests/test_errors
	@rm -f $(BUILD)/bad_inputs.rows
	@SAPSIM_ERROR_TABLE=$(BUILD)/bad_inputs.rows $(BUILD)/tests/test_errors > /dev/null 2>&1
	@{ echo "# Bad scenes and what sapsim answers"; echo; \
	   echo "Generated by \`make error-table\` from the cases of tests/test_errors.c (each case is a test:"; \
	   echo "the status and the fragments of the message are asserted there). SCENE stands for the file."; echo; \
	   echo "| case | status | message |"; echo "|---|---|---|"; cat $(BUILD)/bad_inputs.rows; } > docs/bad_inputs.md
	@echo "error-table: docs/bad_inputs.md ($$(wc -l < $(BUILD)/bad_inputs.rows) cases)"

# CI's sanitizer pass: the CPU build under ASan + UBSan, a subset of the tests that
# covers input validation, the SAP math and the MuJoCo oracles in a few minutes
ASAN_CI_TESTS := test_errors test_sap_math test_foundation test_dynamics test_contact_params test_fluid test_adhesion test_actuator_delay \
                 test_site_actuator test_simloop test_capacity test_tendon_spring test_actdyn test_rangefinder \
                 test_spatial_wrap test_body_outputs test_sap_sparse test_contact_band
asan-ci: deps
	$(MAKE) BUILD=build-asan NVCC= OPT="-O1 -fsanitize=address,undefined -fno-omit-frame-pointer" \
	  LDLIBS="$(MJ_LINK) -lm -fopenmp -fsanitize=address,undefined" \
	  $(addprefix build-asan/tests/,$(ASAN_CI_TESTS))
	@fail=0; for t in $(ASAN_CI_TESTS); do \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=0 build-asan/tests/$$t \
	    > build-asan/$$t.log 2>&1 || { echo "asan-ci: $$t failed"; tail -n 30 build-asan/$$t.log; fail=1; }; \
	  tail -n 1 build-asan/$$t.log; done; exit $$fail

# Fuzz targets (libFuzzer, clang with ASan + UBSan; CPU backend): the scene loader and
# the option parser (tests/fuzz). fuzz-ci runs each briefly with a fixed seed (CI);
# fuzz runs each for FUZZ_SECONDS. Findings are written to build-fuzz/.
FUZZ_CC      ?= clang
FUZZ_DIR     := build-fuzz
FUZZ_SECONDS ?= 600
FUZZ_CFLAGS  := -std=c11 -D_DEFAULT_SOURCE -O1 -g -fopenmp -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
                -Wno-unknown-pragmas -Iinclude -Ikernels -Ihost -isystem $(MJ_DIR)/include
FUZZ_BIN     := $(FUZZ_DIR)/fuzz_scene $(FUZZ_DIR)/fuzz_options

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(HOST_SRC) $(KERNEL_HDR) | $(MJ_LIB)
	@mkdir -p $(FUZZ_DIR)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $< $(HOST_SRC) $(MJ_LINK) -lm -o $@

# clang and its OpenMP runtime when missing (Debian packages)
fuzz-deps: deps
	@command -v $(FUZZ_CC) >/dev/null && echo 'int main(void){return 0;}' | $(FUZZ_CC) -fopenmp -x c - -o /dev/null 2>/dev/null || { \
	  echo "fuzz: installing clang and libomp-dev"; S=""; [ "$$(id -u)" -ne 0 ] && S=sudo; \
	  $$S apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$S apt-get install -y -qq --no-install-recommends \
	    clang libomp-dev >/dev/null || { echo "fuzz: apt-get failed"; exit 1; }; }

$(FUZZ_BIN): | fuzz-deps

fuzz-ci: deps $(FUZZ_BIN)
	@mkdir -p $(FUZZ_DIR)/scene $(FUZZ_DIR)/options
	$(FUZZ_DIR)/fuzz_scene -seed=1 -runs=40000 -max_len=4096 -artifact_prefix=$(FUZZ_DIR)/ \
	  $(FUZZ_DIR)/scene tests/fuzz/corpus_scene scenes
	$(FUZZ_DIR)/fuzz_options -seed=1 -runs=300000 -max_len=512 -artifact_prefix=$(FUZZ_DIR)/ \
	  $(FUZZ_DIR)/options tests/fuzz/corpus_options

fuzz: deps $(FUZZ_BIN)
	@mkdir -p $(FUZZ_DIR)/scene $(FUZZ_DIR)/options
	$(FUZZ_DIR)/fuzz_scene -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -artifact_prefix=$(FUZZ_DIR)/ \
	  $(FUZZ_DIR)/scene tests/fuzz/corpus_scene scenes
	$(FUZZ_DIR)/fuzz_options -max_total_time=$(FUZZ_SECONDS) -max_len=512 -artifact_prefix=$(FUZZ_DIR)/ \
	  $(FUZZ_DIR)/options tests/fuzz/corpus_options

clean:
	rm -rf build build-asan build-fuzz

# the header dependencies the compilers wrote (DEPFLAGS), one file per object or test
# program, named explicitly (so never an intermediate file): a missing one (a fresh tree, or
# an object built before this rule) counts as changed, so its target is rebuilt and writes it
DEP_FILES := $(HOST_OBJ:.o=.d) $(CU_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_BIN:=.d) $(EMU_OBJ:.o=.d) \
             $(EMU_TEST).d $(SHIM_TEST:=.d)
$(DEP_FILES): ;
-include $(wildcard $(DEP_FILES))
