"""``ray job submit`` entrypoint of an evaluation run (the same stage as ``sws eval``, ``sws.stages.evaluate``).

    ray job submit --working-dir . -- python ray_jobs/evaluate.py --dataset hotpotqa --data hotpotqa_dev.json \\
        --llm-base-url http://llm:8000/v1 --model Qwen/Qwen3.5-9B --tools-url http://retrieval:11536 \\
        eval.workers=16 eval.episodes_per_worker=128

Safe to resubmit: recorded episodes are skipped, errored ones retried; `ray job stop` (SIGTERM) records what
has finished first.
"""

import json

from sws import stages


def main() -> None:
    args = stages.job_arguments(
        __doc__,
        {
            "--dataset": {"required": True},
            "--data": {"required": True},
            "--subset": {},
            "--llm-base-url": {},
            "--model": {},
            "--out": {},
            "--index": {},
            "--tools-url": {},
            "--limit": {"type": int},
            "--repair": {"action": "store_true"},
            "--verify": {"action": "store_true"},
            "--extend": {"action": "store_true"},
            "--unverified-tools": {"action": "store_true"},
        },
    )
    summary = stages.evaluate(
        args.cfg,
        dataset=args.dataset,
        data_path=args.data,
        subset=args.subset,
        llm_base_url=args.llm_base_url,
        model=args.model,
        out=args.out,
        index_dir=args.index,
        tools_url=args.tools_url,
        limit=args.limit,
        repair=args.repair,
        verify=args.verify,
        extend=args.extend,
        unverified_tools=args.unverified_tools,
    )
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    stages.run_job(main)
