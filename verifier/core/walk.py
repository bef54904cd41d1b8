"""Depth-first walks of name graphs (team memberships, switch trees) without recursion."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence


def depth_first(
    roots: Iterable[str], children: Mapping[str, Sequence[str]], *, first_loop: bool = False
) -> tuple[list[str], list[list[str]]]:
    """Every name reachable from `roots`, each after all it reaches (post-order), and every loop
    met on the way as the path from a name back to itself (`["a", "b", "a"]`). With `first_loop`
    the walk ends at the first loop (a caller that reports one need not pay for every path).

    Iterative, so a chain of any depth is walked; graphlib reports only the first cycle, and a
    user fixing a file wants each one.
    """
    done: set[str] = set()
    order: list[str] = []
    loops: list[list[str]] = []
    for root in roots:
        if root in done:
            continue
        path, on_path = [root], {root}
        stack = [iter(children.get(root, ()))]
        while stack:
            child = next(stack[-1], None)
            if child is None:
                stack.pop()
                node = path.pop()
                on_path.discard(node)
                done.add(node)
                order.append(node)
            elif child in on_path:
                loops.append([*path[path.index(child) :], child])
                if first_loop:
                    return order, loops
            elif child not in done:
                path.append(child)
                on_path.add(child)
                stack.append(iter(children.get(child, ())))
    return order, loops
