# Every target creates and uses its own virtual environment in .venv, so a fresh
# machine with Python 3.11+ needs nothing else.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench lint clean venv

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,lint]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) examples/demo_host.py

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) -m benchmarks.run

lint: $(STAMP)
	$(PY) -m ruff check mimo_sidecar tests benchmarks examples
	$(PY) -m mypy --strict mimo_sidecar

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
