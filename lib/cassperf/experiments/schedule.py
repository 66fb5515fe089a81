"""The order of a study's runs: randomized, interleaved blocks (Abedi and Brecht, ICPE 2017).

Every block holds every arm once; the arms go in a random order drawn per block from a
generator seeded with (seed, block), so the same seed gives the same order, block 3 of a study
with 5 repeats is block 3 of the same study with 3, and the order is printed in the report. An
arm that ``follows`` another (a warm run "b" after its cold run "a") is placed right after it:
the chain is one unit of the shuffle.

All orders (``every_order=True``, for a study whose runs leave something to the next one, like
03's garbagecollect): the k units' k! orders, one per block, in a sequence where each block starts
with the unit that ended the block before it (a seeded search for such a sequence; block b runs
its ((b - 1) mod k!)-th order). In every k! blocks each unit then sits in every position equally
often and runs right after every other unit exactly (k - 1)! times, across the block
boundaries too: what a run leaves behind falls on every arm alike (a design balanced for
first-order carryover; the boundaries repeat a unit, which carries over onto itself). Random
orders balance that only on average over seeds, and a study's seed is fixed: with 4 random
blocks of 03 the placebo ran right after garbagecollect in 3 of them and its A/A twin in 1.
"""

from __future__ import annotations

import functools
import itertools
import math
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


#: all orders of more units take more blocks than a study runs (4! = 24)
MAX_ALL_ORDERS_UNITS = 3


@functools.cache
def linked_orders(k: int, seed: int) -> tuple[tuple[int, ...], ...]:
    """The k! orders of k units in a sequence where each starts with the unit the one before it
    ended with, found by a depth-first search in a seeded random order (once per k and seed: a
    schedule asks for it block by block)."""
    rng = np.random.default_rng([int(seed)])
    orders = [tuple(int(x) for x in o) for o in itertools.permutations(range(k))]
    orders = [orders[int(i)] for i in rng.permutation(len(orders))]

    def extend(path: list[tuple[int, ...]], left: set[tuple[int, ...]]) -> list[tuple[int, ...]] | None:
        if not left:
            return path
        for o in (o for o in orders if o in left and o[0] == path[-1][-1]):
            found = extend([*path, o], left - {o})
            if found:
                return found
        return None

    for first in orders:
        found = extend([first], set(orders) - {first})
        if found:
            return tuple(found)
    raise AssertionError(f"no linked sequence of the orders of {k} units")   # k <= 3 always has one


def all_orders(chains: Sequence[Sequence[str]], seed: int, block: int) -> list[str]:
    """Block ``block``'s order in the all-orders design (module doc)."""
    if len(chains) > MAX_ALL_ORDERS_UNITS:
        raise ConfigError(f"all orders of {len(chains)} arms take {math.factorial(len(chains)):,} blocks; the design "
                          f"suits at most {MAX_ALL_ORDERS_UNITS} arms (or chains of arms)")
    if len(chains) < 2:
        return [name for chain in chains for name in chain]
    orders = linked_orders(len(chains), seed)
    return [name for i in orders[(block - 1) % len(orders)] for name in chains[i]]


def schedule(names: Sequence[str], follows: dict[str, str | None], repeats: int, seed: int,
             every_order: bool = False) -> list[Slot]:
    """Every run of the study in order: ``repeats`` blocks, each every arm once (module doc);
    ``every_order``: the all-orders design."""
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if list(names).count(n) > 1})
        raise ConfigError(f"arm names must be unique in a study; named twice: {dup}")
    chains = units(names, follows)
    order = all_orders if every_order else block_order
    return [Slot(block, pos, name) for block in range(1, repeats + 1)
            for pos, name in enumerate(order(chains, seed, block), 1)]
