"""``ray job submit`` entrypoint of the corpus embedding: ``sws build embed``, its flags, checks and output.

    ray job submit --working-dir . -- python ray_jobs/embed.py -c paper --corpus /mnt/corpus --out /mnt/vectors
    ray job submit -- python ray_jobs/embed.py embed.workers=8 embed.num_gpus=1 embedder.kind=qwen3

Inside a submitted job Ray is joined through ``RAY_ADDRESS``. Safe to resubmit: finished vector units are kept.
"""

from sws.cli.index import embed_command as command
from sws.cli.job import run_job

if __name__ == "__main__":
    run_job(command)
