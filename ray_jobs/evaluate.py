"""``ray job submit`` entrypoint of an evaluation run (the same stage and flags as ``sws eval``,
``sws.stages.evaluate``).

    ray job submit --working-dir . -- python ray_jobs/evaluate.py --dataset hotpotqa --data hotpotqa_dev.json \\
        --llm-base-url http://llm:8000/v1 --model Qwen/Qwen3.5-9B --tools-url http://retrieval:11536 \\
        eval.workers=16 eval.episodes_per_worker=128

Safe to resubmit: recorded episodes are skipped, errored ones retried; `ray job stop` (SIGTERM) records what
has finished first.
"""

import json

from sws import stages
from sws.config import flags


def main() -> None:
    args = stages.job_arguments(__doc__, flags.EVAL)
    print(json.dumps(stages.evaluate(args.cfg, **args.stage), indent=1))


if __name__ == "__main__":
    stages.run_job(main)
