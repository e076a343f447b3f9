"""``build_corpus`` refuses an ``--out`` that holds another artefact, or a corpus of other inputs, before writing."""

import json

import pytest

from sws.config import load_config, to_dict
from sws.corpus.build import CorpusBuildError, build_corpus
from tests.conftest import SAMPLE


def _contents(root):
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else None for p in root.rglob("*")}


@pytest.mark.parametrize(
    ("manifest", "held"),
    [
        ({"format": "sws-index/1", "fingerprint": "abc"}, "an sws-index/1 manifest, not an sws-corpus one"),
        ({"name": "my-app"}, "a manifest.json that sws did not write"),
        ("{not json", "an unreadable manifest.json"),
        (
            {"kind": "sws-corpus", "fingerprint": "0123"},
            "an sws-corpus of other inputs (fingerprint 0123, not ",
        ),
    ],
)
def test_an_out_holding_another_artefact_is_refused(tmp_path, manifest, held):
    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").write_text(manifest if isinstance(manifest, str) else json.dumps(manifest))
    before = _contents(out)
    plain = to_dict(load_config("local", []))
    with pytest.raises(CorpusBuildError) as refused:  # before Ray is asked for anything
        build_corpus([str(SAMPLE)], out, clean=plain["clean"], chunk=plain["chunk"], progress=False)
    assert str(refused.value).startswith(f"{out} holds {held}")
    assert str(refused.value).endswith("building here would overwrite it: use another --out directory")
    assert _contents(out) == before
