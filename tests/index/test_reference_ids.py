"""The reference's ``ids.pkl`` read without ``pickle.load``: a list of chunk-id strings (or a NumPy array of
them) is read; anything else is refused in one line naming the file, and nothing in the file runs."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

from sws.index.reference import IdsFileError, check_chunk_ids, read_ids_pkl

IDS = ["1000_0", "1000_1", "1010_0", "53219662_0"]


def _write(tmp_path, data: bytes):
    path = tmp_path / "ids.pkl"
    path.write_bytes(data)
    return path


def _refused(path, *words: str) -> str:
    with pytest.raises(IdsFileError) as caught:
        read_ids_pkl(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    for word in words:
        assert word in message, message
    return message


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
@pytest.mark.parametrize("container", [list, tuple])
def test_a_pickled_sequence_of_str_is_read(tmp_path, protocol, container):
    path = _write(tmp_path, pickle.dumps(container(IDS), protocol=protocol))
    assert read_ids_pkl(path) == IDS


ARRAYS = [np.array(IDS), np.array(IDS, dtype=object)]


@pytest.mark.parametrize("array", ARRAYS, ids=["unicode", "object"])
def test_a_numpy_array_of_str_is_read_through_numpys_reconstruction_alone(tmp_path, array):
    for protocol in (3, 4, 5):
        ids = read_ids_pkl(_write(tmp_path, pickle.dumps(array, protocol=protocol)))
        assert ids == IDS and all(type(i) is str for i in ids)


@pytest.mark.parametrize("array", ARRAYS, ids=["unicode", "object"])
def test_a_protocol_2_array_is_refused_naming_the_codec_global(tmp_path, array):
    """Protocol 2 spells bytes as ``_codecs.encode(...)``: a global outside numpy's reconstruction."""
    _refused(_write(tmp_path, pickle.dumps(array, protocol=2)), "_codecs.encode", "never resolved")


@pytest.mark.parametrize(
    ("obj", "found"),
    [
        ({"0": "1000_0"}, "an object of type dict"),
        ([1, 2], "item 0 is an object of type int"),
        (["1000_0", 7], "item 1 is an object of type int"),
        ([["1000_0"]], "item 0 is an object of type list"),
        (["1000_0", b"1000_1"], "item 1 is an object of type bytes"),
        ("1000_0", "an object of type str"),
        (None, "an object of type NoneType"),
        (np.arange(3), "NumPy array of dtype int64 and shape (3,)"),
        (np.array([IDS, IDS]), "NumPy array of dtype <U10 and shape (2, 4)"),
        (np.array(["1000_0", 3], dtype=object), "item 1 is an object of type int"),
    ],
)
def test_anything_else_is_refused_saying_what_it_holds(tmp_path, obj, found):
    _refused(_write(tmp_path, pickle.dumps(obj, protocol=4)), found)


class _Payload:
    """Unpickled by ``pickle.load``, this runs ``os.system(command)``."""

    def __init__(self, command: str):
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


def _touch(marker) -> str:
    return f"touch {marker}"


@pytest.mark.parametrize("protocol", [0, 2, 4, 5])
def test_an_os_system_payload_is_refused_and_runs_nothing(tmp_path, protocol):
    marker = tmp_path / "ran"
    data = pickle.dumps(["1000_0", _Payload(_touch(marker))], protocol=protocol)
    subprocess.run(  # the same bytes under pickle.load do run it: the payload is real
        [sys.executable, "-c", "import pickle, sys; pickle.loads(sys.stdin.buffer.read())"],
        input=data,
        check=True,
    )
    assert marker.exists()
    marker.unlink()
    _refused(_write(tmp_path, data), f"{os.system.__module__}.system", "never resolved")
    assert not marker.exists()


