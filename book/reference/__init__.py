"""The book's own implementations of what the assignments grade.

Chapters 5c, 6, 6b and 8 run the same code their assignments ask students to write (a QA span
decoder, the forced-generation samplers and distinct-n, dense retrieval and its prompt), in
batched or fuller forms. It lives here, beside the pages, and not in the ``bertlab`` package:
students install ``bertlab``, and nothing they are graded on may be importable from it
(``tests/assignments/test_answer_key.py`` checks the built wheel; the grader's kernel guard flags a graded
function that is an object of this package or of ``bertlab``).

The pages import it because Jupyter Book runs each page in ``book/``; the tests put ``book/`` on
their path (``pyproject.toml``, ``[tool.pytest.ini_options] pythonpath``).

What a page teaches it shows on the page: Chapters 6 and 6b define their samplers, the noise and
the loss in code cells beside the maths, for one prompt at a time, and run the batched versions
here for their measurements. ``tests/course/test_page_algorithms.py`` reads the functions out of
the pages and holds each to its version here (the same outputs on seeded tiny models).

- :mod:`reference.qa`: answer spans, SQuAD's metrics, long documents (Chapter 5c; ps03 grades the span rule);
- :mod:`reference.bert_sampling`: left to right, Gibbs, Mask-Predict (Chapter 6; ps06);
- :mod:`reference.diversity`: distinct-n (Chapter 6; ps06);
- :mod:`reference.diffusion`: the masking, the 1/t loss, the schedule, one sampler step (Chapter 6b; ps06b);
- :mod:`reference.diffusion_sampler`, :mod:`reference.diffusion_training`: Chapter 6b's canvas
  sampler and trainer (which ``make diffusion``, ``recipes/diffusion/train.py``, runs), built on
  :mod:`reference.diffusion`;
- :mod:`reference.retrieval`: mean-pooled vectors, top-k, recall@k, the prompt (Chapter 8; ps08);
- :mod:`reference.web_sampler`: the "Try it" boxes' computations in numpy, the twin of their
  JavaScript (``book/live/``), and Chapter 4's box's examples (Chapters 4 and 6b). The build
  that exports the boxes' models is a recipe: ``recipes/site/``.
"""
