# The grader's test course (tests/grader_course): nbgrader reads nbgrader_config.py from the folder
# it runs in; the real config is autograder/nbgrader_config.py, as in the course's repository.
c = get_config()  # noqa: F821
load_subconfig("autograder/nbgrader_config.py")  # noqa: F821
