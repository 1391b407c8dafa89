"""nbgrader configuration for the bertlab course (nbgrader 0.9.6).

The course root is the repository root, found from this file's location, so the gradebook and
grading folders never land wherever nbgrader happens to be started from (nbgrader ignores
``--config`` and silently creates an empty ./gradebook.db otherwise).
The root's ``nbgrader_config.py`` loads this file, so plain ``nbgrader ...`` from the root works.

The folders and the gradebook URL are written down once, in ``bertlab_grader/layout.py``
(the gradebook: ``$BERTLAB_GRADEBOOK_URL``, else ``autograder/gradebook.db``).
The grader (``bertlab_grader``) imports nothing of the course: what it must know of this one (the
models to prepare, the library functions tests compare with) is set here.
"""

import os

from bertlab_grader import layout

c = get_config()  # noqa: F821 - injected by traitlets

# The tests grade in a scratch copy of the course: the root moves with this file.
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

c.CourseDirectory.root = root
c.CourseDirectory.course_id = "bertlab"
c.CourseDirectory.source_directory = layout.SOURCE
c.CourseDirectory.release_directory = layout.RELEASE
c.CourseDirectory.submitted_directory = layout.SUBMITTED
c.CourseDirectory.autograded_directory = layout.AUTOGRADED
c.CourseDirectory.feedback_directory = layout.FEEDBACK
c.CourseDirectory.db_url = layout.gradebook_url(root)
# Only the notebook is graded; data files next to it are copied as they are.
c.CourseDirectory.notebook_id = "*"

# Released notebooks carry no outputs and no execution metadata, so `make exercises` is
# deterministic and CI can diff it against what is committed.
c.ClearOutput.enabled = True
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}

# Student code runs with a minimal traceback: a failing hidden test shows its assertion message,
# never its source (nbgrader#917). Feedback also strips the hidden-test cells' source.
# (Setting extra_arguments replaces nbgrader's default, which keeps the kernel's history in memory.)
c.Execute.extra_arguments = ["--InteractiveShell.xmode=Minimal", "--HistoryManager.hist_file=:memory:"]
c.Execute.timeout = 120
# After a cell's reply, nbclient waits this long for its last outputs, and nbgrader fails the whole
# notebook if they are late (raise_on_iopub_timeout): 4 s by default, which a busy machine grading
# in parallel can exceed. A generous wait costs nothing when the outputs come at once.
c.Execute.iopub_timeout = 30
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    # ... and outputs that quote hidden tests (a submission can print them) are replaced first.
    "bertlab_grader.feedback_redaction.RedactHiddenTests",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]

# A test cell counts only if the kernel it ran in was not rigged by the submission (an input
# transformer that blanks cells, an AST transformer that drops asserts, torch.equal replaced, ...):
# nbgrader's Execute, plus a fingerprint of the kernel before and after every test cell.
from nbgrader.converters import Autograde  # noqa: E402
from nbgrader.preprocessors import Execute  # noqa: E402

from bertlab_grader.guarded_execute import GuardedExecute  # noqa: E402



def _swapped(pipeline: str, theirs, ours) -> list:
    """nbgrader's default ``Autograde.<pipeline>`` with ``theirs`` replaced by ``ours``."""
    default = Autograde.class_traits()[pipeline].default()
    assert theirs in default, f"nbgrader's {pipeline} changed: {default}"
    return [ours if pp is theirs else pp for pp in default]


c.Autograde.autograde_preprocessors = _swapped("autograde_preprocessors", Execute, GuardedExecute)

# Students install the course package, and the book's own code sits beside the pages: a graded
# function bound to an object of either (``from bertlab... import top_k``) scores 0 in every test
# cell after it. (Neither ships a graded function: tests/test_answer_key.py checks the package.)
c.GuardedExecute.answer_key_packages = ["bertlab", "reference"]

