"""sws.io.write_atomically: readers see the old file or the whole new one, and a failed write leaves no trace."""

import pytest

from sws.io import write_atomically, write_text_atomically


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "manifest.json"
    write_text_atomically(path, "old")

    def fail(tmp):
        tmp.write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomically(path, fail)
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]


def test_parents_are_created_and_the_temporary_name_matches_no_output_pattern(tmp_path):
    seen = []
    write_atomically(tmp_path / "a" / "part-0.parquet", lambda tmp: seen.append(tmp) or tmp.write_bytes(b"x"))
    assert (tmp_path / "a" / "part-0.parquet").read_bytes() == b"x"
    assert seen[0].name.startswith(".part-0.parquet.") and seen[0].suffix == ".tmp"
