# The two commands a new user needs: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint oracle clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

demo: setup
	$(BIN)/tsid-py balance

test: setup
	$(BIN)/ruff check tsid_py tests demos benchmarks
	$(BIN)/python -m pytest -q

lint: setup
	$(BIN)/ruff check tsid_py tests demos benchmarks
	$(BIN)/ruff format --check tsid_py tests demos benchmarks

# The C++ TSID, built from source against the installed pin: a test oracle, never a dependency.
oracle: setup
	bash ../shared/oracle/install-tsid-oracle.sh $(VENV)

clean:
	rm -rf $(VENV) build dist *.egg-info
