"""Agents against each other: tournaments with duplicate deals, seat
rotation, intervals, ratings and AIVAT (:mod:`.tournament`), their games on
a Ray cluster (:mod:`.ray_pool`), matches on the batched environment
(:mod:`.batched_match`) and the best responses that bound an agent's
exploitability (:mod:`.exploit`)."""
