"""``minitorch_nn.course``: turn this repository into graded exercises (no PyTorch counterpart).

The project's own source marks the bodies a course may hand out::

    def transpose(self, dim0, dim1):
        # BEGIN SOLUTION views-transpose
        ...the real implementation...
        # END SOLUTION

``course/tasks.toml`` lists each task (id, description, tutorial, points, source file, tests),
and ``course/tests/`` holds the graded tests (``public/`` go to students, ``hidden/`` stay with
the instructor). Two commands::

    python -m minitorch_nn.course starter OUTDIR [--tasks ID ...]   # the student copy
    python -m minitorch_nn.course grade [--impl PATH] [--results results.json]

See ``docs/instructors.rst`` for the workflow. Modules: :mod:`.markers` (finding and replacing
blocks), :mod:`.tasks` (the course file), :mod:`.starter`, :mod:`.grade`.
"""
