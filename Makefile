# Every target creates and uses its own virtual environment in .venv, so a fresh
# machine with Python 3.11+ needs nothing else.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench compare lint docs fuzz clean venv

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,lint]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) examples/demo_host.py

# One worker per core (pytest-xdist); a module's tests stay on one worker, so its module-scoped
# sidecar is spawned once. Bytecode is written even where the environment says not to
# (PYTHONDONTWRITEBYTECODE): pytest keeps its assertion-rewritten test modules in __pycache__ only
# then, and without them every run and every worker rewrites the whole suite again (~7 s each).
test: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q -n auto --dist loadfile

# protocol.md: the examples recorded from a real run of the sidecar, the schemas (schemas/) from the
# models; then the TypeScript client's types from the schemas (its dev dependencies installed first).
TS_CLIENT := clients/typescript
docs: $(STAMP)
	$(PY) -m mimo_sidecar.rpc.doc_examples
	test -d $(TS_CLIENT)/node_modules || (cd $(TS_CLIENT) && npm ci --no-audit --no-fund)
	cd $(TS_CLIENT) && npm run --silent generate

# Every property test (the `fuzz` mark) with its long profile (tests/fuzz.py): FUZZ_EXAMPLES examples
# for the wire property test (generated sessions over stdio) and the sliced parser's, five times the
# default count for the others (minutes).
FUZZ_EXAMPLES ?= 3000
fuzz: $(STAMP)
	MIMO_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q -p no:cacheprovider -o timeout=0 \
		-n auto --dist loadfile --hypothesis-show-statistics -m fuzz tests

bench: $(STAMP)
	$(PY) -m benchmarks.run

# What a change altered in the sidecar's answers on the real transcripts (benchmarks/compare_answers.py).
compare: $(STAMP)
	$(PY) -m benchmarks.compare_answers --against $(or $(AGAINST),HEAD~1)

lint: $(STAMP)
	$(PY) -m ruff check mimo_sidecar tests benchmarks examples
	$(PY) -m mypy --strict mimo_sidecar

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
