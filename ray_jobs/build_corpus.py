"""``ray job submit`` entrypoint of the corpus build: ``sws build corpus``, its flags, checks and output.

    ray job submit --working-dir . -- python ray_jobs/build_corpus.py -c paper --out /mnt/corpus
    ray job submit -- python ray_jobs/build_corpus.py --dump /data/enwiki.xml.bz2 --out /mnt/corpus ray.address=auto

Inside a submitted job Ray is joined through ``RAY_ADDRESS``. Safe to resubmit: finished shards are skipped.
"""

from sws.cli.build import corpus_command as command
from sws.cli.job import run_job

if __name__ == "__main__":
    run_job(command)
