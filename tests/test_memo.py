"""The per-process memos: a value computed once per key, emptied when full; ByIdentity by the owner object."""

from __future__ import annotations

import gc

from symattn.infra.memo import ByIdentity, Memo


def test_a_memo_computes_once_and_empties_when_full():
    memo: Memo[int] = Memo(2)
    calls = []
    assert [memo.get(k, lambda k=k: calls.append(k) or k * 10) for k in (1, 1, 2, 1)] == [10, 10, 20, 10]
    assert calls == [1, 2]
    memo.get(3, lambda: 30)  # the third key: the first two go
    assert memo.find(1) is None and memo.find(3) == 30


def test_by_identity_tells_equal_owners_apart_and_keeps_them():
    memo: ByIdentity[str] = ByIdentity(8)
    first, second = [1, 2], [1, 2]  # equal, not the same
    assert memo.get(first, "k", lambda: "first") == "first"
    assert memo.get(second, "k", lambda: "second") == "second"
    assert memo.get(first, "k", lambda: "again") == "first" and memo.find(first, "other") is None
    kept = id(first)
    del first
    gc.collect()
    assert kept in {id(owner) for owner, _ in memo.memo.values.values()}  # its id cannot go to a new object
