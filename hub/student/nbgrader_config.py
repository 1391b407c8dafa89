# A student's nbgrader on the class's hub (hub/jupyterhub_config.py points JUPYTER_CONFIG_PATH
# here): the Assignments tab fetches from and submits to the course's folder in the exchange.
import os

c = get_config()  # noqa: F821
c.CourseDirectory.course_id = os.environ["BERTLAB_COURSE_ID"]
c.Exchange.root = os.environ["BERTLAB_EXCHANGE"]
