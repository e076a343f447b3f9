from pathlib import Path

import pytest

from tests.index.helpers import built_leads_index, minilm


@pytest.fixture(scope="session")
def leads_root(tmp_path_factory) -> Path:
    """``corpus/`` and ``index/`` of the real-text leads corpus, built once per session."""
    return built_leads_index(tmp_path_factory)


@pytest.fixture(scope="session")
def embedder():
    return minilm()


@pytest.fixture(scope="session")
def engine(leads_root, embedder):
    from sws.search import SearchEngine

    return SearchEngine.open(leads_root / "index", embedder=embedder)
