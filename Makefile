# Set-up is implicit: the first `make demo` or `make test` creates .venv and
# installs kibitz with its test dependencies; later runs reuse it.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.kibitz-installed

.PHONY: demo test browser bench strength trained trained-strength trained-vs-ismcts clean

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
# whose name contains "pub", one at a time; `make strength RAY=1` plays
# their games on Ray (RAY_ADDRESS, or a local Ray: docs/scaling.md)
strength: $(STAMP)
	$(BIN)/kibitz experiment run experiments/ismcts_strength_campaign --out docs/results/ismcts_strength \
	    $(if $(ONLY),--set only=$(ONLY)) $(if $(JOBS),--set jobs=$(JOBS)) $(if $(RAY),--ray)

# The networks that `trained` plays (agents/trained/GAME.json.gz), one game at
# a time: `make trained GAME=underdog` trains with the settings below (seed 0;
# a stopped run resumes from its checkpoint in build/trained/ and ends with
# the parameters of an uninterrupted one), keeps the log (the settings, the
# steps and the training seconds) as agents/trained/GAME.log, and exports
# the agent file. Hours on 2 cores: run it in the background.
TRAIN_underdog      = --encoding observation_tensor --opponent heuristic --opponent-share 1.0 --imitation-steps 300 --imitation-lr 1e-3 --lr 1e-4 --alpha 0.05 --explore 0.05 --steps 3000
TRAIN_pub           = --encoding observation_tensor --opponent heuristic --opponent-share 0.75 --imitation-steps 2000 --steps 2000
TRAIN_over_under    = --encoding compact --opponent heuristic --opponent-share 0.75 --imitation-steps 300 --imitation-lr 1e-3 --lr 1e-4 --alpha 0.1 --explore 0.05 --steps 2000
TRAIN_doubt_and_bet = --encoding compact --batch 16 --opponent heuristic --opponent-share 0.75 --imitation-steps 150 --steps 400
NET = build/trained/$(GAME).npz

trained: $(STAMP)
	@test -n "$(TRAIN_$(GAME))" || { echo "make trained GAME=G: G is one of underdog, pub, over_under, doubt_and_bet"; exit 2; }
	mkdir -p build/trained
	bash -o pipefail -c '$(BIN)/kibitz train $(GAME) $(TRAIN_$(GAME)) --seed 0 --no-progress --probe-every 0 \
	    --out $(NET) $(if $(wildcard $(NET).ckpt.npz),--resume) | tee agents/trained/$(GAME).log'
	$(BIN)/kibitz export $(NET) --out agents/trained/$(GAME).json.gz --name $(GAME)-trained

# 1,000-game matches (1,008: 72 deals in the 14 seatings of 2 agents in 4
# seats) of `trained` against `heuristic`: `make trained-strength GAME=pub`
trained-strength: $(STAMP)
	@test -n "$(TRAIN_$(GAME))" || { echo "make trained-strength GAME=G: G is one of underdog, pub, over_under, doubt_and_bet"; exit 2; }
	$(BIN)/kibitz tournament $(GAME) --agents trained,heuristic --games 1000 --seed 0 --workers 2 --no-progress \
	    --out docs/results/trained/$(GAME)_vs_heuristic \
	    $(if $(wildcard docs/results/trained/$(GAME)_vs_heuristic/tournament.json),--resume)

# `trained` against the strongest IS-MCTS at 1,000 simulations, 200 games a
# game (hours): runs or resumes experiments/trained_vs_ismcts
trained-vs-ismcts: $(STAMP)
	$(BIN)/kibitz experiment run experiments/trained_vs_ismcts --out docs/results/trained_vs_ismcts \
	    $(if $(ONLY),--set only=$(ONLY)) $(if $(JOBS),--set jobs=$(JOBS))

clean:
	rm -rf $(VENV) .pytest_cache
