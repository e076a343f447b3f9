"""A small rule-based English sentence splitter (boundaries after ``.``, ``!``, ``?`` before a capital)."""

from __future__ import annotations

import re

BOUNDARY = re.compile(r"[.!?][\"'”’)\]]*(?=\s+[\"'“‘(\[]?[A-Z0-9\u00c0-\u024f])")
ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "st",
        "jr",
        "sr",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "no",
        "nos",
        "vol",
        "vols",
        "pp",
        "p",
        "gen",
        "col",
        "lt",
        "sgt",
        "capt",
        "prof",
        "rev",
        "mt",
        "ft",
        "fig",
        "figs",
        "inc",
        "ltd",
        "co",
        "corp",
        "est",
        "approx",
        "dept",
        "univ",
        "ave",
        "blvd",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "u.s",
        "u.k",
        "c",
        "ca",
        "cf",
        "op",
        "al",
        "ed",
        "eds",
        "nr",
        "sc",
    ]
)


def split_sentences(line: str) -> list[str]:
    """Split one line into sentences; each sentence after the first keeps its leading whitespace, so
    ``"".join(split_sentences(line)) == line``."""
    pieces: list[str] = []
    last = 0
    for match in BOUNDARY.finditer(line):
        end = match.end()
        word = line[last:end].rsplit(None, 1)[-1].rstrip("\"'”’)]").rstrip(".!?").lower()
        if match.group()[0] == "." and (word in ABBREVIATIONS or len(word) == 1):
            continue
        pieces.append(line[last:end])
        last = end
    pieces.append(line[last:])
    return [p for p in pieces if p]
