# Every target creates and uses its own virtual environment in .venv, so a fresh
# machine with Python 3.11+ needs nothing else.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench compare lint docs fuzz clean venv ts-client opencode-plugin opencode-e2e

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

# The typed TypeScript client, installed from its lockfile (when it changed) and built.
ts-client:
	cd $(TS_CLIENT) && { [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund; }
	cd $(TS_CLIENT) && npm run --silent build

# The OpenCode plugin (clients/opencode/README.md), built for use: its lockfile's packages without
# the optional opencode-ai, the pinned OpenCode its end-to-end test runs (a user has their own).
OPENCODE_PLUGIN := clients/opencode
opencode-plugin: ts-client
	cd $(OPENCODE_PLUGIN) && npm ci --no-audit --no-fund --omit=optional

# Its end-to-end test against the real `opencode` binary (opencode-ai from the plugin's lockfile),
# a fake model server and the sidecar of .venv. OPENCODE_E2E_LOG=<file>: the fake server's log,
# one request body a line.
opencode-e2e: $(STAMP) ts-client
	cd $(OPENCODE_PLUGIN) && { [ -x node_modules/.bin/opencode ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund; }
	cd $(OPENCODE_PLUGIN) && MIMO_SIDECAR_PYTHON=$(abspath $(PY)) npm run --silent e2e

# Every property test (the `fuzz` mark) with its long profile (tests/fuzz.py): FUZZ_EXAMPLES examples
# for the wire property test (generated sessions over stdio) and the sliced parser's, five times the
# default count for the others (minutes).
FUZZ_EXAMPLES ?= 3000
fuzz: $(STAMP)
	MIMO_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q -p no:cacheprovider -o timeout=0 \
		-n auto --dist loadfile --hypothesis-show-statistics -m fuzz tests

bench: $(STAMP)
	$(PY) -m benchmarks.run

# What a change altered in the sidecar's answers on the real transcripts (benchmarks/compare_answers.py);
# IGNORE: top-level answer fields left out (a field the change adds), separated by spaces.
compare: $(STAMP)
	$(PY) -m benchmarks.compare_answers --against $(or $(AGAINST),HEAD~1) $(foreach f,$(IGNORE),--ignore $(f))

lint: $(STAMP)
	$(PY) -m ruff check mimo_sidecar tests benchmarks examples
	$(PY) -m mypy --strict mimo_sidecar

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
