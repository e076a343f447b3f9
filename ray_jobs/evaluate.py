"""``ray job submit`` entrypoint of an evaluation run: ``sws eval``, its flags, checks and output.

    ray job submit --working-dir . -- python ray_jobs/evaluate.py --dataset hotpotqa --data hotpotqa_dev.json \\
        --llm-base-url http://llm:8000/v1 --model Qwen/Qwen3.5-9B --tools-url http://retrieval:11536 \\
        eval.workers=16 eval.episodes_per_worker=128

Safe to resubmit: recorded episodes are skipped, errored ones retried; `ray job stop` (SIGTERM) records what
has finished first.
"""

from sws.cli.evaluate import eval_command as command
from sws.cli.job import run_job

if __name__ == "__main__":
    run_job(command)
