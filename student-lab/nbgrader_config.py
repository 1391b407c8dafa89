# A student's nbgrader. On the class's hub (hub/jupyterhub_config.py sets both variables for each
# student's server) the Assignments tab fetches from and submits to the course's folder in
# nbgrader's exchange; `make lab` sets neither, and Validate reads the course's own config.
import os

c = get_config()  # noqa: F821
if os.environ.get("BERTLAB_EXCHANGE") and os.environ.get("BERTLAB_COURSE_ID"):
    c.CourseDirectory.course_id = os.environ["BERTLAB_COURSE_ID"]
    c.Exchange.root = os.environ["BERTLAB_EXCHANGE"]

# Validate shows a failing test as the grader does: the error's name and message, without the
# traceback's code (the grader's kernels run so too: bertlab_grader/config.py), so the dialog
# opens on what went wrong; and, as there, no history file. The student's own kernels keep full
# tracebacks.
c.Execute.extra_arguments = [
    "--InteractiveShell.xmode=Minimal",
    "--HistoryManager.hist_file=:memory:",
]
