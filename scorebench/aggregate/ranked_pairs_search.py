"""Ranked pairs winners over every tie-breaking order of equal margins (Tideman, 1987).

Ranked pairs locks majority edges from the largest margin down and skips an edge that
would close a cycle. When several edges share a margin the outcome can depend on the
order in which they are tried; the neutral rule (pref_voting's ``ranked_pairs``) calls a
system a winner if it is unbeaten under *some* order. Deciding that is NP-complete
(Brill & Fischer, 2012, AAAI), so this module searches locking states rather than orders,
with reductions that keep ordinary inputs fast:

* a state is the transitive closure of the locked edges; the undecided edges of a margin
  group are those neither implied nor contradicted by it, so the closure alone is the
  memo key (orders reaching the same closure are explored once);
* an undecided edge whose endpoints lie in different strongly connected components of
  ``closure + undecided edges`` can never be skipped and never causes a skip, so it is
  locked at once instead of branched on;
* a system stays a candidate winner only while it is unbeaten and, for every undecided
  edge ``y -> x`` into it, it can still reach ``y`` through the closure and the undecided
  edges of margin at least as large (otherwise that edge is locked in every order); a
  state with no such candidate left, other than systems already known to win, is dropped;
* branches that extend a candidate's reach are tried first, so winners are found early.

Edges with margin zero are not locked: they can be oriented afterwards in any way, which
makes every linear extension of the locked order reachable, so the winners are exactly
the systems with no locked ancestor.
"""

from __future__ import annotations

import numpy as np

from scorebench.core.errors import InputError

__all__ = ["ranked_pairs_winners", "ranked_pairs_tb", "margin_groups", "MAX_STATES"]

MAX_STATES = 10_000
"""Default cap on distinct branching states explored before giving up with an error."""


def margin_groups(M: np.ndarray, rtol: float = 1e-12) -> list[list[tuple[int, int]]]:
    """Positive-margin edges ``(a, b)`` grouped by equal margin, largest first.

    Margins within ``rtol`` (relative to the largest) of the group's first margin count as
    equal, so float weights that should tie (0.1 + 0.2 vs 0.3) do.

    Examples
    --------
    >>> import numpy as np
    >>> margin_groups(np.array([[0, 2, 1], [-2, 0, 2], [-1, -2, 0]]))
    [[(0, 1), (1, 2)], [(0, 2)]]
    """
    src, dst = np.nonzero(M > 0)
    if len(src) == 0:
        return []
    margins = M[src, dst]
    order = np.argsort(-margins, kind="stable")
    tol = rtol * float(margins.max())
    groups: list[list[tuple[int, int]]] = []
    head = np.inf
    for k in order:
        if margins[k] < head - tol:
            groups.append([])
            head = margins[k]
        groups[-1].append((int(src[k]), int(dst[k])))
    return groups


def _bits(mask: int):
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _lock(desc: list[int], anc: list[int], a: int, b: int) -> None:
    """Add edge ``a -> b`` to the closure held as descendant/ancestor bitsets (in place)."""
    below, above = desc[b], anc[a]
    for i in _bits(above):
        desc[i] |= below
    for j in _bits(below):
        anc[j] |= above


def _undecided(edges: list[tuple[int, int]], desc: list[int]) -> list[tuple[int, int]]:
    """Edges neither implied by the closure nor contradicted by it."""
    return [(a, b) for a, b in edges if not (desc[a] >> b) & 1 and not (desc[b] >> a) & 1]


def _reach_from(start: int, adj: list[int]) -> int:
    """Bitset of the nodes reachable from ``start`` (itself included) along ``adj``."""
    seen = frontier = 1 << start
    while frontier:
        nxt = 0
        for u in _bits(frontier):
            nxt |= adj[u]
        frontier = nxt & ~seen
        seen |= frontier
    return seen


def _closure(adj: list[int]) -> list[int]:
    """Reachability bitsets of a graph given by adjacency bitsets (Warshall; reflexive if ``adj`` is)."""
    reach = list(adj)
    for k in range(len(reach)):
        rk, bit = reach[k], 1 << k
        for i in range(len(reach)):
            if reach[i] & bit:
                reach[i] |= rk
    return reach


def _lock_safe(open_: list[tuple[int, int]], desc: list[int], anc: list[int]) -> list[tuple[int, int]]:
    """Lock every undecided edge that lies on no cycle of ``closure + open_``; return the rest."""
    while open_:
        adj = list(desc)
        for a, b in open_:
            adj[a] |= 1 << b
        reach = _closure(adj)
        safe = [(a, b) for a, b in open_ if not (reach[b] >> a) & 1]
        if not safe:
            break
        for a, b in safe:
            _lock(desc, anc, a, b)
        open_ = _undecided(open_, desc)
    return open_


