"""The order of a study's runs: randomized, interleaved blocks (Abedi and Brecht, ICPE 2017).

Every block holds every arm once; the arms go in a random order drawn per block from a
generator seeded with (seed, block), so the same seed gives the same order, block 3 of a study
with 5 repeats is block 3 of the same study with 3, and the order is printed in the report. An
arm that ``follows`` another (a warm run "b" after its cold run "a") is placed right after it:
the chain is one unit of the shuffle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cassperf.errors import ConfigError


@dataclass(frozen=True)
class Slot:
    """One run of the schedule: block (1..repeats), position in the block (1..), arm name."""

    block: int
    position: int
    arm: str


def units(names: Sequence[str], follows: dict[str, str | None]) -> list[list[str]]:
    """The arms as shuffle units: each arm that follows no other starts a unit, and the arms
    that follow it (transitively) come after it, in plan order. An arm that follows an unknown
    arm, or a cycle, is a ConfigError."""
    known = set(names)
    for name in names:
        lead = follows.get(name)
        if lead is not None and lead not in known:
            raise ConfigError(f"arm {name!r} follows {lead!r}, which is not an arm of this plan")
    out: list[list[str]] = []
    placed: set[str] = set()
    for name in names:
        if follows.get(name) is not None:
            continue
        chain = [name]
        while True:
            nxt = [n for n in names if follows.get(n) == chain[-1] and n not in placed]
            if not nxt:
                break
            chain.append(nxt[0])
        placed.update(chain)
        out.append(chain)
    missing = [n for n in names if n not in placed]
    if missing:
        raise ConfigError(f"arms {missing} follow each other in a cycle or two follow one arm; each arm can be "
                          f"followed by one")
    return out


def block_order(chains: Sequence[Sequence[str]], seed: int, block: int) -> list[str]:
    """The arms of one block in their random order (chains kept together)."""
    rng = np.random.default_rng([int(seed), int(block)])
    return [name for i in rng.permutation(len(chains)) for name in chains[int(i)]]


def schedule(names: Sequence[str], follows: dict[str, str | None], repeats: int, seed: int) -> list[Slot]:
    """Every run of the study in order: ``repeats`` blocks, each every arm once (module doc)."""
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if list(names).count(n) > 1})
        raise ConfigError(f"arm names must be unique in a study; named twice: {dup}")
    chains = units(names, follows)
    return [Slot(block, pos, name) for block in range(1, repeats + 1)
            for pos, name in enumerate(block_order(chains, seed, block), 1)]
