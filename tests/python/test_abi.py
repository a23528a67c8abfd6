"""The ctypes structs of the binding (vocis/_lib.py) have exactly the layout of
the C structs of vocis.h: same sizes, and every field at the same offset with
the same size, as printed by abi_layout (a C program built with vocis.h).
Usage: test_abi.py ABI_LAYOUT_PROGRAM"""
import ctypes
import subprocess
import sys

from common import import_vocis

vocis = import_vocis()
from vocis import _lib  # noqa: E402

out = subprocess.run([sys.argv[1]], check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
sizes, fields = {}, {}
for line in out.splitlines():
    name, a, b = line.split()
    if a == "size":
        sizes[name] = int(b)
    else:
        fields[name] = (int(a), int(b))

fails = []
for cname, cls in _lib.STRUCTS.items():
    if cname not in sizes:
        fails.append("%s: not printed by abi_layout.c (add it there)" % cname)
        continue
    if ctypes.sizeof(cls) != sizes[cname]:
        fails.append("%s: sizeof is %d in C, %d in vocis/_lib.py (%s): a field was added or changed in vocis.h"
                     % (cname, sizes[cname], ctypes.sizeof(cls), cls.__name__))
    py_fields = set()
    for fname, _ in cls._fields_:
        py_fields.add(fname)
        d = getattr(cls, fname)
        key = cname + "." + fname
        if key not in fields:
            fails.append("%s: in the Python mirror but not printed by abi_layout.c" % key)
        elif (d.offset, d.size) != fields[key]:
            fails.append("%s: offset/size %s in C, %s in Python" % (key, fields[key], (d.offset, d.size)))
    for key in fields:
        s, f = key.split(".")
        if s == cname and f not in py_fields:
            fails.append("%s: in C but missing from the Python mirror" % key)
for cname in sizes:
    if cname not in _lib.STRUCTS:
        fails.append("%s: printed by abi_layout.c but not mirrored in vocis/_lib.py" % cname)

for f in fails:
    print("FAIL " + f)
if fails:
    sys.exit(1)
print("ok   %d structs, %d fields: the Python mirror matches vocis.h" % (len(sizes), len(fields)))
