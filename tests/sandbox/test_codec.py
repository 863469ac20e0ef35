"""The plain-data codec: exact builtin types round-trip; everything else, and forged frames, fail."""

from __future__ import annotations

import math

import pytest

from llm_coop_envs.sandbox.inside import _codec

PLAIN = [None, True, 0, -7, 2**200, 1.5, -0.0, math.inf, -math.inf, 3 + 4j, "", "é\ud800", b"\x00\xff",
         [], (), set(), frozenset(), {}, [1, (2, "a"), {3: [b"x"]}], {(1, 2): {frozenset({1}): None}},
         {"a": [1.5, {"b": (None, False)}]}]


@pytest.mark.parametrize("value", PLAIN, ids=repr)
def test_plain_values_round_trip_with_their_exact_types(value) -> None:
    back = _codec.loads(_codec.dumps(value))
    assert back == value and type(back) is type(value)


def test_nan_round_trips() -> None:
    assert math.isnan(_codec.loads(_codec.dumps(math.nan)))


class Liar:
    def __eq__(self, other):
        return True


class Int(int):
    pass


@pytest.mark.parametrize("value", [Liar(), Int(3), [Int(3)], {"k": Liar()}, iter([1]), print,
                                   {Int(1): 2}, range(3), bytearray(b"x")], ids=repr)
def test_anything_else_is_not_plain(value) -> None:
    with pytest.raises(_codec.NotPlain, match="not plain data"):
        _codec.dumps(value)


def test_caps() -> None:
    deep: list = []
    for _ in range(_codec.MAX_DEPTH + 1):
        deep = [deep]
    with pytest.raises(_codec.NotPlain, match="deeper"):
        _codec.dumps(deep)
    with pytest.raises(_codec.NotPlain, match="int over"):
        _codec.dumps(1 << (_codec.MAX_INT_BITS + 1))
    with pytest.raises(_codec.NotPlain, match="items"):
        _codec.dumps([0] * (_codec.MAX_ITEMS + 1))
    with pytest.raises(_codec.NotPlain, match="text over"):
        _codec.dumps("x" * (_codec.MAX_BYTES + 1))


@pytest.mark.parametrize("frame", ['{"a": 1}', '["s", ["l"]]', '["d", 1]', '["zz"]', "[]", "[",
                                   '["b", 5]', '["c", "1", 2]', '["r", "x"]', "1" * 5000,
                                   "[" * 100_000 + "]" * 100_000], ids=lambda f: f[:20])
def test_forged_frames_are_rejected(frame: str) -> None:
    with pytest.raises(_codec.NotPlain):
        _codec.loads(frame)


def test_references_travel_only_when_allowed() -> None:
    class Proxy:
        def __init__(self, name):
            self.name = name
    text = _codec.dumps([Proxy("aux"), 1], refs=Proxy)
    assert _codec.loads(text, {"aux": len}.get) == [len, 1]
    with pytest.raises(_codec.NotPlain):
        _codec.loads(text)  # the judge never resolves references
