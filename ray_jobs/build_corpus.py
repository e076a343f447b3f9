"""``ray job submit`` entrypoint of the corpus build.

    ray job submit --working-dir . -- python ray_jobs/build_corpus.py -c paper --out /mnt/corpus
    ray job submit -- python ray_jobs/build_corpus.py --dump /data/enwiki.xml.bz2 --out /mnt/corpus ray.address=auto

The same code as ``sws build corpus``; inside a submitted job Ray is joined through ``RAY_ADDRESS``. Safe to
resubmit: finished shards are skipped.
"""

from sws.cli.build import corpus_command

if __name__ == "__main__":
    corpus_command(prog_name="build_corpus")
