"""What a server keeps for every session (hosting/recent.py): the least recently used entries go first once the
entries' count, or their weights, pass the limit; the last entry kept stays whatever it weighs. What it makes once
for every caller (MadeOnce): made by one, waited for by the others, weighed once made, a failure not kept."""
from __future__ import annotations

import threading

import pytest

from explorer.hosting.recent import MadeOnce, Recent


def test_the_least_recently_used_go_first_past_the_count():
    kept: Recent[str, int] = Recent(2)
    kept.put("a", 1)
    kept.put("b", 2)
    assert kept.get("a") == 1  # now the most recent
    kept.put("c", 3)
    assert (kept.get("a"), kept.get("b"), kept.get("c")) == (1, None, 3) and len(kept) == 2


def test_weights_bound_the_total_and_the_last_entry_stays():
    kept: Recent[str, str] = Recent(10, weight=len)
    kept.put("a", "x" * 6)
    kept.put("b", "y" * 4)
    assert len(kept) == 2
    kept.put("a", "z" * 2)  # replaced: its old weight no longer counts
    kept.put("c", "w" * 3)
    assert (kept.get("a"), kept.get("b"), kept.get("c")) == ("zz", "yyyy", "www")
    kept.put("d", "v" * 50)  # heavier than the limit alone: kept, the rest go
    assert len(kept) == 1 and kept.get("d") == "v" * 50
    kept.clear()
    assert len(kept) == 0 and kept.get("d") is None


def test_threads_share_it():
    kept: Recent[int, int] = Recent(100)

    def fill(start: int) -> None:
        for k in range(start, start + 1000):
            kept.put(k % 150, k)
            kept.get((k * 7) % 150)

    workers = [threading.Thread(target=fill, args=(n * 1000,)) for n in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(kept) == 100


def test_of_callers_at_once_one_makes_the_entry_and_each_gets_it():
    kept: Recent[str, object] = Recent(4, weight=lambda v: 2)
    made: list[object] = []
    got: list[tuple[object, bool]] = []
    start = threading.Barrier(8)

    def make() -> object:
        made.append(object())
        return made[-1]

    def ask() -> None:
        start.wait()
        got.append(kept.get_or_put("a", make))

    workers = [threading.Thread(target=ask) for _ in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(made) == 1 and {value for value, _ in got} == {made[0]}
    assert sorted(mine for _, mine in got) == [False] * 7 + [True]
    kept.get_or_put("b", object)
    kept.get_or_put("c", object)  # past the limit (weights 2 each): the least recently used, "a", went
    assert kept.get("a") is None and len(kept) == 2


def test_discard_drops_only_the_entry_it_names():
    kept: Recent[str, object] = Recent(2)
    first, second = object(), object()
    kept.put("a", first)
    kept.put("a", second)  # kept there since
    kept.discard("a", first)
    assert kept.get("a") is second
    kept.discard("a", second)
    assert kept.get("a") is None and len(kept) == 0
    kept.put("b", first)
    kept.put("c", second)
    assert len(kept) == 2  # the discarded entry's weight no longer counts


def test_of_callers_taking_an_entry_at_once_one_gets_it_and_its_weight_goes():
    kept: Recent[str, str] = Recent(10, weight=len)
    kept.put("a", "value")
    got: list[str | None] = []
    threads = [threading.Thread(target=lambda: got.append(kept.take("a"))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert got.count("value") == 1 and got.count(None) == 7
    assert kept.get("a") is None and kept.take("a") is None
    kept.put("b", "01234")
    kept.put("c", "56789")
    assert kept.get("b") == "01234" and kept.get("c") == "56789"  # the taken entry's weight no longer counts


def test_made_once_weighs_a_value_once_made_and_keeps_no_failure():
    made: MadeOnce[str, str] = MadeOnce(10, weight=len)
    release = threading.Event()
    calls: list[str] = []

    def slow() -> str:
        calls.append("a")
        release.wait(10)
        return "x" * 6

    made.ahead("a", slow, "test maker")
    made.ahead("a", slow, "test maker")  # under way: not started again
    assert not made.ready("a") and made.find("a") is not None
    waiter = threading.Thread(target=lambda: calls.append(made.get("a", slow)))
    waiter.start()
    release.set()
    waiter.join(10)
    assert calls == ["a", "x" * 6] and made.ready("a")
    assert made.get("b", lambda: "y" * 4) == "yyyy"
    made.get("c", lambda: "z" * 3)  # 6 + 4 + 3 past 10: the least recently used, "a", went
    assert made.find("a") is None and made.ready("b") and made.ready("c")

    def fails() -> str:
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        made.get("d", fails)
    assert made.find("d") is None and made.get("d", lambda: "w") == "w"  # asked again: made
