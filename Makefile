# The venv is built with torch==2.13.0 first: a bare `torch` requirement on a
# machine without it pulls several GB of CUDA wheels.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test chat recordings clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[test]"
	touch $(STAMP)

test: $(STAMP)
	HF_HUB_OFFLINE=1 OMP_WAIT_POLICY=PASSIVE $(BIN)/python -m pytest

chat: $(STAMP)
	$(BIN)/gammatune chat

# Re-record demo_prompts/recordings/ with the current defaults (benchmarks/record_demos.py says why)
recordings: $(STAMP)
	$(BIN)/python benchmarks/record_demos.py

clean:
	rm -rf $(VENV) build dist .pytest_cache
