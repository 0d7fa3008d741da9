"""A shared app's save folder: each file is its writer's; of many sessions saving to one new name at once, one
writes it; a save claims all its files or none."""
from __future__ import annotations

import threading

import pytest

from explorer.ui.save_owners import SaveTaken, claim


def test_of_sessions_saving_to_one_new_name_at_once_exactly_one_may_write_it(tmp_path):
    target = tmp_path / "out.onnx"
    won: list[str] = []
    start = threading.Barrier(8)

    def save(writer: str) -> None:
        start.wait()
        try:
            claim((target, tmp_path / "out.onnx.data"), writer)
        except SaveTaken:
            return
        won.append(writer)

    threads = [threading.Thread(target=save, args=(f"w{i}",)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1
    claim((target,), won[0])  # its own again


def test_a_save_claims_all_its_files_or_none(tmp_path):
    (tmp_path / "b.onnx.data").write_bytes(b"")
    with pytest.raises(SaveTaken, match="'b.onnx.data' is not written"):
        claim((tmp_path / "b.onnx", tmp_path / "b.onnx.data"), "w1")
    claim((tmp_path / "b.onnx",), "w2")  # w1 did not keep b.onnx
