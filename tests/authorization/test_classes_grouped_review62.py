"""Review R-HI2 (round 16): classes._grouped sorts each group once, with the same groups as before.

Equal keys made apart (a policy naming one GPU gives each GPU a key tuple of its own) re-sorted the
growing group at every object joined to it: 131,072 sorts at 131,072 GPUs (70 s of a verify that
takes 8). The groups and their order must not change. Hand derivation: items 0, 2, 4 are equal
tuples made apart, 1 and 3 another pair, 5 is item 1's very object: groups by first appearance,
each in position order: [0, 2, 4] and [1, 3, 5].
"""

from __future__ import annotations

from verifier.authorization.classes import _grouped


def test_equal_keys_made_apart_and_one_object_are_grouped_in_order() -> None:
    def key(name: str) -> tuple[str, str]:
        return ("gpu", name)  # a new tuple at each call

    b = key("y")
    items = [key("x"), b, key("x"), key("y"), key("x"), b]
    assert items[0] is not items[2] and items[1] is items[5]
    assert _grouped(items, lambda key: key) == [[0, 2, 4], [1, 3, 5]]
