"""Typed errors of the index layer: each names the file or value at fault."""


class SwsIndexError(Exception):
    """Base: a corpus, vector set or index cannot be built or opened."""


class CorpusError(SwsIndexError):
    """The corpus directory is missing, incomplete or unreadable."""


class EmptyCorpusError(CorpusError):
    """The corpus has no chunks to index."""


class IndexMissingError(SwsIndexError, FileNotFoundError):
    """An index directory or one of its files is missing."""


class IndexBusyError(SwsIndexError):
    """Another process is building the same index directory."""


class IndexCorruptError(SwsIndexError):
    """An index file exists but cannot be read, or its size differs from the manifest."""


class FingerprintMismatchError(SwsIndexError):
    """Parts that must belong together were built from different inputs or parameters."""


class EmbedderMismatchError(FingerprintMismatchError):
    """The query embedder is not the one the vectors were built with (fingerprint or dimension)."""


class ChunkIdMismatchError(SwsIndexError):
    """The keyword and dense indexes do not hold exactly the same chunk ids."""


class EmbeddingError(SwsIndexError):
    """An embedder returned something unusable (wrong count or shape, NaN/Inf, a failed request)."""
