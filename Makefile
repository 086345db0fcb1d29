# Every target creates and uses its own virtual environment in .venv, so a fresh
# machine with Python 3.11+ needs nothing else.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench lint docs fuzz clean venv

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

# protocol.md: the examples recorded from a real run of the sidecar, the schemas (schemas/) from the
# models; then the TypeScript client's types from the schemas (its dev dependencies installed first).
TS_CLIENT := clients/typescript
docs: $(STAMP)
	$(PY) -m mimo_sidecar.rpc.doc_examples
	test -d $(TS_CLIENT)/node_modules || (cd $(TS_CLIENT) && npm ci --no-audit --no-fund)
	cd $(TS_CLIENT) && npm run --silent generate

# The wire property test's long profile: FUZZ_EXAMPLES generated sessions over stdio (minutes).
FUZZ_EXAMPLES ?= 3000
fuzz: $(STAMP)
	MIMO_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q -p no:cacheprovider -o timeout=0 \
		--hypothesis-show-statistics tests/e2e/test_wire_properties.py

bench: $(STAMP)
	$(PY) -m benchmarks.run

lint: $(STAMP)
	$(PY) -m ruff check mimo_sidecar tests benchmarks examples
	$(PY) -m mypy --strict mimo_sidecar

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
