"""``ray job submit`` entrypoint of the corpus embedding.

    ray job submit --working-dir . -- python ray_jobs/embed.py -c paper --corpus /mnt/corpus --out /mnt/vectors
    ray job submit -- python ray_jobs/embed.py embed.workers=8 embed.num_gpus=1 embedder.kind=qwen3

The same code as ``sws build embed``; inside a submitted job Ray is joined through ``RAY_ADDRESS``. Safe to
resubmit: finished vector units are kept.
"""

from sws.cli.index import embed_command

if __name__ == "__main__":
    embed_command(prog_name="embed")