# What the grader must know of this course, and nothing else does:
# - the models a notebook loads, resolved (assembled into ~/.cache/bertlab) before the first kernel
#   starts, since a sandboxed kernel cannot write the cache;
c.GuardedExecute.prepare = ["bertlab.models:prepare_all"]
# - what a kernel may read besides the system and the Python environment (its sandbox shows
#   nothing else of the machine: no home folder, no course repository, no gradebook): the model
#   cache and any model folder a variable names; and the variables that name the models;
c.Sandbox.readable = ["bertlab.models:kernel_folders"]
c.Sandbox.environment = ["BERTLAB_MODEL", "BERTLAB_DECODER", "BERTLAB_BERT2BERT", "BERTLAB_DIFFUSION",
                         "BERTLAB_CACHE"]
# - the library code the tests take their expected values from ("module:attribute.path"):
#   transformers' BERT modules, pipelines and collator, torch's functional ops. Whenever a kernel
#   has imported one's module, it must still be the library's own function; pointing one at the
#   student's code would make every comparison with it pass.
c.GuardedExecute.oracles = [
    *(f"torch:{n}" for n in (
        "softmax log_softmax argmax argsort topk bincount where matmul stack cat full_like zeros_like "
        "ones_like randn rand randint manual_seed Generator autograd.grad "
        "nn.functional.scaled_dot_product_attention nn.functional.cosine_similarity "
        "nn.functional.cross_entropy nn.functional.softmax nn.functional.linear nn.functional.layer_norm "
        "nn.functional.embedding nn.functional.gelu nn.functional.dropout nn.utils.rnn.pad_sequence "
        "nn.Module.__call__ nn.Module._call_impl nn.Linear.forward nn.LayerNorm.forward "
        "nn.Embedding.forward nn.Dropout.forward"
    ).split()),
    *(f"transformers.models.bert.modeling_bert:{c}.forward" for c in (
        "BertEmbeddings BertSelfAttention BertSelfOutput BertAttention BertIntermediate BertOutput "
        "BertLayer BertEncoder BertPooler BertModel BertPredictionHeadTransform BertLMPredictionHead "
        "BertOnlyMLMHead BertForMaskedLM BertForSequenceClassification BertForTokenClassification "
        "BertForQuestionAnswering"
    ).split()),
    *(f"transformers:{n}" for n in (  # what ``from transformers import ...`` hands a test
        "BertModel.forward BertForMaskedLM.forward BertConfig.__init__ AutoModel.from_pretrained "
        "AutoModelForMaskedLM.from_pretrained AutoTokenizer.from_pretrained "
        "DataCollatorForLanguageModeling.torch_mask_tokens pipeline"
    ).split()),
    "transformers.modeling_utils:PreTrainedModel.from_pretrained",
    "transformers.masking_utils:create_bidirectional_mask",
    *(f"transformers.tokenization_utils_base:PreTrainedTokenizerBase.{m}" for m in (
        "__call__", "encode", "decode", "batch_decode", "convert_ids_to_tokens", "convert_tokens_to_ids")),
    *(f"transformers.data.data_collator:DataCollatorForLanguageModeling.{m}" for m in (
        "__call__", "torch_call", "torch_mask_tokens")),
    "transformers.pipelines:pipeline",
    *(f"transformers.pipelines.fill_mask:FillMaskPipeline.{m}" for m in (
        "__call__", "preprocess", "_forward", "postprocess")),
    *(f"transformers.pipelines.base:Pipeline.{m}" for m in ("__call__", "forward")),
]

# A test cell pasted twice keeps its last copy's grade id; the others become ordinary cells
# (nbgrader's own DeduplicateIds leaves them empty metadata, and the notebook is refused).
from nbgrader.preprocessors import DeduplicateIds  # noqa: E402
from bertlab_grader.pasted_cells import DropDuplicateIds  # noqa: E402

c.Autograde.sanitize_preprocessors = _swapped("sanitize_preprocessors", DeduplicateIds, DropDuplicateIds)
