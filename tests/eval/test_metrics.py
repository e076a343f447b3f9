"""EM / cover-EM / token F1 with aliases (CONTRACT.md §7.2), against an independent SQuAD-style implementation."""

import random
import re
import string
from collections import Counter
from pathlib import Path

import pytest

from sws.eval import (
    cover_match,
    exact_match,
    f1_bool,
    f1_score,
    load_dataset,
    normalize_answer,
    score_answer,
    substring_match,
)

QA = Path(__file__).parents[1] / "data" / "qa"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("The Beatles", "beatles"),
        ("  A  man, a plan; an   canal!  ", "man plan canal"),
        ("theater anthem", "theater anthem"),  # articles only as whole words
        ("the-the", "thethe"),  # punctuation goes first, so no article is left
        ("the.end", "theend"),
        ("(the) end", "end"),
        ("Don't", "dont"),
        ("U.S.A.", "usa"),
        ("Rock—and—roll “quoted”", "rock—and—roll “quoted”"),  # Unicode punctuation is kept
        ("Ma\u0142gorzata BRAUNEK", "ma\u0142gorzata braunek"),
        ("An\tapple\nA day", "apple day"),
        (1999, "1999"),
        ("", ""),
        ("a an the", ""),
    ],
)
def test_normalize(raw, expected):
    assert normalize_answer(raw) == expected


def test_f1_contract_examples():
    assert f1_score("yes it is", ["yes"]).f1 == 0.5  # headline F1 has no yes/no special case
    assert f1_bool("yes it is", ["yes"]) == 0.0
    assert f1_bool("Yes.", ["yes"]) == 1.0
    assert f1_bool("no", ["yes"]) == 0.0
    assert f1_score("", ["Paris"]) == (0.0, 0.0, 0.0)
    assert f1_score("", ["the"]).f1 == 1.0  # both normalise to empty
    assert f1_score("Paris France", ["London", "paris"]) == (2 / 3, 0.5, 1.0)
    # precision/recall of the first candidate reaching the best score
    assert f1_score("x y", ["y z", "x w"]) == (0.5, 0.5, 0.5)
    assert f1_score("x y", ["z", "x w", "x y z"]) == (0.8, 1.0, 2 / 3)
    assert f1_score("x x y", ["x y y"]).f1 == pytest.approx(2 / 3)  # multiset overlap


def test_em_variants():
    assert exact_match("The Paris!", ["paris"]) == 1.0
    assert exact_match("Paris, France", ["Paris"]) == 0.0
    assert cover_match("It is Paris, France.", ["paris"]) == 1.0
    assert cover_match("Pari", ["Paris"]) == 0.0
    assert substring_match("the city of paris", ["Paris"]) == 1.0  # via lower()
    assert substring_match("Born in Paris", ["paris"]) == 1.0  # via capitalize()
    assert substring_match("P-a-r-i-s", ["Paris"]) == 0.0  # raw strings, no normalisation
    assert exact_match("Jr.", ["Senior", "jr"]) == 1.0  # any alias


def test_score_answer_block():
    assert score_answer("Ralph Rainger", ["Ralph Reichenthal", "Ralph Rainger"]) == {
        "em": 1.0,
        "em_substring": 1.0,
        "em_cover": 1.0,
        "f1": 1.0,
        "precision": 1.0,
        "recall": 1.0,
        "f1_bool": 1.0,
    }


# An independent SQuAD v1.1-style implementation (regex punctuation class, explicit steps), written for this test.
def _squad_normalize(s):
    s = s.lower()
    s = re.sub("[" + re.escape(string.punctuation) + "]", "", s)
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def _squad_f1(prediction, ground_truth):
    p, g = _squad_normalize(prediction).split(), _squad_normalize(ground_truth).split()
    if len(p) == 0 or len(g) == 0:
        return int(p == g)
    common = Counter(p) & Counter(g)
    same = sum(common.values())
    if same == 0:
        return 0
    precision, recall = same / len(p), same / len(g)
    return (2 * precision * recall) / (precision + recall)


def _squad_em(prediction, ground_truth):
    return _squad_normalize(prediction) == _squad_normalize(ground_truth)


def _perturbations(answer, other, rng):
    words = answer.split()
    yield answer
    yield answer.upper()
    yield f"The {answer}."
    yield f"{answer}, {other}"
    yield " ".join(words[:-1])
    yield " ".join(rng.sample(words, len(words)))
    yield f'"{answer}" (an answer)'
    yield other
    yield ""
    yield rng.choice(["yes", "no", "Yes.", "the"])


def test_matches_independent_squad_implementation_on_qa_answers():
    rng = random.Random(0)
    golds = []
    for name in (
        "2wikimultihop_test_questions_and_answers.json",
        "hotpotqa_test_questions_and_answers.json",
        "musique_test_questions_and_answers.json",
        "frames_test_set.csv",
        "popqa_test_sample1000_seed42.flashrag.jsonl",
        "bamboogle_test_questions_and_answers.json",
    ):
        items = load_dataset(QA / name)
        golds += [i.candidates for i in rng.sample(items, min(len(items), 1500))]
    checked = 0
    for candidates in golds:
        other = rng.choice(golds)[0]
        for prediction in _perturbations(candidates[0], other, rng):
            assert exact_match(prediction, candidates) == float(
                any(_squad_em(prediction, c) for c in candidates)
            )
            assert f1_score(prediction, candidates).f1 == max(_squad_f1(prediction, c) for c in candidates)
            checked += 1
    assert checked > 50_000
