"""``ray job submit`` entrypoint of an evaluation run (the same code as ``sws eval``).

    ray job submit --working-dir . -- python ray_jobs/evaluate.py --dataset hotpotqa --data hotpotqa_dev.json \\
        --llm-base-url http://llm:8000/v1 --model Qwen/Qwen3.5-9B --tools-url http://retrieval:11536 \\
        eval.workers=16 eval.episodes_per_worker=128

Safe to resubmit: recorded episodes are skipped, errored ones retried.
"""

from sws.cli.evaluate import eval_command

if __name__ == "__main__":
    eval_command(prog_name="evaluate")
