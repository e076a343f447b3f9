"""``ray job submit`` entrypoint of the index build (embedding included, or from finished vectors):
``sws build index``, its flags, checks and output.

    ray job submit --working-dir . -- python ray_jobs/build_index.py -c paper --corpus /mnt/corpus --out /mnt/index
    ray job submit -- python ray_jobs/build_index.py --vectors /mnt/vectors --out /mnt/index index.dense.shard_rows=4000000

Safe to resubmit: finished vector units and finished index parts built from the same inputs are kept; the
manifest is written last.
"""

from sws.cli.index import build_index_command as command
from sws.cli.job import run_job

if __name__ == "__main__":
    run_job(command)
