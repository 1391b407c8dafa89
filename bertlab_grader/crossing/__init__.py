"""Test cells in a kernel of their own: the calls that cross to the student's kernel and back.

nbgrader runs a notebook's test cells in the kernel that ran the student's cells, so whatever
decides a score (an ``assert``, ``torch.equal``, the exception that fails a cell) runs in the
process the score is about, where the student's code can change it. The course grader runs two
kernels per notebook instead (:class:`bertlab_grader.guarded_execute.GuardedExecute`): the
student's kernel runs the student's cells; the *tests' kernel*, which never holds student code,
runs the read-only set-up cells and every graded test cell, each at its place in notebook order.
A name a test cell reads and does not define (the graded function) is looked up in the student's
kernel at that point: a function becomes a proxy whose calls cross over a Unix socket.

- :mod:`~bertlab_grader.crossing.wire`: the frames on the socket, each capped in size and in wait;
- :mod:`~bertlab_grader.crossing.interrupts`: which request an interrupt is for (both sides number
  them), so that a call timed out before it was read never runs, and an answered one is left be;
- :mod:`~bertlab_grader.crossing.values`: what the student's side sends back, written and read
  *without running code*: JSON of plain types, tensors as safetensors, arrays as ``.npy`` without
  pickles, every other object a handle that stays where it lives;
- :mod:`~bertlab_grader.crossing.student_side`: what runs in the student's kernel while a test cell
  runs (imported there; the standard library, and the kernel's own torch): it serves the calls, on
  :mod:`~bertlab_grader.crossing.received` (the tests' pickles read, the test's objects called
  back, its random generators and hooks replayed there);
- :mod:`~bertlab_grader.crossing.tests_side`: what runs in the tests' kernel: the names a test
  reads bound to :mod:`~bertlab_grader.crossing.proxies` (the student's objects held by number,
  their exceptions raised again, backward passes across), the arguments sent by value
  (:mod:`~bertlab_grader.crossing.sending`), what comes back written into the test's own objects
  (:mod:`~bertlab_grader.crossing.changes`), and the report the grader reads after each test cell.

What the student's code can do to a score is now only what its functions return: a rigged
kernel, a patched ``torch.equal`` or a lying tensor type stays in the student's process, and the
test that reads a result sees plain values.
"""
