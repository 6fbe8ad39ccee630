# The two commands a new user needs: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-fast lint docs oracle lock clean

# The versions of every dependency (and of every extra's) that CI last passed with: `make setup`
# and .ci/run install within them, so a fresh clone gets what CI tested; `make lock` refreshes the
# file from the newest releases (then run .ci/run before committing it). `pip install .` keeps the
# ranges of pyproject.toml.
CONSTRAINTS := constraints.txt
EXTRAS := test,cluster,sim,daqp,docs,rerun,ros

setup: $(STAMP)

$(STAMP): pyproject.toml $(CONSTRAINTS)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c $(CONSTRAINTS) -e ".[test,sim]"
	touch $(STAMP)

demo: setup
	$(BIN)/tsid-py balance

test: setup
	$(BIN)/ruff check tsid_py tests demos benchmarks
	$(BIN)/python -m pytest -q

# The edit-test loop (under 30 s on 2 cores with one of them busy, about 10 s on a quiet machine):
# every test but those marked slow (over 0.1 s of CPU each: closed loops, plots, MuJoCo, Ray,
# subprocesses) and those against the C++ TSID (oracle); `make test` runs them all. A run ends with
# the unmarked tests clearly over the line, if any (tests/conftest.py): mark them slow.
test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow and not oracle"

# mypy comes with the [test] extra; its strictness is stated in pyproject.toml ([tool.mypy]).
lint: setup
	$(BIN)/ruff check tsid_py tests demos benchmarks
	$(BIN)/ruff format --check tsid_py tests demos benchmarks
	@if test -x $(BIN)/mypy; then $(BIN)/mypy tsid_py; else echo "mypy is not installed: pip install -e '.[test]' to check the types"; fi

# The documentation site (the [docs] extra): fails on a broken link or an unresolved API reference.
docs: setup
	$(BIN)/python -m pip install --quiet -c $(CONSTRAINTS) -e ".[docs]"
	$(BIN)/mkdocs build --strict

# The C++ TSID 1.10.0, a test oracle (never a dependency): the registry's prebuilt wheels do not
# match the ABI of current pin, so libtsid and tsid are built from their source packages against
# the installed pin, with build headers of the same versions. About 4 min on 2 cores the first time;
# pip caches the built wheels, so later installs take seconds.
ORACLE_CHECK = import tsid, pinocchio as pin; tsid.RobotWrapper(pin.buildSampleModelManipulator(), False)

oracle: setup
	@if $(BIN)/python -c "$(ORACLE_CHECK)" 2>/dev/null; then echo "the TSID oracle is installed"; else \
	  pin=$$($(BIN)/python -c "import importlib.metadata as m; print(m.version('pin'))") && \
	  $(BIN)/python -m pip install -q cmeel-eigen cmeel-urdfdom-headers "libpinocchio[build]==$$pin" \
	    "eigenpy[build]" "eiquadprog[build]" "libcoal[build]" && \
	  CMEEL_RUN_TESTS=OFF $(BIN)/python -m pip install -q --no-deps --no-binary libtsid,tsid libtsid==1.10.0 && \
	  CMEEL_RUN_TESTS=OFF $(BIN)/python -m pip install -q --no-deps --no-binary tsid tsid==1.10.0 && \
	  $(BIN)/python -c "$(ORACLE_CHECK); print('the TSID oracle is installed')"; fi

lock:
	rm -rf build/lock && $(PYTHON) -m venv build/lock
	build/lock/bin/python -m pip install --quiet --upgrade pip
	build/lock/bin/python -m pip install --quiet -e ".[$(EXTRAS)]"
	(echo "# pip constraints: what CI last passed with (make lock; Python $$(build/lock/bin/python -c 'import platform; print(platform.python_version())'))"; \
	  build/lock/bin/python -m pip freeze --exclude-editable) > $(CONSTRAINTS)
	rm -rf build/lock

clean:
	rm -rf $(VENV) build dist *.egg-info
