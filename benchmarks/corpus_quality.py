"""Corpus text quality next to wikiextractor on the gensim enwiki slice (issue 2, "Acceptance": quality).

Both converters see the same pages: the 106 articles (namespace 0, not redirects) of
``sws/data/enwiki-sample.xml.bz2``. wikiextractor runs as its CLI (``python -m wikiextractor.WikiExtractor
DUMP --json --processes 1``; a Python 3.11 regex shim is applied only if that fails); ours is
:class:`sws.corpus.wikitext.WikitextConverter` with the ``local`` profile's ``clean`` config.

Measures (one JSON line each, plus machine info):

* ``recall``: per article, the share of wikiextractor's words that our text also has. Words are ``\\w+``
  tokens of the NFC-normalised, lower-cased text (wikiextractor's HTML entities decoded first, and its
  ``formula_N`` / ``codice_N`` placeholders for ``<math>`` / ``<code>`` removed: they have no counterpart).
  Counted as multisets: recall = sum over words w of min(n_wx(w), n_ours(w)) / sum of n_wx(w). Reported:
  the mean over articles (the goal, >= 0.95), the micro average, the min, the worst 5 articles with the words
  they miss most, and a set-based mean (distinct words) for reference. Our extra text (infobox tables,
  section lines) does not count against us; the sections we drop by design (References, See also, ...)
  do count against us, as the acceptance bullet states the goal on wikiextractor's full text.
* ``missing_words``: the words most often missing over all articles, each with a snippet of
  wikiextractor's text around it, to spot what the converter loses.
* ``residual_markup``: non-empty output lines containing ``{{ }} [[ ]] <ref {| |- '''``, as a fraction of
  non-empty lines, ours vs wikiextractor's (goal: ours < 0.1%), with example lines.
* ``structure``: ``Section <n>: ...`` lines and Markdown table rows/tables in ours vs wikiextractor's output
  (its heading lines are found by matching the source headings; it has no tables), and per-article checks:
  every article with a kept heading has numbered sections, every article with a ``{|`` table in its kept
  sections has a Markdown table, every article with an ``{{Infobox`` has the infobox table (goal: all).
* ``ratio``: ours vs wikiextractor for the figures above, and a ``summary`` line with the goals.

Run: ``timeout 900 .venv/bin/python benchmarks/corpus_quality.py [--dump PATH] [--profile local]``.
Exits 1 when a goal fails.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
import unicodedata
from collections import Counter

from corpus_common import (
    SAMPLE,
    config_sections,
    emit,
    is_article,
    json_stdout,
    make_converter,
    read_pages,
    run_wikiextractor,
    wikiextractor_docs,
)

BENCH = "corpus_quality"
WORD = re.compile(r"\w+")
WX_PLACEHOLDER = re.compile(r"\b(?:formula|codice)_\d+")
MARKUP = ("{{", "}}", "[[", "]]", "<ref", "{|", "|-", "'''")
SECTION_LINE = re.compile(r"^Section \d+(?:\.\d+)*: ")
SUBSECTION_LINE = re.compile(r"^Section \d+\.\d+")
TABLE_SEPARATOR = re.compile(r"^\|(?: --- \|)+$")
SOURCE_HEADING = re.compile(r"^(={2,6})[ \t]*(.+?)[ \t]*\1[ \t]*$", re.MULTILINE)
SOURCE_TABLE = re.compile(r"^[ \t:]*\{\|", re.MULTILINE)
SOURCE_INFOBOX = re.compile(r"\{\{\s*infobox", re.IGNORECASE)
COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
GOAL_RECALL = 0.95
GOAL_RESIDUAL = 0.001


def words(text: str) -> Counter:
    return Counter(WORD.findall(unicodedata.normalize("NFC", text).lower()))


def recall(wx: Counter, ours: Counter) -> float:
    total = sum(wx.values())
    return sum(min(n, ours[w]) for w, n in wx.items()) / total if total else 1.0


def residual_lines(text: str) -> tuple[int, list[str]]:
    """(non-empty lines, the lines with wiki markup)."""
    lines = [line for line in text.split("\n") if line.strip()]
    return len(lines), [line for line in lines if any(m in line for m in MARKUP)]


def plain_heading(heading: str) -> str:
    heading = re.sub(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]", r"\1", heading)
    heading = re.sub(r"\{\{[^{}]*\}\}|'{2,}|<[^>]+>", "", heading)
    return " ".join(heading.split())


def kept_source(wikitext: str, drop: set[str]) -> tuple[str, list[str]]:
    """The wikitext without the sections on the drop list (and their subsections), and its kept headings."""
    text = COMMENT.sub("", wikitext)
    out, headings, last, drop_level = [], [], 0, None
    keep = True
    for match in SOURCE_HEADING.finditer(text):
        if keep:
            out.append(text[last : match.start()])
        level, heading = len(match.group(1)), plain_heading(match.group(2))
        if drop_level is not None and level > drop_level:
            keep = False
        else:
            drop_level = level if heading.lower().rstrip(":") in drop else None
            keep = drop_level is None
            if keep:
                headings.append(heading)
        last = match.end()
    if keep:
        out.append(text[last:])
    return "".join(out), headings


def missing_context(wx_text: str, ours_text: str, word: str, width: int = 70) -> str | None:
    """A snippet of wikiextractor's text around an occurrence of ``word`` that our text seems to lack: the
    first where neither (previous word, word) nor (word, next word) is a pair of consecutive words of ours."""
    ours = " " + " ".join(WORD.findall(unicodedata.normalize("NFC", ours_text).lower())) + " "
    for match in re.finditer(rf"(?<!\w){re.escape(word)}(?!\w)", wx_text, re.IGNORECASE):
        before = WORD.findall(wx_text[max(0, match.start() - 60) : match.start()].lower())[-1:]
        after = WORD.findall(wx_text[match.end() : match.end() + 60].lower())[:1]
        if f" {' '.join(before + [word])} " not in ours and f" {' '.join([word] + after)} " not in ours:
            return " ".join(wx_text[max(0, match.start() - width) : match.end() + width].split())
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dump", default=SAMPLE, help="dump to compare on (default: the bundled gensim slice)"
    )
    parser.add_argument("--profile", default="local", help="config profile for the clean section")
    parser.add_argument("--worst", type=int, default=5)
    args = parser.parse_args(argv)
    json_stdout()

    clean, _ = config_sections(args.profile)
    converter = make_converter(clean)
    drop = {s.strip().lower() for s in clean["drop_sections"]}
    articles = [p for p in read_pages(args.dump) if is_article(p)]

    with tempfile.TemporaryDirectory(prefix="sws-bench-wx-") as tmp:
        wx_run = run_wikiextractor(args.dump, tmp)
        wx_docs = wikiextractor_docs(tmp)
    started = time.process_time()
    ours_docs = {p.page_id: converter.convert(p.title, p.text, p.timestamp) for p in articles}
    ours_cpu = time.process_time() - started

    missing_from_wx = [p.title for p in articles if p.page_id not in wx_docs]
    per_article, missing_total, missing_where = [], Counter(), {}
    res = {"ours": [0, []], "wikiextractor": [0, []]}
    struct = Counter()
    checks = {"sections": [], "tables": [], "infobox": []}
    wx_heading_lines = 0
    for page in articles:
        doc = ours_docs[page.page_id]
        ours_text = doc.markdown
        wx_text = wx_docs.get(page.page_id, {}).get("text", "")
        wx_words = words(WX_PLACEHOLDER.sub(" ", wx_text))
        ours_words = words(ours_text)
        r = recall(wx_words, ours_words)
        distinct = len(set(wx_words) & set(ours_words)) / len(wx_words) if wx_words else 1.0
        miss = Counter({w: n - ours_words[w] for w, n in wx_words.items() if n > ours_words[w]})
        missing_total.update(miss)
        for w in miss:
            missing_where.setdefault(w, []).append(page.page_id)
        per_article.append(
            {
                "title": page.title,
                "page_id": page.page_id,
                "recall": r,
                "set_recall": distinct,
                "wx_words": sum(wx_words.values()),
                "hits": sum(wx_words.values()) - sum(miss.values()),
                "converter": doc.converter,
                "top_missing": miss.most_common(8),
            }
        )
        for side, text in (("ours", ours_text), ("wikiextractor", wx_text)):
            n, bad = residual_lines(text)
            res[side][0] += n
            res[side][1].extend(f"{page.title}: {line[:160]}" for line in bad)

        lines = ours_text.split("\n")
        sections = [ln for ln in lines if SECTION_LINE.match(ln)]
        separators = [i for i, ln in enumerate(lines) if TABLE_SEPARATOR.match(ln)]
        infobox = any(lines[i - 1].lower().startswith("| infobox") for i in separators if i)
        struct["ours_section_lines"] += len(sections)
        struct["ours_subsection_lines"] += sum(bool(SUBSECTION_LINE.match(s)) for s in sections)
        struct["ours_tables"] += len(separators)
        struct["ours_table_rows"] += sum(ln.startswith("|") and ln.endswith("|") for ln in lines) - len(
            separators
        )
        struct["ours_infobox_tables"] += infobox
        struct["wikiextractor_table_rows"] += sum(ln.lstrip().startswith("|") for ln in wx_text.split("\n"))

        kept, headings = kept_source(page.text, drop)
        struct["source_headings_kept"] += len(headings)
        wx_lines = set(wx_text.split("\n"))
        wx_heading_lines += sum(h in wx_lines or f"{h}." in wx_lines for h in headings)
        if headings and not any(not s.startswith("Section 0:") for s in sections):
            checks["sections"].append(page.title)
        if SOURCE_TABLE.search(kept):
            struct["source_articles_with_tables"] += 1
            if len(separators) - infobox <= 0:
                checks["tables"].append(page.title)
        if SOURCE_INFOBOX.search(page.text):
            struct["source_articles_with_infobox"] += 1
            if not infobox:
                checks["infobox"].append(page.title)
    struct["wikiextractor_heading_lines"] = wx_heading_lines

    n = len(per_article)
    mean = sum(a["recall"] for a in per_article) / n
    micro = sum(a["hits"] for a in per_article) / max(1, sum(a["wx_words"] for a in per_article))
    worst = sorted(per_article, key=lambda a: a["recall"])[: args.worst]
    emit(
        BENCH,
        "recall",
        articles=n,
        wikiextractor_docs=len(wx_docs),
        missing_from_wikiextractor=missing_from_wx,
        mean=round(mean, 4),
        micro=round(micro, 4),
        min=round(worst[0]["recall"], 4),
        set_recall_mean=round(sum(a["set_recall"] for a in per_article) / n, 4),
        articles_below_goal=sum(a["recall"] < GOAL_RECALL for a in per_article),
        worst=[
            {**a, "recall": round(a["recall"], 4), "set_recall": round(a["set_recall"], 4)} for a in worst
        ],
        goal=GOAL_RECALL,
        baseline="wikiextractor",
        wikiextractor=wx_run,
        plaintext_fallbacks=sum(d.converter != "markdown" for d in ours_docs.values()),
    )

    def example(word: str) -> dict:
        for pid in missing_where[word]:
            context = missing_context(wx_docs[pid]["text"], ours_docs[pid].markdown, word)
            if context:
                return {"title": wx_docs[pid]["title"], "wikiextractor_context": context}
        return {}

    emit(
        BENCH,
        "missing_words",
        top=[
            {"word": w, "missing": c, "articles": len(missing_where[w]), **example(w)}
            for w, c in missing_total.most_common(25)
        ],
    )
    rate = {side: len(bad) / lines if lines else 0.0 for side, (lines, bad) in res.items()}
    emit(
        BENCH,
        "residual_markup",
        patterns=list(MARKUP),
        ours={
            "lines": res["ours"][0],
            "with_markup": len(res["ours"][1]),
            "rate": round(rate["ours"], 6),
            "examples": res["ours"][1][:10],
        },
        wikiextractor={
            "lines": res["wikiextractor"][0],
            "with_markup": len(res["wikiextractor"][1]),
            "rate": round(rate["wikiextractor"], 6),
            "examples": res["wikiextractor"][1][:5],
        },
        goal_rate_below=GOAL_RESIDUAL,
        baseline="wikiextractor",
    )
    emit(BENCH, "structure", **dict(struct), failures={k: v for k, v in checks.items()})
    emit(
        BENCH,
        "ratio",
        baseline="wikiextractor",
        residual_rate_ours_over_wikiextractor=round(rate["ours"] / rate["wikiextractor"], 4)
        if rate["wikiextractor"]
        else None,
        section_lines_ours_over_wikiextractor_headings=round(
            struct["ours_section_lines"] / wx_heading_lines, 3
        )
        if wx_heading_lines
        else None,
        table_rows_ours_minus_wikiextractor=struct["ours_table_rows"] - struct["wikiextractor_table_rows"],
        convert_cpu_s_ours=round(ours_cpu, 3),
        cpu_s_wikiextractor_incl_read=wx_run["cpu_s"],
    )
    goals = {
        "recall_mean>=0.95": mean >= GOAL_RECALL,
        "residual_rate<0.001": rate["ours"] < GOAL_RESIDUAL,
        "sections_present": not checks["sections"] and struct["ours_subsection_lines"] > 0,
        "tables_present": not checks["tables"] and struct["ours_tables"] > 0,
        "infobox_present": not checks["infobox"],
        "same_pages": not missing_from_wx,
    }
    emit(BENCH, "summary", goals=goals, passed=all(goals.values()))
    return 0 if all(goals.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
