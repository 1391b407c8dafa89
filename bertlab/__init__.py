"""bertlab: the course package, what the book's pages, the exercises and the recipes import.

It holds what runs while a page or a notebook is read, and nothing a student is graded on
(``book/reference/`` holds that; ``tests/assignments/test_answer_key.py`` checks). Which chapter owns what:

=================================  ===================================================================
``models/``                        every model the course loads and the weights that ship: the
                                   encoder (all chapters), the decoder (Chapter 6 on), BERT2BERT
                                   (Chapter 7), the masked diffusion model (Chapter 6b)
``plots``                          token grids and vector heat maps (Chapters 0, 2, 6b)
``attention_masks``                parameters by block and kind (Chapter 1)
``model_families``                 who sees whom in each family's attention (Chapters 1, 8, FAQ)
``pooler``, ``similarity_set``,    what comes out of BERT: the pooler's evidence, the similarity
``widgets``                        pairs, the attention explorer (Chapter 2)
``heads``                          loading a task head and reading its report (Chapters 3, 5a, 7)
``masking``                        the 80/10/10 masking outcomes (Chapter 4)
``finetuning/``                    the fine-tuning sets and the training loop (Chapter 5)
``generation/``                    prompts, forward counts, self-BLEU, perplexity (Chapter 6)
``bert2bert/``                     the definitions task, the model, its trainer and scores (Chapter 7)
``retrieval/``                     passages, questions and answers (Chapter 8)
``probes``, ``copying``            the checkpoint's cloze probes and copy rate (the model card)
``launch_links``, ``book_cache``   the book's machinery: every chapter's Exercise links, and
                                   ``make book``'s execution cache
``messages``                       what a failing test cell says, shaped for nbgrader's Validate
                                   (every assignment's test cells)
=================================  ===================================================================

The grader (``bertlab_grader``) and the recipes that train the shipped weights (``recipes/``) are
the repository's two other parts; this package imports neither (``tests/repo/test_import_graph.py``).
"""

from bertlab.launch_links import exercise_links
from bertlab.models import DECODER_ENV_VAR, decoder_path  # noqa: F401 (the generating model, Chapter 6)
from bertlab.models import ENV_VAR, MINILM, ModelNotAvailableError, describe, model_path

__all__ = [
    "ENV_VAR",
    "MINILM",
    "ModelNotAvailableError",
    "describe",
    "exercise_links",
    "model_path",
]
__version__ = "0.1.0"
