"""``ray job submit`` entrypoint of the corpus build.

    ray job submit --working-dir . -- python ray_jobs/build_corpus.py -c paper --out /mnt/corpus
    ray job submit -- python ray_jobs/build_corpus.py --dump /data/enwiki.xml.bz2 --out /mnt/corpus ray.address=auto

The same stage as ``sws build corpus`` (``sws.stages.build_corpus``); inside a submitted job Ray is joined
through ``RAY_ADDRESS``. Safe to resubmit: finished shards are skipped.
"""

import json
import sys

from sws import stages
from sws.config import flags


def main() -> None:
    args = stages.job_arguments(__doc__, flags.BUILD_CORPUS)
    if args.old_index_paths:  # the name before --index meant an index directory everywhere else
        print("warning: --index is deprecated here, use --multistream-index", file=sys.stderr)
        args.index_paths += args.old_index_paths
    cfg = args.cfg
    if args.dumps:
        stages.use_dumps(
            cfg,
            args.dumps,
            args.index_paths,
            any(o.startswith("dump.fetch_manifest=") for o in args.overrides),
        )
    manifest = stages.build_corpus(cfg, cfg.corpus.out, progress=False)
    print(json.dumps(stages.corpus_summary(manifest), indent=1))
    stages.check_corpus_complete(manifest)


if __name__ == "__main__":
    stages.run_job(main)
