# Set-up is implicit: the first `make demo` or `make test` creates .venv and
# installs kibitz with its test dependencies; later runs reuse it.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.kibitz-installed

.PHONY: demo test browser bench strength clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/kibitz demo

test: $(STAMP) browser
	$(BIN)/python -m pytest -q -n 2

# The browser tests (tests/test_browser.py) drive Debian's Chromium through
# Playwright (which is not allowed to download a browser of its own):
# install the package when no chromium is on the PATH (CI runs as root).
browser:
	@command -v chromium >/dev/null 2>&1 || [ -n "$$KIBITZ_CHROMIUM" ] || { \
	    echo "make: installing Debian's chromium for the browser tests"; \
	    if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	    else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; fi; }

bench: $(STAMP)
	$(BIN)/python benchmarks/game_speed.py

# IS-MCTS strength matches (hours): resumes where the CSVs stop, then
# rewrites the table; `make strength ONLY=pub JOBS=1` runs only the matches
# whose name contains "pub", one at a time
strength: $(STAMP)
	$(BIN)/kibitz experiment run experiments/ismcts_strength_campaign --out docs/results/ismcts_strength \
	    $(if $(ONLY),--set only=$(ONLY)) $(if $(JOBS),--set jobs=$(JOBS))

clean:
	rm -rf $(VENV) .pytest_cache
