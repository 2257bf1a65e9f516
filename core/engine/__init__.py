"""Running a kernel and recording it: ``dispatch.py`` (``run_kernel``/``bind``, the one door
from ops to backend kernels), ``node.py`` (what a tape records) and where a node came from
in the user's source."""