def _viable(x: int, g: int, groups: list[list[tuple[int, int]]], desc: list[int]) -> bool:
    """Necessary condition for ``x`` (unbeaten now) to end unbeaten from group ``g`` on."""
    adj = list(desc)
    for h in range(g, len(groups)):
        und = _undecided(groups[h], desc)
        for a, b in und:
            adj[a] |= 1 << b
        into = [a for a, b in und if b == x]
        if into:
            reach = _reach_from(x, adj)
            if any(not (reach >> y) & 1 for y in into):
                return False
    return True


def ranked_pairs_winners(M: np.ndarray, *, max_states: int = MAX_STATES) -> tuple[np.ndarray, int]:
    """Ranked pairs winners over all tie-breaking orders of equal margins.

    Parameters
    ----------
    M : ndarray, shape (n, n)
        Skew-symmetric majority margins.
    max_states : int
        Cap on distinct branching states explored (see :data:`MAX_STATES`).

    Returns
    -------
    winners : ndarray of bool
        True for the systems unbeaten in the locked graph under some tie-breaking order.
    n_states : int
        Distinct branching states visited (0 when no order dependence arose).

    Raises
    ------
    InputError
        When more than ``max_states`` branching states would be needed (very large cycles
        of equal margins; the underlying decision problem is NP-complete).

    Examples
    --------
    >>> import numpy as np
    >>> M = np.array([[0, 1, -1], [-1, 0, 1], [1, -1, 0]])  # a 3-cycle, all margins equal
    >>> ranked_pairs_winners(M)[0].tolist()
    [True, True, True]
    """
    n = len(M)
    groups = margin_groups(np.asarray(M, dtype=np.float64))
    won = 0
    seen: set[tuple[int, tuple[int, ...]]] = set()
    # Depth-first over (group, closure) states with an explicit stack (a branch locks at
    # least one edge, so recursion could run as deep as the number of edges).
    stack = [(0, [1 << i for i in range(n)], [1 << i for i in range(n)])]
    while stack:
        g, desc, anc = stack.pop()
        while g < len(groups):
            open_ = _lock_safe(_undecided(groups[g], desc), desc, anc)
            if open_:
                break
            g += 1
        unbeaten = [x for x in range(n) if anc[x] == 1 << x]
        if g == len(groups):
            for x in unbeaten:
                won |= 1 << x
            continue
        targets = [x for x in unbeaten if not (won >> x) & 1 and _viable(x, g, groups, desc)]
        if not targets:
            continue
        key = (g, tuple(desc))
        if key in seen:
            continue
        seen.add(key)
        if len(seen) > max_states:
            raise InputError(
                f"ranked_pairs: the equal-margin cycles need more than max_states={max_states} branching "
                "states to decide every system's chance to win under some tie-breaking order (the problem "
                "is NP-complete); raise max_states or break the ties in the margins (e.g. with weights)")
        # Try first the edges that extend the target's reach (pushed last, popped first),
        # and last the edges into it.
        x = targets[0]
        mine = desc[x]

        def priority(e: tuple[int, int]) -> int:
            a, b = e
            return 0 if b == x else 2 if (mine >> a) & 1 and not (mine >> b) & 1 else 1

        for a, b in sorted(open_, key=priority):
            d2, a2 = list(desc), list(anc)
            _lock(d2, a2, a, b)
            stack.append((g, d2, a2))
    return np.array([(won >> x) & 1 for x in range(n)], dtype=bool), len(seen)


def ranked_pairs_tb(M: np.ndarray, tie_breaker: np.ndarray | None = None) -> np.ndarray:
    """Locked closure of ranked pairs with a fixed tie-breaking order (resolute).

    Within a group of equal margins, edges are tried in lexicographic order of
    ``(position of source, position of target)`` in ``tie_breaker`` (default: index
    order), as pref_voting's ``ranked_pairs_tb``.

    Returns
    -------
    closure : ndarray of bool
        ``closure[a, b]``: ``a`` locked above ``b`` (reflexive).

    Examples
    --------
    >>> import numpy as np
    >>> M = np.array([[0, 1, -1], [-1, 0, 1], [1, -1, 0]])
    >>> ranked_pairs_tb(M).sum(axis=0).tolist()  # number of systems at or above each
    [1, 2, 3]
    """
    n = len(M)
    pos = np.arange(n) if tie_breaker is None else np.argsort(np.asarray(tie_breaker))
    desc, anc = [1 << i for i in range(n)], [1 << i for i in range(n)]
    for group in margin_groups(np.asarray(M, dtype=np.float64)):
        for a, b in sorted(group, key=lambda e: (pos[e[0]], pos[e[1]])):
            if not (desc[b] >> a) & 1:
                _lock(desc, anc, a, b)
    return np.array([[(d >> j) & 1 for j in range(n)] for d in desc], dtype=bool)
