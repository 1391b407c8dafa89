# nbgrader reads nbgrader_config.py from the folder it runs in; the course's real config is
# autograder/nbgrader_config.py (it fixes the course root, so no empty gradebook appears here).
c = get_config()  # noqa: F821
load_subconfig("autograder/nbgrader_config.py")  # noqa: F821
