"""Arrow schemas of the corpus tables (the contract between the corpus build and everything after it)."""

import pyarrow as pa

CHUNKS = pa.schema(
    [
        ("chunk_id", pa.string()),  # "<page_id>_<i>", i 0-based and contiguous per page
        ("page_id", pa.int64()),
        ("title", pa.string()),
        ("chunk_index", pa.int32()),
        ("n_chunks", pa.int32()),
        ("section", pa.string()),  # the "Section <n>: <heading>" line the chunk starts in
        ("text", pa.string()),  # starts with its "Section ...:" line(s)
        ("n_tokens", pa.int32()),
    ]
)

DOCS = pa.schema(
    [
        ("page_id", pa.int64()),
        ("title", pa.string()),
        ("revision_id", pa.int64()),
        ("timestamp", pa.string()),
        ("is_disambiguation", pa.bool_()),
        ("converter", pa.string()),  # "markdown" or "plaintext-fallback:<reason>"
        ("sections", pa.list_(pa.string())),  # the "Section <n>: <heading>" lines in order
        ("markdown", pa.string()),
        ("n_tokens", pa.int32()),
    ]
)

REDIRECTS = pa.schema(
    [
        ("page_id", pa.int64()),
        ("title", pa.string()),  # the redirect page's title
        ("target", pa.string()),  # the target title, fragment removed
        ("ns", pa.int32()),
    ]
)
