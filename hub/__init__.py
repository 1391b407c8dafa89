"""The class's JupyterHub on one machine (``make hub``; docs/instructors.md, "A class on a
JupyterHub"): who is in the class (:mod:`hub.roster`), the machine made ready for it
(:mod:`hub.prepare`), and the hub's settings (``hub/jupyterhub_config.py``, which JupyterHub runs).

It runs from the course folder and is not installed; it imports no other part of the repository
(the models are assembled by a ``bertlab`` subprocess, in the environment students will run).
"""
