"""sws: SimpleWikiSearch on Ray."""

__version__ = "0.1.0"
