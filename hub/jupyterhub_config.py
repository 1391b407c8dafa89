# The class's JupyterHub on one machine (make hub; docs/instructors.md, "A class on a JupyterHub").
#
# Who: everyone on the roster (hub/roster.csv) logs in with their system account's password
# (the PAM authenticator, with system users made as nbgrader's own demo makes them:
# jupyter/nbgrader, demos/demo_one_class_one_grader/jupyterhub_config.py and demos/utils.sh);
# the instructors are the hub's admins.
# What each gets: JupyterLab, run as their own system user, from the course's environment (this
# Python's), with the course's models read-only (hub/prepare.py assembled them) and nbgrader's
# exchange. A student's server opens in their home and shows the Assignments tab and Validate,
# never the instructor's tools: the student's Jupyter settings of `make lab` (student-lab/), whose
# nbgrader config reads the exchange from the environment set here. The instructor's server
# opens in the course folder.
import os
import sys
from pathlib import Path

from traitlets.config.loader import PyFileConfigLoader

HUB = Path(__file__).resolve().parent
COURSE = HUB.parent
sys.path.insert(0, str(COURSE))  # JupyterHub runs this file; the package hub is the course's
from hub import prepare, roster as roster_csv  # noqa: E402

c = get_config()  # noqa: F821

roster = roster_csv.read(os.environ.get("BERTLAB_HUB_ROSTER") or HUB / "roster.csv")
instructors = {name for name, role in roster.items() if role == "instructor"}
state = prepare.setting("BERTLAB_HUB_STATE")
course_id = (
    PyFileConfigLoader("nbgrader_config.py", path=str(COURSE))
    .load_config()
    .CourseDirectory.course_id
)

c.JupyterHub.authenticator_class = "pam"
c.Authenticator.allowed_users = set(roster)
c.Authenticator.admin_users = instructors
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.command = [str(HUB / "node_modules" / ".bin" / "configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")

c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]
# A class arrives at once: 20 servers starting together on 2 cores answer after more than the
# 30 s JupyterHub waits by default, and those spawns failed (make bench measures it: tests/hub_bench.py).
c.Spawner.http_timeout = 180
c.Spawner.start_timeout = 300
c.Spawner.default_url = "/lab"
c.Spawner.environment = {
    "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
    "BERTLAB_CACHE": str(prepare.setting("BERTLAB_HUB_CACHE")),
    "BERTLAB_EXCHANGE": str(prepare.setting("BERTLAB_EXCHANGE")),
    "BERTLAB_COURSE_ID": course_id,
    "HF_HUB_OFFLINE": "1",
    "OMP_NUM_THREADS": "1",  # one core per student's kernel: the class shares the machine's cores
}


def by_role(spawner):
    if spawner.user.name in instructors:
        spawner.notebook_dir = str(COURSE)
    else:
        spawner.notebook_dir = "~"
        spawner.environment = {
            **spawner.environment,
            "JUPYTER_CONFIG_PATH": str(COURSE / "student-lab"),
        }


c.Spawner.pre_spawn_hook = by_role
