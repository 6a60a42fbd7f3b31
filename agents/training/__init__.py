"""Training data from agents' play: a teacher's moves for distillation
(:mod:`.distill`), rollouts for one step of policy improvement
(:mod:`.improve`) and the games and nodes AIVAT's value networks learn from
(:mod:`.value_data`). The fitting itself is in kibitz.solvers (distill,
value_net), which do not play agents; :mod:`.distill_run` runs the two
stages of ``kibitz distill`` and ``kibitz improve`` (data, then fit)."""
