"""Runs lttng-iousagetop (python3-lttnganalyses) with its arguments, and
prints from its per-process tables the bytes read and written by one
process: `iousage.py PID ARGS...` prints "READ WRITE" (bytes as it shows
them, converted back: to its rounding), or "- -" when the process is not
listed. Its whole output goes to iousage.out.

One change to the oracle: a file name that is a number is taken as its
text. lttng-analyses names each file from openat's filename string; a
trawl recording without the file names (no eBPF) has the user-space
address there, an integer, on which lttng-iousagetop's per-file table
stops ('int' object has no attribute 'startswith'). The per-process
figures compared do not use the names. Used by t1000-analyze.sh."""
import contextlib
import re
import sys

import lttnganalyses.core.io as core_io
from lttnganalyses.cli.io import runusage

_generic = core_io.FileStats.is_generic_name
core_io.FileStats.is_generic_name = staticmethod(lambda f: _generic(str(f)))

UNITS = {'B': 1, 'KiB': 1024, 'MiB': 1024 ** 2, 'GiB': 1024 ** 3}


def main():
    pid = sys.argv[1]
    sys.argv = ['lttng-iousagetop'] + sys.argv[2:]
    # a file, not a StringIO: the tool reads stdout's encoding
    with open('iousage.out', 'w', encoding='utf-8') as out:
        with contextlib.redirect_stdout(out):
            try:
                runusage()
            except SystemExit as e:
                if e.code:
                    raise
    with open('iousage.out', encoding='utf-8') as f:
        text = f.read()
    got = {}
    table = None
    for line in text.splitlines():
        if line.startswith('Per-process I/O Read'):
            table = 'read'
        elif line.startswith('Per-process I/O Write'):
            table = 'write'
        elif not line.strip() or not line.startswith(('#', ' ', '\u2588')):
            table = None
        if table and table not in got:
            m = re.search(r'([0-9.]+) +(B|KiB|MiB|GiB) +\S+ \(%s\) ' % pid, line)
            if m:
                got[table] = float(m.group(1)) * UNITS[m.group(2)]
    print(*('%.0f' % got[t] if t in got else '-' for t in ('read', 'write')))


main()
