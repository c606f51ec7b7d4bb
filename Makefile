# The two commands of the README: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint install browser prometheus unit bench clean

run: $(STAMP)
	$(PY) scripts/run.py

# Two parallel pytest runs (browser tests apart), one closing line; TEST_WORKERS=0 runs in-process.
test: $(STAMP) lint browser prometheus
	$(PY) scripts/run_tests.py $(PYTEST_ARGS)

# The fast gate, run first by `make test`: pyflakes-level lint and non-strict types over the
# product code (ruff.toml, mypy.ini); a few seconds.
LINTED := cluster planner healing history webapp composition scripts manage.py
lint: $(STAMP)
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/mypy $(LINTED)

# The fast loop: pure cores only, no Django, slow tests skipped (make test runs them).
unit: $(STAMP)
	$(PY) -m pytest -q -p no:django -W ignore::pytest.PytestConfigWarning -m "not slow" tests/unit $(PYTEST_ARGS)

install: $(STAMP)

$(STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	touch $(STAMP)

browser:
	bash scripts/ensure_chromium.sh

prometheus:
	bash scripts/ensure_prometheus.sh

bench: $(STAMP)
	for f in tests/bench/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) var
