"""Depth-first walks: post-order, every loop as a path back to its start, stopping when asked."""

from __future__ import annotations

from verifier.core.walk import depth_first


def test_post_order_and_every_loop() -> None:
    # a -> b -> c -> a is a loop; d -> c reaches it from outside; e stands alone.
    children = {"a": ["b"], "b": ["c"], "c": ["a"], "d": ["c"], "e": []}
    order, loops = depth_first(["a", "d", "e"], children)
    # From a: b, then c, whose child a is on the path (the loop a b c a); c, b, a finish in turn.
    assert order == ["c", "b", "a", "d", "e"]
    assert loops == [["a", "b", "c", "a"]]


def test_two_loops_are_both_found_unless_the_first_is_enough() -> None:
    # x -> x (a self-loop), then y -> z -> y.
    children = {"x": ["x", "y"], "y": ["z"], "z": ["y"]}
    assert depth_first(["x"], children)[1] == [["x", "x"], ["y", "z", "y"]]
    assert depth_first(["x"], children, first_loop=True)[1] == [["x", "x"]]


def test_a_deep_chain_needs_no_recursion() -> None:
    # 100,000 links deep: far past Python's recursion limit; the leaf finishes first.
    children = {str(i): [str(i + 1)] for i in range(100_000)}
    order, loops = depth_first(["0"], children)
    assert order[0] == "100000" and order[-1] == "0" and len(order) == 100_001 and loops == []
