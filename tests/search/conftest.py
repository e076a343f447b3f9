import pytest


@pytest.fixture(scope="session")
def engine(leads_root, embedder):
    from sws.search import SearchEngine

    return SearchEngine.open(leads_root / "index", embedder=embedder)
