"""``ray job submit`` entrypoint of the corpus embedding.

    ray job submit --working-dir . -- python ray_jobs/embed.py -c paper --corpus /mnt/corpus --out /mnt/vectors
    ray job submit -- python ray_jobs/embed.py embed.workers=8 embed.num_gpus=1 embedder.kind=qwen3

The same stage as ``sws build embed`` (``sws.stages.embed``); inside a submitted job Ray is joined through
``RAY_ADDRESS``. Safe to resubmit: finished vector units are kept.
"""

import json

from sws import stages
from sws.config import flags


def main() -> None:
    cfg = stages.job_arguments(__doc__, flags.EMBED).cfg
    m = stages.embed(cfg, cfg.corpus.out, cfg.embed.out).manifest
    print(
        json.dumps({k: m[k] for k in ("fingerprint", "rows", "dim", "dtype", "tokens", "last_run")}, indent=1)
    )


if __name__ == "__main__":
    stages.run_job(main)
