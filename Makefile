# Set-up is implicit: the first `make demo` or `make test` creates .venv,
# installs kibitz with its test dependencies and fills numba's cache with
# the tree compiler's compiled walks; later runs reuse them.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.kibitz-installed

.PHONY: demo test docs browser bench strength trained trained-strength trained-vs-ismcts clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -c "from kibitz.solvers.tree import warm_up; warm_up()"  # numba's cache of the compiled walks
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/kibitz demo

test: $(STAMP) browser
	$(BIN)/python -m pytest -q -n 2

# The API reference (pdoc, HTML) of the public Python API, in build/api-docs;
# tests/test_api_reference.py builds the same modules and checks them.
API_MODULES = kibitz.api kibitz.pettingzoo
docs: $(STAMP)
	$(BIN)/pdoc $(API_MODULES) -o build/api-docs
	@echo "the API reference: build/api-docs/index.html"

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
# rewrites the table and its copies in the docs; `make strength ONLY=pub
# JOBS=1` runs only the matches whose name contains "pub", one at a time;
# `make strength RAY=1` plays their games on Ray (RAY_ADDRESS, or a local
# Ray: docs/scaling.md)
strength: $(STAMP)
	$(BIN)/kibitz experiment run experiments/ismcts_strength_campaign --out docs/results/ismcts_strength \
	    $(if $(ONLY),--set only=$(ONLY)) $(if $(JOBS),--set jobs=$(JOBS)) $(if $(RAY),--ray)
	$(BIN)/python -m kibitz.experiments.tables

# The networks that `trained` plays (agents/trained/GAME.json.gz), one game at
# a time. `make trained GAME=over_under` runs the game's recipe below with
# seed 0, keeps its output as agents/trained/GAME.log and exports the agent
# file. A DISTILL_GAME recipe distils a teacher (kibitz distill: the teacher's
# games go to build/distill/GAME/ or DATA_GAME, which a stopped run
# continues, then the fit; with INIT_GAME the fit starts from a network
# distilled first by that recipe, from data in build/distill/GAME_heuristic;
# the agent file's logits are divided by TEMP_GAME; with IMPROVE_GAME that
# agent file is then improved by one step of kibitz improve, whose rollout
# labels go to build/improve/GAME, tied to that network: remove the folder
# when the network changes; and its result is exported); a TRAIN_GAME recipe
# trains by MMD (kibitz train: a stopped run resumes from its checkpoint in
# build/trained/ and ends with the parameters of an uninterrupted one).
# INIT_, DISTILL_ and IMPROVE_GAME name a preset of the command (its settings:
# PRESETS in agents/training/distill_run.py; kibitz distill --help and kibitz
# improve --help list them).
# Hours on 2 cores: run it in the background.
DISTILL_over_under  = --preset over_under
TEMP_over_under     = 0.1
INIT_underdog       = --preset underdog-init
DISTILL_underdog    = --preset underdog
TEMP_underdog       = 0.1
IMPROVE_underdog    = --preset underdog
INIT_pub            = --preset pub-init
DISTILL_pub         = --preset pub
TEMP_pub            = 0.1
INIT_doubt_and_bet  = --preset doubt_and_bet-init
DISTILL_doubt_and_bet = --preset doubt_and_bet
TEMP_doubt_and_bet  = 0.1
NET = build/trained/$(GAME).npz
DATA = $(or $(DATA_$(GAME)),build/distill/$(GAME))
RECIPE = $(TRAIN_$(GAME))$(DISTILL_$(GAME))

trained: $(STAMP)
	@$(if $(strip $(RECIPE)),true,{ echo "make trained GAME=G: G is one of underdog, pub, over_under, doubt_and_bet"; exit 2; })
	mkdir -p build/trained
ifneq ($(DISTILL_$(GAME)),)
ifneq ($(INIT_$(GAME)),)
	bash -o pipefail -c '$(BIN)/kibitz distill $(GAME) $(INIT_$(GAME)) --seed 0 --workers 2 --no-progress \
	    --data build/distill/$(GAME)_heuristic --out build/trained/$(GAME)_init.npz --overwrite | tee agents/trained/$(GAME).log'
endif
	bash -o pipefail -c '$(BIN)/kibitz distill $(GAME) $(DISTILL_$(GAME)) --seed 0 --workers 2 --no-progress \
	    $(if $(INIT_$(GAME)),--init build/trained/$(GAME)_init.npz) \
	    --data $(DATA) --out $(NET) --overwrite | tee $(if $(INIT_$(GAME)),-a) agents/trained/$(GAME).log'
ifneq ($(IMPROVE_$(GAME)),)
	$(BIN)/kibitz export $(NET) --out build/trained/$(GAME)_distilled.json.gz --name $(GAME)-distilled \
	    --temperature $(TEMP_$(GAME)) --overwrite
	bash -o pipefail -c '$(BIN)/kibitz improve build/trained/$(GAME)_distilled.json.gz $(IMPROVE_$(GAME)) --seed 0 \
	    --workers 2 --no-progress --data build/improve/$(GAME) --out build/trained/$(GAME)_improved.npz --overwrite \
	    | tee -a agents/trained/$(GAME).log'
	$(BIN)/kibitz export build/trained/$(GAME)_improved.npz --out agents/trained/$(GAME).json.gz --name $(GAME)-trained \
	    --overwrite
else
	$(BIN)/kibitz export $(NET) --out agents/trained/$(GAME).json.gz --name $(GAME)-trained --temperature $(TEMP_$(GAME)) \
	    --overwrite
endif
else
	bash -o pipefail -c '$(BIN)/kibitz train $(GAME) $(TRAIN_$(GAME)) --seed 0 --no-progress --probe-every 0 \
	    --out $(NET) $(if $(wildcard $(NET).ckpt.npz),--resume) | tee agents/trained/$(GAME).log'
	$(BIN)/kibitz export $(NET) --out agents/trained/$(GAME).json.gz --name $(GAME)-trained --overwrite
endif

# 1,000-game matches (1,008: 72 deals in the 14 seatings of 2 agents in 4
# seats) of `trained` against `heuristic`: `make trained-strength GAME=pub`;
# then the table of every game's match (docs/results/trained/table.md) and
# its copy in the README
trained-strength: $(STAMP)
	@$(if $(strip $(RECIPE)),true,{ echo "make trained-strength GAME=G: G is one of underdog, pub, over_under, doubt_and_bet"; exit 2; })
	$(BIN)/kibitz tournament $(GAME) --agents trained,heuristic --games 1000 --seed 0 --workers 2 --aivat net --no-progress \
	    --out docs/results/trained/$(GAME)_vs_heuristic \
	    $(if $(wildcard docs/results/trained/$(GAME)_vs_heuristic/tournament.json),--resume)
	$(BIN)/python -m kibitz.experiments.tables --pairs docs/results/trained/table.md \
	    $(foreach g,underdog pub over_under doubt_and_bet,$(wildcard docs/results/trained/$(g)_vs_heuristic))

# `trained` against the strongest IS-MCTS at 1,000 simulations, 200 games a
# game (hours): runs or resumes experiments/trained_vs_ismcts
trained-vs-ismcts: $(STAMP)
	$(BIN)/kibitz experiment run experiments/trained_vs_ismcts --out docs/results/trained_vs_ismcts \
	    $(if $(ONLY),--set only=$(ONLY)) $(if $(JOBS),--set jobs=$(JOBS))
	$(BIN)/python -m kibitz.experiments.tables

clean:
	rm -rf $(VENV) .pytest_cache
