#!/usr/bin/env bash
# Runs, or resumes, every IS-MCTS strength match of issue 7, two at a time,
# then rewrites the results table. Each match appends to its CSV under
# docs/results/ismcts_strength/ and skips the games already there, so the
# campaign can be stopped at any point and started again (commit the CSVs
# to keep them). Progress of each match: docs/results/ismcts_strength/logs/.
#
#   experiments/ismcts_strength_campaign.sh          # all matches
#   JOBS=1 experiments/ismcts_strength_campaign.sh   # one at a time
#   experiments/ismcts_strength_campaign.sh pub      # only lines naming "pub"
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=docs/results/ismcts_strength
mkdir -p "$OUT/logs"

# name | options (every match: 1,000 games, seed 0; in this order, two at a
# time: the last, Underdog with both opponent models, is optional, as the
# belief alone already beats the heuristic). IS-MCTS options per
# game: over_under scores a move by the standing once its flip is resolved
# (rollout_moves=0, uct_c=0.05: docs/solvers/ismcts.md says why); against
# Underdog's heuristic the determinizations follow the heuristic opponent
# model (belief=heuristic, 100 worlds per move; and with opponents=heuristic,
# the model's moves inside the tree too); Doubt and Bet rolls out to
# the next round (rollout_rounds=1: games against random play are 5x cheaper
# so; against ISMCTSBot too, whose side costs most there: about 30 s a game
# on one core), and against its heuristic it also searches only the
# heuristic's shortlist of moves, with the heuristic as opponent model in
# the determinizations and the tree and as rollout policy; Pub and the rest
# of Underdog use the defaults.
MATCHES="
pub_vs_random                    | --game pub --opponent random
pub_vs_heuristic                 | --game pub --opponent heuristic
pub_vs_openspiel_100sims         | --game pub --opponent openspiel --fill random --sims 100
over_under_m0_vs_heuristic       | --game over_under --opponent heuristic --rollout-moves 0 --uct-c 0.05
over_under_m0_vs_random          | --game over_under --opponent random --rollout-moves 0 --uct-c 0.05
underdog_belief_vs_heuristic     | --game underdog --opponent heuristic --belief heuristic --max-world-samples 100
underdog_vs_random               | --game underdog --opponent random
underdog_vs_openspiel_100sims    | --game underdog --opponent openspiel --fill random --sims 100
over_under_vs_openspiel_100sims  | --game over_under --opponent openspiel --fill random --sims 100
doubt_and_bet_rr1_vs_random      | --game doubt_and_bet --opponent random --rollout-rounds 1
doubt_and_bet_belief_shortlist_vs_heuristic | --game doubt_and_bet --opponent heuristic --rollout-rounds 1 --rollout heuristic --belief heuristic --opponents heuristic --moves shortlist
doubt_and_bet_rr1_vs_openspiel_100sims | --game doubt_and_bet --opponent openspiel --fill random --sims 100 --rollout-rounds 1
underdog_belief_opp_vs_heuristic | --game underdog --opponent heuristic --belief heuristic --max-world-samples 100 --opponents heuristic
"

selected=$(printf '%s\n' "$MATCHES" | grep -v '^\s*$' | grep -- "${1:-}" || true)
if [ -z "$selected" ]; then
  echo "no match line contains '${1:-}'" >&2
  exit 2
fi
printf '%s\n' "$selected" | while IFS='|' read -r name opts; do
  name=$(echo "$name" | xargs)
  echo "$name|$opts"
done | xargs -P "${JOBS:-2}" -I{} bash -c '
  line="{}"; name=${line%%|*}; opts=${line#*|}
  echo "start $name"
  '"$PY"' experiments/ismcts_strength.py --sims 1000 --games 1000 --seed 0 $opts \
      --out '"$OUT"'/$name.csv > '"$OUT"'/logs/$name.log 2>&1 && echo "done  $name" || echo "FAILED $name (see '"$OUT"'/logs/$name.log)"
'
"$PY" experiments/ismcts_strength.py table "$OUT"/*.csv > "$OUT/table.md"
echo "table: $OUT/table.md"
