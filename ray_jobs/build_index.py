"""``ray job submit`` entrypoint of the index build (embedding included, or from finished vectors).

    ray job submit --working-dir . -- python ray_jobs/build_index.py -c paper --corpus /mnt/corpus --out /mnt/index
    ray job submit -- python ray_jobs/build_index.py --vectors /mnt/vectors --out /mnt/index index.dense.shard_rows=4000000

The same stage as ``sws build index`` (``sws.stages.build_index``). Safe to resubmit: finished vector units
and finished index parts built from the same inputs are kept; the manifest is written last.
"""

import json

from sws import stages
from sws.config import flags


def main() -> None:
    cfg = stages.job_arguments(__doc__, flags.BUILD_INDEX).cfg
    manifest = stages.build_index(cfg, cfg.corpus.out, cfg.index.out, cfg.index.vectors)
    print(json.dumps(stages.index_summary(manifest), indent=1))


if __name__ == "__main__":
    stages.run_job(main)
