"""Evaluating search agents: datasets, metrics, the LLM judge, episode records, the Ray runner and reports."""

from sws.eval import paper_datasets  # noqa: F401  (registers the six)
from sws.eval.compare import CompareError, Comparison, compare_sides, load_side, paired_bootstrap
from sws.eval.compare_report import write_comparison
from sws.eval.datasets import (
    SUBSETS,
    QAItem,
    gold_and_aliases,
    load_dataset,
    random_subset,
    read_id_list,
    select,
    subset_by_ids,
    subset_label,
)
from sws.eval.interrupt import EvalInterrupted
from sws.eval.judge import (
    JUDGE_MODEL,
    JUDGE_SYSTEM_PROMPT,
    PROMPT_VERSION,
    JudgeResult,
    JudgeSettings,
    LLMJudge,
    judge_prompt,
    parse_verdict,
)
from sws.eval.lock import RunLockedError
from sws.eval.metrics import (
    F1Score,
    cover_match,
    exact_match,
    f1_bool,
    f1_score,
    normalize_answer,
    score_answer,
    substring_match,
    token_f1,
)
from sws.eval.questions import QuestionSet, read_questions
from sws.eval.records import RECORD_SCHEMA, EpisodeRecord
from sws.eval.reference_qa import load_reference_subset
from sws.eval.reference_runs import ReferenceRun, ReferenceTree, find_reference_trees, read_reference
from sws.eval.registry import (
    DatasetError,
    QADataset,
    ReferenceFiles,
    canonical_dataset,
    get_dataset,
    infer_dataset,
    qa_sources,
    register_dataset,
    registered_datasets,
    unregister_dataset,
)
from sws.eval.replay import ReplayError, ReplayResult, replay_calls
from sws.eval.report import (
    RunStats,
    collect,
    plot_tool_use,
    report_tables,
    run_stats,
    score_table,
    tool_use_table,
    write_report,
)
from sws.eval.results import (
    DamagedPartError,
    PartWriter,
    load_records,
    load_table,
    move_damaged_parts,
    recorded_status,
)
from sws.eval.run_meta import DamagedRunError, RunMeta, RunMismatchError
from sws.eval.runner import EpisodeWorker, EvalSummary, run_evaluation
from sws.eval.scoring import score_prediction
from sws.eval.spec import EvalSpec

__all__ = [
    "JUDGE_MODEL",
    "JUDGE_SYSTEM_PROMPT",
    "PROMPT_VERSION",
    "RECORD_SCHEMA",
    "SUBSETS",
    "CompareError",
    "Comparison",
    "DamagedPartError",
    "DamagedRunError",
    "DatasetError",
    "EpisodeRecord",
    "EpisodeWorker",
    "EvalInterrupted",
    "EvalSpec",
    "EvalSummary",
    "F1Score",
    "JudgeResult",
    "JudgeSettings",
    "LLMJudge",
    "PartWriter",
    "QADataset",
    "QAItem",
    "QuestionSet",
    "ReferenceFiles",
    "ReferenceRun",
    "ReferenceTree",
    "ReplayError",
    "ReplayResult",
    "RunLockedError",
    "RunMeta",
    "RunMismatchError",
    "RunStats",
    "canonical_dataset",
    "collect",
    "compare_sides",
    "cover_match",
    "exact_match",
    "f1_bool",
    "f1_score",
    "find_reference_trees",
    "get_dataset",
    "gold_and_aliases",
    "infer_dataset",
    "judge_prompt",
    "load_dataset",
    "load_records",
    "load_reference_subset",
    "load_side",
    "load_table",
    "move_damaged_parts",
    "normalize_answer",
    "paired_bootstrap",
    "parse_verdict",
    "plot_tool_use",
    "qa_sources",
    "random_subset",
    "read_id_list",
    "read_questions",
    "read_reference",
    "recorded_status",
    "register_dataset",
    "registered_datasets",
    "replay_calls",
    "report_tables",
    "run_evaluation",
    "run_stats",
    "score_answer",
    "score_prediction",
    "score_table",
    "select",
    "subset_by_ids",
    "subset_label",
    "substring_match",
    "token_f1",
    "tool_use_table",
    "unregister_dataset",
    "write_comparison",
    "write_report",
]