@pytest.mark.parametrize(
    "data",
    [
        b"cos\nsystem\n(S'touch {m}'\ntR.",  # GLOBAL + REDUCE
        b"(S'touch {m}'\nios\nsystem\n.",  # INST
        b"\x80\x04\x8c\x02os\x94\x8c\x06system\x94\x93\x94\x8c\x0btouch {m}\x94\x85\x94R\x94.",  # STACK_GLOBAL
        b"cbuiltins\neval\n(S'open({m!r}, \"w\")'\ntR.",
        b"cnumpy\nload\n(S'{m}'\ntR.",  # numpy, but not its array reconstruction
    ],
    ids=["global", "inst", "stack-global", "eval", "numpy-load"],
)
def test_hand_written_payloads_are_refused_and_run_nothing(tmp_path, data):
    marker = tmp_path / "ran"
    data = data.replace(b"{m}", str(marker).encode()).replace(b"{m!r}", repr(str(marker)).encode())
    if b"\x8c\x0b" in data:  # the STACK_GLOBAL one: fix the length of its command string
        command = f"touch {marker}".encode()
        data = data.replace(b"\x8c\x0b" + command, b"\x8c" + bytes([len(command)]) + command)
    _refused(_write(tmp_path, data), "is refused", "never resolved")
    assert not marker.exists()


def test_a_payload_after_a_valid_list_is_refused_unread(tmp_path):
    marker = tmp_path / "ran"
    data = pickle.dumps(IDS, protocol=4) + pickle.dumps(_Payload(_touch(marker)), protocol=4)
    _refused(_write(tmp_path, data), f"{len(data) - len(pickle.dumps(IDS, protocol=4))} bytes after the end")
    assert not marker.exists()


@pytest.mark.parametrize("obj", [IDS, *ARRAYS], ids=["list", "unicode", "object"])
def test_every_truncation_is_refused_in_one_line(tmp_path, obj):
    data = pickle.dumps(obj, protocol=4)
    for cut in range(len(data)):
        _refused(_write(tmp_path, data[:cut]), "ids.pkl")


def test_a_missing_or_non_pickle_file_is_refused(tmp_path):
    _refused(tmp_path / "ids.pkl", "missing")
    _refused(_write(tmp_path, b""), "is empty")
    _refused(_write(tmp_path, b"1000_0\n1000_1\n"), "not a readable pickle")
    _refused(_write(tmp_path, b"\x80\x04\x8e" + (2**63).to_bytes(8, "little")), "not a readable pickle")
    _refused(_write(tmp_path, b"\x80\x04\x8d" + (2**62).to_bytes(8, "little")), "not a readable pickle")


def test_chunk_ids_of_the_reference_form_pass_with_their_counts():
    assert check_chunk_ids(IDS, "ids.pkl", rows=4) == {"chunks": 4, "pages": 3}
    assert check_chunk_ids(["7_1", "7_0"], "ids.pkl") == {"chunks": 2, "pages": 1}  # any order


@pytest.mark.parametrize(
    ("ids", "rows", "found"),
    [
        (IDS, 5, "holds 4 chunk ids for 5 rows"),
        (["1000_0", "1000_x"], None, "'1000_x', not of the form <page_id>_<i>"),
        (["Bitcoin_0"], None, "'Bitcoin_0'"),
        (["1000_01"], None, "'1000_01'"),
        (["1000"], None, "'1000'"),
        (["1000_-1"], None, "'1000_-1'"),
        (["1000_0", "1000_2"], None, "page 1000 has 2 chunk ids (2 distinct, highest index 2)"),
        (["1000_1"], None, "page 1000 has 1 chunk ids (1 distinct, highest index 1)"),
        (["1000_0", "1000_0"], None, "page 1000 has 2 chunk ids (1 distinct, highest index 0)"),
    ],
)
def test_chunk_ids_the_reference_cannot_hydrate_are_refused(ids, rows, found):
    with pytest.raises(IdsFileError, match="ids.pkl") as caught:
        check_chunk_ids(ids, "ids.pkl", rows=rows)
    assert found in str(caught.value)
